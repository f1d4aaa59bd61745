/**
 * Tools with a lasting effect, opt-in with `effectTools`: what a client that retries calls, or
 * resumes them after a crash, must be tested against. Their MCP annotations say what is safe to
 * send twice:
 *
 * - `lookup` (`readOnlyHint`): reads `key` from the server's store;
 * - `upsert` (`idempotentHint`): sets `key` to `value`; twice is the same as once;
 * - `append` (neither): appends `entry` to the ledger and answers its new length; twice is two
 *   entries.
 *
 * Each takes `delayMs` (default 0, at most 60000): the effect happens when the call arrives, the
 * answer goes after the delay, so a call whose budget is shorter ends with its effect applied
 * and its outcome unknown to the client. Pure MCP logic, no transport; every transport counts the
 * effect identity each call carried (`FeatureCounters.effectIdentities`).
 */
import { isRecord } from "./jsonrpc.js"
import type { Outcome, ToolDefinition } from "./mcp.js"

/** The `_meta` key a phasebound client sends a call's effect identity under. */
export const META_EFFECT_IDENTITY = "io.phasebound/effect-identity"

const MAX_DELAY_MS = 60_000

const delaySchema = { type: "integer", minimum: 0, maximum: MAX_DELAY_MS, default: 0 }

/** The tools `effectTools` adds to both eras' listings, after the generated tools (before the feature tools). */
export const EFFECT_TOOLS: ReadonlyArray<ToolDefinition> = [
  {
    name: "lookup",
    description: "Reads key from the server's store (read-only)",
    inputSchema: { type: "object", properties: { key: { type: "string" }, delayMs: delaySchema }, required: ["key"] },
    annotations: { readOnlyHint: true }
  },
  {
    name: "upsert",
    description: "Sets key to value in the server's store (idempotent)",
    inputSchema: {
      type: "object",
      properties: { key: { type: "string" }, value: { type: "string" }, delayMs: delaySchema },
      required: ["key", "value"]
    },
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false }
  },
  {
    name: "append",
    description: "Appends entry to the ledger and answers its new length (not idempotent)",
    inputSchema: { type: "object", properties: { entry: { type: "string" }, delayMs: delaySchema }, required: ["entry"] },
    annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false }
  }
]

export interface EffectTools {
  /** Runs an effect tool; undefined for any other tool. */
  readonly callTool: (name: string, args: Readonly<Record<string, unknown>>) => Outcome | undefined
}

/** The effect identity a tools/call's params carry, if any. */
export const effectIdentityOf = (params: unknown): string | undefined => {
  const meta = isRecord(params) ? params["_meta"] : undefined
  const identity = isRecord(meta) ? meta[META_EFFECT_IDENTITY] : undefined
  return typeof identity === "string" ? identity : undefined
}

const text = (value: string, isError = false): Outcome => ({
  _tag: "result",
  result: isError ? { content: [{ type: "text", text: value }], isError: true } : { content: [{ type: "text", text: value }] }
})

const delayed = (outcome: Outcome, delayMs: number): Outcome =>
  outcome._tag === "result" && delayMs > 0
    ? { ...outcome, timeline: { notifications: [], answerAtMs: delayMs, broadcast: [] } }
    : outcome

export const makeEffectTools = (): EffectTools => {
  const store = new Map<string, string>()
  const ledger: Array<string> = []

  const callTool = (name: string, args: Readonly<Record<string, unknown>>): Outcome | undefined => {
    if (!EFFECT_TOOLS.some((tool) => tool.name === name)) return undefined
    const delay = args["delayMs"] ?? 0
    if (typeof delay !== "number" || !Number.isSafeInteger(delay) || delay < 0 || delay > MAX_DELAY_MS) {
      return text(`${name} expects an integer delayMs (<= ${MAX_DELAY_MS})`, true)
    }
    switch (name) {
      case "lookup": {
        const key = args["key"]
        if (typeof key !== "string") return text("lookup expects a string key", true)
        return delayed(text(store.get(key) ?? ""), delay)
      }
      case "upsert": {
        const key = args["key"]
        const value = args["value"]
        if (typeof key !== "string" || typeof value !== "string") return text("upsert expects string key and value", true)
        store.set(key, value)
        return delayed(text(value), delay)
      }
      default: {
        const entry = args["entry"]
        if (typeof entry !== "string") return text("append expects a string entry", true)
        ledger.push(entry)
        return delayed(text(String(ledger.length)), delay)
      }
    }
  }

  return { callTool }
}
