import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "qualify",
    // The quick part of the qualification: what `npm pack` of each public package ships.
    // The full qualification (install the tarballs, run under node and bun) is `npm run qualify`.
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000
  }
})
