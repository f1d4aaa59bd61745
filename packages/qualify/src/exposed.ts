/**
 * What the installed @phasebound/client lets a consumer import: its index and the modules of its
 * `"./*"` export, never a transport or an era (internal, since `connect` takes neither:
 * docs/DESIGN.md, "Module map") nor anything under `internal/`. A probe program runs in the
 * qualification's project against the installed tarball and prints one JSON line; `judgeExposure`
 * reads it. Pure: the caller runs the probe.
 */

/** The subpaths a consumer must not reach: the modules that left, and internal/ (exported as null). */
export const closedSubpaths: ReadonlyArray<string> = [
  "Transport",
  "StreamableHttp",
  "LegacySse",
  "Stdio",
  "ProtocolEra",
  "internal/transport/transport",
  "internal/era"
]

/** The files of the transports and the eras, whose values no public module may export. */
const internalFiles: ReadonlyArray<string> = [
  "dist/internal/transport/transport.js",
  "dist/internal/transport/streamableHttp.js",
  "dist/internal/transport/legacySse.js",
  "dist/internal/transport/stdio.js",
  "dist/internal/handshakeEra.js",
  "dist/internal/statelessEra.js"
]

/** The modules a tarball exports: its top-level `dist/*.js` (the index is `"."`, the rest `"./*"`). */
export const exportedModules = (files: ReadonlyArray<string>): ReadonlyArray<string> =>
  files.flatMap((file) => {
    const match = /^dist\/([^/]+)\.js$/.exec(file)
    return match === null ? [] : [match[1]!]
  }).sort()

/** What the probe prints. */
export interface Exposure {
  /** Each subpath that loaded, with the names it exports. */
  readonly loaded: Record<string, ReadonlyArray<string>>
  /** Each subpath that did not, with the error's code. */
  readonly refused: Record<string, string>
  /** `module: export is internal-file#name`, for each value of an internal file a public module exports. */
  readonly leaks: ReadonlyArray<string>
}

/**
 * The probe, an ES module for `node --input-type=module -e` in the project: it imports the
 * internal files by path (outside the export map, as no consumer can), then every exported module
 * and every closed subpath by name, and prints an `Exposure`.
 */
export const probeProgram = (pkg: string, modules: ReadonlyArray<string>): string => `
const { pathToFileURL } = await import("node:url")
const root = new URL("node_modules/${pkg}/", pathToFileURL(process.cwd() + "/"))
const internal = new Map()
for (const file of ${JSON.stringify(internalFiles)}) {
  for (const [name, value] of Object.entries(await import(new URL(file, root).href))) {
    if ((typeof value === "object" && value !== null) || typeof value === "function") internal.set(value, file + "#" + name)
  }
}
const isNamespace = (value) => Object.prototype.toString.call(value) === "[object Module]"
const exposure = { loaded: {}, refused: {}, leaks: [] }
const attempt = async (name) => {
  try {
    const exports = await import(name === "index" ? ${JSON.stringify(pkg)} : ${JSON.stringify(pkg + "/")} + name)
    exposure.loaded[name] = Object.keys(exports).sort()
    for (const [key, value] of Object.entries(exports)) {
      const inner = isNamespace(value) ? Object.entries(value).map(([k, v]) => [key + "." + k, v]) : []
      for (const [path, v] of [[key, value], ...inner]) {
        if (internal.has(v)) exposure.leaks.push(name + ": " + path + " is " + internal.get(v))
      }
    }
  } catch (error) {
    exposure.refused[name] = String(error?.code ?? error)
  }
}
for (const name of new Set([...${JSON.stringify(modules)}, ...${JSON.stringify(closedSubpaths)}])) await attempt(name)
console.log(JSON.stringify(exposure))
`

/** How Node refuses a subpath: outside the export map (internal/), or mapped to no file. */
const refusals = new Set(["ERR_PACKAGE_PATH_NOT_EXPORTED", "ERR_MODULE_NOT_FOUND"])

/**
 * The problems of an exposure: an exported module that does not load, an index whose namespaces
 * are not the other exported modules (the Promise API apart), a closed subpath that resolves, a
 * public value that is a transport's or an era's.
 */
export const judgeExposure = (modules: ReadonlyArray<string>, stdout: string): ReadonlyArray<string> => {
  let exposure: Exposure
  try {
    exposure = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as Exposure
  } catch {
    return [`no exposure printed: ${stdout.trim().slice(-200)}`]
  }
  const namespaces = modules.filter((name) => name !== "index" && name !== "promise")
  const index = exposure.loaded["index"]
  return [
    ...modules.filter((name) => exposure.loaded[name] === undefined).map((name) => `${name} does not load: ${exposure.refused[name]}`),
    ...(index === undefined || index.join() === namespaces.join()
      ? []
      : [`the index exports ${index.join(", ")}; the exported modules are ${namespaces.join(", ")}`]),
    ...closedSubpaths.filter((name) => !refusals.has(exposure.refused[name] ?? "")).map((name) =>
      exposure.loaded[name] !== undefined ? `${name} resolves` : `${name}: ${exposure.refused[name]}`
    ),
    ...exposure.leaks
  ]
}
