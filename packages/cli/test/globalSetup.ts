/**
 * Builds the Node bundle and compiles the single executable once per test run (both take well
 * under a few seconds), exactly as `npm run compile` does.
 */
import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

export default function setup(): void {
  // The package's own script (package.json `compile`): the bundle and its launcher, then the executable.
  execFileSync("npm", ["run", "compile", "--silent"], { cwd: cli, stdio: "pipe" })
}
