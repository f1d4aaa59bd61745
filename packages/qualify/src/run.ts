/**
 * `npm run qualify`: the qualification of the packed public packages.
 *
 * 1. builds @phasebound/client, @phasebound/promise, @phasebound/testkit, @phasebound/cli and,
 *    where the workspace has them, @phasebound/workflow and @phasebound/ai as their `prepack`s do, each build once
 *    (src/builds.ts), then `npm pack --ignore-scripts`es them;
 * 2. installs the tarballs (all but the Promise bundle's) beside their Effect peers, pinned at the
 *    workspace's versions, into a fresh project under os.tmpdir() (no workspace links, no path
 *    mapping: the project's own node_modules is all it resolves from), offline, from the npm cache
 *    that the workspace's `npm ci` filled (src/install.ts: the lockfile seeded from the workspace's);
 * 3. runs ONE program (program/qualify.ts) through the public exports only, under `node` and
 *    under `bun`, and checks that it exits by itself with no handle left open; the same for the
 *    workflow package (program/qualify-workflow.ts) and the ai package (program/qualify-ai.ts);
 * 4. compiles the INSTALLED CLI with `bun build --compile` and drives it (program/qualify-cli.ts),
 *    side by side with the programs of step 3;
 * 5. installs them again the way new users do, beside the Effect they have: the lowest and the
 *    newest supported Effect 3, and Effect 4 for @phasebound/promise (src/consumers.ts), beside
 *    the CLI's program of step 4 once those of step 3 are done;
 * 6. prints a table per runtime, then `N passed, N failed`; exits non-zero on any failure.
 *
 * The programs are TypeScript, type-checked with the workspace (root tsconfig.json, where
 * @phasebound/* resolve to the sources through the "@phasebound/source" condition). The project
 * has no TypeScript loader and runs under node 20, so each program is bundled into it with
 * esbuild as plain ESM, every package import left external (`packages: "external"`): what the
 * program imports at run time is the installed tarballs. This orchestrator itself runs under
 * `tsx --conditions=@phasebound/source` (the root `qualify` script): it reads the programs'
 * reports with the testkit's `readReport` and checks their children with `isRunning`, from the
 * workspace's sources, so that its judgement does not depend on the tarballs it judges.
 *
 * Every program ends its stdout with one report line (@phasebound/testkit's `formatReport`);
 * a program without a decodable one is a failed row.
 *
 * Environment: QUALIFY_KEEP=1 keeps the temporary project (rerun a program there with
 * `node qualify.mjs`); QUALIFY_VERBOSE=1 echoes the programs' output; QUALIFY_TIMINGS=1 prints
 * how long each phase took (src/timings.ts); QUALIFY_JOBS=N runs N builds, packs and installs
 * at a time (by default one per core).
 */
import { isRunning, type ProcessIdentity, readReport, REPORT_PREFIX, type ReportReading } from "@phasebound/testkit"
import { build } from "esbuild"
import { spawn } from "node:child_process"
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { bounded } from "./bounded.js"
import { buildPlan, prepackBuilds } from "./builds.js"
import { type Ran, runCommand } from "./command.js"
import { qualifyConsumers } from "./consumers.js"
import { closedSubpaths, exportedModules, judgeExposure, probeProgram } from "./exposed.js"
import { copiesOf, installOffline, type Lockfile, seededLock, whyInstall } from "./install.js"
import { checkEffectPeers, checkTarball, type Manifest } from "./tarball.js"
import { formatTimings, makeTimings } from "./timings.js"

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, "../../..")
const programDir = resolve(here, "../program")
const bun = join(root, "node_modules/.bin/bun")
const keep = process.env.QUALIFY_KEEP === "1"
const verbose = process.env.QUALIFY_VERBOSE === "1"
const timings = makeTimings()
const timed = timings.time
/** How many builds, packs and installs run at a time (QUALIFY_JOBS; by default one per core). */
const jobs = bounded(Math.max(1, Number(process.env.QUALIFY_JOBS) || availableParallelism()))

/** How long a qualification program may run before it is killed (and failed). */
const PROGRAM_TIMEOUT_MS = 240_000
/** A file of dist/ older than its build's start by more than this was not written by it (file times are coarse). */
const MTIME_SLACK_MS = 2_000
/** After its last line, a program must have exited by itself within this time: no handle left open. */
const EXIT_GRACE_MS = 3_000
/** Canary secrets the programs use; none may appear in anything they print. */
const CANARY_PATTERN = /CANARY|canaryuser/

