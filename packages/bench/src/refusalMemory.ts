/**
 * Peak RSS growth while refusing a never-ending body, and how far past the ceiling the client
 * read. The server runs in this process; each client runs in a child process of its own so
 * that only the client's memory is measured.
 *
 *   npm run refusal-memory -w @phasebound/bench [-- --ceiling 1048576 --repeat 5]
 */
import * as Testkit from "@phasebound/testkit"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const args = process.argv.slice(2)
const flag = (name: string, fallback: number) => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 ? Number(args[index + 1]) : fallback
}
const ceiling = flag("ceiling", 1024 * 1024)
const repeat = flag("repeat", 5)
const warm = args.includes("--warm")
const child = fileURLToPath(new URL("./refusalMemoryClient.ts", import.meta.url))

interface Sample {
  readonly client: string
  readonly mode: string
  readonly rssGrowthBytes: number
  readonly observedBytes: number
  readonly pastCeilingBytes: number
  readonly tag: string
}

const runClient = (url: string, client: string) =>
  new Promise<Omit<Sample, "mode">>((resolve, reject) => {
    const proc = spawn(process.execPath, ["--import", "tsx", "--conditions=@phasebound/source", child, url, client, String(ceiling)], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, PHASEBOUND_WARM: warm ? "1" : "0" }
    })
    let out = ""
    proc.stdout.on("data", (chunk) => (out += chunk))
    proc.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`client exited ${code}`))))
  })

const samples: Array<Sample> = []
for (const mode of ["json", "sse"] as const) {
  const server = await Testkit.startServer({ mode })
  server.script({ on: "tools/call", kind: "never-ending-body", as: mode, times: Infinity })
  for (const client of ["fetch", "undici", "node-http"]) {
    for (let i = 0; i < repeat; i++) samples.push({ mode, ...(await runClient(server.url, client)) })
  }
  await server.close()
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}
const mib = (n: number) => (n / 1024 / 1024).toFixed(2)
console.log(
  `ceiling ${ceiling} bytes (${mib(ceiling)} MiB), ${repeat} runs each, ${
    warm ? "after one refusal (warm)" : "first refusal of the process (cold)"
  }, Node ${process.version}`
)
console.log("body  client     median RSS growth  max RSS growth  median read past ceiling  max read past ceiling  result")
for (const mode of ["json", "sse"]) {
  for (const client of ["fetch", "undici", "node-http"]) {
    const group = samples.filter((s) => s.mode === mode && s.client === client)
    const growth = group.map((s) => s.rssGrowthBytes)
    const past = group.map((s) => s.pastCeilingBytes)
    console.log(
      `${mode.padEnd(5)} ${client.padEnd(10)} ${`${mib(median(growth))} MiB`.padStart(17)}  ${`${mib(Math.max(...growth))} MiB`.padStart(14)}  ${
        `${median(past)} B`.padStart(24)
      }  ${`${Math.max(...past)} B`.padStart(21)}  ${[...new Set(group.map((s) => s.tag))].join(",")}`
    )
  }
}
