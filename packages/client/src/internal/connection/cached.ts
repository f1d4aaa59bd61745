/**
 * An operation through the response cache (docs/DESIGN.md, "Response cache"): in mode `use` a
 * fresh entry of the caller's partition is the answer (no I/O, no bytes read); otherwise, and on
 * a miss, the operation runs and its answer is kept as its caching hint allows (not in mode
 * `bypass`, not without a hint, not after `input_required` rounds, whose answers depend on
 * inputs the key does not hold). Freshness starts when the request was sent, before any answer
 * was received: never later than the spec's `t_received`.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { ChangeEvent } from "../../McpClient.js"
import type * as McpSchema from "../../McpSchema.js"
import type { ConnectionCache } from "../cacheService.js"
import { allKinds, evictionOf, type Kind, type Mode, type Partition, type Target } from "../responseCache.js"
import type { Inbound } from "../transport/transport.js"

/** What a cacheable operation fetched. */
export interface Fetched<A> {
  readonly value: A
  readonly bytes: number
  readonly hint: McpSchema.CacheHint | undefined
  /** `input_required` rounds the answer took (2026-07-28): such an answer is never kept. */
  readonly rounds?: number | undefined
}

/** What names a session's partition: its transport and its revision. */
export interface On {
  readonly kind: string
  readonly session: { readonly protocolVersion: string }
}

const partitionOf = (cache: ConnectionCache, on: On): Partition => ({
  origin: cache.origin,
  transport: on.kind,
  revision: on.session.protocolVersion
})

/** What an operation through the cache gives: the answer, the bytes read, and whether the cache gave it. */
export interface Answer<A> {
  readonly value: A
  readonly bytes: number
  readonly cached?: true | undefined
}

export const cached = <A, E>(
  cache: ConnectionCache | undefined,
  on: On,
  kind: Kind,
  uri: string | undefined,
  mode: Mode,
  fetch: Effect.Effect<Fetched<A>, E>
): Effect.Effect<Answer<A>, E> => {
  if (cache === undefined) return fetch
  const { responses } = cache.internals
  const partition = partitionOf(cache, on)
  return Effect.flatMap(cache.identity, (identity) =>
    Effect.flatMap(Clock.currentTimeMillis, (sentAt): Effect.Effect<Answer<A>, E> => {
      if (mode === "use") {
        const hit = responses.get(partition, identity, kind, uri, sentAt)
        if (hit !== undefined) return Effect.succeed({ value: hit.value as A, bytes: 0, cached: true as const })
      }
      return Effect.map(fetch, (fetched) => {
        if (mode !== "bypass" && fetched.hint !== undefined && (fetched.rounds ?? 0) === 0) {
          responses.set(partition, identity, kind, uri, fetched.hint, sentAt, fetched.value, fetched.bytes)
        }
        return fetched
      })
    }))
}

/** What a change that may have gone unseen makes stale. */
const gapEviction = (event: ChangeEvent): ReadonlyArray<Target> => {
  switch (event._tag) {
    case "ToolsListChanged":
      return ["tools"]
    case "PromptsListChanged":
      return ["prompts"]
    case "ResourcesListChanged":
      return ["resources", "templates"]
    case "ResourceUpdated":
      return [{ uri: event.uri }]
  }
}

/** Whether a per-call `cache` option is one of the modes (`undefined`: `use`). */
export const isMode = (mode: unknown): mode is Mode | undefined => mode === undefined || mode === "use" || mode === "refresh" || mode === "bypass"

/**
 * The connection's inbound side, evicting what the server says changed before the notification
 * goes on to whoever waits for it (docs/DESIGN.md, "Response cache"): a list change its listing
 * (`tools`, `prompts`, `resources` and templates), a resource update the reads of its URI, a
 * stream opened again everything of the server's (changes may have been missed meanwhile). A
 * change that may have gone unseen (a change event with `gap`: a 2026-07-28 subscription made
 * again after a drop, a new session) evicts what it names, through `observeChanges`. In every
 * partition of the server: each revision, transport and authorization context.
 */
export const evictingInbound = (
  cache: ConnectionCache | undefined,
  inbound: Inbound,
  observeChanges: (observer: (event: ChangeEvent) => void) => () => void
): Inbound => {
  if (cache === undefined) return inbound
  const { responses } = cache.internals
  const evictAll = () => {
    for (const kind of allKinds) responses.evict(kind, cache.origin)
  }
  observeChanges((event) => {
    if (event.gap) { for (const target of gapEviction(event)) responses.evict(target, cache.origin) }
  })
  return {
    ...inbound,
    notification: (notification) =>
      Effect.suspend(() => {
        const targets = evictionOf(notification.method, notification.params)
        if (targets !== undefined) { for (const target of targets) responses.evict(target, cache.origin) }
        return inbound.notification === undefined ? Effect.void : inbound.notification(notification)
      }),
    reopened: Effect.zipRight(Effect.sync(evictAll), inbound.reopened ?? Effect.void)
  }
}
