/**
 * Dev profiling aid: what the arguments given to Node's `fetch` cost per request: the redirect
 * mode (Node's fetch clones every request unless it is "error"), a URL object and a Uint8Array
 * body (as `FetchHttpClient` passes them) and an AbortSignal. The server runs in this process,
 * so the CPU per request includes its share (the same for every variant); ±40 µs between runs.
 *
 *   node src/dev/fetchInit.mjs
 */
import http from "node:http"
const server = http.createServer((req, res) => { let b = ""; req.on("data", d => b += d); req.on("end", () => { res.writeHead(200, {"content-type": "application/json"}); res.end(JSON.stringify({jsonrpc:"2.0", id: 1, result: {content:[{type:"text", text:"3"}]}})) }) })
await new Promise(r => server.listen(0, "127.0.0.1", r))
const url = `http://127.0.0.1:${server.address().port}/mcp`
const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } })
const pool = async (n, one) => { let next = 0; await Promise.all(Array.from({ length: 64 }, async () => { while (next++ < n) await one() })) }
const variants = {
  follow: () => fetch(url, { method: "POST", headers: {"content-type": "application/json"}, body }).then(r => r.text()),
  manual: () => fetch(url, { method: "POST", headers: {"content-type": "application/json"}, body, redirect: "manual" }).then(r => r.text()),
  error: () => fetch(url, { method: "POST", headers: {"content-type": "application/json"}, body, redirect: "error" }).then(r => r.text()),
  manualURL: () => fetch(new URL(url), { method: "POST", headers: {"content-type": "application/json"}, body, redirect: "manual" }).then(r => r.text()),
  manualBytes: () => fetch(url, { method: "POST", headers: {"content-type": "application/json"}, body: new TextEncoder().encode(body), redirect: "manual" }).then(r => r.text()),
  manualSignal: () => fetch(url, { method: "POST", headers: {"content-type": "application/json"}, body, redirect: "manual", signal: new AbortController().signal }).then(r => r.text()),
  errorBytesSignal: () => fetch(url, { method: "POST", headers: {"content-type": "application/json"}, body: new TextEncoder().encode(body), redirect: "error", signal: new AbortController().signal }).then(r => r.text()),
  manualU8: () => fetch(new URL(url), { method: "POST", headers: {"content-type": "application/json"}, body: new TextEncoder().encode(body), redirect: "manual", signal: new AbortController().signal }).then(r => r.text()),
}
for (let round = 0; round < 3; round++) for (const [name, one] of Object.entries(variants)) {
  await pool(500, one)
  const c = process.cpuUsage(); await pool(4000, one); const u = process.cpuUsage(c)
  if (round > 0) console.log(name, ((u.user + u.system) / 4000).toFixed(0), "µs/req (client+server in-process)")
}
server.close(); process.exit(0)
