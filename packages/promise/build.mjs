/**
 * Builds @phasebound/promise: `dist/index.js`, src/index.ts with everything it runs on bundled
 * (the client's Promise API from its TypeScript sources, effect, @effect/platform,
 * @effect/platform-node, ajv, re2js), so that the package has no dependency at all and a
 * project's own `effect`, whatever its version, is never loaded by it. The declarations
 * (`dist/index.d.ts`, `dist/types.d.ts`) are tsc's (tsconfig.build.json), from the plain types.
 */
import { build } from "esbuild"
import { statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const started = Date.now()
await build({
  absWorkingDir: here,
  entryPoints: ["src/index.ts"],
  outfile: "dist/index.js",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  conditions: ["@phasebound/source"],
  // Bundled CommonJS (undici, ajv) requires Node's built-in modules, which an ES module has no
  // `require` for: the bundle makes one.
  banner: { js: "import { createRequire as __phaseboundCreateRequire } from \"node:module\";\nconst require = __phaseboundCreateRequire(import.meta.url);" },
  // A third less to read at start-up than the readable bundle; functions and classes keep their
  // names, so stack traces and `error.name` read as in the sources.
  minify: true,
  keepNames: true,
  legalComments: "none",
  logLevel: "warning"
})
const bytes = statSync(join(here, "dist/index.js")).size
// On stderr: `npm pack --json` (prepack runs this) keeps stdout for its JSON.
process.stderr.write(`dist/index.js built in ${Date.now() - started} ms (${bytes} bytes)\n`)
