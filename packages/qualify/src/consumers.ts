/**
 * The consumers table of `npm run qualify`: the packed packages installed the way a new user
 * installs them, each into a fresh project of its own, offline (src/install.ts), beside the
 * Effect the user already has.
 *
 * - Effect users, at the lowest supported Effect 3 set (the workspace's `effect-floor*` aliases)
 *   and at the newest (the workspace's pins): @phasebound/client, testkit and workflow install
 *   cleanly (exit 0, no ERESOLVE, nothing on stderr but npm's http log), with one copy of
 *   `effect` and of `@effect/platform` (the project's), their entry points load, and the README's
 *   Effect example (its "The Effect API" block, only the server URL replaced) connects, lists the
 *   tools and calls `add`; no "Executing an Effect versioned" warning anywhere.
 * - Promise users: @phasebound/promise into a project whose root has Effect 4: a clean install,
 *   no Effect in the package's manifest, one copy of `effect` on disk (the root's 4.x),
 *   declarations that import nothing, `tsc --noEmit` of a TypeScript consumer
 *   (program/consumer-promise.ts) against them, and that program run under Node 22.
 *
 * The three projects are made side by side (their installs as many at a time as `input.jobs`
 * allows), their rows returned in that order. The MCP server is the testkit's, started here, in
 * the orchestrator's process, from the workspace's sources, and given to the programs by URL.
 */
import { startServer } from "@phasebound/testkit"
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { type Ran, runCommand } from "./command.js"
import { copiesOf, floorAliases, installOffline, type Lockfile, seededLock, whyInstall } from "./install.js"
import type { Timings } from "./timings.js"

export interface ConsumersInput {
  readonly root: string
  /** Where the projects go (one directory each). */
  readonly temp: string
  /** The tarball of each packed package, by name. */
  readonly tarballs: ReadonlyMap<string, string>
  readonly workspaceLock: Lockfile
  /** The root package.json's devDependencies: the pins and the aliases. */
  readonly devDependencies: Record<string, string>
  /** The install-script approvals of the workspace, carried to each project. */
  readonly allowScripts: unknown
  /** Runs an install when a slot is free (src/bounded.ts): the installs share the cores. */
  readonly jobs: <A>(task: () => Promise<A>) => Promise<A>
  /** Times a phase (src/timings.ts). */
  readonly time: Timings["time"]
}

/** A row of the table. */
export interface ConsumerRow {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}
type RecordRow = (name: string, ok: boolean, detail?: string) => void

const VERSION_WARNING = /Executing an Effect versioned/
const PROGRAM_TIMEOUT_MS = 60_000
const EFFECT_PACKAGES = ["effect", "@effect/platform", "@effect/platform-node"] as const

/**
 * Runs a program to its end (asynchronously: the MCP server it talks to lives in this process);
 * why it did not start, or was killed, is on its stderr.
 */
const run = async (command: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv = cleanEnv()) => {
  const ran = await runCommand(command, args, { cwd, env, timeout: PROGRAM_TIMEOUT_MS })
  return ran.error === undefined ? ran : { ...ran, stderr: ran.stderr + String(ran.error) }
}
/** What a program gets: no path mapping, no workspace. */
const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  LANG: process.env.LANG ?? "C.UTF-8",
  NO_COLOR: "1",
  ...extra
})
const lastLines = (text: string, lines = 4) => text.trim().split("\n").slice(-lines).join(" | ")
const versionIn = (project: string, name: string): string | undefined => {
  const file = join(project, "node_modules", name, "package.json")
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { version?: string }).version : undefined
}

/**
 * Bundles TypeScript (a file, or the README's block as text) into the project as plain ESM,
 * every package import left a bare import the project's node_modules resolves.
 */
const bundleInto = async (project: string, outfile: string, source: { readonly file: string } | { readonly contents: string }) => {
  const result = await build({
    ...("file" in source
      ? { entryPoints: [source.file] }
      : { stdin: { contents: source.contents, loader: "ts" as const, resolveDir: project, sourcefile: "readme-example.ts" } }),
    outfile: join(project, outfile),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "silent"
  })
  return result.errors.length === 0
}

