/**
 * Generators of what a hostile MCP server can answer (docs/SECURITY.md, "1. The MCP server"):
 * adversarial JSON built as text (never by recursion, so 100,000 levels cost nothing to make),
 * listings, call results, JSON-RPC errors that echo a configured secret, headers, and the
 * framing of each transport. Everything is text with two placeholders: `__ID__` (the request's
 * JSON-RPC id, filled in by the server) and `__SECRET__` (one form of a configured secret,
 * filled in by `withSecret`).
 */
import { FastCheck as fc } from "effect"

export const SECRET_SLOT = "__SECRET__"

// --- adversarial JSON, as text --------------------------------------------------------------

const repeatJoin = (item: string, count: number, separator = ","): string => Array.from({ length: count }, () => item).join(separator)

/** `[[[…]]]` or `{"a":{"a":…}}`, `levels` deep. */
export const deepText = (levels: number, kind: "array" | "object"): string =>
  kind === "array" ? "[".repeat(levels) + "]".repeat(levels) : `{"a":`.repeat(levels) + "0" + "}".repeat(levels)

/** `[{},{},…]` with `count` elements. */
export const emptyObjectsText = (count: number): string => `[${repeatJoin("{}", count)}]`

const deep = fc.record({ levels: fc.integer({ min: 1_000, max: 100_000 }), kind: fc.constantFrom("array" as const, "object" as const) })
  .map(({ kind, levels }) => deepText(levels, kind))
const wide = fc.integer({ min: 1_000, max: 50_000 }).map((keys) => `{${Array.from({ length: keys }, (_, i) => `"k${i}":${i}`).join(",")}}`)
const manyEmpty = fc.integer({ min: 1_000, max: 200_000 }).map(emptyObjectsText)
const longString = fc.integer({ min: 10_000, max: 300_000 }).map((n) => JSON.stringify("x".repeat(n)))
const oddUnicode = fc.constantFrom(
  `"\\ud800"`,
  `"\\udfff\\ud800x"`,
  `"a\\u0000b\\u001bc\\u2028d\\u202ee"`,
  `"😀\\ud83d"`,
  `"\u0000"`.replace("\u0000", "\\u0000"),
  JSON.stringify("Ω≈ç√∫˜µ≤≥÷ 𝕏 ｆｕｌｌ")
)
const oddNumbers = fc.constantFrom("1e309", "-1e309", "1e-400", "123456789012345678901234567890", "-0", "0.0000000000000000000001", "9007199254740993")
const duplicateKeys = fc.constantFrom(`{"a":1,"a":"two","a":[3]}`, `{"content":[],"content":{"x":1}}`, `{"type":"object","type":"string"}`)
const protoKeys = fc.constantFrom(
  `{"__proto__":{"polluted":"yes"}}`,
  `{"constructor":{"prototype":{"polluted":"yes"}}}`,
  `{"__proto__":[],"toString":1,"hasOwnProperty":"x","valueOf":null}`
)
const plainJson = fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value) ?? "null")

/** A JSON value as text: one of the adversarial shapes or an ordinary value. */
export const hostileJson: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: deep, weight: 2 },
  { arbitrary: wide, weight: 1 },
  { arbitrary: manyEmpty, weight: 2 },
  { arbitrary: longString, weight: 1 },
  { arbitrary: oddUnicode, weight: 1 },
  { arbitrary: oddNumbers, weight: 1 },
  { arbitrary: duplicateKeys, weight: 1 },
  { arbitrary: protoKeys, weight: 1 },
  { arbitrary: plainJson, weight: 2 }
)

/** Text that is not JSON (or not UTF-8 once sent). */
const brokenJson = fc.constantFrom(`{"jsonrpc":"2.0",`, `{"jsonrpc":"2.0","id":__ID__,"result":{}}}`, "", "null", "<html>nope</html>", `{"a":1e}`)

// --- listings ----------------------------------------------------------------------------------

const hostileName = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom("", "__proto__", "constructor", "t\u0000x", "a\nb", "../../etc/passwd", "Ω-工具-😀", " t ", "=?base64?dA==?="),
  fc.integer({ min: 10_000, max: 100_000 }).map((n) => "n".repeat(n))
).map((name) => JSON.stringify(name))

