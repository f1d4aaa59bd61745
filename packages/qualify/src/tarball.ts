/**
 * What a package's tarball must hold, read from the file list `npm pack --json` prints: every
 * entry point its manifest declares, declarations beside the JavaScript they describe, the
 * sources its source maps name, and no tests. Pure: the caller reads the files.
 */
import * as path from "node:path"

export interface Manifest {
  readonly scripts?: Record<string, string>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly exports?: unknown
  readonly bin?: string | Record<string, string>
  readonly main?: string
  readonly types?: string
}

/** A problem found in a tarball, as the qualification's row detail. */
export interface TarballCheck {
  readonly name: string
  readonly problems: ReadonlyArray<string>
}

/**
 * Every file an export map, bin, main or types names; a `*` target is expanded over `modules`
 * (the names of the package's `src/*.ts` modules). The `@phasebound/source` condition is the
 * workspace's own and ships nowhere.
 */
export const entryPoints = (manifest: Manifest, modules: ReadonlyArray<string>): ReadonlyArray<string> => {
  const declared = new Set<string>()
  const strip = (target: string) => target.replace(/^\.\//, "")
  const walk = (value: unknown): void => {
    if (typeof value === "string") {
      if (value.includes("*")) { for (const name of modules) declared.add(strip(value.replace("*", name))) }
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

/**
 * The checks of one tarball. `files` are its paths (relative to the package), `modules` its
 * `src/*.ts` module names, and `mapSources(file)` the `sources` of a shipped source map.
 */
export const checkTarball = (
  manifest: Manifest,
  files: ReadonlyArray<string>,
  modules: ReadonlyArray<string>,
  mapSources: (map: string) => ReadonlyArray<string>
): ReadonlyArray<TarballCheck> => {
  const shipped = new Set(files)
  const declared = entryPoints(manifest, modules)
  const dist = declared.filter((file) => file.startsWith("dist/"))
  const library = manifest.bin === undefined
  const undeclaredDeclarations = library
    ? dist.filter((file) => file.endsWith(".js")).map((file) => file.replace(/\.js$/, ".d.ts")).filter((file) => !shipped.has(file))
    : []
  const unmapped = files.filter((file) => file.endsWith(".map")).flatMap((map) =>
    mapSources(map)
      .map((source) => path.posix.normalize(path.posix.join(path.posix.dirname(map), source)))
      .filter((target) => !shipped.has(target))
      .map((target) => `${map} -> ${target}`)
  )
  return [
    {
      name: "every declared entry point (exports, bin, main, types) is in the tarball, built into dist/",
      problems: [
        ...(dist.length === 0 ? ["no entry point in dist/"] : []),
        ...declared.filter((file) => !file.startsWith("dist/") && !file.startsWith("src/")).map((file) => `outside dist/ and src/: ${file}`),
        ...declared.filter((file) => !shipped.has(file)).map((file) => `missing: ${file}`)
      ]
    },
    { name: "each JavaScript entry point has its declarations beside it", problems: undeclaredDeclarations.map((file) => `missing: ${file}`) },
    { name: "the sources its source maps name are in the tarball", problems: unmapped },
    {
      name: "no tests in the tarball",
      problems: files.filter((file) => /(^|\/)test\/|\.test\.[cm]?[jt]s$/.test(file)).map((file) => `shipped: ${file}`)
    }
  ]
}

/** The packages a library must take from its user, never install a copy of its own. */
const isEffectPackage = (name: string) => name === "effect" || name.startsWith("@effect/")

/**
 * Effect and `@effect/*` are peers with caret ranges, as in Effect's own packages: a project
 * has one copy of each, its own (a dependency would install a second one beside a user's other
 * version). A bundle with no dependencies at all passes.
 */
export const checkEffectPeers = (manifest: Manifest): TarballCheck => ({
  name: "effect and @effect/* are caret peerDependencies, never dependencies",
  problems: [
    ...Object.keys(manifest.dependencies ?? {}).filter(isEffectPackage).map((name) => `a dependency: ${name}`),
    ...Object.entries(manifest.peerDependencies ?? {})
      .filter(([name, range]) => isEffectPackage(name) && !/^\^\d+\.\d+\.\d+$/.test(range))
      .map(([name, range]) => `not a caret range: ${name} ${range}`)
  ]
})