/** The README's Effect example: the first `ts` block under "## The Effect API". */
export const readmeEffectExample = (readme: string): string | undefined => {
  const section = readme.split(/^## The Effect API$/m)[1]
  return section === undefined ? undefined : /```ts\n([\s\S]*?)```/.exec(section)?.[1]
}

/** The example made runnable: the server's URL from MCP_URL, the program run, its value printed as JSON. */
const runnableExample = (example: string, exampleUrl: string) =>
  example.replace(JSON.stringify(exampleUrl), "(process.env.MCP_URL ?? \"\")") +
  "\nEffect.runPromise(program).then((value) => console.log(JSON.stringify({ value })))\n"

/** The `text` of an `add` result that says 3, as the testkit's `add` answers 1 + 2. */
const saysThree = (value: unknown) => {
  const content = typeof value === "object" && value !== null ? (value as { content?: unknown }).content : undefined
  const [block, ...rest] = Array.isArray(content) ? content as Array<{ type?: unknown; text?: unknown }> : []
  return rest.length === 0 && block?.type === "text" && block.text === "3"
}

const installRows = (
  record: RecordRow,
  label: string,
  installed: Awaited<ReturnType<typeof installOffline>>,
  what: string
) => {
  const eresolve = /ERESOLVE/.test(installed.stderr + installed.stdout)
  record(
    `${label}: npm install of ${what} exits 0, no ERESOLVE, no --legacy-peer-deps`,
    installed.ok && !eresolve,
    installed.ok ? `${installed.ms} ms, ${installed.added ?? "?"} packages` : whyInstall(installed)
  )
  record(
    `${label}: nothing on npm's stderr but its http log (no warning, no notice)`,
    installed.ok && installed.notices.length === 0,
    installed.notices.slice(0, 4).join(" | ")
  )
  record(
    `${label}: the install was offline (every registry read from the workspace's npm cache)`,
    installed.ok && installed.network.length === 0 && installed.fromCache > 0,
    `${installed.fromCache} reads from the cache, ${installed.network.length} not: ${installed.network.slice(0, 2).join(" | ")}`
  )
}

const oneCopy = async (record: RecordRow, label: string, project: string, name: string, version: string) => {
  const copies = await copiesOf(project, name)
  const installedVersion = versionIn(project, name)
  record(
    `${label}: one copy of ${name} in the project, the project's own ${version}`,
    copies.ok && copies.paths.length === 1 && copies.paths[0] === `node_modules/${name}` && installedVersion === version,
    `${copies.paths.join(", ") || "none"} (${installedVersion ?? "?"})`
  )
}

/**
 * An Effect 3 user's project: the libraries beside `set` (each of its packages a dependency of
 * the project, at its version), then the README's example against `url`.
 */
const effectConsumer = async (
  input: ConsumersInput,
  record: RecordRow,
  label: string,
  set: Record<string, string>,
  substitutes: Record<string, string>,
  url: string
) => {
  const project = join(input.temp, `consumer-${label.replace(/\W+/g, "-")}`)
  mkdirSync(project, { recursive: true })
  const libraries = ["@phasebound/client", "@phasebound/testkit", "@phasebound/workflow"].filter((name) => input.tarballs.has(name))
  const dependencies: Record<string, string> = {}
  for (const [name, version] of Object.entries(set)) dependencies[name] = version
  for (const name of libraries) dependencies[name] = `file:${input.tarballs.get(name)}`
  const installed = await input.jobs(() =>
    input.time(`${label}: install`, () =>
      installOffline(
        project,
        { name: "phasebound-consumer", private: true, type: "module", dependencies, allowScripts: input.allowScripts },
        seededLock(input.workspaceLock, dependencies, substitutes)
      ))
  )
  installRows(record, label, installed, `${libraries.join(", ")} beside ${Object.entries(set).map(([name, version]) => `${name}@${version}`).join(", ")}`)
  if (!installed.ok) return
  await input.time(`${label}: npm ls`, async () => {
    await oneCopy(record, label, project, "effect", set["effect"]!)
    await oneCopy(record, label, project, "@effect/platform", set["@effect/platform"]!)
  })
  const workflowPeer = `@effect/workflow ${versionIn(project, "@effect/workflow") ?? "absent"}`

  // Each entry point, and an Effect of the testkit's run by the project's own Effect: `yield*`
  // of an Effect from another copy of effect is what fails ("is not iterable") when there are two.
  const loadsAndYields = [
    ...libraries.map((name) => `await import(${JSON.stringify(name)})`),
    `const { Effect } = await import("effect")`,
    `const { scoped } = await import("@phasebound/testkit")`,
    `console.log(await Effect.runPromise(Effect.scoped(Effect.gen(function*() { return (yield* scoped()).url }))))`
  ].join(";")
  const loads = await input.time(`${label}: entry points`, () => run(process.execPath, ["--input-type=module", "-e", loadsAndYields], project))
  record(
    `${label}: every library's entry point loads; the project's Effect yields the testkit's scoped server`,
    loads.ok && loads.stderr.trim() === "" && loads.stdout.startsWith("http://127.0.0.1:"),
    loads.ok ? `${workflowPeer}; ${loads.ms} ms` : lastLines(loads.stderr || loads.stdout)
  )

  const example = readmeEffectExample(readFileSync(join(input.root, "README.md"), "utf8"))
  const exampleUrl = "http://127.0.0.1:3000/mcp"
  if (example === undefined || !example.includes(JSON.stringify(exampleUrl))) {
    record(`${label}: the README's Effect example runs`, false, `no \`ts\` block with ${exampleUrl} under "## The Effect API" in README.md`)
    return
  }
  const bundled = await bundleInto(project, "readme-example.mjs", { contents: runnableExample(example, exampleUrl) })
  const ran = bundled
    ? await input.time(`${label}: README example`, () => run(process.execPath, ["readme-example.mjs"], project, cleanEnv({ MCP_URL: url })))
    : undefined
  const value = ran === undefined ? undefined : lastJson(ran.stdout)?.["value"]
  const listed = ran?.stdout.split("\n")[0] ?? ""
  record(
    `${label}: the README's Effect example connects, lists the tools and calls add (1 + 2 = 3)`,
    ran !== undefined && ran.ok && ran.stderr.trim() === "" && listed.includes("add") && saysThree(value),
    ran === undefined
      ? "esbuild could not bundle the example"
      : ran.ok
      ? `${ran.ms} ms; printed: ${listed.slice(0, 60)}`
      : `exit ${ran.status}: ${lastLines(ran.stderr || ran.stdout)}`
  )
  const outputs = [installed.stdout, installed.stderr, loads.stdout, loads.stderr, ran?.stdout ?? "", ran?.stderr ?? ""].join("\n")
  record(`${label}: no "Executing an Effect versioned" warning in any output (install, loading, example)`, !VERSION_WARNING.test(outputs), "")
}

/** The last JSON object line of a program's stdout. */
const lastJson = (stdout: string): Record<string, unknown> | undefined => {
  const line = stdout.trim().split("\n").reverse().find((l) => l.startsWith("{"))
  try {
    return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>)
  } catch {
    return undefined
  }
}

