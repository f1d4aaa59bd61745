/**
 * `ToolFailure`: what the model reads of a typed failure is the error's `_tag`, its `message` and
 * its public fields, for every tag and any fields (FastCheck over the fields' own Schema), never
 * its cause; and every failure value is one the toolkit's failure Schema encodes as it is.
 */
import { describe, expect, it } from "@effect/vitest"
import { ToolFailure } from "@phasebound/ai"
import { McpConnectionError } from "@phasebound/client"
import * as Arbitrary from "effect/Arbitrary"
import * as fc from "effect/FastCheck"
import * as Schema from "effect/Schema"

const SECRET = "canary-cause-93b1f0c2"

const classes = McpConnectionError.McpConnectionError.members.map((member) =>
  member as unknown as McpConnectionError.McpErrorClass<unknown, McpConnectionError.Tag>
)

const publicKeys = new Set(["_tag", "message", ...Object.keys(McpConnectionError.PublicFields.fields)])

const encodeFailure = Schema.encodeSync(ToolFailure.ToolFailure)
const isFailure = Schema.is(ToolFailure.ToolFailure)

describe("ToolFailure.fromError", () => {
  it("covers every tag of the family", () => {
    expect(classes.map((c) => c._tag).sort()).toEqual([...McpConnectionError.Tag.literals].sort())
  })

  it.prop(
    "gives the tag, the message and the public fields of any error, nothing of its cause",
    [fc.constantFrom(...classes), Arbitrary.make(McpConnectionError.PublicFields)],
    ([ErrorClass, fields]) => {
      const error = new ErrorClass(fields, new Error(`at https://h.example/mcp?token=${SECRET}`)) as unknown as McpConnectionError.McpConnectionError
      const failure = ToolFailure.fromError(error)
      expect(failure._tag).toBe(error._tag)
      expect(failure.message).toBe(error.message)
      const { tag, ...record } = McpConnectionError.toRecord(error)
      expect(tag).toBe(error._tag)
      expect(failure).toStrictEqual({ _tag: error._tag, message: error.message, ...record })
      expect(Object.keys(failure).filter((key) => !publicKeys.has(key))).toEqual([])
      expect(isFailure(failure)).toBe(true)
      const encoded = JSON.stringify(encodeFailure(failure))
      expect(encoded).not.toContain(SECRET)
      expect(encoded).not.toContain("h.example")
      expect(JSON.parse(encoded)).toStrictEqual(JSON.parse(JSON.stringify(failure)))
    },
    { fastCheck: { numRuns: 300 } }
  )
})

describe("the other failures", () => {
  it("an unknown tool, arguments that are no object and a defect are failures of the schema, with fixed vocabularies", () => {
    const unknown = ToolFailure.unknownTool("gone")
    expect(unknown).toStrictEqual({
      _tag: "UnknownTool",
      message: "unknown tool: gone is no longer listed by its server; it was not called",
      tool: "gone",
      outcome: "not-sent"
    })
    expect(isFailure(unknown)).toBe(true)
    const invalid = ToolFailure.invalidArguments("lookup")
    expect(invalid).toStrictEqual({
      _tag: "InvalidArguments",
      message: "invalid arguments: lookup takes a JSON object of arguments; it was not called",
      tool: "lookup",
      outcome: "not-sent"
    })
    expect(isFailure(invalid)).toBe(true)
    expect(ToolFailure.internalFailure).toMatchObject({ _tag: "InternalError", reason: "defect", outcome: "unknown", retryable: false })
    expect(isFailure(ToolFailure.internalFailure)).toBe(true)
  })

  it("a tool's own error keeps every field the server sent, when encoded", () => {
    const result = { content: [{ type: "text", text: "no", extra: 1 }], isError: true as const, structuredContent: [1, 2], _meta: { k: "v" } }
    expect(encodeFailure(result)).toStrictEqual(result)
  })
})
