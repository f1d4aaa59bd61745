/**
 * Pages of a listing (tools, resources, templates, prompts): a page size and an opaque cursor,
 * base64url JSON of the next offset. A cursor this server did not make is -32602.
 */
import { ErrorCode, isRecord, type JsonRpcErrorObject } from "./jsonrpc.js"

export const encodeCursor = (offset: number): string => Buffer.from(JSON.stringify({ offset })).toString("base64url")

export const decodeCursor = (cursor: unknown): number | undefined => {
  if (typeof cursor !== "string") return undefined
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    const offset = isRecord(parsed) ? parsed["offset"] : undefined
    return typeof offset === "number" && Number.isSafeInteger(offset) && offset >= 0 ? offset : undefined
  } catch {
    return undefined
  }
}

/**
 * The page of `list` that `params.cursor` asks for, under `key` (with `nextCursor` when more
 * follow); all of it in one page without a page size.
 */
export const page = <A>(
  key: string,
  list: ReadonlyArray<A>,
  params: unknown,
  pageSize: number | undefined
): { readonly ok: true; readonly result: Record<string, unknown> } | { readonly ok: false; readonly error: JsonRpcErrorObject } => {
  const cursor = isRecord(params) ? params["cursor"] : undefined
  const offset = cursor === undefined ? 0 : decodeCursor(cursor)
  if (offset === undefined || offset > list.length) return { ok: false, error: { code: ErrorCode.InvalidParams, message: "Invalid cursor" } }
  const end = Math.min(offset + Math.max(1, pageSize ?? list.length), list.length)
  const items = list.slice(offset, end)
  return { ok: true, result: end < list.length ? { [key]: items, nextCursor: encodeCursor(end) } : { [key]: items } }
}
