/** A small raw SSE reader and POST helper for talking to the legacy HTTP+SSE test server. */

export interface SseEvent {
  readonly event: string
  readonly data: string
  /** Every byte of the event block, through the blank line that ends it. */
  readonly raw: Uint8Array
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

const indexOfBlankLine = (bytes: Uint8Array): number => {
  for (let i = 0; i + 1 < bytes.length; i++) if (bytes[i] === 0x0a && bytes[i + 1] === 0x0a) return i
  return -1
}

const parseEvent = (raw: Uint8Array): SseEvent => {
  const text = strictUtf8.decode(raw)
  let event = "message"
  const data: Array<string> = []
  for (const line of text.slice(0, -2).split("\n")) {
    const colon = line.indexOf(":")
    if (colon === 0) continue // comment
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "")
    if (field === "event") event = value
    else if (field === "data") data.push(value)
  }
  return { event, data: data.join("\n"), raw }
}

export class SseConnection {
  private buffer = new Uint8Array(0)
  private inflight: Promise<ReadableStreamReadResult<Uint8Array>> | undefined
  private done = false
  /** Bytes received on the stream so far. */
  received = 0

  constructor(
    readonly response: Response,
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly controller: AbortController
  ) {}

  /** Reads one more chunk into the buffer; false once the stream has ended. */
  private async fill(timeoutMs: number): Promise<boolean> {
    if (this.done) return false
    if (this.inflight === undefined) {
      const read = this.reader.read()
      read.catch(() => {}) // a read may be left behind by a timeout; its rejection is not news
      this.inflight = read
    }
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs)
    })
    const outcome = await Promise.race([this.inflight, timeout]).finally(() => clearTimeout(timer))
    if (outcome === "timeout") throw new Error("timeout")
    this.inflight = undefined
    if (outcome.done) {
      this.done = true
      return false
    }
    this.received += outcome.value.length
    const merged = new Uint8Array(this.buffer.length + outcome.value.length)
    merged.set(this.buffer)
    merged.set(outcome.value, this.buffer.length)
    this.buffer = merged
    return true
  }

  /** The next complete event; rejects with "timeout" or "stream ended". */
  async next(timeoutMs = 2_000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const end = indexOfBlankLine(this.buffer)
      if (end >= 0) {
        const raw = this.buffer.slice(0, end + 2)
        this.buffer = this.buffer.slice(end + 2)
        return parseEvent(raw)
      }
      if (!(await this.fill(Math.max(1, deadline - Date.now())))) throw new Error("stream ended")
    }
  }

  /** Reads until at least `bytes` bytes have arrived in total. */
  async readUntil(bytes: number, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (this.received < bytes) {
      if (!(await this.fill(Math.max(1, deadline - Date.now())))) throw new Error("stream ended")
      this.buffer = new Uint8Array(0)
    }
  }

  /** Resolves when the server ends the stream (any further events are discarded). */
  async ended(timeoutMs = 2_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (await this.fill(Math.max(1, deadline - Date.now()))) this.buffer = new Uint8Array(0)
  }

  close(): void {
    this.controller.abort()
  }
}

const connections: Array<SseConnection> = []

export const openSse = async (url: string): Promise<SseConnection> => {
  const controller = new AbortController()
  const response = await fetch(url, { headers: { accept: "text/event-stream" }, signal: controller.signal })
  if (response.body === null) throw new Error("no body")
  const connection = new SseConnection(response, response.body.getReader(), controller)
  connections.push(connection)
  return connection
}

/** Aborts every stream opened by `openSse` (for afterEach). */
export const closeAllSse = (): void => {
  for (const connection of connections.splice(0)) connection.close()
}

/** Opens the stream and waits for the endpoint event; returns the resolved POST URL too. */
export const connectLegacy = async (url: string) => {
  const sse = await openSse(url)
  const endpoint = await sse.next()
  if (endpoint.event !== "endpoint") throw new Error(`expected endpoint, got ${endpoint.event}`)
  return { sse, endpoint: new URL(endpoint.data, url).href }
}

export const postRpc = (endpoint: string, message: unknown): Promise<Response> =>
  fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(message) })

export const request = (id: number, method: string, params: unknown = {}) => ({ jsonrpc: "2.0", id, method, params })

export const callIncrement = (id: number) => request(id, "tools/call", { name: "increment", arguments: {} })
