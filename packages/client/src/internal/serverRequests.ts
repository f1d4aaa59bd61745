/**
 * The server's requests to the client (docs/DESIGN.md, "Client capabilities"), whatever stream
 * brought them: each is queued for the connection's one answering fiber, which works out
 * `maxAnswering` answers at a time (each bounded by whoever built it) and hands each to the
 * `reply` of the transport it came from. The queue holds `maxQueued` requests; a request that
 * finds it full is dropped unanswered (and counted in the connection's `droppedFrames`), so a
 * server that floods the client with requests costs it a bounded number of handlers, parsed
 * messages and replies, and the readers never wait.
 */
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import type * as McpSchema from "../McpSchema.js"

/** Answers worked out at the same time. */
export const maxAnswering = 8
/** Requests waiting for an answering slot. */
export const maxQueued = 32

type ServerRequest = typeof McpSchema.JsonRpcRequest.Type
type Reply = (body: Record<string, unknown>) => Effect.Effect<void>

interface Queued {
  readonly request: ServerRequest
  readonly reply: Reply
}

export interface ServerRequests {
  /** What a transport's reader calls for each request of the server's (never blocks). */
  readonly request: (request: ServerRequest, reply: Reply) => Effect.Effect<void>
  /** The requests dropped so far because the queue was full. */
  readonly dropped: () => number
}

/**
 * The queue, in the current scope; its answering fiber starts there with the first request (most
 * connections never receive one, and a connection is made and closed faster without it).
 */
export const make = (
  answer: (request: ServerRequest) => Effect.Effect<Record<string, unknown>>
): Effect.Effect<ServerRequests, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const queue = yield* Effect.acquireRelease(Queue.dropping<Queued>(maxQueued), Queue.shutdown)
    let dropped = 0
    let started = false
    const answering = Effect.gen(function*() {
      const running = yield* FiberSet.make()
      const slots = yield* Effect.makeSemaphore(maxAnswering)
      // An answer never fails (an error reply instead); a defect drops this answer, not the fiber.
      const answerOne = ({ reply, request }: Queued) =>
        Effect.flatMap(answer(request), reply).pipe(Effect.catchAllCause(() => Effect.void), Effect.ensuring(slots.release(1)))
      // A slot first, then a request: what waits for a slot waits in the queue, where it is bounded.
      yield* slots.take(1).pipe(
        Effect.zipRight(Queue.take(queue)),
        Effect.flatMap((queued) => FiberSet.run(running, answerOne(queued))),
        Effect.forever,
        Effect.interruptible,
        Effect.forkScoped
      )
    })
    const start = Effect.suspend(() => {
      if (started) return Effect.void
      started = true
      // Uninterruptible: a reader interrupted here must not leave the queue without its fiber.
      return Effect.uninterruptible(Scope.extend(answering, scope))
    })
    return {
      request: (request, reply) =>
        Effect.zipRight(
          start,
          Effect.map(Queue.offer(queue, { request, reply }), (queued) => {
            if (!queued) dropped++
          })
        ),
      dropped: () => dropped
    }
  })
