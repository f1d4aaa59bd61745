/**
 * The builds the qualification runs before it packs, read from the packages' `prepack` scripts.
 *
 * A prepack is a chain of builds: `npm run build` (the package's own) after, for the packages that
 * compile against the client's declarations, `npm run build --prefix ../client`. Packing each
 * package with its prepack would build the client three times; instead each build the chains name
 * runs once, after the builds that precede it in any chain, and the packages are packed with
 * `--ignore-scripts`. The tarballs hold what each prepack would have made: the same commands, from
 * the same sources, in an order every chain allows (docs/CONTRIBUTING.md, "Qualification").
 */
import * as path from "node:path"

/** One build of the plan: a package directory (relative to the root) and the builds it waits for. */
export interface PlannedBuild {
  readonly dir: string
  readonly after: ReadonlyArray<string>
}

/**
 * The package directories whose `npm run build` a prepack runs, in order; `undefined` when the
 * prepack is anything but a chain of those (the qualification then packs with the scripts).
 */
export const prepackBuilds = (dir: string, prepack: string | undefined): ReadonlyArray<string> | undefined => {
  if (prepack === undefined) return undefined
  const dirs: Array<string> = []
  for (const step of prepack.split("&&").map((part) => part.trim())) {
    const match = /^npm run build(?: --prefix (\S+))?$/.exec(step)
    if (match === null) return undefined
    dirs.push(match[1] === undefined ? dir : path.posix.normalize(path.posix.join(dir, match[1])))
  }
  return dirs.length > 0 && dirs[dirs.length - 1] === dir ? dirs : undefined
}

/**
 * Every build the chains name, once, each after the builds that precede it in a chain; in an
 * order where every build comes after those it waits for. Throws on chains that order two builds
 * both ways.
 */
export const buildPlan = (chains: ReadonlyArray<ReadonlyArray<string>>): ReadonlyArray<PlannedBuild> => {
  const after = new Map<string, Set<string>>()
  for (const chain of chains) {
    chain.forEach((dir, index) => {
      const before = after.get(dir) ?? new Set<string>()
      after.set(dir, before)
      for (const earlier of chain.slice(0, index)) if (earlier !== dir) before.add(earlier)
    })
  }
  const plan: Array<PlannedBuild> = []
  const placed = new Set<string>()
  while (placed.size < after.size) {
    const ready = [...after].filter(([dir, before]) => !placed.has(dir) && [...before].every((earlier) => placed.has(earlier)))
    if (ready.length === 0) throw new Error(`the prepacks order their builds in a cycle: ${[...after.keys()].filter((dir) => !placed.has(dir)).join(", ")}`)
    for (const [dir, before] of ready) {
      plan.push({ dir, after: [...before] })
      placed.add(dir)
    }
  }
  return plan
}
