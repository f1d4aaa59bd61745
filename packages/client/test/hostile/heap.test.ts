/**
 * P5 heap (docs/SECURITY.md, "1. The MCP server"). Hostile party: an MCP server that answers with
 * the most the default policy lets through on the wire, in the shape that costs the most memory
 * once parsed: a listing of every page (`maxPages`) at the byte ceiling, each page of tools whose
 * input schemas are just under `maxSchemaBytes` and made of `{}`; and one call answer of exactly
 * the ceiling (16 MiB) of `[{},{},...]`. The client runs in a child process with
 * `--max-old-space-size=768` (heap-child.ts): it must end normally with a typed result (success
 * or a typed failure), never a heap crash; it says so in its child report, with the heap limit it
 * ran under. The peak heap it measured is printed for the record; it is a number to read, not a
 * bound asserted here (the bound is the process's heap limit).
 */
import { type HostileRequest, type HostileServer, readReport, startHostileServer } from "@phasebound/testkit"
import { spawn } from "node:child_process"
import { createRequire } from "node:module"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectChecksPassed } from "../support/childReport.js"

const CEILING = 16 * 1024 * 1024
const MAX_PAGES = 64
const MAX_SCHEMA_BYTES = 1024 * 1024
const HEAP_MB = 768

const here = path.dirname(fileURLToPath(import.meta.url))
const tsxLoader = createRequire(import.meta.url).resolve("tsx")

/** `[{},{},...]`-style filler of exactly `length` bytes: `{}` items, then spaces to make up the rest. */
const filler = (length: number): Buffer => {
  const items = Math.floor((length + 1) / 3)
  const body = items === 0 ? Buffer.alloc(0) : Buffer.alloc(3 * items - 1, "{},")
  return Buffer.concat([body, Buffer.alloc(length - body.length, " ")])
}

/** A JSON message of exactly `size` bytes: `prefix`, filler, `suffix`. */
const exactly = (size: number, prefix: string, suffix: string): Buffer =>
  Buffer.concat([Buffer.from(prefix), filler(size - Buffer.byteLength(prefix) - Buffer.byteLength(suffix)), Buffer.from(suffix)])

/** One schema of `{}` just under `maxSchemaBytes` (as text: the filler inside `default`). */
const schema = exactly(MAX_SCHEMA_BYTES - 64, `{"type":"object","default":[`, `]}`).toString()
const TOOLS_PER_PAGE = Math.floor((CEILING - 1024) / (schema.length + 32))

/** One description of 1 MiB: a single JSON node that costs its size in memory. */
const description = JSON.stringify("d".repeat(MAX_SCHEMA_BYTES))

type Shape = "nodes" | "strings"

/**
 * A tools/list page of exactly the ceiling, a cursor to the next page (none on the last): tools
 * whose schemas are just under `maxSchemaBytes` of `{}` (many nodes), or tools with a 1 MiB
 * description each (few nodes, many bytes: what a listing keeps unless its pages are bounded together).
 */
const page = (shape: Shape, id: string | number | undefined, index: number): Buffer => {
  const tool = (i: number) =>
    shape === "nodes"
      ? `{"name":"p${index}-${i}","inputSchema":${schema}}`
      : `{"name":"p${index}-${i}","description":${description},"inputSchema":{"type":"object"}}`
  const tools = Array.from({ length: TOOLS_PER_PAGE }, (_, i) => tool(i)).join(",")
  const cursor = index + 1 < MAX_PAGES ? `,"nextCursor":"c${index + 1}"` : ""
  const prefix = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[${tools}]${cursor},"resultType":"complete","_meta":{"pad":"`
  return Buffer.concat([Buffer.from(prefix), Buffer.alloc(CEILING - Buffer.byteLength(prefix) - 4, "x"), Buffer.from(`"}}}`)])
}

const answer = (id: string | number | undefined): Buffer =>
  exactly(CEILING, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[],"structuredContent":[`, `],"resultType":"complete"}}`)

const cursorIndex = (request: HostileRequest): number => {
  const params = request.params as { readonly cursor?: unknown } | undefined
  const cursor = typeof params?.cursor === "string" ? params.cursor : "c0"
  return Number(cursor.slice(1)) || 0
}

const runChild = (url: string, which: "listing" | "answer") =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [`--max-old-space-size=${HEAP_MB}`, "--import", tsxLoader, "--conditions=@phasebound/source", path.join(here, "heap-child.ts"), url, which],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-4_000)))
    child.once("exit", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })

const json = (body: string | Buffer) => ({ headers: [["content-type", "application/json"]] as const, body })

describe("P5 heap: the maximal listing and answer, in a child with a 768 MiB old space", () => {
  let server: HostileServer
  let pagesServed = 0
  beforeAll(async () => {
    server = await startHostileServer({ era: "stateless" })
  })
  afterAll(() => server.close())

  const cases = [
    { name: `${MAX_PAGES} pages of ${CEILING} bytes, tools with schemas of {}`, child: "listing", shape: "nodes" },
    { name: `${MAX_PAGES} pages of ${CEILING} bytes, tools with 1 MiB descriptions`, child: "listing", shape: "strings" },
    { name: `one answer of ${CEILING} bytes of [{},...]`, child: "answer", shape: "nodes" }
  ] as const

  for (const c of cases) {
    it(`${c.name}: a typed result, never a heap crash`, async () => {
      server.setScript((request) => {
        if (request.method === "tools/list") {
          if (c.child === "answer") {
            return json(
              `{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}],"resultType":"complete"}}`
            )
          }
          pagesServed += 1
          return json(page(c.shape, request.id, cursorIndex(request)))
        }
        if (request.method === "tools/call") return json(answer(request.id))
        return "normal"
      })
      pagesServed = 0
      const { code, signal, stderr, stdout } = await runChild(server.url, c.child)
      const record = readReport(stdout)
      // For the record: what the child measured (and how many pages it was served).
      const measured = record._tag === "Report"
        ? record.report.results.map((r) => `${r.name} ${r.detail}${r.ms === undefined ? "" : ` in ${r.ms} ms`}`).join("; ")
        : record.why
      console.log(`heap, ${c.name}: ${measured}; pages served ${pagesServed}; exit ${code ?? signal}`)
      expect({ code, signal, crash: /heap out of memory|Allocation failed|FATAL ERROR/.test(stderr) ? stderr.slice(-600) : undefined }).toEqual({
        code: 0,
        signal: null,
        crash: undefined
      })
      expectChecksPassed({ stdout, stderr }, ["typed result", "heap limit"])
    }, 120_000)
  }
})
