/**
 * The request headers of the stateless revision (2026-07-28) over Streamable HTTP: the method
 * and name mirrored from the body, tool parameters declared with `x-mcp-header` mirrored as
 * `Mcp-Param-{Name}`, and the encoding of values that are not header-safe (docs/DESIGN.md,
 * "The stateless era").
 */
import type * as McpSchema from "../McpSchema.js"

// Visible ASCII with inner spaces and tabs, no leading or trailing whitespace (RFC 9110 values).
const headerSafe = /^(?:[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?)?$/
const sentinel = /^=\?base64\?.*\?=$/s

const base64 = (text: string): string => {
  const bytes = new TextEncoder().encode(text)
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/**
 * A value as a header carries it: as is when header-safe, else `=?base64?{UTF-8 base64}?=` (also
 * for a plain value that looks like that form, so it cannot be misread).
 */
export const encodeHeaderValue = (value: string): string => headerSafe.test(value) && !sentinel.test(value) ? value : `=?base64?${base64(value)}?=`

// RFC 9110 token: the characters a header name may have.
const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** One parameter mirrored into a header. */
export interface HeaderParameter {
  /** The header is `Mcp-Param-{name}`. */
  readonly name: string
  /** The chain of `properties` keys from the schema root to the parameter. */
  readonly path: ReadonlyArray<string>
  readonly type: "string" | "integer" | "boolean"
}

// Keywords whose values are data, not schemas: never searched for declarations.
const dataKeywords = new Set(["const", "enum", "default", "examples"])

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const none: ReadonlyArray<HeaderParameter> = Object.freeze([])

/**
 * Whether any object in a schema has an `x-mcp-header` key, found by a walk that builds nothing:
 * most tools declare none, and a listing asks this of each one.
 */
const mentionsHeader = (schema: unknown): boolean => {
  const stack: Array<unknown> = [schema]
  while (stack.length > 0) {
    const node = stack.pop()
    if (typeof node !== "object" || node === null) continue
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item)
      continue
    }
    if ("x-mcp-header" in node) return true
    for (const key of Object.keys(node)) stack.push((node as Record<string, unknown>)[key])
  }
  return false
}

/**
 * The `x-mcp-header` declarations of a tool's input schema, or `undefined` when any of them is
 * invalid (the tool must then be left out): each must be a non-empty token, unique without
 * regard to case, on a `string`, `integer` or `boolean` parameter reachable from the root
 * through `properties` keys only (never through `items`, composition, conditionals or `$ref`).
 */
export const headerParameters = (tool: McpSchema.Tool): ReadonlyArray<HeaderParameter> | undefined =>
  mentionsHeader(tool.inputSchema) ? declaredParameters(tool) : none

/** `headerParameters` by the whole walk, for a schema that mentions `x-mcp-header` somewhere. */
export const declaredParameters = (tool: McpSchema.Tool): ReadonlyArray<HeaderParameter> | undefined => {
  const found: Array<HeaderParameter> = []
  let valid = true
  // An explicit stack, not recursion: the schema is the server's (docs/DESIGN.md, "Structure
  // bounds"). Children are pushed last first, so nodes are visited in document order.
  const stack: Array<{ readonly node: unknown; readonly path: ReadonlyArray<string> | undefined }> = [
    { node: tool.inputSchema, path: [] }
  ]
  while (stack.length > 0) {
    const { node, path } = stack.pop()!
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], path: undefined })
      continue
    }
    if (!isRecord(node)) continue
    if ("x-mcp-header" in node) {
      const name = node["x-mcp-header"]
      const type = node["type"]
      if (
        path === undefined || path.length === 0 || typeof name !== "string" || !token.test(name) ||
        (type !== "string" && type !== "integer" && type !== "boolean")
      ) {
        valid = false
      } else {
        found.push({ name, path, type })
      }
    }
    const children: Array<{ readonly node: unknown; readonly path: ReadonlyArray<string> | undefined }> = []
    for (const [key, value] of Object.entries(node)) {
      if (dataKeywords.has(key)) continue
      if (key === "properties" && path !== undefined && isRecord(value)) {
        for (const [property, schema] of Object.entries(value)) children.push({ node: schema, path: [...path, property] })
      } else {
        // Anything reached otherwise is not statically reachable.
        children.push({ node: value, path: undefined })
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
  }
  const names = new Set(found.map((parameter) => parameter.name.toLowerCase()))
  return valid && names.size === found.length ? found : undefined
}

/** Why a call's arguments cannot be mirrored into its headers. */
export type ArgumentProblem = { readonly parameter: string }

/**
 * The `Mcp-Param-*` headers of a call: the value at each declared path, converted (a string as
 * is, an integer in decimal, a boolean as `true`/`false`) and encoded; no header where the
 * value is absent or null. A value of another type, or an integer outside the safe range,
 * cannot be mirrored faithfully: that is an `ArgumentProblem`.
 */
export const parameterHeaders = (
  parameters: ReadonlyArray<HeaderParameter>,
  args: Readonly<Record<string, unknown>>
): Record<string, string> | ArgumentProblem => {
  const headers: Record<string, string> = {}
  for (const parameter of parameters) {
    let value: unknown = args
    for (const key of parameter.path) value = isRecord(value) ? value[key] : undefined
    if (value === undefined || value === null) continue
    let text: string
    if (parameter.type === "string" && typeof value === "string") text = value
    else if (parameter.type === "boolean" && typeof value === "boolean") text = value ? "true" : "false"
    else if (parameter.type === "integer" && typeof value === "number" && Number.isSafeInteger(value)) text = String(value)
    else return { parameter: parameter.name }
    headers[`mcp-param-${parameter.name.toLowerCase()}`] = encodeHeaderValue(text)
  }
  return headers
}
