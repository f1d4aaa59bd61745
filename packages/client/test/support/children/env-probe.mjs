// Runs as a stdio child: `node env-probe.mjs OUT_FILE NAME SERVER.mjs ...SERVER_ARGS`. Writes the
// value of the environment variable NAME that this process was given to OUT_FILE (JSON: the
// value, or null when it is unset), then becomes the testkit stdio server in this same process
// (same pid, so the fixture's pid file and `isAlive` still describe it), with its own arguments.
import { writeFileSync } from "node:fs"
import { pathToFileURL } from "node:url"

const [outFile, name, server, ...serverArgs] = process.argv.slice(2)
if (outFile === undefined || name === undefined || server === undefined) {
  process.stderr.write("usage: env-probe.mjs OUT_FILE NAME SERVER.mjs [ARGS...]\n")
  process.exit(2)
}
writeFileSync(outFile, JSON.stringify({ [name]: process.env[name] ?? null }))
process.argv = [process.argv[0], server, ...serverArgs]
await import(pathToFileURL(server).href)