const oddHeaderValue = fc.constantFrom(`""`, `" "`, `"a b"`, `"Ω"`, "1", "null", `{"x":1}`, `"${"H".repeat(10_000)}"`, `"Region"`, `"REGION"`)

const inputSchema = fc.oneof(
  fc.constant(`{"type":"object"}`),
  fc.constantFrom("true", "false", "[]", `"object"`, "1e309", "null"),
  deep,
  // A valid root nested through `properties`: what a walk over the schema meets.
  {
    arbitrary: fc.integer({ min: 1_000, max: 100_000 }).map((levels) => `{"type":"object","properties":{"a":`.repeat(levels) + `{}` + "}}".repeat(levels)),
    weight: 3
  },
  fc.integer({ min: 1_000, max: 30_000 }).map((n) =>
    `{"type":"object","properties":{${Array.from({ length: n }, (_, i) => `"p${i}":{"type":"string"}`).join(",")}}}`
  ),
  fc.array(oddHeaderValue, { minLength: 1, maxLength: 3 }).map((values) =>
    `{"type":"object","properties":{${values.map((value, i) => `"p${i}":{"type":"string","x-mcp-header":${value}}`).join(",")}}}`
  ),
  protoKeys.map((text) => `{"type":"object","properties":${text}}`)
)

/** `$defs` d0..d{n-1}, each d_i referring to d_{i+1} twice: 2^n paths through one document. */
export const refFanOut = (levels: number): string => {
  const defs = Array.from(
    { length: levels },
    (_, i) => i === levels - 1 ? `"d${i}":{"type":"object"}` : `"d${i}":{"allOf":[{"$ref":"#/$defs/d${i + 1}"},{"$ref":"#/$defs/d${i + 1}"}]}`
  )
  return `{"$defs":{${defs.join(",")}},"$ref":"#/$defs/d0"}`
}

/** An outputSchema and a `structuredContent` (text) chosen to make checking it costly, or odd. */
export const schemaAndContent: fc.Arbitrary<{ readonly outputSchema: string | undefined; readonly structured: string | undefined }> = fc.oneof(
  // Catastrophic backtracking: (a+)+$ against a run of a's that ends wrong.
  fc.integer({ min: 29, max: 31 }).map((n) => ({
    outputSchema: `{"type":"object","properties":{"s":{"type":"string","pattern":"^(a+)+$"}}}`,
    structured: `{"s":"${"a".repeat(n)}!"}`
  })),
  // uniqueItems over many distinct objects: a quadratic comparison.
  fc.integer({ min: 20_000, max: 40_000 }).map((n) => ({
    outputSchema: `{"type":"object","properties":{"u":{"type":"array","uniqueItems":true}}}`,
    structured: `{"u":[${Array.from({ length: n }, (_, i) => `{"i":${i}}`).join(",")}]}`
  })),
  fc.integer({ min: 22, max: 28 }).map((levels) => ({ outputSchema: refFanOut(levels), structured: `{}` })),
  fc.constantFrom("true", "false", `{"$ref":"#"}`, `{"$ref":"http://10.0.0.1/schema.json"}`, `{"type":"array","items":{"$ref":"#"}}`)
    .chain((outputSchema) => hostileJson.map((structured) => ({ outputSchema, structured }))),
  // No schema: structuredContent of any JSON type (2026-07-28 allows any value), or none.
  fc.option(hostileJson, { nil: undefined }).map((structured) => ({ outputSchema: undefined, structured }))
)

const toolText = fc.record({
  name: hostileName,
  inputSchema,
  output: fc.option(schemaAndContent.map((s) => s.outputSchema), { nil: undefined })
}).map(({ inputSchema, name, output }) => `{"name":${name},"inputSchema":${inputSchema}${output === undefined ? "" : `,"outputSchema":${output}`}}`)

const cursor = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 20 }).map((s) => JSON.stringify(s)),
  fc.constantFrom("1", "null", "{}", `"${"c".repeat(100_000)}"`)
)