const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  readonly devDependencies?: Record<string, string>
  readonly allowScripts?: unknown
}
/** The workspace's exact versions (root devDependencies): what the tarballs' peers get in the project. */
const workspacePins: Record<string, string> = rootManifest.devDependencies ?? {}
const pinned: Record<string, string> = Object.fromEntries(
  ["effect", "@effect/platform", "@effect/platform-node"].map((name) => [name, workspacePins[name] ?? ""])
)
const publicPackages = [
  { name: "@phasebound/client", dir: "packages/client" },
  { name: "@phasebound/promise", dir: "packages/promise" },
  { name: "@phasebound/testkit", dir: "packages/testkit" },
  { name: "@phasebound/cli", dir: "packages/cli" },
  { name: "@phasebound/workflow", dir: "packages/workflow" },
  { name: "@phasebound/ai", dir: "packages/ai" }
].filter((pkg) => existsSync(join(root, pkg.dir, "package.json")))
const WORKFLOW = "@phasebound/workflow"
const AI = "@phasebound/ai"
/** Peers a package's program needs beside Effect's own, at the versions the workspace pins: @effect/workflow at the root, @effect/ai in packages/ai. */
const programPeers: Record<string, { readonly peer: string; readonly pin: string | undefined }> = {
  [WORKFLOW]: { peer: "@effect/workflow", pin: workspacePins["@effect/workflow"] },
  [AI]: {
    peer: "@effect/ai",
    pin: existsSync(join(root, "packages/ai/package.json"))
      ? (JSON.parse(readFileSync(join(root, "packages/ai/package.json"), "utf8")) as { devDependencies?: Record<string, string> }).devDependencies
        ?.["@effect/ai"]
      : undefined
  }
}
/** The install-script approvals the workspace made (package.json `allowScripts`), carried to the project. */
const allowScripts: unknown = rootManifest.allowScripts

/**
 * Bundles `program/<name>.ts` into the project as `<name>.mjs`: plain ESM for node 20 and bun,
 * every package import (@phasebound/*, effect, @effect/*) left a bare import that the project's
 * node_modules resolves, so the installed tarballs are what runs.
 */
const bundleProgram = async (name: string): Promise<{ ok: true; file: string } | { ok: false; why: string }> => {
  const file = `${name}.mjs`
  try {
    const result = await build({
      entryPoints: [join(programDir, `${name}.ts`)],
      outfile: join(project, file),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      packages: "external",
      metafile: true,
      logLevel: "silent"
    })
    if (result.errors.length > 0) return { ok: false, why: result.errors.map((e) => e.text).join("; ") }
    // The program and the programs' harness alone are bundled: any other relative import would
    // carry workspace code into the project, and the qualification would judge that instead of
    // the tarballs.
    const inlined = Object.keys(result.metafile.inputs).filter((input) => !input.endsWith(`program/${name}.ts`) && !input.endsWith("program/harness.ts"))
    return inlined.length === 0 ? { ok: true, file } : { ok: false, why: `bundles workspace files, not only package imports: ${inlined.join(", ")}` }
  } catch (error) {
    return { ok: false, why: error instanceof Error ? error.message.split("\n").slice(0, 4).join(" ") : String(error) }
  }
}

interface Row {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}
/** Rows by table: package (build, pack, install), node, bun, workflow (node), workflow (bun), cli, consumers. */
const tables = new Map<string, Array<Row>>()
const record = (table: string, name: string, ok: boolean, detail: string = "") => {
  const rows = tables.get(table) ?? []
  tables.set(table, rows)
  rows.push({ name, ok, detail })
}

const tail = (text: string, lines = 15) => text.trim().split("\n").slice(-lines).join("\n")

const why = (r: Ran) => `exit ${r.status}${r.error ? ` (${r.error.code ?? r.error.message})` : ""}: ${tail(r.stderr || r.stdout, 6)}`

interface ProgramOutcome {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly killed: boolean
  readonly stdout: string
  readonly stderr: string
  readonly report: ReportReading
  readonly totalMs: number
  readonly exitAfterReportMs: number | undefined
}

/**
 * Runs a qualification program, streaming its output: the report line is timed, so that "it
 * exits by itself shortly after its last scenario" is measured, not assumed.
 */
