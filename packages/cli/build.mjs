/**
 * Builds the Node bin (docs/BENCHMARKS.md, "CLI start-up", for why this shape):
 * - `dist/main.cjs`: src/bin.ts with everything bundled (effect included), minified, as one
 *   CommonJS script, so that start-up reads one file and the launcher can give it a V8 code cache;
 * - `dist/bin.js`: the launcher (src/launch.mjs, a few KB), which runs `main.cjs` with Node's
 *   compile cache, or with its own V8 code cache on Node 20, or imports it under Bun.
 * The workspace packages are taken from their TypeScript sources (the "@phasebound/source" export
 * condition). `--metafile` writes dist/meta.json (the bundle's inputs) for inspection.
 */
import { createHash } from "node:crypto"
import { build } from "esbuild"
import { readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))

const started = Date.now()
const result = await build({
  absWorkingDir: here,
  entryPoints: ["src/bin.ts"],
  outfile: "dist/main.cjs",
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  conditions: ["@phasebound/source"],
  // jsonc-parser's `main` is a UMD wrapper whose requires a bundler cannot follow; its ES module
  // build is the same code.
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  // About 10% less CPU at start-up than the readable bundle (a smaller script to read, hash and
  // deserialize). Names are kept out of it: no record, message or output depends on them.
  minify: true,
  // The testkit (for `demo`) computes paths from import.meta.url, which a CommonJS script lacks.
  define: { "import.meta.url": "__phaseboundImportMetaUrl" },
  banner: { js: "var __phaseboundImportMetaUrl = require(\"node:url\").pathToFileURL(__filename).href;" },
  legalComments: "none",
  metafile: process.argv.includes("--metafile"),
  logLevel: "warning"
})
if (result.metafile !== undefined) writeFileSync(join(here, "dist/meta.json"), JSON.stringify(result.metafile))

const bundleHash = createHash("sha256").update(readFileSync(join(here, "dist/main.cjs"))).digest("hex").slice(0, 16)
await build({
  absWorkingDir: here,
  entryPoints: ["src/launch.mjs"],
  outfile: "dist/bin.js",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["./main.cjs"],
  define: { __PHASEBOUND_BUNDLE_HASH__: JSON.stringify(bundleHash) },
  banner: { js: "#!/usr/bin/env node" },
  legalComments: "none",
  logLevel: "warning"
})
// On stderr: a progress line, and `npm pack --json` (prepack runs this) keeps stdout for its JSON.
process.stderr.write(`dist/bin.js and dist/main.cjs built in ${Date.now() - started} ms\n`)
