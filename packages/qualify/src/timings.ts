/**
 * The phases of a qualification, timed: each build, pack, install and program run, with its
 * start (from the qualification's start) and its duration, so that overlapping phases read as
 * such. `QUALIFY_TIMINGS=1` prints them after the tables.
 */

export interface Phase {
  readonly name: string
  /** Milliseconds from the qualification's start. */
  readonly startMs: number
  readonly ms: number
}

export interface Timings {
  readonly phases: ReadonlyArray<Phase>
  /** Times `run` as the phase `name`, whether it returns a value or a promise of one. */
  readonly time: <A>(name: string, run: () => A) => A
}

export const makeTimings = (now: () => number = Date.now): Timings => {
  const origin = now()
  const phases: Array<Phase> = []
  const time = <A>(name: string, run: () => A): A => {
    const started = now()
    const done = () => {
      phases.push({ name, startMs: started - origin, ms: now() - started })
    }
    const result = run()
    if (result instanceof Promise) {
      return result.finally(done) as A
    }
    done()
    return result
  }
  return { phases, time }
}

const seconds = (ms: number) => (ms / 1000).toFixed(1).padStart(6)

/** One line per phase, by start: `start  duration  name`, in seconds; then the whole. */
export const formatTimings = (phases: ReadonlyArray<Phase>, totalMs: number): string =>
  [
    " start    took  phase",
    ...[...phases]
      .sort((a, b) => a.startMs - b.startMs || a.name.localeCompare(b.name))
      .map((phase) => `${seconds(phase.startMs)}  ${seconds(phase.ms)}  ${phase.name}`),
    `${seconds(0)}  ${seconds(totalMs)}  the qualification`
  ].join("\n")
