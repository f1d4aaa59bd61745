/**
 * The TCP reset in the middle of a body (`cut-mid-answer` with `how: "reset"`), observed from a
 * raw client socket: the status line, the headers and exactly the first half of the body arrive,
 * then the connection fails with ECONNRESET (under Node; Bun's `resetAndDestroy` is used alike,
 * see wire.ts `writeChunksThenReset`).
 */
import { connect } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "../src/index.js"

const servers: Array<TestServer> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

interface RawExchange {
  readonly received: Buffer
  readonly error: NodeJS.ErrnoException | undefined
}

/** One HTTP/1.1 POST written by hand; resolves with every byte that came back and how the socket ended. */
const rawPost = (url: string, body: string): Promise<RawExchange> =>
  new Promise((resolve) => {
    const { hostname, port, pathname } = new URL(url)
    const socket = connect(Number(port), hostname)
    const chunks: Array<Buffer> = []
    let error: NodeJS.ErrnoException | undefined
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("error", (cause: NodeJS.ErrnoException) => {
      error = cause
    })
    socket.on("close", () => resolve({ received: Buffer.concat(chunks), error }))
    socket.write(
      `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\ncontent-type: application/json\r\n` +
        `accept: application/json, text/event-stream\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    )
  })

/** The data of a chunked body's complete chunks (a reset leaves no terminating chunk). */
const dechunk = (body: Buffer): Buffer => {
  const pieces: Array<Buffer> = []
  let offset = 0
  for (;;) {
    const lineEnd = body.indexOf("\r\n", offset)
    if (lineEnd === -1) break
    const size = Number.parseInt(body.subarray(offset, lineEnd).toString("latin1"), 16)
    if (!Number.isSafeInteger(size) || size === 0 || lineEnd + 2 + size + 2 > body.length) break
    pieces.push(body.subarray(lineEnd + 2, lineEnd + 2 + size))
    offset = lineEnd + 2 + size + 2
  }
  return Buffer.concat(pieces)
}

describe("cut-mid-answer with a reset", () => {
  for (const mode of ["json", "sse"] as const) {
    it(`delivers the headers and half of the body, then ECONNRESET (${mode})`, async () => {
      const server = await startServer({ sessions: false, mode })
      servers.push(server)
      server.script({ on: "tools/call", kind: "cut-mid-answer", how: "reset" })
      const request = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } }
      const { received, error } = await rawPost(server.url, JSON.stringify(request))

      expect(error?.code).toBe("ECONNRESET")
      const headerEnd = received.indexOf("\r\n\r\n")
      expect(headerEnd).toBeGreaterThan(0)
      const head = received.subarray(0, headerEnd).toString("latin1")
      expect(head).toMatch(/^HTTP\/1\.1 200 /)
      expect(head.toLowerCase()).toContain("transfer-encoding: chunked")
      const json = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "3" }] } })
      const whole = Buffer.from(mode === "sse" ? `event: message\ndata: ${json}\n\n` : json)
      expect(dechunk(received.subarray(headerEnd + 4)).toString()).toBe(whole.subarray(0, Math.floor(whole.length / 2)).toString())
    })
  }
})
