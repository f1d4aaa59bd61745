/**
 * Durability on a real cluster (scenario.ts): the same crash story on SQLite, the default store
 * (one SQLite file, one runner process at a time: each crash is followed by a fresh runner on the
 * same file), and on PostgreSQL (a throwaway cluster, two runners sharing it from the start: the
 * survivor resumes after the first crash, a fresh runner after the second). The second crash
 * kills calls at each of their three points: before the sent marker, between the marker and the
 * sending, and after the sending (scenario.ts says what each must end with). The two run
 * concurrently: each has its own MCP server, store and processes, and most of their time is
 * spent waiting for a takeover.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { startPostgres } from "./postgres.js"
import { crashTwice } from "./scenario.js"

const TIMEOUT_MS = 300_000

describe.concurrent("ClusterWorkflowEngine, workers killed with SIGKILL mid-call", () => {
  it("SQLite: a fresh process on the same file resumes; only the idempotent in-flight call is sent again", async () => {
    const dir = await mkdtemp(join(tmpdir(), "phasebound-sqlite-"))
    try {
      const measured = await crashTwice({ store: { kind: "sqlite", filename: join(dir, "cluster.db") }, initialRunners: 1 })
      console.info(`sqlite: ${JSON.stringify(measured)}`)
      expect(measured.runners).toEqual(["r1", "r3", "r3", "r4"])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, TIMEOUT_MS)

  it("PostgreSQL: two runners share the store; the survivor resumes, then a fresh one", async () => {
    const pg = await startPostgres()
    try {
      const measured = await crashTwice({
        store: { kind: "pg", host: pg.host, port: pg.port, database: pg.database, username: pg.username },
        initialRunners: 2
      })
      console.info(`postgres: ${JSON.stringify(measured)}`)
      // The first crash is resumed by the runner that was already there, the second by r4.
      expect(measured.runners[1]).not.toBe(measured.runners[0])
      expect(["r1", "r2"]).toContain(measured.runners[1])
      expect(measured.runners.slice(2)).toEqual([measured.runners[1], "r4"])
    } finally {
      await pg.stop()
    }
  }, TIMEOUT_MS)
})
