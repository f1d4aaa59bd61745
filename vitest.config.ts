import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"
import { projects } from "./vitest.workspace.js"

export default defineConfig({
  test: {
    // The projects, two tiers per package (vitest.workspace.ts; docs/TESTING.md, "Tiers").
    projects: [...projects],
    // Vitest's default is one worker less than the CPUs: a single worker on the 2-core CI. The
    // test files mostly wait on loopback servers, child processes and timers, so two workers
    // there halve the run with the same generous bounds.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Each project says whether its files share a worker's modules (vitest.workspace.ts).
    isolate: false
  }
})
