/**
 * A defect (a bug) in a shared stream's background reader fails every pending request at once
 * with `InternalError`, whose public fields say nothing of the defect, while the defect itself
 * stays in process as the cause. Here the defect is a throwing answer to a server request (`ping`)
 * that arrives while a call waits, over legacy HTTP+SSE and over stdio.
 */
import { FetchHttpClient } from "@effect/platform"
import { NodeCommandExecutor, NodeFileSystem } from "@effect/platform-node"
import { expect, it } from "@effect/vitest"
import { Cause, Effect, Layer } from "effect"
import type * as http from "node:http"
import * as LegacySse from "../../src/internal/transport/legacySse.js"
import * as Stdio from "../../src/internal/transport/stdio.js"
import type * as Transport from "../../src/internal/transport/transport.js"
import { rawHttpServer } from "../support/rawMcpServer.js"

const secret = "defect-canary-7f3a"
const throwingInbound: Transport.Inbound = {
  request: () => {
    throw new Error(`bug while answering (${secret})`)
  }
}
const budget = { timeoutMs: 30_000, maxBytes: 1 << 20 }
const readiness: Transport.Exchange = { stage: "connect", phase: "discovery", budget }
const call: Transport.Exchange = { stage: "call", phase: "call", budget }
const request: Transport.Request = { method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }

const expectInternal = (error: unknown, started: number) => {
  const failure = error as { _tag: string; reason?: string; cause?: unknown; outcome?: string }
  expect(failure._tag).toBe("InternalError")
  expect(failure.reason).toBe("defect")
  expect(failure.outcome).toBe("unknown")
  // The defect stays in process, whole; no public view carries it.
  expect(Cause.isCause(failure.cause) && Cause.isDie(failure.cause)).toBe(true)
  expect(JSON.stringify(error)).not.toContain(secret)
  expect(String(error)).not.toContain(secret)
  // At once, not at the 30 s deadline.
  expect(Date.now() - started).toBeLessThan(10_000)
}

/** A legacy server that, once a POST arrives, sends a `ping` request on the GET stream. */
const legacyServer = Effect.suspend(() => {
  let stream: http.ServerResponse | undefined
  return rawHttpServer((req, res) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write("event: endpoint\ndata: /messages\n\n")
      stream = res
      return
    }
    res.writeHead(202).end()
    stream?.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id: "s1", method: "ping" })}\n\n`)
  })
})

it.scopedLive("legacy HTTP+SSE: a defect in the GET stream's reader fails the pending call at once as InternalError", () =>
  Effect.gen(function*() {
    const server = yield* legacyServer
    const url = new URL(`${server.origin}/sse`)
    const transport = yield* LegacySse.make({
      url,
      headers: {},
      secrets: [],
      releaseTimeoutMs: 500,
      unsolicitedMaxBytes: 1 << 20,
      inbound: throwingInbound
    }, readiness)
    const started = Date.now()
    const error = yield* Effect.flip(transport.request(request, call))
    expectInternal(error, started)
    // The stream is given up: later requests fail without being sent.
    const later = yield* Effect.flip(transport.request(request, call))
    expect(later.outcome).toBe("not-sent")
  }).pipe(Effect.provide(FetchHttpClient.layer)))

// A stdio server that answers every request with a `ping` of its own, and nothing else.
const pingingServer = `
process.stdin.setEncoding("utf8")
let buffered = ""
process.stdin.on("data", (chunk) => {
  buffered += chunk
  for (let i = buffered.indexOf("\\n"); i >= 0; i = buffered.indexOf("\\n")) {
    const line = buffered.slice(0, i)
    buffered = buffered.slice(i + 1)
    if (line.includes('"id"')) process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: "s1", method: "ping" }) + "\\n")
  }
})
`

it.scopedLive("stdio: a defect in the stdout reader fails the pending call at once as InternalError, and the child is released", () =>
  Effect.gen(function*() {
    const transport = yield* Stdio.make({
      command: process.execPath,
      args: ["-e", pingingServer],
      secrets: [],
      releaseTimeoutMs: 500,
      unsolicitedMaxBytes: 1 << 20,
      inbound: throwingInbound
    }, readiness)
    const started = Date.now()
    const error = yield* Effect.flip(transport.request(request, call))
    expectInternal(error, started)
    const later = yield* Effect.flip(transport.request(request, call))
    expect(later.outcome).toBe("not-sent")
  }).pipe(Effect.provide(Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer))))
