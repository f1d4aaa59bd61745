/**
 * A long-lived SSE response on which a server speaks on its own: a standalone GET stream, a
 * `subscriptions/listen` stream, or a POST's stream while its request plays out. Writes go one
 * after the other (a big frame never interleaves with another), each waits for the socket to
 * drain, and each message is reported as it is handed to the socket (the servers count them).
 */
import type { ServerResponse } from "node:http"
import type { JsonRpcNotification, JsonRpcOutgoing } from "./jsonrpc.js"
import { sseFrame } from "./payload.js"
import { type ExtraHeaders, isGone, sseHeaders, writeChunks } from "./wire.js"

export type SentMessage = JsonRpcNotification | JsonRpcOutgoing

const encoder = new TextEncoder()

export class SseChannel {
  private queue: Promise<void> = Promise.resolve()
  /** Set once the server decided to end the stream (a close after it is not the client's doing). */
  endedByServer = false

  private constructor(
    readonly res: ServerResponse,
    private readonly onSent: (message: SentMessage) => void
  ) {}

  /** Answers 200 text/event-stream and sends the headers at once. */
  static open(res: ServerResponse, onSent: (message: SentMessage) => void, headers: ExtraHeaders = {}): SseChannel {
    res.writeHead(200, sseHeaders(headers))
    res.flushHeaders()
    return new SseChannel(res, onSent)
  }

  get isOpen(): boolean {
    return !this.endedByServer && !isGone(this.res)
  }

  send(message: SentMessage): void {
    this.queue = this.queue
      .then(async () => {
        if (isGone(this.res)) return
        this.onSent(message)
        const bytes = encoder.encode(sseFrame(JSON.stringify(message)))
        await writeChunks(this.res, bytes, Math.max(1, bytes.length))
      })
      .catch(() => {
        this.res.destroy() // a failed write leaves the stream unusable
      })
  }

  /** Ends the stream once everything sent before is written. */
  end(): void {
    this.endedByServer = true
    this.queue = this.queue.then(() => {
      if (!isGone(this.res)) this.res.end()
    })
  }
}
