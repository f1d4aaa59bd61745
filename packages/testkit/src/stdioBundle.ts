/**
 * Where the stdio child programs come from. Each is a TypeScript main module under src/stdio/
 * (stdioServer.ts uses the same MCP behaviour modules as the HTTP servers) that esbuild bundles
 * into one plain ESM file with only `node:` imports, so that the child runs under `node` 20 and
 * `bun` with no TypeScript loader:
 *
 * - in the built package (this module running from dist/), the bundle the build wrote next to
 *   it: `npm run build` (also at `prepack`) is tsc, then scripts/bundle-children.mjs, which
 *   writes dist/stdio/*.mjs; the packed tarball ships them;
 * - running from the sources (the workspace's tests), a bundle made on demand, synchronously, the
 *   first time a process asks for it, into a cache directory under the OS temp directory (shared
 *   by every checkout: its files are named by the checkout's root too), named
 *   by a hash of the path, size and mtime of every source file the last bundle was made of (its
 *   esbuild metafile's inputs, kept beside it) and esbuild's version. An edit to any of them
 *   makes a new name, so a stale bundle is never run (a new import is an edit of a file already
 *   in the list); edits elsewhere under src/ (contract/) cost nothing. Processes racing to make
 *   the same one each write a temporary file and rename it into place (atomic), so none reads a
 *   partial file; bundles of other stamps older than a day are removed. esbuild (a
 *   devDependency of the workspace) is loaded only then.
 *
 * Chosen over a vitest globalSetup because every package's tests (client, cli, workflow) spawn
 * these children from the sources, and they need no setup of their own this way.
 */
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** A child program: its main module (relative to src/) and its bundle (relative to dist/). */
export interface ChildProgram {
  readonly entry: string
  readonly bundle: string
}

export const STDIO_SERVER_PROGRAM: ChildProgram = { entry: "stdio/stdioServer.ts", bundle: "stdio/stdio-server.mjs" }
export const HOSTILE_STDIO_PROGRAM: ChildProgram = { entry: "stdio/hostileStdioServer.ts", bundle: "stdio/hostile-stdio-server.mjs" }
export const CHILD_PROGRAMS: ReadonlyArray<ChildProgram> = [STDIO_SERVER_PROGRAM, HOSTILE_STDIO_PROGRAM]

const here = fileURLToPath(import.meta.url)
const runningFromDist = basename(dirname(here)) === "dist"
const packageRoot = dirname(dirname(here))
const sourceRoot = join(packageRoot, "src")

interface Esbuild {
  readonly version: string
  readonly buildSync: (options: Record<string, unknown>) => unknown
}

const loadEsbuild = (): Esbuild => {
  try {
    return createRequire(import.meta.url)("esbuild") as Esbuild
  } catch (cause) {
    throw new Error(
      "@phasebound/testkit: running from its sources, the stdio child programs are bundled on demand, which needs esbuild " +
        "(a devDependency of the workspace); or build the package (npm run build -w @phasebound/testkit)",
      { cause }
    )
  }
}

/**
 * Bundles `program` into `outfile`: one ESM file for Node 20 and Bun, `node:` imports only.
 * Returns the absolute paths of the source files it was made of.
 */
export const bundleChildProgram = (program: ChildProgram, outfile: string, esbuild: Esbuild = loadEsbuild()): ReadonlyArray<string> => {
  const built = esbuild.buildSync({
    entryPoints: [join(sourceRoot, program.entry)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    legalComments: "none",
    logLevel: "error",
    metafile: true,
    absWorkingDir: packageRoot
  }) as { readonly metafile: { readonly inputs: Readonly<Record<string, unknown>> } }
  return Object.keys(built.metafile.inputs).map((input) => join(packageRoot, input))
}

const CACHE_DIR = join(tmpdir(), "phasebound-testkit-bundles")
const STALE_MS = 24 * 60 * 60 * 1000

/** A stamp of the inputs (path, size, mtime) and esbuild's version; undefined if one of them is gone. */
const stampOf = (inputs: ReadonlyArray<string>, esbuildVersion: string): string | undefined => {
  const hash = createHash("sha256").update(esbuildVersion)
  for (const input of [...inputs].sort()) {
    if (!existsSync(input)) return undefined
    const stat = statSync(input)
    hash.update(`${input}\0${stat.size}\0${stat.mtimeMs}\n`)
  }
  return hash.digest("hex").slice(0, 16)
}

const readInputs = (path: string): ReadonlyArray<string> | undefined => {
  try {
    const inputs: unknown = JSON.parse(readFileSync(path, "utf8"))
    return Array.isArray(inputs) && inputs.every((input) => typeof input === "string") ? inputs : undefined
  } catch {
    return undefined
  }
}

/** Writes `content` to `path` through a temporary file and a rename, so no reader sees half of it. */
const writeAtomically = (path: string, write: (partial: string) => void): void => {
  const partial = `${path}.${process.pid}.${Date.now()}.partial`
  write(partial)
  renameSync(partial, path)
}

const removeStale = (name: string, keep: string): void => {
  for (const file of readdirSync(CACHE_DIR)) {
    const path = join(CACHE_DIR, file)
    if (!file.startsWith(`${name}-`) || path === keep) continue
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true })
    } catch {
      // another process removed it first
    }
  }
}

const bundledFromSources = (program: ChildProgram): string => {
  const esbuild = loadEsbuild()
  // One cache directory serves every checkout on the machine (worktrees side by side): the names
  // carry the checkout's own root, so one never runs a bundle made of another's sources.
  const name = `${basename(program.bundle, ".mjs")}-${createHash("sha256").update(packageRoot).digest("hex").slice(0, 8)}`
  const inputsFile = join(CACHE_DIR, `${name}.inputs.json`)
  const bundleFor = (stamp: string) => join(CACHE_DIR, `${name}-${stamp}.mjs`)
  const known = readInputs(inputsFile)
  const knownStamp = known === undefined ? undefined : stampOf(known, esbuild.version)
  if (knownStamp !== undefined && existsSync(bundleFor(knownStamp))) return bundleFor(knownStamp)

  mkdirSync(CACHE_DIR, { recursive: true })
  const partial = join(CACHE_DIR, `${name}.${process.pid}.${Date.now()}.partial.mjs`)
  const inputs = bundleChildProgram(program, partial, esbuild)
  const stamp = stampOf(inputs, esbuild.version) ?? "unstamped"
  const path = bundleFor(stamp)
  renameSync(partial, path)
  writeAtomically(inputsFile, (file) => writeFileSync(file, JSON.stringify(inputs)))
  removeStale(name, path)
  return path
}

/** The absolute path of the plain-JavaScript child program to spawn (see the module comment). */
export const childProgramPath = (program: ChildProgram): string => {
  const built = join(packageRoot, "dist", program.bundle)
  if (runningFromDist && existsSync(built)) return built
  return bundledFromSources(program)
}
