/**
 * What a plain `npm pack` (and so `npm publish`) of each public package ships: its `prepack`
 * builds it, `npm pack --json` keeps stdout for the JSON (build output goes to stderr), and
 * every entry point the manifest declares (exports, bin, main, types; each module behind a
 * `./*` export) is in the tarball, with the sources its source maps name.
 *
 * Each package is packed from a staged copy (its package.json and sources, without dist/) in a
 * temporary workspace of its own whose node_modules links to the installed modules, and
 * @phasebound/* to staged copies of the public packages it depends on: the builds write staged
 * dist/ directories, never the working tree's, which other test projects run from (the CLI's
 * dist/bin.js); and no package is built from a dist/ the working tree happens to have
 * (@phasebound/workflow compiles against the client's declarations: its prepack builds them).
 */
import { spawn } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

interface Manifest {
  readonly name: string
  readonly private?: boolean
  readonly dependencies?: Record<string, string>
  readonly devDependencies?: Record<string, string>
  readonly scripts?: Record<string, string>
  readonly exports?: unknown
  readonly bin?: string | Record<string, string>
  readonly main?: string
  readonly types?: string
  readonly files?: ReadonlyArray<string>
}

interface Packed {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly files: ReadonlyArray<string>
  readonly filename: string | undefined
  readonly staged: string
}

const readJson = <A>(file: string): A => JSON.parse(readFileSync(file, "utf8")) as A

/** The public packages: every workspace that is not private (a new one is covered when it is listed). */
const workspaces = readJson<{ workspaces: ReadonlyArray<string> }>(path.join(root, "package.json")).workspaces
const publicPackages = workspaces
  .filter((dir) => existsSync(path.join(root, dir, "package.json")))
  .map((dir) => ({ dir, manifest: readJson<Manifest>(path.join(root, dir, "package.json")) }))
  .filter(({ manifest }) => manifest.private !== true)

const temp = mkdtempSync(path.join(tmpdir(), "phasebound-pack-"))
const packs = path.join(temp, "packs")
const packed = new Map<string, Packed>()

