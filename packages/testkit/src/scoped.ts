/** The test server as an Effect resource: started on acquire, closed (sockets destroyed) on release. */
import { Effect, type Scope } from "effect"
import { startServer, type TestServer, type TestServerOptions } from "./StreamableHttpServer.js"

export const scoped = (options?: TestServerOptions): Effect.Effect<TestServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startServer(options)),
    (server) => Effect.promise(() => server.close())
  )