const runProgram = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<ProgramOutcome>((resolvePromise) => {
    const started = Date.now()
    const child = spawn(command, args, { cwd, env: programEnv, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let reportAt: number | undefined
    let killed = false
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (chunk) => {
      stdout += chunk
      if (verbose) process.stdout.write(chunk)
      if (reportAt === undefined && stdout.includes(REPORT_PREFIX) && stdout.slice(stdout.indexOf(REPORT_PREFIX)).includes("\n")) {
        reportAt = Date.now()
      }
    })
    child.stderr.on("data", (chunk) => {
      stderr += chunk
      if (verbose) process.stderr.write(chunk)
    })
    const timer = setTimeout(() => {
      killed = true
      child.kill("SIGKILL")
    }, PROGRAM_TIMEOUT_MS)
    child.on("error", (error) => {
      stderr += String(error)
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      const exitedAt = Date.now()
      resolvePromise({
        code,
        signal,
        killed,
        stdout,
        stderr,
        report: readReport(stdout),
        totalMs: exitedAt - started,
        exitAfterReportMs: reportAt === undefined ? undefined : exitedAt - reportAt
      })
    })
  })

/**
 * The rows every program run gets from the outside, beside the program's own scenarios. Whether
 * a child it reported (`{ pid, start }`) still runs is the testkit's `isRunning`, which compares
 * the start time too, so that a pid given to another process since (the pid space wraps within
 * minutes on a busy machine) is not taken for the child.
 */
const judgeProgram = (table: string, label: string, outcome: ProgramOutcome) => {
  const { report } = outcome
  if (report._tag === "NoReport") {
    record(
      table,
      `${label}: ran to its end and printed its report`,
      false,
      `${report.why}; exit ${outcome.code ?? outcome.signal}: ${tail(outcome.stderr || outcome.stdout, 10)}`
    )
  } else {
    for (const row of report.report.results) record(table, row.name, row.ok, row.detail)
  }
  record(
    table,
    `${label}: exits by itself, no handle left open (within ${EXIT_GRACE_MS} ms of its last line; killed at ${PROGRAM_TIMEOUT_MS / 1000} s)`,
    !outcome.killed && outcome.exitAfterReportMs !== undefined && outcome.exitAfterReportMs <= EXIT_GRACE_MS,
    outcome.killed
      ? `killed after ${PROGRAM_TIMEOUT_MS} ms`
      : `exited ${outcome.exitAfterReportMs ?? "?"} ms after its report, ${outcome.totalMs} ms in all`
  )
  const failed = report._tag === "NoReport" ? 1 : report.failed.length
  record(
    table,
    `${label}: exit code says whether it passed (0 iff every scenario passed)`,
    report._tag === "Report" && (outcome.code === 0) === (failed === 0),
    `exit ${outcome.code ?? outcome.signal}, ${failed} failed`
  )
  const unexpectedStderr = outcome.stderr.trim()
  record(table, `${label}: nothing on stderr`, unexpectedStderr === "", unexpectedStderr === "" ? "" : tail(unexpectedStderr, 5))
  const leaked = (outcome.stdout + outcome.stderr).match(CANARY_PATTERN)
  record(table, `${label}: no canary secret anywhere in its output`, leaked === null, leaked === null ? "" : `found ${leaked[0]}`)
  const children: ReadonlyArray<ProcessIdentity> = report._tag === "Report" ? report.report.children ?? [] : []
  const alive = children.filter((child) => isRunning(child)).map((child) => child.pid)
  record(
    table,
    `${label}: no stdio child outlives the program (${children.length} children spawned)`,
    report._tag === "Report" && alive.length === 0,
    alive.length === 0 ? "" : `alive: ${alive.join(", ")}`
  )
  for (const pid of alive) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone meanwhile
    }
  }
}

// ---------------------------------------------------------------------------------------------

const temp = mkdtempSync(join(tmpdir(), "phasebound-qualify-"))
const packs = join(temp, "packs")
const project = join(temp, "project")
mkdirSync(packs)
mkdirSync(project)
/** The programs get a clean environment: nothing that could map paths or leak a secret. */
const programEnv: NodeJS.ProcessEnv = {
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? temp,
  TMPDIR: process.env.TMPDIR ?? tmpdir(),
  LANG: process.env.LANG ?? "C.UTF-8",
  NO_COLOR: "1"
}

