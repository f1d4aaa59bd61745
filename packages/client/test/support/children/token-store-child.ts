/**
 * A process sharing a token file with others (tokenStoreProcesses.test.ts). It prints `ready`,
 * waits for a line on stdin (so that every process starts at once), then:
 *
 *   tsx --conditions=@phasebound/source token-store-child.ts set <file> <prefix> <count>
 *     stores <count> entries, keys `<prefix>-0`..., one `set` after the other; prints `done`.
 *   tsx --conditions=@phasebound/source token-store-child.ts call <file> <url> <redirectUri>
 *     connects with the file's tokens (no interactive step) and calls `increment`; prints the
 *     tool's text, or the error record (exit 1).
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Authorization, McpClient } from "@phasebound/client"
import { Effect, Layer, Redacted } from "effect"
import { createInterface } from "node:readline"

const [mode, file, ...rest] = process.argv.slice(2)
const platform = Layer.merge(NodeFileSystem.layer, NodePath.layer)
const store = Authorization.tokenStoreFile(file!).pipe(Layer.provide(platform))

const go = new Promise<void>((resolve) => createInterface({ input: process.stdin }).once("line", () => resolve()))
process.stdout.write("ready\n")
await go

if (mode === "set") {
  const [prefix, count] = rest
  await Effect.runPromise(
    Effect.gen(function*() {
      const tokens = yield* Authorization.TokenStore
      for (let i = 0; i < Number(count); i++) {
        yield* tokens.set({ resource: `https://${prefix}-${i}.example/mcp`, clientId: "c" }, {
          tokens: { accessToken: Redacted.make(`at-${prefix}-${i}`), tokenType: "Bearer", refreshToken: Redacted.make(`rt-${prefix}-${i}`) },
          client: { clientId: "c", method: "none" },
          issuer: "https://as.example"
        })
      }
    }).pipe(Effect.provide(store))
  )
  process.stdout.write("done\n")
} else if (mode === "call") {
  const [url, redirectUri] = rest
  const exit = await Effect.runPromiseExit(
    Effect.scoped(
      Effect.gen(function*() {
        const connection = yield* McpClient.connect({ url: url!, auth: { redirectUri: redirectUri! } })
        const result = yield* connection.callTool("increment")
        return (result.content[0] as { readonly text?: string } | undefined)?.text ?? ""
      })
    ).pipe(Effect.provide(Layer.mergeAll(store, Authorization.layerNoInteraction, FetchHttpClient.layer)))
  )
  if (exit._tag === "Success") {
    process.stdout.write(`${exit.value}\n`)
  } else {
    process.stdout.write(`${JSON.stringify(exit.cause)}\n`)
    process.exitCode = 1
  }
}
