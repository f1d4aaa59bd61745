/**
 * Installing packed packages into a fresh project with no network: `npm install --offline` from
 * the npm cache that the workspace's `npm ci` filled.
 *
 * A resolving install would need full packuments, which `npm ci` never fetches (it reads the
 * abbreviated ones, and those only for the packages of this platform); so the project's
 * package-lock.json is seeded from the workspace's (registry entries only: no links, no file:
 * packages). npm keeps each locked version that satisfies the project's ranges and prunes the
 * rest, so every registry package comes at a version the workspace locked, whose tarball `npm
 * ci` cached. Peers too: the tarballs' `effect` and `@effect/*` peers are the project's own
 * dependencies (pinned), and the peers npm adds by itself (those of @effect/platform-node, of
 * @effect/workflow) are found at their locked versions.
 *
 * An Effect set other than the workspace's (the lowest supported one) is locked in the workspace
 * under aliases (`"effect-floor": "npm:effect@3.22.0"`, root devDependencies) so that `npm ci`
 * caches it; the seeded lock puts each aliased entry in the place of the package it aliases.
 *
 * The packed tarballs (`file:` dependencies of the project) get lock entries of their own, made
 * from the manifest inside each tarball: without one, npm resolves each tarball's peers anew, for
 * which it asks the cache for full packuments (npm 11 does, even for a peer the project pins),
 * and `npm ci` cached only the abbreviated ones. With them, npm still checks every edge of the
 * tree against the versions locked: a peer range that the project's Effect does not satisfy is
 * an invalid edge, which npm resolves anew, and that fails offline (ERESOLVE or ENOTCACHED).
 *
 * --offline forbids the network; a proxy at 127.0.0.1:9 (nothing listens there) makes any
 * request that would still go out fail, and the http log is checked for one.
 */
import { execFileSync } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type Ran, runCommand } from "./command.js"

export interface LockEntry {
  readonly name?: string
  readonly version?: string
  readonly link?: boolean
  readonly resolved?: string
  readonly dev?: boolean
  readonly devOptional?: boolean
  readonly peer?: boolean
  readonly [key: string]: unknown
}
export interface Lockfile {
  readonly packages?: Record<string, LockEntry>
}

/** The prefix of the workspace's aliases of the lowest supported Effect set. */
export const FLOOR_ALIAS = "effect-floor"

/** What an alias of the workspace stands for: `"npm:@effect/platform@0.97.0"`. */
export interface Aliased {
  readonly name: string
  readonly version: string
}

/** The workspace's aliases of the lowest supported Effect set (`effect-floor*`), by alias. */
export const floorAliases = (devDependencies: Record<string, string>): Record<string, Aliased> => {
  const aliases: Record<string, Aliased> = {}
  for (const [alias, spec] of Object.entries(devDependencies)) {
    if (alias !== FLOOR_ALIAS && !alias.startsWith(`${FLOOR_ALIAS}-`)) continue
    const match = /^npm:(@?[^@]+)@(.+)$/.exec(spec)
    if (match !== null) aliases[alias] = { name: match[1]!, version: match[2]! }
  }
  return aliases
}

/**
 * The project's lockfile: the workspace's registry entries, with no flag of the workspace's own
 * tree (`dev`, `devOptional`, `peer`: npm computes the project's), and each entry of an alias in
 * `substitutes` (alias -> real name) put where the real package would be, the workspace's entry
 * for that package (and what is nested under it) left out.
 */
