/** Dev helper: profile one client on one workload. tsx --conditions=@phasebound/source src/dev/profile.ts <client> <mode> <seq|conc> */
import { spawn } from "node:child_process"
import { adapters, type ServerMode } from "../clients.js"
const [client = "phasebound-undici", mode = "json", what = "conc"] = process.argv.slice(2)
const proc = spawn(process.execPath, [
  "--import",
  "tsx",
  "--conditions=@phasebound/source",
  new URL("../servers/officialServer.ts", import.meta.url).pathname,
  mode
], { stdio: ["ignore", "pipe", "inherit"] })
const info = await new Promise<{ readonly url: string }>((r) => proc.stdout.once("data", (d) => r(JSON.parse(String(d)))))
const a = await adapters[client]!()
const s = await a.connect(info.url, mode as ServerMode)
await s.concurrent(1000, 64)
const cpu0 = process.cpuUsage()
const t = performance.now()
if (what === "seq") await s.sequential(3000)
else await s.concurrent(5000, 64)
const ms = performance.now() - t
const cpu = process.cpuUsage(cpu0)
console.log(client, what, "ms", ms.toFixed(0), "client cpu ms", ((cpu.user + cpu.system) / 1000).toFixed(0))
await s.close()
await a.dispose?.()
proc.kill()
process.exit(0)
