/**
 * Every test file's setup: FastCheck draws its cases from one fixed seed, so that `npm test`
 * proves the same cases on every run, and a failure found once is found again
 * (docs/TESTING.md, "Generated input"). `FC_SEED=<n>` replays another seed; `FC_SEED=random`
 * explores with a new seed per property, which FastCheck prints with any counterexample.
 */
import { FastCheck } from "effect"

const chosen = process.env["FC_SEED"]
if (chosen !== "random") {
  const seed = chosen === undefined ? 20_261_207 : Number(chosen)
  if (!Number.isSafeInteger(seed)) throw new Error(`FC_SEED must be an integer or "random", not ${JSON.stringify(chosen)}`)
  FastCheck.configureGlobal({ ...FastCheck.readConfigureGlobal(), seed })
}
