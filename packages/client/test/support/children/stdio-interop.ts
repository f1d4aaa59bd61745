/**
 * stdio interop as a plain program, so that it runs under Node (through tsx) and under Bun
 * (which cannot run @effect/vitest files). It spawns real peers with the runtime running it,
 * connects through the Promise API and the Effect API, ends its stdout with the child report
 * (@phasebound/testkit's formatReport: one result per runtime, API and peer) and exits non-zero
 * on any failure.
 */
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { type CheckResult, formatReport } from "@phasebound/testkit/childReport"
import { Effect, Layer } from "effect"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { McpClient } from "../../../src/index.js"
import { connect } from "../../../src/promise.js"

const require = createRequire(import.meta.url)
const here = path.dirname(fileURLToPath(import.meta.url))
const runtime = typeof (globalThis as { Bun?: unknown }).Bun === "undefined" ? "node" : "bun"
const peers = {
  "official SDK StdioServerTransport": [path.join(here, "../officialStdioServer.mjs")],
  "server-everything stdio": [
    path.join(path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js"),
    "stdio"
  ]
}

const results: Array<CheckResult> = []
const check = async (name: string, run: () => Promise<string>) => {
  const started = performance.now()
  const ms = () => Math.round(performance.now() - started)
  try {
    const detail = await run()
    results.push({ name, ok: true, detail, ms: ms() })
  } catch (error) {
    results.push({ name, ok: false, detail: String(error), ms: ms() })
  }
}

for (const [peer, args] of Object.entries(peers)) {
  await check(`${runtime}: Promise API against ${peer}`, async () => {
    const connection = await connect({ stdio: { command: process.execPath, args }, policy: { timeout: 20_000 } })
    try {
      if (connection.transport !== "stdio") throw new Error(`transport ${connection.transport}`)
      const names = connection.tools.map((tool) => tool.name)
      const tool = names.includes("add") ? "add" : "get-sum"
      const result = await connection.callTool(tool, { a: 20, b: 22 })
      if (!JSON.stringify(result.content).includes("42")) throw new Error(`unexpected ${JSON.stringify(result)}`)
      return `${connection.serverInfo?.name} ${connection.protocolVersion}, ${names.length} tools`
    } finally {
      await connection.close()
    }
  })
  await check(`${runtime}: Effect API against ${peer}`, () =>
    Effect.runPromise(
      Effect.gen(function*() {
        const connection = yield* McpClient.connectStdio({ command: process.execPath, args, policy: { timeout: 20_000 } })
        const names = connection.tools.map((tool) => tool.name)
        const tool = names.includes("add") ? "add" : "get-sum"
        const result = yield* connection.callTool(tool, { a: 1, b: 2 })
        if (!JSON.stringify(result.content).includes("3")) throw new Error(`unexpected ${JSON.stringify(result)}`)
        return `${connection.serverInfo?.name}, ${names.length} tools`
      }).pipe(Effect.scoped, Effect.provide(Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)))
    ))
}

process.stdout.write(formatReport({ results }))
process.exitCode = results.every((result) => result.ok) ? 0 : 1