/** The Node 22 binary of the workspace's `node22` devDependency (a wrapper whose dependency is `node@22`). */
const node22Of = (root: string) => {
  const require = createRequire(join(root, "package.json"))
  return join(dirname(require.resolve("node22/package.json")), "node_modules/node22/bin/node")
}

/** The median of `times` runs of a command, in milliseconds. */
const medianMs = async (times: number, command: string, args: ReadonlyArray<string>, cwd: string) => {
  const runs: Array<Ran> = []
  for (let i = 0; i < times; i++) runs.push(await run(command, args, cwd))
  const sorted = runs.map((r) => r.ms).sort((a, b) => a - b)
  return { ok: runs.every((r) => r.ok), ms: sorted[Math.floor(times / 2)]!, stderr: runs.map((r) => r.stderr).join("").trim() }
}

/** A Promise user's project with Effect 4 at its root: @phasebound/promise, typed and run. */
const promiseConsumer = async (input: ConsumersInput, record: RecordRow, url: string) => {
  const label = "promise beside effect 4"
  const tarball = input.tarballs.get("@phasebound/promise")
  const effect4 = /^npm:effect@(.+)$/.exec(input.devDependencies["effect4"] ?? "")?.[1]
  if (tarball === undefined || effect4 === undefined) {
    record(
      `${label}: the project can be made`,
      false,
      tarball === undefined ? "@phasebound/promise was not packed" : "no effect4 alias (npm:effect@4.x) in the root devDependencies"
    )
    return
  }
  const project = join(input.temp, "consumer-promise")
  mkdirSync(project, { recursive: true })
  const manifest = JSON.parse(
    spawnSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }).stdout || "{}"
  ) as Record<string, unknown>
  const effectKeys = ["dependencies", "peerDependencies", "optionalDependencies"].flatMap((field) =>
    Object.keys((manifest[field] as Record<string, string> | undefined) ?? {}).map((name) => `${field}.${name}`)
  )
  record(`${label}: the package's manifest has no dependency or peer at all (Effect is inside the bundle)`, effectKeys.length === 0, effectKeys.join(", "))

  const dependencies: Record<string, string> = {
    effect: effect4,
    "@phasebound/promise": `file:${tarball}`,
    "@types/node": input.devDependencies["@types/node"] ?? ""
  }
  const installed = await input.jobs(() =>
    input.time(`${label}: install`, () =>
      installOffline(
        project,
        { name: "phasebound-promise-consumer", private: true, type: "module", dependencies, allowScripts: input.allowScripts },
        seededLock(input.workspaceLock, dependencies, { effect4: "effect" })
      ))
  )
  installRows(record, label, installed, `@phasebound/promise beside effect@${effect4}`)
  if (!installed.ok) return
  await input.time(`${label}: npm ls`, () => oneCopy(record, label, project, "effect", effect4))
  const installedDir = join(project, "node_modules/@phasebound/promise")
  const onDisk = readdirSync(installedDir, { recursive: true }).map(String).filter((file) => file.includes("node_modules"))
  record(`${label}: the package brings no node_modules of its own (no second effect on disk)`, onDisk.length === 0, onDisk.slice(0, 3).join(", "))

  const declarations = readdirSync(join(installedDir, "dist")).filter((file) => file.endsWith(".d.ts"))
  const imports = declarations.flatMap((file) =>
    [...readFileSync(join(installedDir, "dist", file), "utf8").matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)]
      .map((match) => match[1]!)
      .filter((specifier) => !specifier.startsWith("./"))
      .map((specifier) => `${file}: ${specifier}`)
  )
  record(
    `${label}: its declarations (${declarations.join(", ")}) import nothing but each other`,
    declarations.length > 0 && imports.length === 0,
    imports.slice(0, 4).join(", ")
  )

  // The consumer file, type-checked in the project (its node_modules only) by the workspace's tsc.
  writeFileSync(join(project, "consumer.ts"), readFileSync(join(input.root, "packages/qualify/program/consumer-promise.ts"), "utf8"))
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          skipLibCheck: false,
          types: ["node"]
        },
        files: ["consumer.ts"]
      },
      null,
      2
    ) + "\n"
  )
  const tsc = await input.time(
    `${label}: tsc`,
    () => run(process.execPath, [join(input.root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], project)
  )
  record(
    `${label}: tsc --noEmit of a TypeScript consumer against the installed declarations (skipLibCheck off)`,
    tsc.ok,
    tsc.ok ? `${tsc.ms} ms` : lastLines(tsc.stdout || tsc.stderr, 6)
  )

  const node22 = node22Of(input.root)
  const bundled = await bundleInto(project, "consumer.mjs", { file: join(project, "consumer.ts") })
  const ran = bundled
    ? await input.time(`${label}: consumer under Node 22`, () => run(node22, ["consumer.mjs"], project, cleanEnv({ MCP_URL: url })))
    : undefined
  const seen = ran === undefined ? undefined : lastJson(ran.stdout)
  record(
    `${label}: the consumer runs under Node 22: connects, lists the tools, calls add (1 + 2 = 3)`,
    ran !== undefined && ran.ok && ran.stderr.trim() === "" && Array.isArray(seen?.["tools"]) && (seen["tools"] as Array<unknown>).includes("add") &&
      saysThree(seen?.["result"]),
    ran === undefined
      ? "esbuild could not bundle the consumer"
      : ran.ok
      ? `${ran.ms} ms, ${String(seen?.["protocolVersion"])}`
      : `exit ${ran.status}: ${lastLines(ran.stderr || ran.stdout)}`
  )
  record(
    `${label}: no "Executing an Effect versioned" warning in any output`,
    !VERSION_WARNING.test([installed.stdout, installed.stderr, ran?.stdout, ran?.stderr].join("\n")),
    ""
  )

  const bytes = existsSync(join(installedDir, "dist/index.js")) ? readFileSync(join(installedDir, "dist/index.js")).length : 0
  const [importing, bare] = await input.time(`${label}: start-up, median of 5`, async () => [
    await medianMs(5, node22, ["-e", "import('@phasebound/promise')"], project),
    await medianMs(5, node22, ["-e", "0"], project)
  ])
  record(
    `${label}: node -e "import('@phasebound/promise')" loads it (start-up, median of 5, beside node -e 0)`,
    importing.ok && importing.stderr === "",
    importing.ok ? `${importing.ms} ms vs ${bare.ms} ms; dist/index.js ${bytes} bytes` : lastLines(importing.stderr)
  )
}

