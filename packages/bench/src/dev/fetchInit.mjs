/**
 * Dev profiling aid: what the arguments given to Node's `fetch` cost per request: the redirect
 * mode (Node's fetch clones every request unless it is "error"), a URL object and a Uint8Array
 * body (as `FetchHttpClient` passes them) and an AbortSignal. The server runs in this process,
 * so the CPU per request includes its share (the same for every variant); ±40 µs between runs.
 *
 *   node src/dev/fetchInit.mjs
 */
import http from "node:http"

const answer = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "3" }] } })
const server = http.createServer((req, res) => {
  req.resume()
  req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(answer))
})
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
const url = `http://127.0.0.1:${server.address().port}/mcp`
const text = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } })
const bytes = () => new TextEncoder().encode(text)
const signal = () => new AbortController().signal

/** Each variant: the target and the init beyond method and content type, made per request. */
const variants = {
  follow: () => [url, { body: text }],
  manual: () => [url, { body: text, redirect: "manual" }],
  error: () => [url, { body: text, redirect: "error" }],
  manualURL: () => [new URL(url), { body: text, redirect: "manual" }],
  manualBytes: () => [url, { body: bytes(), redirect: "manual" }],
  manualSignal: () => [url, { body: text, redirect: "manual", signal: signal() }],
  errorBytesSignal: () => [url, { body: bytes(), redirect: "error", signal: signal() }],
  // What FetchHttpClient passes, with phasebound's redirect mode.
  manualU8: () => [new URL(url), { body: bytes(), redirect: "manual", signal: signal() }]
}
const post = async (variant) => {
  const [target, init] = variant()
  const response = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, ...init })
  await response.text()
}
const pool = async (n, one) => {
  let next = 0
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next++ < n) await one()
  }))
}
for (let round = 0; round < 3; round++) {
  for (const [name, variant] of Object.entries(variants)) {
    await pool(500, () => post(variant))
    const start = process.cpuUsage()
    await pool(4000, () => post(variant))
    const used = process.cpuUsage(start)
    if (round > 0) console.log(name, ((used.user + used.system) / 4000).toFixed(0), "µs/req (client+server in-process)")
  }
}
server.close()
process.exit(0)
