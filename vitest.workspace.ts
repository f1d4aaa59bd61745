// The list of test projects. The root vitest.config.ts feeds it to `test.projects`
// (Vitest 3.2 deprecates reading this file by itself).
export default ["packages/client", "packages/testkit", "packages/cli", "packages/qualify", "packages/workflow"]
