/**
 * @phasebound/testkit: scriptable loopback MCP servers, normal and hostile, for testing MCP
 * clients (byte ceilings, deadlines, release, no replay).
 */
export { scoped } from "./scoped.js"
export { startServer, type RecordedRequest, type TestServer, type TestServerOptions } from "./StreamableHttpServer.js"
export { type Fault, type FaultKind } from "./faults.js"
export {
  exactJsonResponse,
  exactSseFrame,
  padString,
  paddedResultTemplate,
  sseFrame,
  utf8Length,
  type ResultTemplate
} from "./payload.js"
export { DEFAULT_PROTOCOL_VERSION, SERVER_INFO, SUPPORTED_PROTOCOL_VERSIONS } from "./mcp.js"
export type { JsonRpcId } from "./jsonrpc.js"
export type { ResponseMode } from "./wire.js"
