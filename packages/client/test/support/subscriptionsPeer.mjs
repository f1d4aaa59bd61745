// A real 2025-era peer for resource subscriptions and prompt/resource list changes, on the
// official SDK (@modelcontextprotocol/sdk 1.32.2): `McpServer` with `resources.subscribe`
// declared and `resources/subscribe` / `resources/unsubscribe` answered by this file (the SDK
// routes them to the handlers set on `server.server`; it keeps no subscription itself).
// `subscriptionsServers.ts` serves it over Streamable HTTP; run as a program (`node
// subscriptionsPeer.mjs [--no-subscribe]`) it serves one session over stdio.
//
// A URI starting `doc://forbidden` is refused (-32602), its message repeating the URI;
// `doc://silent` is never answered, nor is the unsubscribe of `doc://sticky`.
//
// Tools drive what the server announces, the same on every transport:
// - `touch` {uri, force?}: `notifications/resources/updated` for uri when this session
//   subscribed to it (or always, with force: an update nobody asked for);
// - `flood` {uri, count}: that many updates of uri, as fast as the transport takes them;
// - `add_prompt` {name} / `add_resource` {name}: registered at run time, which makes the SDK send
//   `notifications/prompts/list_changed` / `notifications/resources/list_changed` itself;
// - `counts`: what this process saw, as JSON ({subscribes, unsubscribes} by URI).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { ErrorCode, McpError, SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"

/** What every session of this process saw. */
export const makeCounts = () => ({ subscribes: {}, unsubscribes: {} })

/**
 * @param {Record<string, number>} table
 * @param {string} uri
 */
const bump = (table, uri) => {
  table[uri] = (table[uri] ?? 0) + 1
}

/**
 * One session's server. `options.subscribe` (default true) declares `resources.subscribe`.
 * @param {{ subscribes: Record<string, number>, unsubscribes: Record<string, number> }} counts
 * @param {{ subscribe?: boolean }} [options]
 */
export const makeSubscriptionsServer = (counts, options = {}) => {
  const subscribe = options.subscribe ?? true
  const server = new McpServer({ name: "subscriptions-peer", version: "1.32.2" })
  /** The URIs this session subscribed to. */
  const subscribed = new Set()
  server.registerResource("doc-a", "doc://a", { mimeType: "text/plain" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "a" }]
  }))
  server.registerResource("doc-b", "doc://b", { mimeType: "text/plain" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "b" }]
  }))
  server.registerPrompt("greet", { description: "Greets" }, () => ({
    messages: [{ role: "user", content: { type: "text", text: "hello" } }]
  }))
  server.registerTool("touch", { inputSchema: { uri: z.string(), force: z.boolean().optional() } }, async ({ force, uri }) => {
    const sent = force === true || subscribed.has(uri)
    if (sent) await server.server.sendResourceUpdated({ uri })
    return { content: [{ type: "text", text: sent ? "sent" : "not subscribed" }] }
  })
  server.registerTool("flood", { inputSchema: { uri: z.string(), count: z.number().int().min(1).max(100_000) } }, async ({ count, uri }) => {
    for (let i = 0; i < count; i++) await server.server.sendResourceUpdated({ uri })
    return { content: [{ type: "text", text: `sent ${count}` }] }
  })
  server.registerTool("add_prompt", { inputSchema: { name: z.string() } }, ({ name }) => {
    server.registerPrompt(name, { description: `added ${name}` }, () => ({
      messages: [{ role: "user", content: { type: "text", text: name } }]
    }))
    return { content: [{ type: "text", text: `added ${name}` }] }
  })
  server.registerTool("add_resource", { inputSchema: { name: z.string() } }, ({ name }) => {
    server.registerResource(name, `doc://${name}`, { mimeType: "text/plain" }, (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text: name }]
    }))
    return { content: [{ type: "text", text: `added ${name}` }] }
  })
  server.registerTool("counts", {}, () => ({ content: [{ type: "text", text: JSON.stringify(counts) }] }))
  if (subscribe) {
    server.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } })
    server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
      // A careless refusal: it repeats the URI (and what its query carries).
      if (request.params.uri.startsWith("doc://forbidden")) {
        throw new McpError(ErrorCode.InvalidParams, `no subscription to ${request.params.uri} for you`)
      }
      // Never answered.
      if (request.params.uri === "doc://silent") return new Promise(() => {})
      bump(counts.subscribes, request.params.uri)
      subscribed.add(request.params.uri)
      return {}
    })
    server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      bump(counts.unsubscribes, request.params.uri)
      // Never answered.
      if (request.params.uri === "doc://sticky") return new Promise(() => {})
      subscribed.delete(request.params.uri)
      return {}
    })
  }
  return server
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").pop() ?? "")) {
  const server = makeSubscriptionsServer(makeCounts(), { subscribe: !process.argv.includes("--no-subscribe") })
  await server.connect(new StdioServerTransport())
}
