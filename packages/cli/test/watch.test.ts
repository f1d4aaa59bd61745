/**
 * `watch`'s own parts (src/watch.ts): its flags checked before any I/O, and each event's line, in
 * machine mode (one JSON object) and on a terminal (one line, control characters replaced).
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { completeFlags } from "../src/flags.js"
import { parseWatch, renderEvent } from "../src/watch.js"

describe("watch", () => {
  it("watches the lists without --resource, each URI once with it, and refuses an empty one", () => {
    expect(Effect.runSync(parseWatch(completeFlags({})))).toEqual({ resources: [], lists: true })
    expect(Effect.runSync(parseWatch(completeFlags({ resource: ["doc://a", "doc://a", "doc://b"] })))).toEqual({
      resources: ["doc://a", "doc://b"],
      lists: false
    })
    expect(Effect.runSync(parseWatch(completeFlags({ resource: ["doc://a"], lists: true })))).toEqual({ resources: ["doc://a"], lists: true })
    expect(Effect.runSync(Effect.flip(parseWatch(completeFlags({ resource: [""] }))))).toMatchObject({
      _tag: "InvalidOption",
      option: "--resource",
      stage: "config",
      outcome: "not-sent"
    })
  })

  it("one JSON line per event in machine mode, one plain line on a terminal", () => {
    expect(renderEvent({ _tag: "ResourceUpdated", uri: "doc://a", gap: false }, true)).toBe(
      "{\"event\":\"ResourceUpdated\",\"uri\":\"doc://a\",\"gap\":false}\n"
    )
    expect(renderEvent({ _tag: "PromptsListChanged", gap: true }, true)).toBe("{\"event\":\"PromptsListChanged\",\"gap\":true}\n")
    expect(renderEvent({ _tag: "Watching", resources: ["doc://a"], lists: true }, false)).toBe("watching doc://a, the lists (Ctrl-C ends)\n")
    expect(renderEvent({ _tag: "ResourceUpdated", uri: "doc://a\u001b[2J\nx", gap: false }, false)).toBe("doc://a [2J x updated\n")
    expect(renderEvent({ _tag: "ToolsListChanged", gap: true }, false)).toBe("tools may have changed (a stream was restored)\n")
    for (
      const line of [renderEvent({ _tag: "ResourcesListChanged", gap: false }, false), renderEvent({ _tag: "ResourceUpdated", uri: "x\ny", gap: true }, false)]
    ) {
      expect(line.slice(0, -1)).not.toContain("\n")
    }
  })
})
