/**
 * A sliding PubSub made when its first subscriber comes. A connection offers streams that most
 * programs never read (the server's log messages, the change events), and a bounded PubSub
 * allocates all its places when it is made (about 0.1 ms for 1,000), on every connect. Before
 * anyone subscribed, publishing is what it is on a PubSub without subscribers: nothing is kept.
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** The reading side. */
export interface Subscribable<A> {
  /** A subscription, for the current scope: what is published from now on. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<A>, never, Scope.Scope>
  /** Subscribes when it starts. */
  readonly stream: Stream.Stream<A>
}

export interface LazyPubSub<A> extends Subscribable<A> {
  readonly publish: (value: A) => Effect.Effect<void>
}

export const sliding = <A>(capacity: number): LazyPubSub<A> => {
  let made: PubSub.PubSub<A> | undefined
  const obtain = Effect.suspend(() => made !== undefined ? Effect.succeed(made) : Effect.map(PubSub.sliding<A>(capacity), (pubsub) => (made ??= pubsub)))
  return {
    publish: (value) => Effect.suspend(() => (made === undefined ? Effect.void : Effect.asVoid(PubSub.publish(made, value)))),
    subscribe: Effect.flatMap(obtain, PubSub.subscribe),
    stream: Stream.unwrap(Effect.map(obtain, (pubsub) => Stream.fromPubSub(pubsub)))
  }
}