const overallStarted = Date.now()
try {
  // 1. Build each public package the way its `prepack` does, each build once (src/builds.ts: the
  // client's, which the promise and workflow prepacks run first, too), then `npm pack
  // --ignore-scripts` it; the tarball checks below see what that produced.
  const manifests = new Map(publicPackages.map((pkg) => [pkg.name, JSON.parse(readFileSync(join(root, pkg.dir, "package.json"), "utf8")) as Manifest]))
  const chains = new Map(publicPackages.map((pkg) => {
    const manifest = manifests.get(pkg.name)!
    return [pkg.name, manifest.scripts?.build === undefined ? undefined : prepackBuilds(pkg.dir, manifest.scripts?.prepack)]
  }))
  const plan = buildPlan([...chains.values()].filter((chain) => chain !== undefined))
  const builds = new Map<string, Promise<Ran & { readonly startedAt: number }>>()
  for (const { dir, after } of plan) {
    builds.set(
      dir,
      (async () => {
        const before = await Promise.all(after.map((earlier) => builds.get(earlier)!))
        const failed = after.filter((_, index) => !before[index]!.ok)
        if (failed.length > 0) {
          return {
            ok: false,
            status: null,
            stdout: "",
            stderr: `not run: the build of ${failed.join(", ")} failed`,
            error: undefined,
            ms: 0,
            startedAt: Date.now()
          }
        }
        return jobs(async () => {
          const startedAt = Date.now()
          // --silent: npm prints no banner, so stdout is the build's own (none: `npm pack --json`,
          // which runs it as the prepack, keeps stdout for its JSON).
          const built = await timed(`npm run build in ${dir}`, () => runCommand("npm", ["run", "build", "--silent"], { cwd: join(root, dir) }))
          return { ...built, startedAt }
        })
      })()
    )
  }
  const packing = new Map(publicPackages.map((pkg) => {
    const chain = chains.get(pkg.name)
    return [
      pkg.name,
      (async () => {
        if (chain === undefined) return undefined
        const built = await Promise.all(chain.map((dir) => builds.get(dir)!))
        if (!built.every((b) => b.ok)) return { built, packed: undefined }
        const packed = await jobs(() =>
          timed(
            `npm pack ${pkg.name}`,
            () => runCommand("npm", ["pack", "-w", pkg.name, "--ignore-scripts", "--pack-destination", packs, "--json"], { cwd: root })
          )
        )
        return { built, packed }
      })()
    ]
  }))
  const tarballs = new Map<string, { file: string; files: ReadonlyArray<string>; manifest: Manifest }>()
  for (const pkg of publicPackages) {
    const manifest = manifests.get(pkg.name)!
    const chain = chains.get(pkg.name)
    record(
      "package",
      `npm pack builds ${pkg.name} (prepack runs its build)`,
      chain !== undefined,
      chain !== undefined
        ? `prepack: ${manifest.scripts?.prepack}`
        : `no prepack that is a chain of builds ending in its own: ${manifest.scripts?.prepack ?? "none"}`
    )
    const outcome = await packing.get(pkg.name)!
    if (outcome === undefined || chain === undefined) continue
    const { built, packed } = outcome
    const quiet = built.every((b) => b.ok && b.stdout.trim() === "")
    record(
      "package",
      `${pkg.name}: its prepack's builds ran (${chain.join(", then ")}; each once in the qualification), nothing on stdout`,
      quiet,
      built.map((b, index) => `${chain[index]} ${b.ok ? `${b.ms} ms${b.stdout.trim() === "" ? "" : `, stdout: ${tail(b.stdout, 2)}`}` : why(b)}`).join("; ")
    )
    if (packed === undefined) continue
    let info: { filename: string; entryCount: number; size: number; files: ReadonlyArray<{ path: string }> } | undefined
    try {
      info = (JSON.parse(packed.stdout) as Array<typeof info>)[0]
    } catch {
      info = undefined
    }
    if (packed.ok && info !== undefined && existsSync(join(packs, info.filename))) {
      record("package", `npm pack --ignore-scripts ${pkg.name}: stdout is only JSON`, true, `${info.filename}, ${info.entryCount} files, ${info.size} bytes`)
      tarballs.set(pkg.name, { file: join(packs, info.filename), files: info.files.map((f) => f.path), manifest })
      // A fresh clone has no dist/: its prepack's tarball holds only what the build writes. Here
      // dist/ may hold files of an earlier build; each one the tarball ships must have been
      // written by the build just run (tsc, esbuild and the bundlers rewrite every output).
      const ownBuild = built[built.length - 1]!
      const stale = info.files.map((f) => f.path).filter((file) => file.startsWith("dist/"))
        .filter((file) => statSync(join(root, pkg.dir, file)).mtimeMs < ownBuild.startedAt - MTIME_SLACK_MS)
      record(
        "package",
        `${pkg.name}: every dist/ file in the tarball was written by this build (nothing stale: what a fresh clone's prepack ships)`,
        stale.length === 0,
        stale.length === 0 ? "" : `older than the build: ${stale.slice(0, 5).join(", ")}`
      )
    } else {
      record("package", `npm pack --ignore-scripts ${pkg.name}: stdout is only JSON`, false, packed.ok ? `stdout: ${tail(packed.stdout, 3)}` : why(packed))
    }
  }

  // What each tarball holds, read from its file list; the source maps from the build the pack
  // just made in the package's directory.
  for (const [name, { files, manifest }] of tarballs) {
    const dir = join(root, publicPackages.find((pkg) => pkg.name === name)!.dir)
    const modules = readdirSync(join(dir, "src"))
      .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
      .map((file) => file.slice(0, -".ts".length))
    const mapSources = (map: string) => (JSON.parse(readFileSync(join(dir, map), "utf8")) as { sources: ReadonlyArray<string> }).sources
    for (const check of [...checkTarball(manifest, files, modules, mapSources), checkEffectPeers(manifest)]) {
      record("package", `${name}: ${check.name}`, check.problems.length === 0, check.problems.slice(0, 5).join("; "))
    }
  }
  const testkitFiles = tarballs.get("@phasebound/testkit")?.files ?? []
  const children = ["dist/stdio/stdio-server.mjs", "dist/stdio/hostile-stdio-server.mjs"]
  const unbundled = children.filter((file) => !testkitFiles.includes(file))
  record(
    "package",
    "@phasebound/testkit: its stdio child programs ship bundled beside the dist that spawns them",
    unbundled.length === 0,
    unbundled.length === 0 ? "" : `missing: ${unbundled.join(", ")}`
  )

  // 2. A fresh project that depends on the tarballs and the pinned Effect packages only (the
  // tarballs' peers), installed with `npm install --offline` from the npm cache that the
  // workspace's own `npm ci` filled, its lockfile seeded from the workspace's (src/install.ts).
  const workspaceLock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as Lockfile
  const install = (names: ReadonlyArray<string>) => {
    const dependencies = { ...pinned }
    for (const name of names) dependencies[name] = `file:${tarballs.get(name)?.file}`
    // The workflow program defines its workflow with @effect/workflow, the ai program its model
    // with @effect/ai, each a peer of its package: the version the workspace pins.
    for (const [name, { peer, pin }] of Object.entries(programPeers)) {
      if (names.includes(name) && tarballs.get(name)?.manifest.peerDependencies?.[peer] !== undefined && pin !== undefined) dependencies[peer] = pin
    }
    return jobs(() =>
      timed(`install ${names.join(", ")}`, () =>
        installOffline(
          project,
          { name: "phasebound-qualification", private: true, type: "module", dependencies, allowScripts },
          seededLock(workspaceLock, dependencies)
        ))
    )
  }
  const libraries = ["@phasebound/client", "@phasebound/testkit"].filter((name) => tarballs.has(name))
  let installed: ReadonlyArray<string> = []
  if (libraries.length === 2) {
    // @phasebound/promise is not among them: it goes into a project of its own, beside Effect 4 (step 6).
    const all = [...libraries, ...["@phasebound/cli", WORKFLOW, AI].filter((name) => tarballs.has(name))]
    let result = await install(all)
    if (result.ok) installed = all
    else if (all.length > 2) {
      record("package", `npm install of all ${all.length} tarballs`, false, whyInstall(result))
      result = await install(libraries)
      if (result.ok) installed = libraries
    }
    record(
      "package",
      `npm install ${installed.join(", ") || "(failed)"} into a fresh project`,
      result.ok,
      result.ok ? `${result.ms} ms, ${project}` : whyInstall(result)
    )
    const offline = result.ok && result.network.length === 0 && result.fromCache > 0
    record(
      "package",
      "the install was offline: npm install --offline from the workspace's npm cache",
      offline,
      offline
        ? `${result.added ?? "?"} packages; ${result.fromCache} reads, all from the cache; 0 network requests`
        : result.ok
        ? `${result.network.length} request(s) not served from the cache: ${result.network.slice(0, 3).join(" | ")}`
        : whyInstall(result)
    )
  } else {
    record("package", "npm install into a fresh project", false, "the client and testkit tarballs are needed")
  }

  for (const name of installed) {
    const path = join(project, "node_modules", name)
    const stat = lstatSync(path)
    const manifest = JSON.parse(readFileSync(join(path, "package.json"), "utf8")) as { version: string }
    record(
      "package",
      `${name} is installed from its tarball (a real directory, not a workspace link)`,
      !stat.isSymbolicLink() && stat.isDirectory(),
      `version ${manifest.version}`
    )
  }
  if (installed.length > 0) {
    const copies = await timed("npm ls effect", () => copiesOf(project, "effect"))
    record("package", `one copy of effect in the project (the pinned ${pinned["effect"]})`, copies.ok && copies.paths.length === 1, copies.paths.join(", "))
  }
  const clientFiles = tarballs.get("@phasebound/client")?.files
  if (installed.includes("@phasebound/client") && clientFiles !== undefined) {
    const modules = exportedModules(clientFiles)
    const probed = await timed(
      "the exposure probe",
      () => runCommand(process.execPath, ["--input-type=module", "-e", probeProgram("@phasebound/client", modules)], { cwd: project, env: programEnv })
    )
    const problems = probed.ok ? judgeExposure(modules, probed.stdout) : [why(probed)]
    record(
      "package",
      `@phasebound/client exposes its public modules only: each loads, the index holds the others; ${
        closedSubpaths.join(", ")
      } do not resolve; no public value is a transport's or an era's`,
      problems.length === 0,
      problems.length === 0 ? `${modules.length} modules: ${modules.join(", ")}` : problems.slice(0, 5).join("; ")
    )
  }

  // 3. The library qualification under node and under bun, and 3b. the workflow and ai packages through
  // its public exports under both; 4. the CLI, compiled from the installed package, then driven
  // like the library. They run side by side (each program has its own loopback servers on port
  // 0 and waits on them far more than it computes); the programs are judged in a fixed order.
  const programs: Array<{ table: string; label: string; running: Promise<ProgramOutcome> }> = []
  const runtimes = [["node", process.execPath], ["bun", bun]] as const
  if (installed.includes("@phasebound/client") && installed.includes("@phasebound/testkit")) {
    const bundled = await bundleProgram("qualify")
    for (const [runtime, command] of runtimes) {
      if (bundled.ok) {
        programs.push({
          table: runtime,
          label: `${runtime} qualify.mjs`,
          running: timed(`${runtime} qualify.mjs`, () => runProgram(command, [bundled.file], project))
        })
      } else record(runtime, "esbuild bundles program/qualify.ts", false, bundled.why)
    }
  } else {
    record("node", "the qualification program ran", false, "the packages did not install")
    record("bun", "the qualification program ran", false, "the packages did not install")
  }
  // The workflow and ai packages, each through its own program's public imports, under both.
  for (
    const { name, program, table } of [
      { name: WORKFLOW, program: "qualify-workflow", table: "workflow" },
      { name: AI, program: "qualify-ai", table: "ai" }
    ]
  ) {
    if (!publicPackages.some((pkg) => pkg.name === name)) continue
    if (!installed.includes(name)) {
      record(table, `${name} built, packed and installed`, false, `see the package table: the ${table} program could not run`)
      continue
    }
    const bundled = await bundleProgram(program)
    for (const [runtime, command] of runtimes) {
      if (bundled.ok) {
        programs.push({
          table: `${table} (${runtime})`,
          label: `${runtime} ${program}.mjs`,
          running: timed(`${runtime} ${program}.mjs`, () => runProgram(command, [bundled.file], project))
        })
      } else {
        record(`${table} (${runtime})`, `esbuild bundles program/${program}.ts`, false, bundled.why)
      }
    }
  }
  const cliPart = (async () => {
    if (!installed.includes("@phasebound/cli")) {
      record("cli", "the @phasebound/cli package built, packed and installed", false, "see the package table: the CLI part could not run")
    } else {
      const cliDir = join(project, "node_modules/@phasebound/cli")
      const manifest = JSON.parse(readFileSync(join(cliDir, "package.json"), "utf8")) as Manifest
      const binPath = typeof manifest.bin === "string" ? manifest.bin : manifest.bin?.phasebound
      const binFile = binPath === undefined ? undefined : join(cliDir, binPath)
      const binOk = binFile !== undefined && existsSync(binFile)
      record("cli", "the installed package declares the `phasebound` bin and ships it", binOk, binPath ?? "no bin.phasebound in package.json")
      const linked = join(project, "node_modules/.bin/phasebound")
      record("cli", "npm linked node_modules/.bin/phasebound", existsSync(linked), "")
      const compiled = join(project, "phasebound")
      if (binOk) {
        const result = await timed(
          "bun build --compile the cli",
          () => runCommand(bun, ["build", "--compile", binFile, "--outfile", compiled], { cwd: project })
        )
        record("cli", "bun build --compile of the installed bin", result.ok && existsSync(compiled), result.ok ? `${result.ms} ms` : why(result))
      }
      if (binOk && existsSync(compiled)) {
        const bundled = await bundleProgram("qualify-cli")
        if (bundled.ok) {
          const outcome = await timed(
            "node qualify-cli.mjs",
            () => runProgram(process.execPath, [bundled.file, "--compiled", compiled, "--bin", binFile, "--bun", bun], project)
          )
          judgeProgram("cli", "qualify-cli.mjs", outcome)
        } else {
          record("cli", "esbuild bundles program/qualify-cli.ts", false, bundled.why)
        }
      }
    }
  })()
  for (const program of programs) judgeProgram(program.table, program.label, await program.running)
  // 5. The packages as new users install them, each into a project of its own beside the Effect
  // they already have (src/consumers.ts): beside the CLI's program, the longest, once the library
  // programs, whose scenarios time the client closely, are done; its rows are recorded last.
  const consumers = timed("the consumers table", () =>
    qualifyConsumers({
      root,
      temp,
      tarballs: new Map([...tarballs].map(([name, { file }]) => [name, file])),
      workspaceLock,
      devDependencies: workspacePins,
      allowScripts,
      jobs,
      time: timed
    })).catch((
      error: unknown
    ) => [{ name: "the consumers table ran", ok: false, detail: error instanceof Error ? error.stack ?? error.message : String(error) }])
  await cliPart
  for (const row of await consumers) record("consumers", row.name, row.ok, row.detail)
} catch (error) {
  record("package", "the orchestrator itself", false, error instanceof Error ? error.stack ?? error.message : String(error))
} finally {
  if (!keep) rmSync(temp, { recursive: true, force: true })
}

