import { defineProject } from "vitest/config"

// "@phasebound/source" resolves the workspace packages to their TypeScript sources (see package.json exports).
const conditions = ["@phasebound/source", "node", "import", "module", "default"]

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ["@phasebound/source"] } },
  test: {
    name: "workflow",
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
