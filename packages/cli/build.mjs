/**
 * Builds the Node bin `dist/bin.js`: one ESM file with everything bundled (effect included), so
 * that start-up reads one file. The workspace packages are taken from their TypeScript sources
 * (the "@phasebound/source" export condition). `--metafile` writes dist/meta.json for inspection.
 */
import { build } from "esbuild"
import { writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const started = Date.now()
const result = await build({
  absWorkingDir: here,
  entryPoints: ["src/bin.ts"],
  outfile: "dist/bin.js",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  conditions: ["@phasebound/source"],
  // Some bundled CommonJS modules call require() for Node built-ins; ESM has no require.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __phaseboundRequire } from \"node:module\";\nconst require = __phaseboundRequire(import.meta.url);"
  },
  legalComments: "none",
  metafile: process.argv.includes("--metafile"),
  logLevel: "warning"
})
if (result.metafile !== undefined) writeFileSync(join(here, "dist/meta.json"), JSON.stringify(result.metafile))
// On stderr: a progress line, and `npm pack --json` (prepack runs this) keeps stdout for its JSON.
process.stderr.write(`dist/bin.js built in ${Date.now() - started} ms\n`)
