/**
 * `npm start`: runs the embedded demo and prints its summary.
 */
import * as Effect from "effect/Effect"
import { runDemo } from "./demo.js"

Effect.runPromise(runDemo).then(
  (lines) => {
    const width = Math.max(...lines.map((line) => line.step.length))
    process.stdout.write("phasebound demo: a real MCP session against a loopback server\n\n")
    for (const line of lines) process.stdout.write(`  ${line.step.padEnd(width)}  ${line.detail}\n`)
  },
  (error) => {
    process.stderr.write(`${JSON.stringify({ error })}\n`)
    process.exitCode = 1
  }
)
