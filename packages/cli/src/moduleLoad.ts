/**
 * Imported first by bin.ts, so that it runs before any other module of the bundle: no stack
 * trace is captured while the modules evaluate, and bin.ts puts the limit back (`endModuleLoad`)
 * before the run starts.
 *
 * Why (docs/BENCHMARKS.md, "CLI start-up"): V8 compiles functions without their source positions
 * and reparses a function when a stack trace that shows it is first formatted. While the modules
 * evaluate, that function is the bundle's whole top level, and effect formats one stack trace at
 * load (effect/Utils probes `new Error().stack` to pick how it names internal frames; without a
 * trace it picks the variant that keeps the name in any case): about 3 ms of every start-up.
 */
const stackTraceLimit = Error.stackTraceLimit
Error.stackTraceLimit = 0

/** Stack traces as Node captures them, from here on. */
export const endModuleLoad = (): void => {
  Error.stackTraceLimit = stackTraceLimit
}
