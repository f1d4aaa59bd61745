/**
 * Peak memory of the largest listing and answer a server can send (docs/DESIGN.md, "Structure
 * bounds"). A scripted hostile server (the testkit's) runs in this process; each case's client
 * runs in a child process of its own under `--max-old-space-size=768`, so that only the
 * client's memory is measured and a heap exhaustion ends that child, not the run.
 *
 * Each case runs twice: with the default policy, and "unbounded" (the structure and listing
 * bounds raised as far as they go: what the client did before they existed).
 *
 *   npm run heap-bound -w @phasebound/bench [-- --cases maximal-listing,answer-empty-objects]
 */
import * as Testkit from "@phasebound/testkit"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const MiB = 1024 * 1024
const child = fileURLToPath(new URL("./heapBoundClient.ts", import.meta.url))

/** `count` empty objects as JSON text: three bytes each, an object each once parsed. */
const emptyObjects = (count: number) => `[${"{},".repeat(count - 1)}{}]`

/** A tool carrying `payload` in a field of its own (preserved, as unknown fields are). */
const tool = (name: string, payload: string) => `{"name":"${name}","inputSchema":{"type":"object"},"x":${payload}}`
const page = (tools: string, cursor: number | undefined) =>
  `{"jsonrpc":"2.0","id":${Testkit.ID_PLACEHOLDER},"result":{"tools":[${tools}]${cursor === undefined ? "" : `,"nextCursor":"c${cursor}"`}}}`
const callAnswer = (structuredContent: string) =>
  `{"jsonrpc":"2.0","id":${Testkit.ID_PLACEHOLDER},"result":{"content":[],"structuredContent":${structuredContent}}}`

interface Case {
  readonly name: string
  readonly what: string
  /** The answer to the n-th `tools/list` (from 0), and to `tools/call`. */
  readonly list: (n: number) => string
  readonly call?: string
}

// Built once: every page of a listing case is the same text but its cursor.
const sixteenMiBOfObjects = emptyObjects(Math.floor((16 * MiB - 200) / 3))
const halfMiBString = JSON.stringify("y".repeat(500_000))

const cases: ReadonlyArray<Case> = [
  {
    name: "listing-64-pages-of-16MiB-objects",
    what: "64 tools/list pages, each just under 16 MiB of `{},` (the case a security review sent)",
    list: (n) => page(tool(`t${n}`, sixteenMiBOfObjects), n < 63 ? n + 1 : undefined)
  },
  {
    name: "maximal-listing",
    what: "about the largest listing the defaults accept: 63 pages of 500,000 characters of text and 8,100 empty objects each (1.02M nodes, 31.5 MiB in all)",
    list: (n) => page(tool(`t${n}`, `[${halfMiBString},${emptyObjects(8_100)}]`), n < 62 ? n + 1 : undefined)
  },
  {
    name: "answer-16MiB-objects",
    what: "one tools/call answer of just under 16 MiB of `{},`",
    list: () => page(tool("echo", "{}"), undefined),
    call: callAnswer(sixteenMiBOfObjects)
  },
  {
    name: "answer-16MiB-string",
    what: "one tools/call answer of a 16 MiB string (accepted under both policies)",
    list: () => page(tool("echo", "{}"), undefined),
    call: callAnswer(JSON.stringify("z".repeat(16 * MiB - 200)))
  }
]

const selected = (() => {
  const index = process.argv.indexOf("--cases")
  const names = index >= 0 ? process.argv[index + 1]!.split(",") : cases.map((c) => c.name)
  return cases.filter((c) => names.includes(c.name))
})()

interface Outcome {
  readonly outcome: string
  readonly maxRssMiB?: number
  readonly heapUsedPeakMiB?: number
  readonly exitCode: number | null
}

const runClient = (url: string, policy: "default" | "unbounded", operation: "connect" | "call") =>
  new Promise<Outcome>((resolve) => {
    const proc = spawn(
      process.execPath,
      ["--max-old-space-size=768", "--no-warnings", "--import", "tsx", "--conditions=@phasebound/source", child, url, policy, operation],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let out = ""
    let err = ""
    proc.stdout.on("data", (chunk) => (out += chunk))
    proc.stderr.on("data", (chunk) => (err += chunk))
    proc.on("exit", (code) => {
      if (code === 0) return resolve({ ...JSON.parse(out), exitCode: code })
      resolve({ outcome: /heap limit|out of memory/i.test(err) ? "crashed: heap limit" : `crashed (exit ${code})`, exitCode: code })
    })
  })

const rows: Array<Record<string, unknown>> = []
for (const testCase of selected) {
  let listed = 0
  const server = await Testkit.startHostileServer({
    era: "handshake",
    script: (request) => {
      if (request.method === "tools/list") return Testkit.messageAnswer(testCase.list(listed++), "json", [["mcp-session-id", "hostile-session"]])
      if (request.method === "tools/call" && testCase.call !== undefined) {
        return Testkit.messageAnswer(testCase.call, "json", [["mcp-session-id", "hostile-session"]])
      }
      return "normal"
    }
  })
  for (const policy of ["default", "unbounded"] as const) {
    listed = 0
    const result = await runClient(server.url, policy, testCase.call === undefined ? "connect" : "call")
    rows.push({ case: testCase.name, policy, ...result, pagesServed: listed })
    console.error(`${testCase.name} (${policy}): ${JSON.stringify(result)}`)
  }
  await server.close()
}
console.log(`\n| case | policy | outcome | peak RSS (MiB) | peak heap used (MiB) | tools/list pages served |`)
console.log(`|---|---|---|---:|---:|---:|`)
for (const row of rows) {
  console.log(
    `| ${row["case"]} | ${row["policy"]} | ${row["outcome"]} | ${row["maxRssMiB"] ?? "-"} | ${row["heapUsedPeakMiB"] ?? "-"} | ${row["pagesServed"]} |`
  )
}
for (const testCase of selected) console.log(`\n- ${testCase.name}: ${testCase.what}`)
