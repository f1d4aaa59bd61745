import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"
import projects from "./vitest.workspace.js"

export default defineConfig({
  test: {
    projects,
    // Vitest's default is one worker less than the CPUs: a single worker on the 2-core CI. The
    // test files mostly wait on loopback servers, child processes and timers, so two workers
    // there halve the run (11 min to under 7) with the same generous bounds.
    maxWorkers: Math.max(2, availableParallelism() - 1)
  }
})
