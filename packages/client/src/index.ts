/**
 * phasebound: an MCP client for Effect with phase budgets, typed and redacted errors, and no
 * silent replays.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Authorization from "./Authorization.js"

/** @since 0.1.0 */
export * as ClientHandlers from "./ClientHandlers.js"

/** @since 0.1.0 */
export * as ConfigImport from "./ConfigImport.js"

/** @since 0.1.0 */
export * as HttpProxy from "./HttpProxy.js"

/** @since 0.1.0 */
export * as McpCache from "./McpCache.js"

/** @since 0.1.0 */
export * as McpCatalog from "./McpCatalog.js"

/** @since 0.1.0 */
export * as McpClient from "./McpClient.js"

/** @since 0.1.0 */
export * as McpCodegen from "./McpCodegen.js"

/** @since 0.1.0 */
export * as McpConnection from "./McpConnection.js"

/** @since 0.1.0 */
export * as McpConnectionError from "./McpConnectionError.js"

/** @since 0.1.0 */
export * as McpSchema from "./McpSchema.js"

/** @since 0.1.0 */
export * as McpTask from "./McpTask.js"

/** @since 0.1.0 */
export * as McpServers from "./McpServers.js"

/** @since 0.1.0 */
export * as McpSkills from "./McpSkills.js"

/** @since 0.1.0 */
export * as PhasePolicy from "./PhasePolicy.js"

/** @since 0.1.0 */
export * as ServersFile from "./ServersFile.js"
