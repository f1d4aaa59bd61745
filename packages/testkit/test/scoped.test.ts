import { it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { expect } from "vitest"
import { scoped } from "../src/index.js"

it.scoped("scoped starts a server for the scope", () =>
  Effect.gen(function*() {
    const server = yield* scoped({ sessions: false })
    const response = yield* Effect.promise(() => fetch(server.url, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) }))
    expect(yield* Effect.promise(() => response.json())).toEqual({ jsonrpc: "2.0", id: 1, result: {} })
  }))

it.effect("closing the scope closes the server and its sockets", () =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const server = yield* scoped({ sessions: false }).pipe(Scope.extend(scope))
    server.script({ on: "ping", kind: "headers-never-sent" })
    const pending = fetch(server.url, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) })
      .then(() => "answered", () => "failed")
    yield* Effect.promise(() => server.waitFor(() => server.openConnections() === 1))
    yield* Scope.close(scope, Exit.void)
    expect(server.openConnections()).toBe(0)
    const outcome = yield* Effect.promise(() => pending)
    expect(outcome).toBe("failed")
    const after = yield* Effect.promise(() => fetch(server.url).then(() => "answered", () => "refused"))
    expect(after).toBe("refused")
  }))