/** One tools/list page (the `result` object as text). */
const pageText = fc.record({
  tools: fc.oneof(
    fc.array(toolText, { maxLength: 4 }).map((tools) => `[${tools.join(",")}]`),
    fc.integer({ min: 1_000, max: 20_000 }).map((n) =>
      `[${Array.from({ length: n }, (_, i) => `{"name":"t${i}","inputSchema":{"type":"object"}}`).join(",")}]`
    ),
    hostileJson
  ),
  cursor
}).map(({ cursor, tools }) => `{"tools":${tools}${cursor === undefined ? "" : `,"nextCursor":${cursor}`}}`)

/** A listing: the pages tools/list answers in turn; the last one is repeated (a cursor that never ends). */
export const listing: fc.Arbitrary<ReadonlyArray<string>> = fc.oneof(
  // One page, valid but for its tools (names, schemas, declarations): the client gets to walk them.
  { arbitrary: fc.array(toolText, { minLength: 1, maxLength: 3 }).map((tools) => [`{"tools":[${tools.join(",")}]}`]), weight: 3 },
  { arbitrary: fc.array(pageText, { minLength: 1, maxLength: 3 }), weight: 2 },
  // Many pages: a cursor on every one, so the client pages until a bound stops it.
  {
    arbitrary: fc.integer({ min: 1, max: 3 }).map((
      n
    ) => [`{"tools":[${Array.from({ length: n }, (_, i) => `{"name":"p${i}","inputSchema":{"type":"object"}}`).join(",")}],"nextCursor":"more"}`]),
    weight: 1
  },
  { arbitrary: hostileJson.map((text) => [text]), weight: 1 }
)

// --- messages ------------------------------------------------------------------------------------

/** A secret embedded the ways a server might echo it back. */
export type SecretForm = "raw" | "percent" | "nul-split" | "esc-split" | "crlf-split" | "ls-split" | "zwsp-split" | "base64"
export const secretForm: fc.Arbitrary<SecretForm> = fc.constantFrom(
  "raw",
  "percent",
  "nul-split",
  "esc-split",
  "crlf-split",
  "ls-split",
  "zwsp-split",
  "base64"
)

/** The form of `secret`, as raw text. */
export const rawFormOf = (secret: string, form: SecretForm): string => {
  const half = Math.floor(secret.length / 2)
  const split = (by: string) => secret.slice(0, half) + by + secret.slice(half)
  return form === "raw"
    ? secret
    : form === "percent"
    ? encodeURIComponent(secret)
    : form === "nul-split"
    ? split("\u0000")
    : form === "esc-split"
    ? split("\u001b")
    : form === "crlf-split"
    ? split("\r\n")
    : form === "ls-split"
    ? split("\u2028")
    : form === "zwsp-split"
    ? split("\u200b")
    : btoa(secret)
}

/** The form of `secret`, as JSON string content (escaped). */
export const formOf = (secret: string, form: SecretForm): string => JSON.stringify(rawFormOf(secret, form)).slice(1, -1)

/** Replaces every `__SECRET__` of `text` with `form` of `secret`. */
export const withSecret = (text: string, secret: string, form: SecretForm): string => text.split(SECRET_SLOT).join(formOf(secret, form))

const content = fc.oneof(
  fc.constant(`[{"type":"text","text":"ok"}]`),
  fc.constantFrom(
    `[]`,
    `{}`,
    `"text"`,
    `[{"type":"bogus"}]`,
    `[{"type":"image","data":"%%%","mimeType":1}]`,
    `[{"type":"text"}]`,
    `[null,1,"x"]`,
    `[{"type":"resource_link","uri":"http://169.254.169.254/latest/meta-data"}]`,
    `[{"type":"text","text":"${SECRET_SLOT}"}]`
  ),
  hostileJson
)

const errorObject = fc.record({
  code: fc.constantFrom("-32603", "-32000", "-32602", "1e309", `"x"`, "null", "-32022", "-32601", "0"),
  message: fc.constantFrom(
    `"boom ${SECRET_SLOT} boom"`,
    `"${SECRET_SLOT}"`,
    `"see http://127.0.0.1/?token=${SECRET_SLOT}"`,
    `"${"m".repeat(10_000)} ${SECRET_SLOT}"`,
    "42",
    "null"
  ),
  data: fc.oneof(fc.constant(undefined), fc.constant(`{"echo":"${SECRET_SLOT}"}`), hostileJson)
}).map(({ code, data, message }) => `{"code":${code},"message":${message}${data === undefined ? "" : `,"data":${data}`}}`)