const npmPack = (cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    // Not the npm_package_* / npm_lifecycle_* of an `npm test` that started this run.
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.startsWith("npm_package_") && !key.startsWith("npm_lifecycle_"))
    )
    env["npm_config_workspaces"] = ""
    env["npm_config_update_notifier"] = "false"
    const child = spawn("npm", ["pack", "--pack-destination", packs, "--json"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** The package directory without dist/, test/ and node_modules/, under the same relative path. */
const stage = (into: string, dir: string): string => {
  const from = path.join(root, dir)
  const to = path.join(into, dir)
  cpSync(from, to, {
    recursive: true,
    filter: (source) => {
      const relative = path.relative(from, source).split(path.sep)[0]
      return relative !== "dist" && relative !== "test" && relative !== "node_modules"
    }
  })
  if (existsSync(path.join(from, "node_modules"))) symlinkSync(path.join(from, "node_modules"), path.join(to, "node_modules"), "dir")
  return to
}

/**
 * A workspace of its own for one package: the base tsconfig the packages extend, the installed
 * modules, and staged copies of the package and of the public packages it builds against, linked as
 * @phasebound/*. One per package, so that builds running side by side never share a dist/.
 */
const stagedWorkspace = (index: number, manifest: Manifest, dir: string): string => {
  const into = path.join(temp, `workspace-${index}`)
  const modules = path.join(into, "node_modules")
  mkdirSync(path.join(modules, "@phasebound"), { recursive: true })
  cpSync(path.join(root, "tsconfig.base.json"), path.join(into, "tsconfig.base.json"))
  for (const entry of readdirSync(path.join(root, "node_modules"))) {
    if (entry !== "@phasebound") symlinkSync(path.join(root, "node_modules", entry), path.join(modules, entry))
  }
  // Build-time ones included: the CLI bundles the client from its sources (a devDependency).
  const needed = { ...manifest.devDependencies, ...manifest.dependencies }
  const dependencies = publicPackages.filter((pkg) => needed[pkg.manifest.name] !== undefined)
  for (const pkg of dependencies) symlinkSync(stage(into, pkg.dir), path.join(modules, pkg.manifest.name), "dir")
  return stage(into, dir)
}

beforeAll(async () => {
  mkdirSync(packs)
  await Promise.all(publicPackages.map(async ({ dir, manifest }, index) => {
    const staged = stagedWorkspace(index, manifest, dir)
    const result = await npmPack(staged)
    let info: { filename?: string; files?: ReadonlyArray<{ path: string }> } | undefined
    try {
      info = (JSON.parse(result.stdout) as ReadonlyArray<typeof info>)[0]
    } catch {
      info = undefined
    }
    packed.set(manifest.name, { ...result, staged, filename: info?.filename, files: info?.files?.map((file) => file.path) ?? [] })
  }))
}, 180_000)

afterAll(() => {
  rmSync(temp, { recursive: true, force: true })
})

/** Every file path an export map, bin, main or types names (wildcard targets expanded from src/). */
const entryPoints = (manifest: Manifest, staged: string): ReadonlyArray<string> => {
  const declared = new Set<string>()
  const strip = (target: string) => target.replace(/^\.\//, "")
  const modules = readdirSync(path.join(staged, "src"))
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts") && !file.endsWith(".d.ts"))
    .map((file) => file.slice(0, -".ts".length))
  const walk = (value: unknown): void => {
    if (typeof value === "string") {
      if (value.includes("*")) for (const name of modules) declared.add(strip(value.replace("*", name)))
      else declared.add(strip(value))
    } else if (value !== null && typeof value === "object") {
      for (const [key, inner] of Object.entries(value)) if (key !== "@phasebound/source") walk(inner)
    }
  }
  walk(manifest.exports ?? {})
  walk(manifest.bin ?? {})
  if (manifest.main !== undefined) walk(manifest.main)
  if (manifest.types !== undefined) walk(manifest.types)
  return [...declared]
}

describe.each(publicPackages)("npm pack $manifest.name", ({ manifest }) => {
  const result = () => packed.get(manifest.name)!

  it("builds the package in its prepack, and npm pack --json prints only JSON on stdout", () => {
    expect(manifest.scripts?.prepack).toMatch(/(^|&& )npm run build$/)
    const { code, stderr, stdout, filename } = result()
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" })
    expect(() => JSON.parse(stdout)).not.toThrow()
    expect(filename).toBeDefined()
    expect(existsSync(path.join(packs, filename!))).toBe(true)
  })

  it("ships every entry point its manifest declares, built into dist/", () => {
    const { files, staged } = result()
    const declared = entryPoints(manifest, staged)
    const dist = declared.filter((file) => file.startsWith("dist/"))
    expect(dist.length).toBeGreaterThan(0)
    expect(declared.filter((file) => !file.startsWith("dist/") && !file.startsWith("src/"))).toEqual([])
    expect(declared.filter((file) => !files.includes(file))).toEqual([])
    // Declarations come with the JavaScript they describe.
    const javascript = declared.filter((file) => file.startsWith("dist/") && file.endsWith(".js"))
    const typed = manifest.bin === undefined
    if (typed) expect(javascript.map((file) => file.replace(/\.js$/, ".d.ts")).filter((file) => !files.includes(file))).toEqual([])
  })

  it("ships the sources its maps point to, and no tests", () => {
    const { files, staged } = result()
    const maps = files.filter((file) => file.endsWith(".map"))
    const missing: Array<string> = []
    for (const map of maps) {
      const { sources } = readJson<{ sources: ReadonlyArray<string> }>(path.join(staged, map))
      for (const source of sources) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(map), source))
        if (!files.includes(target)) missing.push(`${map} -> ${target}`)
      }
    }
    expect(missing).toEqual([])
    expect(files.filter((file) => /(^|\/)test\/|\.test\.[cm]?[jt]s$/.test(file))).toEqual([])
  })
})

it("the testkit's stdio child programs ship bundled beside the dist that spawns them", () => {
  const testkit = packed.get("@phasebound/testkit")
  expect(testkit?.files).toContain("dist/stdio/stdio-server.mjs")
  expect(testkit?.files).toContain("dist/stdio/hostile-stdio-server.mjs")
})
