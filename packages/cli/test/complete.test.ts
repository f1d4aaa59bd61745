/** `complete`'s flags as the request they make, and its human output (src/complete.ts). */
import { Effect, Either, Option } from "effect"
import { describe, expect, it } from "vitest"
import { parseComplete, renderCompletion } from "../src/complete.js"
import { completeFlags } from "../src/flags.js"

const parse = (given: Record<string, unknown>) => Effect.runSync(Effect.either(parseComplete(completeFlags(given))))

describe("complete's flags", () => {
  it("make the spec's request: a prompt or a template reference, the argument, the context", () => {
    expect(parse({ prompt: Option.some("greet"), argument: Option.some("name"), value: Option.some("A") })).toEqual(
      Either.right({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "A" } })
    )
    expect(parse({ resource: ["file:///{a}/{b}"], argument: Option.some("b"), context: ["a=x=y", "c="] })).toEqual(
      Either.right({
        ref: { type: "ref/resource", uri: "file:///{a}/{b}" },
        argument: { name: "b", value: "" },
        context: { arguments: { a: "x=y", c: "" } }
      })
    )
  })

  it("refuse what cannot be a request, naming the flag", () => {
    const refusals: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ argument: Option.some("a") }, "--prompt"],
      [{ prompt: Option.some("p"), resource: ["r"], argument: Option.some("a") }, "--prompt"],
      [{ resource: [""], argument: Option.some("a") }, "--resource"],
      // Repeatable for `watch`; `complete` takes one template.
      [{ resource: ["r", "s"], argument: Option.some("a") }, "--resource"],
      [{ prompt: Option.some("p") }, "--argument"],
      [{ prompt: Option.some("p"), argument: Option.some("") }, "--argument"],
      [{ prompt: Option.some("p"), argument: Option.some("a"), context: ["k"] }, "--context"],
      [{ prompt: Option.some("p"), argument: Option.some("a"), context: ["k=1", "k=2"] }, "--context"],
      [{ prompt: Option.some("p"), argument: Option.some("a"), context: ["__proto__=1", "__proto__=2"] }, "--context"]
    ]
    // A name like any other.
    const proto = parse({ prompt: Option.some("p"), argument: Option.some("a"), context: ["__proto__=1"] })
    expect(Either.isRight(proto) && Object.getOwnPropertyDescriptor(proto.right.context?.arguments, "__proto__")?.value).toBe("1")
    for (const [given, option] of refusals) {
      const parsed = parse(given)
      expect(Either.isLeft(parsed) && parsed.left, JSON.stringify(given)).toMatchObject({ _tag: "InvalidOption", option, stage: "config", outcome: "not-sent" })
    }
  })
})

describe("complete's human output", () => {
  it("one suggestion a line, printable, then how many of how many", () => {
    expect(renderCompletion({ completion: { values: ["Ada", "Al\u001b[2Jan"], total: 7, hasMore: true } }, false)).toBe(
      "Ada\nAl [2Jan\n(2 of 7 suggestions, more available)\n"
    )
    expect(renderCompletion({ completion: { values: ["one"] } }, false)).toBe("one\n(1 suggestion)\n")
    expect(renderCompletion({ completion: { values: [] } }, false)).toBe("no suggestions\n")
  })

  it("JSON: the result as the server sent it", () => {
    expect(JSON.parse(renderCompletion({ completion: { values: ["a"], total: 1, hasMore: false } }, true))).toEqual({
      completion: { values: ["a"], total: 1, hasMore: false }
    })
  })
})
