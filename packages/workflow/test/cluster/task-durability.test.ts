/**
 * A worker killed with SIGKILL while its task runs (taskScenario.ts), on a real cluster: on
 * SQLite a fresh process on the same file resumes, on PostgreSQL the survivor of two; either way
 * it polls the task whose handle the dead worker stored, and the tool is called exactly once.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { startPostgres } from "./postgres.js"
import { crashWhileTaskRuns } from "./taskScenario.js"

const TIMEOUT_MS = 300_000

describe.concurrent("ClusterWorkflowEngine, a worker killed with SIGKILL while its task runs", () => {
  it("SQLite: a fresh process on the same file polls the stored task; one tools/call", async () => {
    const dir = await mkdtemp(join(tmpdir(), "phasebound-task-sqlite-"))
    try {
      const measured = await crashWhileTaskRuns({ store: { kind: "sqlite", filename: join(dir, "cluster.db") }, initialRunners: 1 })
      console.info(`sqlite task: ${JSON.stringify(measured)}`)
      expect(measured.runners).toEqual(["r1", "r3"])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, TIMEOUT_MS)

  it("PostgreSQL: the survivor of two runners polls the stored task; one tools/call", async () => {
    const pg = await startPostgres()
    try {
      const measured = await crashWhileTaskRuns({
        store: { kind: "pg", host: pg.host, port: pg.port, database: pg.database, username: pg.username },
        initialRunners: 2
      })
      console.info(`postgres task: ${JSON.stringify(measured)}`)
      expect(measured.runners[1]).not.toBe(measured.runners[0])
    } finally {
      await pg.stop()
    }
  }, TIMEOUT_MS)
})
