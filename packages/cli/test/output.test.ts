/**
 * The human renderings of the resource, prompt and log output that the end-to-end suite does
 * not reach with the testkit's data: empty lists, optional prompt arguments, blobs without a
 * type, dropped log messages, and a server's control characters.
 */
import { describe, expect, it } from "vitest"
import { printable, renderCall, renderPrompt, renderPrompts, renderRead, renderResources, renderTemplates } from "../src/output.js"

describe("human output", () => {
  it("empty listings say so", () => {
    expect(renderResources([], false)).toBe("no resources\n")
    expect(renderTemplates([], false)).toBe("no resource templates\n")
    expect(renderPrompts([], false)).toBe("no prompts\n")
    expect(renderRead({ contents: [] }, false)).toBe("no contents\n")
    expect(renderPrompt({ messages: [] }, false)).toBe("no messages\n")
  })

  it("prompts: required arguments bare, optional ones in brackets; cells made one line", () => {
    const prompts = [{
      name: "review",
      description: "Reviews\ncode\x1b[31m",
      arguments: [{ name: "file", required: true }, { name: "style" }, { name: "depth", required: false }]
    }]
    expect(renderPrompts(prompts, false)).toBe("PROMPT  ARGUMENTS             DESCRIPTION\nreview  file [style] [depth]  Reviews code [31m\n")
  })

  it("read: several contents in order; a blob without a type; a text's lines kept, its escapes neutralized", () => {
    const result = {
      contents: [
        { uri: "a", text: "line 1\r\nline 2\x1b]0;pwned\x07" },
        { uri: "b", blob: "AAE=" },
        { uri: "c", mimeType: "image/png", blob: "AAECAw==" },
        { uri: "d", text: "ends with a newline\n" }
      ]
    }
    expect(renderRead(result, false)).toBe("line 1\nline 2 ]0;pwned \n<2 bytes>\n<4 bytes, image/png>\nends with a newline\n")
  })

  it("prompt: a block that is not text is shown as JSON", () => {
    const result = { messages: [{ role: "assistant" as const, content: { type: "image", data: "AA==", mimeType: "image/png" } }] }
    expect(renderPrompt(result, false)).toBe("assistant: {\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"}\n")
  })

  it("call: the server log after the result, messages without a logger, data that is not text, the dropped count", () => {
    const result = { content: [{ type: "text", text: "ok" }] }
    const serverLog = {
      logs: [{ level: "info" as const, data: { rows: 3 } }, { level: "error" as const, logger: "db", data: "down\nagain" }],
      dropped: 7
    }
    expect(renderCall(result, false, serverLog)).toBe(
      "ok\nserver log:\n  info: {\"rows\":3}\n  error db: down again\n  (7 more dropped)\n"
    )
    expect(JSON.parse(renderCall(result, true, serverLog))).toEqual({ ...result, logs: serverLog.logs, logsDropped: 7 })
    expect(JSON.parse(renderCall(result, true, { logs: [], dropped: 0 }))).toEqual({ ...result, logs: [] })
    // Without --server-log-level, the result alone.
    expect(JSON.parse(renderCall(result, true))).toEqual(result)
  })

  it("call: structuredContent of any JSON type is printed, in both modes", () => {
    for (const structuredContent of [5, "five", [1, "two", null], null, true, { n: 5 }]) {
      const result = { content: [{ type: "text", text: "ok" }], structuredContent }
      expect(renderCall(result, false)).toBe(`ok\n${JSON.stringify(structuredContent, null, 2)}\n`)
      expect(JSON.parse(renderCall(result, true))).toEqual(result)
    }
  })

  it("call: printing a result as deep as the client accepts (1,000 levels, its ceiling) never overflows the stack", () => {
    for (const depth of [128, 1_000]) {
      const structuredContent = JSON.parse("[".repeat(depth) + "{\"a\":1}" + "]".repeat(depth)) as unknown
      const result = { content: [{ type: "text", text: "ok" }, { type: "data", value: structuredContent }], structuredContent }
      expect(() => renderCall(result, false)).not.toThrow()
      expect(() => renderCall(result, true)).not.toThrow()
    }
  })

  it("call: a tool's text reaches the terminal printable", () => {
    const result = { content: [{ type: "text", text: "a\x1b[2Jb\tc\rd" }] }
    expect(renderCall(result, false)).toBe("a [2Jb\tc d\n")
  })

  it("printable keeps newlines and tabs and nothing else of C0 and C1", () => {
    const all = Array.from({ length: 0xa0 }, (_, i) => String.fromCharCode(i)).join("")
    expect(printable(all).replace(/[ -~]/g, "")).toBe("\t\n")
  })
})
