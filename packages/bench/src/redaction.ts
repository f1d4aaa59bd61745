/**
 * The cost of `remoteMessage` redaction (docs/DESIGN.md, "Errors": Redaction) on messages a
 * hostile server chooses: ordinary text, runs of a secret's public prefix, long runs of control
 * characters after it (the case that would make a control-tolerant match quadratic), and
 * percent-encoded noise. Prints milliseconds per message; the numbers, not a test.
 *
 *   npx tsx --conditions=@phasebound/source packages/bench/src/redaction.ts
 */
import { McpConnectionError } from "@phasebound/client"

const secrets = McpConnectionError.secretsOf(
  new URL("https://u:p4ssw0rd-xyz@h.example/mcp/TOKEN1234567/x?key=a%20b-c0ffee&sig=s3cr3t%2F%2B%3D"),
  {
    authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature-abcdef",
    cookie: "session=SESSION-abc123; theme=OTHER-val; csrf=tok-9876543210"
  }
)

const inputs: ReadonlyArray<readonly [string, (size: number) => string]> = [
  ["ordinary text", (size) => "lorem ipsum dolor sit amet ".repeat(size / 27 + 1).slice(0, size)],
  ["a public prefix repeated (Bearer eyJhbGciOiJ)", (size) => "Bearer eyJhbGciOiJIUzI1NiJ9.".repeat(size / 28 + 1).slice(0, size)],
  ["a prefix, then one run of NULs", (size) => "Bearer " + "\u0000".repeat(size - 7)],
  ["a prefix split by NULs, repeated", (size) => "B\u0000e\u0000a\u0000r\u0000".repeat(size / 8 + 1).slice(0, size)],
  ["percent-encoded noise", (size) => "%2F%2f%25%53".repeat(size / 12 + 1).slice(0, size)]
]

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

console.log(`${secrets.length} secret forms`)
for (const size of [64 * 1024, 1024 * 1024]) {
  for (const [name, make] of inputs) {
    const message = make(size)
    const runs: Array<number> = []
    for (let i = 0; i < 5; i++) {
      const started = performance.now()
      McpConnectionError.sanitizeRemoteMessage(message, secrets)
      runs.push(performance.now() - started)
    }
    console.log(`${String(size / 1024).padStart(5)} KiB  ${name}: ${median(runs).toFixed(1)} ms (median of 5)`)
  }
}
