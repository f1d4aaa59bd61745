/**
 * @phasebound/testkit: scriptable loopback MCP servers, normal and hostile, for testing MCP
 * clients (byte ceilings, deadlines, release, no replay).
 */
export { scoped } from "./scoped.js"
export { startServer, type RecordedRequest, type TestServer, type TestServerOptions } from "./StreamableHttpServer.js"
export { checkFaultFraming, type Fault, FAULT_FRAMINGS, type FaultKind, faultRefusal, type Framing } from "./faults.js"
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
export { type Era, type RecordedHttpRequest } from "./StreamableHttpServer.js"
export {
  ASK_NAME_TOOL,
  INVALID_HEADER_TOOLS,
  REGION_QUERY_TOOL,
  TYPED_HEADERS_TOOL,
  type ToolDefinition
} from "./mcp.js"
export {
  ASK_NAME_INPUT_REQUESTS,
  decodeHeaderValue,
  DEFAULT_TTL_MS,
  encodeHeaderValue,
  headerAnnotations,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  META_SUBSCRIPTION_ID,
  MODERN_PROTOCOL_VERSION
} from "./modern.js"
export {
  FEATURE_CAPABILITIES,
  type FeatureCounters,
  FEATURE_TOOLS,
  LOG_LEVELS,
  type LogLevel,
  WEATHER_OUTPUT_SCHEMA
} from "./features.js"
export { EFFECT_TOOLS, META_EFFECT_IDENTITY } from "./effects.js"
export {
  COMPLETION_NAMES,
  COMPLETION_REPOS,
  MAX_FAULT_BYTES as MAX_COMPLETION_FAULT_BYTES,
  MAX_FAULT_VALUES as MAX_COMPLETION_FAULT_VALUES
} from "./completion.js"
export type { ResponseMode } from "./wire.js"
export {
  LEGACY_MESSAGES_PATH,
  LEGACY_PROTOCOL_VERSION,
  LEGACY_SSE_PATH,
  scopedLegacy,
  startLegacyServer,
  type LegacyServerOptions,
  type LegacyTestServer
} from "./LegacySseServer.js"
export {
  exactNotificationFrame,
  type LegacyFault,
  type LegacyFaultKind,
  type LegacyResponseFault,
  type LegacyStreamFault
} from "./legacyFaults.js"
export {
  makeStdioFixture,
  readEnvReport,
  stdioServerScript,
  stdioServerCommand,
  type StdioFault,
  type StdioFaultKind,
  type StdioFixture,
  type StdioFixtureOptions,
  type StdioEra,
  type StdioGlobalFault,
  type StdioMethodFault,
  type StdioServerCommand,
  type StdioServerOptions
} from "./StdioServer.js"
export {
  bearerTokenOf,
  type ProtectedResourceOptions,
  RESOURCE_METADATA_CUSTOM_PATH,
  RESOURCE_METADATA_WELL_KNOWN,
  type ResourceMetadataFault,
  type ResourceMetadataFaultKind,
  type ResourceMetadataMode
} from "./protectedResource.js"
export {
  type GrantType,
  type IssuedToken,
  JWT_BEARER_ASSERTION_TYPE,
  type MetadataVariant,
  type OAuthClient,
  type OAuthEndpoint,
  type OAuthFault,
  type OAuthFaultKind,
  type OAuthRecordedRequest,
  type OAuthServerOptions,
  type OAuthTestServer,
  s256,
  startOAuthServer,
  type TokenCheck,
  type TokenCheckOptions,
  type TokenEndpointAuthMethod
} from "./OAuthServer.js"
export { isRunning, parseIdentity, type ProcessIdentity, processStart } from "./processIdentity.js"
export {
  bodyBytes,
  HOSTILE_NORMAL_TOOL,
  type HostileAnswer,
  type HostileEra,
  type HostileReply,
  type HostileRequest,
  type HostileScript,
  type HostileServer,
  type HostileServerOptions,
  ID_PLACEHOLDER,
  messageAnswer,
  normalAnswer,
  resultText,
  sseEventText,
  startHostileServer,
  type ToolCallArrival
} from "./HostileServer.js"
export {
  hostileStdioScript,
  type HostileStdioAnswer,
  type HostileStdioAnswers,
  type HostileStdioCase,
  hostileStdioCase
} from "./HostileStdio.js"
export {
  type CheckResult,
  type ChildReport,
  formatReport,
  readReport,
  REPORT_PREFIX,
  type ReportReading
} from "./childReport.js"
export { startTaskServer, type TaskEra, type TaskServer, type TaskServerOptions } from "./TaskServer.js"
export {
  SKILLS_EXTENSION,
  skillDigest,
  type SkillDefinition,
  skillEntry,
  type SkillFileDefinition,
  skillMarkdown,
  type SkillsServer,
  skillsServer,
  type SkillsServerOptions,
  skillUri,
  startSkillsServer
} from "./skills.js"
export { type HostileProxy, type ProxyFault, type ProxyRequest, scopedHostileProxy, startHostileProxy } from "./hostileProxy.js"
