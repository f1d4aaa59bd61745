// The 2026-07-28 peer of the subscription tests over stdio: the SDK v2
// (@modelcontextprotocol/server 2.4.0) `serveStdio`, whose stdio listen router serves
// `subscriptions/listen` itself and routes the pinned instance's change notifications onto the
// subscriptions that asked for them (`resourceSubscriptions` honoured with `resources.subscribe`).
// Tools: `touch` {uri} (`notifications/resources/updated`), `add_prompt` {name} (registered at
// run time: `notifications/prompts/list_changed`).
import { McpServer } from "@modelcontextprotocol/server"
import { serveStdio } from "@modelcontextprotocol/server/stdio"
import { z } from "zod"

serveStdio(() => {
  const server = new McpServer({ name: "subscriptions-peer-v2-stdio", version: "2.4.0" }, {
    capabilities: { prompts: { listChanged: true }, resources: { listChanged: true, subscribe: true } }
  })
  server.registerResource("doc-a", "doc://a", { mimeType: "text/plain" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "a" }]
  }))
  server.registerPrompt("greet", { description: "Greets" }, () => ({
    messages: [{ role: "user", content: { type: "text", text: "hello" } }]
  }))
  server.registerTool("touch", { inputSchema: z.object({ uri: z.string() }) }, async ({ uri }) => {
    await server.server.sendResourceUpdated({ uri })
    return { content: [{ type: "text", text: "sent" }] }
  })
  server.registerTool("add_prompt", { inputSchema: z.object({ name: z.string() }) }, ({ name }) => {
    server.registerPrompt(name, { description: `added ${name}` }, () => ({
      messages: [{ role: "user", content: { type: "text", text: name } }]
    }))
    return { content: [{ type: "text", text: `added ${name}` }] }
  })
  return server
})