// 6. Tables, then the count.
let passed = 0
let failed = 0
const width = Math.min(110, Math.max(...[...tables.values()].flat().map((row) => row.name.length)))
for (const [name, rows] of tables) {
  console.log(`\n== ${name} ${"=".repeat(Math.max(0, width + 4 - name.length))}`)
  for (const row of rows) {
    if (row.ok) passed += 1
    else failed += 1
    const detail = row.detail.replace(/\s+/g, " ").slice(0, row.ok ? 80 : 400)
    console.log(`${row.ok ? "PASS" : "FAIL"}  ${row.name.padEnd(width)}  ${detail}`)
  }
}
// A CI log often keeps only its tail: the failures are repeated above the count.
const failures = [...tables].flatMap(([name, rows]) => rows.filter((row) => !row.ok).map((row) => ({ name, row })))
if (failures.length > 0) {
  console.log(`\n== failed ${"=".repeat(Math.max(0, width - 2))}`)
  for (const { name, row } of failures) {
    console.log(`FAIL  [${name}] ${row.name}  ${row.detail.replace(/\s+/g, " ").slice(0, 400)}`)
  }
}
if (process.env.QUALIFY_TIMINGS === "1") console.log(`\n${formatTimings(timings.phases, Date.now() - overallStarted)}`)
console.log(`\n(${Math.round((Date.now() - overallStarted) / 1000)} s${keep ? `, kept ${temp}` : ""})`)
console.log(`${passed} passed, ${failed} failed`)
if (failed > 0) process.exitCode = 1
