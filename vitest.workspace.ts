/**
 * The list of test projects; the root vitest.config.ts feeds it to `test.projects`. Two tiers
 * per package (docs/TESTING.md, "Tiers"):
 * - `<package>:fast`: pure units and in-process loopback servers; the inner loop (`npm run test:fast`);
 * - `<package>:slow`: child processes, the contract matrix, real peers, the conformance suite,
 *   compiled executables, PostgreSQL.
 * `npm test` runs both. A test file belongs to exactly one tier: the slow globs of a package, the
 * fast tier everything else of it.
 */
import { fileURLToPath } from "node:url"
import { configDefaults, defineProject, type TestProjectInlineConfiguration } from "vitest/config"

// "@phasebound/source" resolves the workspace packages to their TypeScript sources (see package.json exports).
const conditions = ["@phasebound/source", "node", "import", "module", "default"]

// FastCheck's fixed seed (vitest.setup.ts).
const setupFiles = [fileURLToPath(new URL("./vitest.setup.ts", import.meta.url))]

interface Tiering {
  readonly slow: ReadonlyArray<string>
  /** Runs once before the slow tier's files (e.g. building the CLI bundle). */
  readonly slowSetup?: ReadonlyArray<string>
}

const tier = (pkg: string, name: "fast" | "slow", tiering: Tiering): TestProjectInlineConfiguration =>
  defineProject({
    root: `packages/${pkg}`,
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ["@phasebound/source"] } },
    test: {
      name: `${pkg}:${name}`,
      include: name === "slow" ? [...tiering.slow] : ["test/**/*.test.ts"],
      exclude: name === "slow" ? [...configDefaults.exclude] : [...configDefaults.exclude, ...tiering.slow],
      globalSetup: name === "slow" ? [...(tiering.slowSetup ?? [])] : [],
      setupFiles,
      // The fast tier's files share their worker's module graph (effect, the platform, the
      // sources are loaded once per worker, not once per file: 75 s of collecting becomes 16 s).
      // They hold no global state: no mocks, stubbed globals or environment writes; every server
      // and fiber is scoped to its test. The slow tier keeps one module graph per file: its
      // files spawn processes and set up machines whose cost dwarfs a module load.
      isolate: name === "slow",
      testTimeout: 30_000,
      hookTimeout: name === "slow" ? 120_000 : 30_000
    }
  })

/** A package with no slow files has only its fast tier. */
const tiered = (pkg: string, tiering: Tiering) =>
  tiering.slow.length === 0 ? [tier(pkg, "fast", tiering)] : [tier(pkg, "fast", tiering), tier(pkg, "slow", tiering)]

export const projects: ReadonlyArray<TestProjectInlineConfiguration> = [
  ...tiered("client", {
    slow: [
      "test/contract/**/*.test.ts",
      "test/conformance/**/*.test.ts",
      "test/interop/**/*.test.ts",
      "test/hostile/**/*.test.ts",
      "test/transport/stdio*.test.ts",
      "test/authorization/token-store-processes.test.ts",
      "test/features/connection-fibers.test.ts",
      "test/unit/promise.test.ts",
      // Writes process.env (the Promise API's default client reads the proxy variables).
      "test/transport/proxy-env.test.ts"
    ]
  }),
  ...tiered("testkit", { slow: ["test/stdio*.test.ts", "test/features-stdio.test.ts", "test/processIdentity.test.ts"] }),
  ...tiered("cli", {
    // browser.test.ts mocks node:child_process (a pass-through spy): a mock needs a module graph of
    // its own, which only the slow tier gives.
    slow: ["test/**/*.e2e.test.ts", "test/runtimes.test.ts", "test/browser.test.ts"],
    slowSetup: ["test/globalSetup.ts"]
  }),
  ...tiered("workflow", { slow: ["test/cluster/**/*.test.ts"] }),
  ...tiered("ai", { slow: [] }),
  // The packing itself is the qualification's (npm run qualify), after the tests.
  ...tiered("qualify", { slow: [] })
]
