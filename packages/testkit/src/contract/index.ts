/**
 * @phasebound/testkit/contract: one contract suite for MCP clients, run over every (protocol
 * era, transport, HTTP client) row. A runner gives it the client under test and gets back plain
 * cases (`{ family, row, name, timeoutMs, run }`) to run with any test framework.
 */
export * from "./canaries.js"
export type * from "./client.js"
export * from "./expectations.js"
export * from "./faults.js"
export { cancellation } from "./families/cancellation.js"
export { ceilings } from "./families/ceilings.js"
export { deadlines } from "./families/deadlines.js"
export { noReplay } from "./families/noReplay.js"
export { overrides } from "./families/overrides.js"
export { redaction } from "./families/redaction.js"
export { release } from "./families/release.js"
export { spans } from "./families/spans.js"
export * from "./rows.js"
export * from "./assert.js"
export * from "./suite.js"
