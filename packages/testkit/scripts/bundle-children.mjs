// The second half of the testkit's build (after tsc): bundles each stdio child program into
// dist/stdio/*.mjs with esbuild, so the packed package runs them with no TypeScript loader
// (see src/stdioBundle.ts).
import { fileURLToPath } from "node:url"
import { bundleChildProgram, CHILD_PROGRAMS } from "../dist/stdioBundle.js"

for (const program of CHILD_PROGRAMS) {
  const outfile = fileURLToPath(new URL(`../dist/${program.bundle}`, import.meta.url))
  bundleChildProgram(program, outfile)
  console.error(`bundled src/${program.entry} -> dist/${program.bundle}`)
}
