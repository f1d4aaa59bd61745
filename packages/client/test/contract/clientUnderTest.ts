/**
 * The workspace's client as the contract suite's client under test: the Effect API through
 * `FetchHttpClient`, `NodeHttpClient.layerUndici` and `NodeHttpClient.layer` (node:http: its
 * bodies and aborts behave differently from undici's), stdio through the Node command executor,
 * and the Promise API with the same HTTP client layers.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type { ClientUnderTest } from "@phasebound/testkit/contract"
import type { HttpClient } from "@effect/platform/HttpClient"
import type { CommandExecutor } from "@effect/platform/CommandExecutor"
import { Layer } from "effect"
import { McpClient } from "../../src/index.js"
import { connect } from "../../src/promise.js"

const httpLayers = {
  fetch: FetchHttpClient.layer,
  undici: NodeHttpClient.layerUndici,
  "node:http": NodeHttpClient.layer
}
const stdioLayer = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)
const httpLayer = (name: string) => {
  const layer = httpLayers[name as keyof typeof httpLayers]
  if (layer === undefined) throw new Error(`no HTTP client layer named ${name}`)
  return layer
}

export const clientUnderTest: ClientUnderTest<HttpClient | CommandExecutor> = {
  httpClients: Object.keys(httpLayers),
  layer: (http: string) => Layer.merge(httpLayer(http), stdioLayer),
  connectHttp: (target) => McpClient.connect(target),
  connectStdio: (target) => McpClient.connectStdio(target),
  connectPromise: (target) =>
    "stdio" in target
      ? connect({ stdio: target.stdio, policy: target.policy, signal: target.signal })
      : connect({ ...target, httpClient: httpLayer(target.httpClient) })
}
