/**
 * Resumable SSE streams (2025-11-25 "polling SSE"): the server closes a POST's stream after
 * priming events that carry ids, and delivers the response when the client comes back with
 * `GET` + `Last-Event-ID`.
 */
import { randomUUID } from "node:crypto"
import type { ServerResponse } from "node:http"
import type { JsonRpcOutgoing } from "./jsonrpc.js"
import { sseFrame } from "./payload.js"
import { sseHeaders, type ExtraHeaders } from "./wire.js"

interface PendingStream {
  readonly message: JsonRpcOutgoing
  readonly sessionId: string | undefined
  /** Priming events sent before the close; the response is event number `events + 1`. */
  readonly events: number
}

export type ResumeLookup =
  | { readonly _tag: "found"; readonly streamId: string; readonly after: number; readonly stream: PendingStream }
  | { readonly _tag: "unknown" }
  | { readonly _tag: "wrong-session" }

export class ResumableStreams {
  private readonly pending = new Map<string, PendingStream>()

  /** Writes the priming events of a new resumable stream and ends it without the response. */
  open(
    res: ServerResponse,
    message: JsonRpcOutgoing,
    sessionId: string | undefined,
    options: { readonly events: number; readonly retryMs: number; readonly headers: ExtraHeaders }
  ): string {
    const streamId = randomUUID().replaceAll("-", "")
    this.pending.set(streamId, { message, sessionId, events: options.events })
    res.writeHead(200, sseHeaders(options.headers))
    let body = ""
    for (let n = 1; n <= options.events; n++) {
      // The first event carries `retry`, all carry an id and an empty data line.
      body += `id: ${streamId}-${n}\n` + (n === 1 ? `retry: ${options.retryMs}\n` : "") + "data: \n\n"
    }
    res.end(body)
    return streamId
  }

  lookup(lastEventId: string, sessionId: string | undefined): ResumeLookup {
    const dash = lastEventId.lastIndexOf("-")
    const streamId = lastEventId.slice(0, dash)
    const after = Number(lastEventId.slice(dash + 1))
    const stream = this.pending.get(streamId)
    if (dash < 0 || stream === undefined || !Number.isSafeInteger(after) || after < 1 || after > stream.events) {
      return { _tag: "unknown" }
    }
    if (stream.sessionId !== sessionId) return { _tag: "wrong-session" }
    return { _tag: "found", streamId, after, stream }
  }

  /** Sends the events after `after`, then the response, and forgets the stream (no second delivery). */
  resume(res: ServerResponse, found: Extract<ResumeLookup, { _tag: "found" }>, headers: ExtraHeaders): void {
    this.pending.delete(found.streamId)
    res.writeHead(200, sseHeaders(headers))
    let body = ""
    for (let n = found.after + 1; n <= found.stream.events; n++) body += `id: ${found.streamId}-${n}\ndata: \n\n`
    body += sseFrame(JSON.stringify(found.stream.message), `${found.streamId}-${found.stream.events + 1}`)
    res.end(body)
  }

  get size(): number {
    return this.pending.size
  }

  clear(): void {
    this.pending.clear()
  }
}
