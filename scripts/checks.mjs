// The static checks of `npm test`, side by side (docs/CONTRIBUTING.md, "Lint, format and docs"):
// each is one process on one core, so on two cores they take about half their sum. Each
// check's output is printed whole when it ends, with its time; any failure fails the run.
import { spawn } from "node:child_process"

const checks = [
  ["typecheck", ["run", "typecheck"]],
  ["lint", ["run", "lint"]],
  ["docgen client", ["run", "docgen", "-w", "@phasebound/client"]],
  ["docgen workflow", ["run", "docgen", "-w", "@phasebound/workflow"]],
  ["docgen ai", ["run", "docgen", "-w", "@phasebound/ai"]]
]

const run = ([name, args]) =>
  new Promise((resolve) => {
    const started = performance.now()
    const child = spawn("npm", ["--silent", ...args], { stdio: ["ignore", "pipe", "pipe"] })
    const output = []
    child.stdout.on("data", (chunk) => output.push(chunk))
    child.stderr.on("data", (chunk) => output.push(chunk))
    child.on("error", (error) => output.push(Buffer.from(`${error.message}\n`)))
    child.on("close", (code) => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      const text = Buffer.concat(output).toString("utf8")
      process.stdout.write(`${code === 0 ? "ok" : "FAILED"}: ${name} (${seconds} s)\n${code === 0 ? "" : text}`)
      resolve(code === 0)
    })
  })

const results = await Promise.all(checks.map(run))
process.exitCode = results.every(Boolean) ? 0 : 1