/**
 * The table: the three projects side by side (their installs bounded by `input.jobs`), their rows
 * in a fixed order: the lowest Effect 3, the newest, the Promise package.
 */
export const qualifyConsumers = async (input: ConsumersInput): Promise<ReadonlyArray<ConsumerRow>> => {
  const server = await startServer()
  const tables: Array<Array<ConsumerRow>> = [[], [], []]
  const recordIn = (rows: Array<ConsumerRow>): RecordRow => (name, ok, detail = "") => {
    rows.push({ name, ok, detail })
  }
  try {
    const aliases = floorAliases(input.devDependencies)
    // The project pins the whole set but what a package of it depends on (platform-node-shared,
    // which the seeded lock places): npm resolves a peer that no dependency of the project pins
    // (@effect/cluster, a peer of @effect/platform-node) at the newest version its range allows,
    // not at the locked one, and that newest one wants a newer @effect/platform than the floor's.
    const dependedOn = new Set(
      Object.keys(aliases).flatMap((alias) =>
        Object.keys((input.workspaceLock.packages?.[`node_modules/${alias}`]?.["dependencies"] ?? {}) as Record<string, string>)
      )
    )
    const floor = Object.fromEntries(
      Object.values(aliases).filter(({ name }) => !dependedOn.has(name)).map(({ name, version }) => [name, version])
    )
    const floorSubstitutes = Object.fromEntries(Object.entries(aliases).map(([alias, { name }]) => [alias, name]))
    const newest = Object.fromEntries(EFFECT_PACKAGES.map((name) => [name, input.devDependencies[name] ?? ""]))
    const [lowestRows, newestRows, promiseRows] = tables as [Array<ConsumerRow>, Array<ConsumerRow>, Array<ConsumerRow>]
    await Promise.all([
      EFFECT_PACKAGES.every((name) => floor[name] !== undefined)
        ? effectConsumer(input, recordIn(lowestRows), `effect ${floor["effect"]} (lowest supported)`, floor, floorSubstitutes, server.url)
        : recordIn(lowestRows)(
          "the lowest supported Effect set is locked in the workspace",
          false,
          `root devDependencies need effect-floor aliases of ${EFFECT_PACKAGES.join(", ")}`
        ),
      effectConsumer(input, recordIn(newestRows), `effect ${newest["effect"]} (newest)`, newest, {}, server.url),
      promiseConsumer(input, recordIn(promiseRows), server.url)
    ])
  } finally {
    await server.close()
  }
  return tables.flat()
}
