/**
 * The `x-mcp-header` declarations of a tool (2026-07-28): the quick answer for a schema that
 * mentions none is the whole walk's answer, on schemas built to mention it anywhere (valid and
 * not, under `properties`, `items`, data keywords, arrays).
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { declaredParameters, headerParameters } from "../../src/internal/mcpHeaders.js"
import type * as McpSchema from "../../src/McpSchema.js"

const key = fc.constantFrom("properties", "items", "anyOf", "default", "const", "type", "x-mcp-header", "q", "Q")
const leaf = fc.oneof(fc.constantFrom("string", "integer", "boolean", "object", "h", "H", "bad name"), fc.integer(), fc.boolean(), fc.constant(null))
const schema = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    leaf,
    fc.array(tie("node"), { maxLength: 3 }),
    fc.dictionary(key, tie("node"), { maxKeys: 4 })
  )
})).node

const toolOf = (properties: unknown): McpSchema.Tool => ({ name: "t", inputSchema: { type: "object", properties } as McpSchema.Tool["inputSchema"] })

describe("headerParameters", () => {
  it.prop("answers as the whole walk does, whether or not the schema mentions x-mcp-header", [schema], ([properties]) => {
    const tool = toolOf(properties)
    expect(headerParameters(tool)).toEqual(declaredParameters(tool))
  }, { fastCheck: { numRuns: 5_000 } })

  it("a schema without any x-mcp-header declares none; one with a valid declaration is found", () => {
    expect(headerParameters(toolOf({ q: { type: "string" } }))).toEqual([])
    expect(headerParameters(toolOf({ q: { type: "string", "x-mcp-header": "Region" } }))).toEqual([
      { name: "Region", path: ["q"], type: "string" }
    ])
    // Mentioned inside a data keyword only: not a declaration, and nothing is refused.
    expect(headerParameters(toolOf({ q: { type: "string", default: { "x-mcp-header": "X" } } }))).toEqual([])
    // Invalid where it is (under items): the tool must be left out.
    expect(headerParameters(toolOf({ q: { type: "array", items: { type: "string", "x-mcp-header": "X" } } }))).toBeUndefined()
  })
})