const resultType = fc.constantFrom(undefined, `"complete"`, `"bogus"`, `"input_required"`, "1")

/** A tools/call result (the `result` object as text), with the outputSchema its tool declares. */
export const callResult = fc.record({
  schema: schemaAndContent,
  content,
  isError: fc.constantFrom(undefined, "true", "false", `"yes"`),
  resultType
}).map(({ content, isError, resultType, schema }) => ({
  outputSchema: schema.outputSchema,
  text: `{"content":${content}${schema.structured === undefined ? "" : `,"structuredContent":${schema.structured}`}` +
    `${isError === undefined ? "" : `,"isError":${isError}`}${resultType === undefined ? "" : `,"resultType":${resultType}`}}`
}))

/**
 * A well-formed answer whose only hostility is the cost of checking it: the result is valid in
 * every other way, so the client reaches the check (and then the decoding of the value).
 */
export const costlyCallResult = schemaAndContent.map((schema) => ({
  outputSchema: schema.outputSchema,
  text: `{"content":[{"type":"text","text":"ok"}]${schema.structured === undefined ? "" : `,"structuredContent":${schema.structured}`},"resultType":"complete"}`
}))

/** A whole JSON-RPC message text answering a request (or failing to). */
export const answerMessage = (result: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: result.map((r) => `{"jsonrpc":"2.0","id":__ID__,"result":${r}}`), weight: 6 },
    { arbitrary: errorObject.map((e) => `{"jsonrpc":"2.0","id":__ID__,"error":${e}}`), weight: 3 },
    { arbitrary: result.map((r) => `{"jsonrpc":"2.0","id":999999,"result":${r}}`), weight: 1 },
    { arbitrary: result.map((r) => `{"jsonrpc":"2.0","id":"__ID__","result":${r}}`), weight: 1 },
    { arbitrary: result.map((r) => `{"jsonrpc":"1.0","id":__ID__,"result":${r}}`), weight: 1 },
    { arbitrary: result.map((r) => `{"jsonrpc":"2.0","id":__ID__,"result":${r},"error":{"code":1,"message":"both"}}`), weight: 1 },
    { arbitrary: brokenJson, weight: 1 }
  )

// --- framing -------------------------------------------------------------------------------------

/** How a message reaches the client: HTTP headers and SSE or line framing, chunking, the end. */
export interface Framing {
  readonly status: number
  readonly contentType: string | undefined
  readonly extraHeaders: ReadonlyArray<readonly [string, string]>
  /** SSE only: what goes around the data. */
  readonly sse: {
    readonly comments: boolean
    readonly retry: string | undefined
    readonly eventId: boolean
    /** "mixed": the lines end in turn with CRLF and LF. */
    readonly lineEnd: "\n" | "\r\n" | "\r" | "mixed"
    readonly splitData: boolean
    readonly finalBlankLine: boolean
  }
  /** stdio only: banner lines before, and whether the line ends. */
  readonly stdio: { readonly banner: boolean; readonly lineEnd: "\n" | "\r\n" | "" }
  /** Bytes per write (1: every byte on its own, applied to small bodies only). */
  readonly chunkSize: number | undefined
  readonly then: "end" | "hold" | "reset"
}

const extraHeaders = fc.array(
  fc.oneof(
    fc.constant(["mcp-session-id", "dup-1"] as const),
    fc.constant(["mcp-session-id", "dup-2"] as const),
    fc.constant(["x-huge", "h".repeat(12_000)] as const),
    fc.constant(["x-latin1", "caf\u00e9 \u00ff"] as const),
    fc.constant(["www-authenticate", `Bearer resource_metadata="http://10.0.0.1/.well-known/oauth-protected-resource"`] as const),
    fc.constant(["content-encoding", "gzip"] as const),
    fc.constant(["x-echo", SECRET_SLOT] as const)
  ),
  { maxLength: 3 }
)