export const seededLock = (
  workspaceLock: Lockfile,
  dependencies: Record<string, string>,
  substitutes: Record<string, string> = {}
) => {
  const packages: Record<string, unknown> = { "": { name: "phasebound-qualification", dependencies } }
  const skipped: Array<string> = []
  const replaced = Object.values(substitutes).map((name) => `node_modules/${name}`)
  const within = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/node_modules/`)
  for (const [path, entry] of Object.entries(workspaceLock.packages ?? {})) {
    if (!path.startsWith("node_modules/")) continue
    if (skipped.some((prefix) => path.startsWith(`${prefix}/node_modules/`))) continue
    if (entry.link === true || (entry.resolved !== undefined && !/^https?:/.test(entry.resolved))) {
      skipped.push(path)
      continue
    }
    if (replaced.some((prefix) => within(path, prefix))) continue
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...kept } = entry
    const alias = Object.keys(substitutes).find((name) => within(path, `node_modules/${name}`))
    if (alias === undefined) {
      packages[path] = kept
    } else {
      const { name: _name, ...aliased } = kept
      packages[`node_modules/${substitutes[alias]}${path.slice(`node_modules/${alias}`.length)}`] = aliased
    }
  }
  // A floor alias not substituted (and what it nests) is nothing the project wants.
  const underFloorAlias = new RegExp(`(^|/)node_modules/${FLOOR_ALIAS}[^/]*(/|$)`)
  for (const path of Object.keys(packages)) {
    if (underFloorAlias.test(path)) delete packages[path]
  }
  return { name: "phasebound-qualification", lockfileVersion: 3, requires: true, packages }
}

/** What a lock entry of a package carries from its manifest. */
const LOCKED_FIELDS = [
  "version",
  "license",
  "dependencies",
  "optionalDependencies",
  "peerDependencies",
  "peerDependenciesMeta",
  "bin",
  "engines"
] as const

/**
 * The lock entries of the project's `file:` tarball dependencies, at `node_modules/<name>`, each
 * from the manifest `manifestOf(tarball)` reads inside it: what npm would lock for them.
 */
export const packedEntries = (
  dependencies: Record<string, string>,
  manifestOf: (tarball: string) => Record<string, unknown>
): Record<string, LockEntry> => {
  const entries: Record<string, LockEntry> = {}
  for (const [name, spec] of Object.entries(dependencies)) {
    if (!spec.startsWith("file:") || !spec.endsWith(".tgz")) continue
    const manifest = manifestOf(spec.slice("file:".length))
    const entry: Record<string, unknown> = { resolved: spec }
    for (const field of LOCKED_FIELDS) if (manifest[field] !== undefined) entry[field] = manifest[field]
    entries[`node_modules/${name}`] = entry
  }
  return entries
}

/** The package.json inside a packed tarball. */
export const tarballManifest = (tarball: string): Record<string, unknown> =>
  JSON.parse(execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" })) as Record<string, unknown>

const unreachable = "http://127.0.0.1:9/"
/** npm's environment for the project: not the workspace's, and no way to the network. */
export const installEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_workspaces: "",
    npm_config_proxy: unreachable,
    npm_config_https_proxy: unreachable,
    npm_config_noproxy: ""
  }
  for (const name of ["NO_PROXY", "no_proxy"]) delete env[name]
  return env
}

export interface Installed extends Ran {
  /** Registry reads npm served from its cache. */
  readonly fromCache: number
  /** Registry requests that were not served from the cache (none, offline). */
  readonly network: ReadonlyArray<string>
  /** What stderr holds besides npm's http log: warnings, notices, errors. */
  readonly notices: ReadonlyArray<string>
  readonly added: string | undefined
  readonly errors: string
}

/**
 * Writes the project's package.json and seeded lockfile (with the entries of its tarballs),
 * removes any node_modules, and runs `npm install --offline` there, with the http log on stderr.
 */
export const installOffline = async (
  project: string,
  manifest: Record<string, unknown> & { readonly dependencies: Record<string, string> },
  lock: ReturnType<typeof seededLock>
): Promise<Installed> => {
  writeFileSync(join(project, "package.json"), JSON.stringify(manifest, null, 2) + "\n")
  rmSync(join(project, "node_modules"), { recursive: true, force: true })
  const packages = { ...lock.packages, ...packedEntries(manifest.dependencies, tarballManifest) }
  writeFileSync(join(project, "package-lock.json"), JSON.stringify({ ...lock, packages }, null, 2) + "\n")
  const result = await runCommand(
    "npm",
    ["install", "--offline", "--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=http"],
    { cwd: project, env: installEnv() }
  )
  const { stdout, stderr } = result
  const lines = stderr.split("\n").filter((line) => line.trim() !== "")
  // Every registry request npm made, as its http log reports it: served from the cache or not.
  const http = lines.filter((line) => line.startsWith("npm http "))
  const fromCache = http.filter((line) => /\((cache hit|cache stale)\)$/.test(line.trim()))
  return {
    ...result,
    fromCache: fromCache.length,
    network: http.filter((line) => !fromCache.includes(line)),
    notices: lines.filter((line) => !line.startsWith("npm http ")),
    added: /added (\d+) packages?/.exec(stdout)?.[1],
    errors: lines.filter((line) => line.startsWith("npm error")).slice(0, 4).join(" ")
  }
}

/** Why an install failed, for a row's detail. */
export const whyInstall = (r: Installed) =>
  `exit ${r.status}${r.error ? ` (${r.error.code ?? r.error.message})` : ""}: ${r.errors || r.stderr.trim().split("\n").slice(-6).join("\n")}` +
  (r.errors.includes("ENOTCACHED") ? " (not in the npm cache: run `npm ci` at the workspace root first)" : "")

/** The installed copies of `name` in the project (`npm ls --all --parseable`), as paths relative to it. */
export const copiesOf = async (project: string, name: string): Promise<{ readonly ok: boolean; readonly paths: ReadonlyArray<string> }> => {
  const ls = await runCommand("npm", ["ls", name, "--all", "--parseable"], { cwd: project, timeout: 60_000 })
  const paths = [...new Set(ls.stdout.trim().split("\n").filter(Boolean))].map((p) => p.slice(project.length + 1))
  return { ok: ls.ok, paths }
}
