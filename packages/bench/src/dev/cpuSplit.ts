/**
 * Dev profiling aid: how workload 3's CPU splits between the client and the server. Runs
 * `calls` concurrent tools/call (64 in flight) per client against the official server in
 * `mode`, and prints, per call, the client's CPU, the server process's CPU (from /proc) and
 * the wall time. On 2 cores, when client + server CPU per call reaches ~2x the wall time per
 * call, both cores are busy and a cheaper client can only go as fast as the server lets it.
 *
 *   tsx --conditions=@phasebound/source src/dev/cpuSplit.ts [mode] [calls] [clients]
 */
import { readFileSync } from "node:fs"
import { adapters, type ServerMode } from "../clients.js"
import { startChild } from "../servers/spawn.js"

const mode = (process.argv[2] ?? "json") as ServerMode
const calls = Number(process.argv[3] ?? 3000)
const names = (process.argv[4] ?? "phasebound-undici,sdk-1.32.2").split(",")
const ticks = 100 // USER_HZ on Linux
const serverCpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return ((Number(fields[11]) + Number(fields[12])) / ticks) * 1000
}
const server = await startChild<{ url: string }>("./officialServer.ts", [mode, "1024"])
const pid = server.proc.pid!
for (const round of [1, 2]) {
  for (const name of names) {
    const adapter = await adapters[name]!()
    const session = await adapter.connect(server.info.url, mode)
    await session.concurrent(Math.min(1000, calls), 64)
    const client0 = process.cpuUsage()
    const server0 = serverCpuMs(pid)
    const ms = await session.concurrent(calls, 64)
    const client = process.cpuUsage(client0)
    const serverMs = serverCpuMs(pid) - server0
    console.log(
      `round ${round} ${mode} ${name.padEnd(20)} ${((calls / ms) * 1000).toFixed(0).padStart(5)} calls/s  wall ${
        (ms / calls * 1000).toFixed(0).padStart(5)
      } µs/call  client CPU ${((client.user + client.system) / calls).toFixed(0).padStart(5)} µs/call  server CPU ${
        (serverMs / calls * 1000).toFixed(0).padStart(5)
      } µs/call`
    )
    await session.close()
    await adapter.dispose?.()
  }
}
await server.stop()
process.exit(0)
