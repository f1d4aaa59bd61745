/**
 * Who hears what the Streamable HTTP test server says on its own, with `features`: the
 * standalone GET streams of 2025 sessions (any number per session), and the
 * `subscriptions/listen` streams of 2026-07-28, each with the filter it agreed to. A list change
 * (or a flood) goes to every GET stream and every subscription that agreed to `toolsListChanged`;
 * on a subscription each message carries its subscriptionId in `_meta`. A flood is log messages,
 * which 2026-07-28 keeps off subscription streams: breaking that rule is what makes it hostile.
 */
import type { ServerResponse } from "node:http"
import { SseChannel, type SentMessage } from "./channel.js"
import { isRecord, type JsonRpcNotification, notificationMessage, resultMessage } from "./jsonrpc.js"
import { META_SUBSCRIPTION_ID } from "./modern.js"

interface Subscription {
  /** The JSON-RPC id of the `subscriptions/listen` request: the subscriptionId. */
  readonly id: string | number
  readonly channel: SseChannel
  readonly toolsListChanged: boolean
}

/** A notification as a subscription delivers it: its subscriptionId added to `params._meta`. */
export const onSubscription = (notification: JsonRpcNotification, id: string | number): JsonRpcNotification => {
  const params = notification.params ?? {}
  const meta = isRecord(params["_meta"]) ? params["_meta"] : {}
  return notificationMessage(notification.method, { ...params, _meta: { ...meta, [META_SUBSCRIPTION_ID]: id } })
}

export class Listeners {
  /** Open GET streams and the session each belongs to ("" without sessions). */
  private readonly getStreams = new Map<SseChannel, string>()
  private readonly subscriptions = new Set<Subscription>()
  private closedByClient = 0

  constructor(
    private readonly onSent: (message: SentMessage) => void,
    private readonly closing: () => boolean
  ) {}

  openGetStream(res: ServerResponse, session: string): void {
    const channel = SseChannel.open(res, this.onSent)
    this.getStreams.set(channel, session)
    res.on("close", () => this.getStreams.delete(channel))
  }

  /** The session's first open GET stream: where JSON mode sends a request's notifications. */
  getStreamOf(session: string): SseChannel | undefined {
    for (const [channel, owner] of this.getStreams) if (owner === session && channel.isOpen) return channel
    return undefined
  }

  /** Ends the GET streams of one session (DELETE), or of all (sessions forgotten). */
  endGetStreams(session?: string): void {
    for (const [channel, owner] of [...this.getStreams]) {
      if (session !== undefined && owner !== session) continue
      this.getStreams.delete(channel)
      channel.end()
    }
  }

  /** Opens a subscription's stream; its first message is the acknowledgement of `notifications`. */
  listen(res: ServerResponse, id: string | number, notifications: Readonly<Record<string, unknown>>): void {
    const subscription: Subscription = {
      id,
      channel: SseChannel.open(res, this.onSent),
      toolsListChanged: notifications["toolsListChanged"] === true
    }
    this.subscriptions.add(subscription)
    res.on("close", () => {
      if (this.subscriptions.delete(subscription) && !this.closing()) this.closedByClient += 1
    })
    subscription.channel.send(onSubscription(notificationMessage("notifications/subscriptions/acknowledged", { notifications }), id))
  }

  /** Ends every subscription gracefully: the listen request's result, then the end of its stream. */
  endSubscriptions(): number {
    const ended = [...this.subscriptions]
    this.subscriptions.clear()
    for (const { id, channel } of ended) {
      channel.send(resultMessage(id, { resultType: "complete", _meta: { [META_SUBSCRIPTION_ID]: id } }))
      channel.end()
    }
    return ended.length
  }

  /** Sends each notification to every listener; returns how many messages that made. */
  broadcast(notifications: ReadonlyArray<JsonRpcNotification>): number {
    if (notifications.length === 0) return 0
    let sent = 0
    for (const channel of this.getStreams.keys()) {
      if (!channel.isOpen) continue
      for (const notification of notifications) channel.send(notification)
      sent += notifications.length
    }
    for (const { id, channel, toolsListChanged } of this.subscriptions) {
      if (!toolsListChanged || !channel.isOpen) continue
      for (const notification of notifications) channel.send(onSubscription(notification, id))
      sent += notifications.length
    }
    return sent
  }

  /** GET streams and subscriptions that a list change would reach now. */
  count(): number {
    let count = 0
    for (const channel of this.getStreams.keys()) if (channel.isOpen) count += 1
    for (const { channel, toolsListChanged } of this.subscriptions) if (toolsListChanged && channel.isOpen) count += 1
    return count
  }

  /** Subscription streams the client closed (not those the server ended, nor any at shutdown). */
  closedSubscriptions(): number {
    return this.closedByClient
  }
}
