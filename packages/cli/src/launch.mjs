/**
 * The Node entry point, built into `dist/bin.js` by build.mjs: it runs the CLI bundle
 * `dist/main.cjs` (src/bin.ts and everything it imports) with a V8 code cache, so that a run does
 * not compile the bundle's ~1 MB of JavaScript again (docs/BENCHMARKS.md, "CLI start-up").
 *
 * - Node 22.1 and later: Node's own compile cache (`module.enableCompileCache()`), then `require`.
 * - Node 20: the same by hand. The bundle is compiled as a `vm.Script` with the data an earlier
 *   run left; a run that found none, or had it refused, writes it at exit, with the functions it
 *   compiled. V8 refuses data from another V8 version or other flags; the file name carries the
 *   bundle's content hash (a new build never reads an old build's data), the Node version and a
 *   hash of the flags. The directory is $NODE_COMPILE_CACHE, else the temporary directory, in a
 *   subdirectory of the user's own that no one else may write (else there is no cache).
 * - Bun (`bun bin.js`, and `bun build --compile` of this file): the bundle, imported.
 *
 * The cache only saves time: a failure around it is ignored and never printed (the CLI's stderr
 * is its one record), and NODE_DISABLE_COMPILE_CACHE=1 turns it off, as it does Node's.
 * `__PHASEBOUND_BUNDLE_HASH__` is replaced by build.mjs.
 */
/* global __PHASEBOUND_BUNDLE_HASH__ -- the bundle's content hash, a constant build.mjs has esbuild put in */
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import * as Module from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"

const here = dirname(fileURLToPath(import.meta.url))

/** The cache directory when it is usable: ours, and writable by no one else (POSIX). */
const privateDirectory = (directory) => {
  const stat = lstatSync(directory, { throwIfNoEntry: false })
  if (stat === undefined || !stat.isDirectory()) return false
  if (process.platform === "win32") return true
  return (process.getuid === undefined || stat.uid === process.getuid()) && (stat.mode & 0o022) === 0
}

/** A short hash of a string (FNV-1a, 32 bits), for a file name: node:crypto is not loaded for it. */
const fnv1a = (text) => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return (hash >>> 0).toString(16)
}

const runWithCodeCache = (file) => {
  const source = readFileSync(file, "utf8")
  const disabled = (process.env["NODE_DISABLE_COMPILE_CACHE"] ?? "") !== ""
  const base = process.env["NODE_COMPILE_CACHE"] || tmpdir()
  const directory = join(base, `phasebound-code-cache-${process.getuid?.() ?? "user"}`)
  // V8 refuses data made under other flags: one file per Node version and set of flags, so that
  // runs that alternate (a `--inspect` run, another NODE_OPTIONS) do not overwrite each other's.
  const flags = fnv1a(`${process.execArgv.join(" ")} ${process.env["NODE_OPTIONS"] ?? ""}`)
  const cacheFile = join(directory, `main-${__PHASEBOUND_BUNDLE_HASH__}-${process.version}-${process.arch}-${flags}.v8`)
  let cachedData
  if (!disabled) {
    try {
      if (privateDirectory(directory)) cachedData = readFileSync(cacheFile)
    } catch {
      // no cache yet: this run writes it
    }
  }
  // The CommonJS wrapper, as Node's own loader compiles a .cjs file.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER
  })
  if (!disabled && (cachedData === undefined || script.cachedDataRejected === true)) {
    // At exit: the data then holds every function this run compiled, not only the top level.
    process.once("exit", () => {
      try {
        mkdirSync(directory, { recursive: true, mode: 0o700 })
        if (!privateDirectory(directory)) return
        const temporary = `${cacheFile}.${process.pid}.tmp`
        writeFileSync(temporary, script.createCachedData(), { mode: 0o600 })
        renameSync(temporary, cacheFile)
        // Another build's data is never read again: at most one build's files are kept.
        for (const name of readdirSync(directory)) {
          if (name.startsWith("main-") && !name.startsWith(`main-${__PHASEBOUND_BUNDLE_HASH__}-`)) rmSync(join(directory, name), { force: true })
        }
      } catch {
        // a read-only or full disk: the next run compiles again
      }
    })
  }
  const module = { exports: {} }
  script.runInThisContext()(module.exports, Module.createRequire(file), module, file, dirname(file))
}

if (process.versions["bun"] !== undefined) {
  await import("./main.cjs")
} else if (typeof Module.enableCompileCache === "function") {
  try {
    Module.enableCompileCache()
  } catch {
    // runs without a cache
  }
  Module.createRequire(import.meta.url)("./main.cjs")
} else {
  runWithCodeCache(join(here, "main.cjs"))
}