const hostileFraming: fc.Arbitrary<Framing> = fc.record({
  status: fc.constantFrom(200, 200, 200, 202, 204, 400, 404, 500, 302),
  contentType: fc.constantFrom(
    "default",
    "default",
    undefined,
    "text/html",
    "application/json; charset=latin1",
    "APPLICATION/JSON",
    "application/json-seq",
    "text/event-stream; charset=utf-16"
  ),
  extraHeaders,
  sse: fc.record({
    comments: fc.boolean(),
    retry: fc.constantFrom(undefined, "0", "99999999999999999999999", "-1", "x"),
    eventId: fc.boolean(),
    lineEnd: fc.constantFrom("\n" as const, "\r\n" as const, "\r" as const, "mixed" as const),
    splitData: fc.boolean(),
    finalBlankLine: fc.boolean()
  }),
  stdio: fc.record({ banner: fc.boolean(), lineEnd: fc.constantFrom("\n" as const, "\r\n" as const, "" as const) }),
  chunkSize: fc.constantFrom(undefined, 1, 7, 4096),
  then: fc.constantFrom("end" as const, "end" as const, "hold" as const, "reset" as const)
})

/** Framing an honest server would use, but for odd-yet-valid SSE and line details and chunking. */
export const honestFraming: fc.Arbitrary<Framing> = fc.record({
  status: fc.constant(200),
  contentType: fc.constant("default"),
  extraHeaders: fc.constant([]),
  sse: fc.record({
    comments: fc.boolean(),
    retry: fc.constantFrom(undefined, "99999999999999999999999"),
    eventId: fc.boolean(),
    lineEnd: fc.constantFrom("\n" as const, "\r\n" as const, "mixed" as const),
    splitData: fc.boolean(),
    finalBlankLine: fc.constant(true)
  }),
  stdio: fc.record({ banner: fc.boolean(), lineEnd: fc.constant("\n" as const) }),
  chunkSize: fc.constantFrom(undefined, undefined, 1, 7),
  then: fc.constant("end" as const)
})

/** Mostly honest framing, so that what it carries is tested; hostile framing one time in three. */
export const framing: fc.Arbitrary<Framing> = fc.oneof({ arbitrary: honestFraming, weight: 2 }, { arbitrary: hostileFraming, weight: 1 })

/** `text` cut in up to three parts, each cut just after a `,` that is outside any string. */
export const splitBetweenValues = (text: string): ReadonlyArray<string> => {
  const cuts: Array<number> = []
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (inString) {
      if (char === "\\") i++
      else if (char === "\"") inString = false
    } else if (char === "\"") inString = true
    else if (char === ",") cuts.push(i + 1)
  }
  if (cuts.length === 0) return [text]
  const chosen = [...new Set([cuts[Math.floor(cuts.length / 3)]!, cuts[Math.floor((2 * cuts.length) / 3)]!])]
  const parts: Array<string> = []
  let from = 0
  for (const cut of chosen) {
    parts.push(text.slice(from, cut))
    from = cut
  }
  parts.push(text.slice(from))
  return parts
}

/** The SSE body carrying `message` as `framing` says. */
export const sseBody = (message: string, framing: Framing): string => {
  const { comments, eventId, finalBlankLine, lineEnd, retry, splitData } = framing.sse
  const lines: Array<string> = []
  if (comments) lines.push(": hostile comment", ":")
  if (retry !== undefined) lines.push(`retry: ${retry}`)
  if (eventId) lines.push("id: ev-1")
  lines.push("event: message")
  // A message split over several data lines is the same message: they join with "\n", which is
  // JSON whitespace where the split falls between two values.
  for (const part of splitData ? splitBetweenValues(message) : [message]) lines.push(`data: ${part}`)
  if (finalBlankLine) lines.push("")
  const ends = lineEnd === "mixed" ? ["\r\n", "\n"] : [lineEnd]
  return lines.map((line, i) => line + ends[i % ends.length]).join("")
}

/** The stdio output carrying `message` as `framing` says. */
export const stdioText = (message: string, framing: Framing): string =>
  (framing.stdio.banner ? "server starting...\nnot json either\n" : "") + message + framing.stdio.lineEnd
