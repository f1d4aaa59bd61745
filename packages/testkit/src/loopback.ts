/**
 * Plumbing shared by the loopback HTTP test servers: request bodies, JSON parsing, header
 * lookup, polling.
 */
import type { IncomingMessage } from "node:http"

export const headerValue = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

export const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

export const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/** Polls every 5 ms until `pred` holds; rejects after `timeoutMs` (default 5000). */
export const waitFor = async (pred: () => boolean, timeoutMs = 5_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!pred()) {
    if (Date.now() >= deadline) throw new Error(`testkit: waitFor timed out after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
