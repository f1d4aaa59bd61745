/**
 * The catalog's rules (internal/catalog/rules.ts; docs/DESIGN.md, "Catalog"): the naming
 * (default `server__tool`, a server's own prefix, none, a function), names that would be invalid,
 * conflicts (both left out and reported, never one winning), allow and block lists (block wins),
 * and the validation of the options before any I/O. A property over generated servers and tools
 * shows that the merge never drops an admitted tool silently and never lists one name twice; another
 * that servers which could not be listed never let a name resolve that their tools could take.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as Rules from "../../src/internal/catalog/rules.js"
import type { McpSchema } from "../../src/index.js"

const tool = (name: string): McpSchema.Tool => ({ name, inputSchema: { type: "object" } }) as McpSchema.Tool

const rulesOf = (names: ReadonlyArray<string>, input?: Rules.RulesInput): ReadonlyArray<Rules.ServerRules> => {
  const validated = Rules.validate(names, input)
  if (!Array.isArray(validated)) throw new Error(`refused: ${JSON.stringify(validated)}`)
  return validated as ReadonlyArray<Rules.ServerRules>
}

const refusal = (names: ReadonlyArray<string>, input: unknown) => {
  const validated = Rules.validate(names, input as Rules.RulesInput)
  expect(Array.isArray(validated)).toBe(false)
  return validated as { readonly _tag: string; readonly option: string; readonly outcome: string }
}

const mergeOf = (rules: ReadonlyArray<Rules.ServerRules>, tools: Readonly<Record<string, ReadonlyArray<string>>>) =>
  Rules.merge(rules.map((server) => ({ rules: server, tools: (tools[server.server] ?? []).map(tool) })))

const listed = (merged: Rules.Merged) => merged.tools.map((entry) => [entry.name, entry.server, entry.tool.name])

describe("catalog naming", () => {
  it("default: server__tool, the server's tool unchanged", () => {
    const merged = mergeOf(rulesOf(["github", "local"]), { github: ["search", "get_issue"], local: ["search"] })
    expect(listed(merged)).toEqual([
      ["github__search", "github", "search"],
      ["github__get_issue", "github", "get_issue"],
      ["local__search", "local", "search"]
    ])
    expect(merged.conflicts).toEqual([])
    expect(merged.rejected).toEqual([])
  })

  it("a server's own prefix, prefix false (own names), a separator, a naming function; a server's prefix wins over the function", () => {
    const rules = rulesOf(["a", "b", "c"], {
      separator: ".",
      prefix: (server, name) => `${name}-via-${server}`,
      servers: { a: { prefix: "gh" }, b: { prefix: false } }
    })
    expect(listed(mergeOf(rules, { a: ["x"], b: ["y"], c: ["z"] }))).toEqual([["gh.x", "a", "x"], ["y", "b", "y"], ["z-via-c", "c", "z"]])
    expect(listed(mergeOf(rulesOf(["a"], { prefix: false }), { a: ["x"] }))).toEqual([["x", "a", "x"]])
  })

  it("a name that would be invalid (characters, length, a throwing or odd function) is rejected and reported, never altered", () => {
    const long = "t".repeat(Rules.maxNameLength - "s__".length + 1)
    const fits = "t".repeat(Rules.maxNameLength - "s__".length)
    const merged = mergeOf(rulesOf(["s"]), { s: ["has space", "ünï", long, fits, "x".repeat(10_000)] })
    expect(listed(merged)).toEqual([[`s__${fits}`, "s", fits]])
    expect(merged.rejected.map((r) => [r.server, r.tool.length, r.reason])).toEqual([
      ["s", 9, "invalid-name"],
      ["s", 3, "invalid-name"],
      ["s", long.length, "invalid-name"],
      ["s", 10_000, "invalid-name"]
    ])
    const throwing = rulesOf(["s"], {
      prefix: (_, name) => {
        if (name === "boom") throw new Error("no")
        return name === "odd" ? (42 as unknown as string) : `ok_${name}`
      }
    })
    const fromFunction = mergeOf(throwing, { s: ["boom", "odd", "fine"] })
    expect(listed(fromFunction)).toEqual([["ok_fine", "s", "fine"]])
    expect(fromFunction.rejected.map((r) => r.tool)).toEqual(["boom", "odd"])
  })
})

describe("catalog conflicts", () => {
  it("two servers' tools of one catalog name: neither is listed, both are reported", () => {
    const merged = mergeOf(rulesOf(["a", "b"], { prefix: false }), { a: ["search", "only_a"], b: ["search", "only_b"] })
    expect(listed(merged)).toEqual([["only_a", "a", "only_a"], ["only_b", "b", "only_b"]])
    expect(merged.conflicts).toEqual([{ name: "search", tools: [{ server: "a", tool: "search" }, { server: "b", tool: "search" }] }])
  })

  it("a prefix that makes one server's tool look like another's (a__b__x) is a conflict too", () => {
    const merged = mergeOf(rulesOf(["a", "a__b"]), { a: ["b__x"], a__b: ["x"] })
    expect(merged.tools).toEqual([])
    expect(merged.conflicts.map((c) => c.name)).toEqual(["a__b__x"])
  })

  it("a naming function that gives two tools of one server one name: a conflict", () => {
    const merged = mergeOf(rulesOf(["s"], { prefix: () => "same" }), { s: ["x", "y"] })
    expect(merged.tools).toEqual([])
    expect(merged.conflicts).toEqual([{ name: "same", tools: [{ server: "s", tool: "x" }, { server: "s", tool: "y" }] }])
  })

  it("a blocked tool takes no part in a conflict", () => {
    const merged = mergeOf(rulesOf(["a", "b"], { prefix: false, servers: { b: { blockTools: ["search"] } } }), { a: ["search"], b: ["search"] })
    expect(listed(merged)).toEqual([["search", "a", "search"]])
    expect(merged.conflicts).toEqual([])
  })
})

describe("catalog allow and block lists", () => {
  it("allow keeps only what matches; block removes what matches; block wins over allow", () => {
    const rules = rulesOf(["s"], { servers: { s: { allowTools: ["get_*", "list_?"], blockTools: ["get_secret*"] } } })
    const merged = mergeOf(rules, { s: ["get_issue", "get_secret_key", "list_a", "list_ab", "delete_repo"] })
    expect(listed(merged).map(([name]) => name)).toEqual(["s__get_issue", "s__list_a"])
    expect(Rules.admits(rules[0]!, "get_secret")).toBe(false)
    expect(Rules.admits(rules[0]!, "delete_repo")).toBe(false)
  })

  it("an empty allow list admits nothing; no lists admit everything", () => {
    expect(mergeOf(rulesOf(["s"], { servers: { s: { allowTools: [] } } }), { s: ["x"] }).tools).toEqual([])
    expect(mergeOf(rulesOf(["s"]), { s: ["x"] }).tools).toHaveLength(1)
  })

  it("candidates: a prefixed name gives its server's tool without a listing; a function makes the answer incomplete", () => {
    const rules = rulesOf(["a", "b"], { servers: { b: { prefix: false } } })
    expect(Rules.candidates(rules, "a__x").found.map((c) => [c.rules.server, c.tool])).toEqual([["a", "x"], ["b", "a__x"]])
    expect(Rules.candidates(rules, "a__x").complete).toBe(true)
    expect(Rules.candidates(rulesOf(["a"]), "a__").found).toEqual([])
    expect(Rules.candidates(rulesOf(["a"], { prefix: (s, t) => `${s}${t}` }), "ax").complete).toBe(false)
  })
})

describe("catalog options, validated before any I/O", () => {
  it("refuses each bad option with InvalidOption naming it, outcome not-sent", () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, unknown, string]> = [
      [["s"], { servers: { s: { blockTools: ["[oops"] } } }, "blockTools"],
      [["s"], { servers: { s: { allowTools: [""] } } }, "allowTools"],
      [["s"], { servers: { s: { allowTools: "x*" } } }, "allowTools"],
      [["s"], { servers: { s: { blockTools: Array.from({ length: Rules.maxPatterns + 1 }, () => "x") } } }, "blockTools"],
      [["s"], { servers: { s: { prefix: "has space" } } }, "prefix"],
      [["s"], { servers: { s: { prefix: "p".repeat(Rules.maxPrefixLength + 1) } } }, "prefix"],
      [["s"], { servers: { s: { prefix: true } } }, "prefix"],
      [["my server"], {}, "prefix"],
      [["s"], { prefix: "string" }, "prefix"],
      [["s"], { separator: "" }, "separator"],
      [["s"], { separator: "::" }, "separator"],
      [["s"], { servers: { typo: {} } }, "catalog.servers"],
      [["s"], { servers: { s: { allow: ["x"] } } }, "catalog.servers"],
      [["s"], { unknown: true }, "catalog"]
    ]
    for (const [names, input, option] of cases) {
      expect(refusal(names, input), JSON.stringify(input).slice(0, 80)).toMatchObject({ _tag: "InvalidOption", option, outcome: "not-sent" })
    }
  })

  it("a server name that is no prefix is fine with a prefix of its own, prefix false, or a function", () => {
    expect(rulesOf(["my server"], { servers: { "my server": { prefix: "mine" } } })).toHaveLength(1)
    expect(rulesOf(["my server"], { prefix: false })).toHaveLength(1)
    expect(rulesOf(["my server"], { prefix: (_, t) => t })).toHaveLength(1)
  })
})

describe("catalog merge, generated", () => {
  const serverArb = FastCheck.constantFrom("a", "b", "a__b", "c")
  const toolArb = FastCheck.oneof(
    FastCheck.constantFrom("x", "y", "b__x", "get_1", "del_1", "bad name", ""),
    FastCheck.string({ maxLength: 6 })
  )
  const setupArb = FastCheck.record({
    servers: FastCheck.uniqueArray(serverArb, { minLength: 1, maxLength: 4 }),
    tools: FastCheck.array(FastCheck.tuple(serverArb, toolArb), { maxLength: 20 }),
    noPrefix: FastCheck.array(serverArb, { maxLength: 2 }),
    block: FastCheck.constantFrom(undefined, ["del_*"], ["*"], ["?"])
  })

  it.prop("every admitted tool is listed, in a conflict, or rejected; no name is listed twice; every listed name is valid", [setupArb], ([setup]) => {
    const servers: Record<string, Rules.ServerRulesInput> = {}
    for (const name of setup.servers) {
      servers[name] = {
        ...(setup.noPrefix.includes(name) ? { prefix: false as const } : {}),
        ...(setup.block === undefined ? {} : { blockTools: setup.block })
      }
    }
    const rules = rulesOf(setup.servers, { servers })
    const tools: Record<string, Array<string>> = {}
    for (const [server, name] of setup.tools) if (setup.servers.includes(server)) (tools[server] ??= []).push(name)
    const merged = mergeOf(rules, tools)
    const names = merged.tools.map((entry) => entry.name)
    expect(new Set(names).size).toBe(names.length)
    for (const name of names) expect(Rules.isValidName(name)).toBe(true)
    for (const conflict of merged.conflicts) expect(names).not.toContain(conflict.name)
    for (const server of rules) {
      for (const name of tools[server.server] ?? []) {
        const accounted = merged.tools.some((entry) => entry.server === server.server && entry.tool.name === name) ||
          merged.conflicts.some((conflict) => conflict.tools.some((t) => t.server === server.server && t.tool === name)) ||
          merged.rejected.some((rejected) => rejected.server === server.server && rejected.tool === name)
        expect(accounted).toBe(Rules.admits(server, name) || name.length > Rules.maxNameLength)
      }
    }
  })

  // Few names, so that servers meet on them often (`a` + `b__x` and `a__b` + `x` among them).
  const partialArb = FastCheck.record({
    servers: FastCheck.uniqueArray(serverArb, { minLength: 1, maxLength: 4 }),
    tools: FastCheck.array(FastCheck.tuple(serverArb, FastCheck.constantFrom("x", "y", "b__x", "del_1")), { maxLength: 12 }),
    noPrefix: FastCheck.subarray(["a", "b", "a__b", "c"]),
    block: FastCheck.constantFrom(undefined, ["del_*"], ["y"])
  })

  it.prop(
    "servers that could not be listed never let a name resolve that their tools could take: a partial merge lists only what the full one lists",
    [partialArb, FastCheck.subarray(["a", "b", "a__b", "c"]), FastCheck.boolean()],
    ([setup, down, byFunction]) => {
      const servers: Record<string, Rules.ServerRulesInput> = {}
      for (const name of setup.servers) {
        servers[name] = {
          ...(setup.noPrefix.includes(name) ? { prefix: false as const } : {}),
          ...(setup.block === undefined ? {} : { blockTools: setup.block })
        }
      }
      const rules = rulesOf(setup.servers, byFunction ? { prefix: (server, name) => name.startsWith("x") ? name : `${server}_${name}`, servers } : { servers })
      const tools: Record<string, Array<string>> = {}
      for (const [server, name] of setup.tools) if (setup.servers.includes(server)) (tools[server] ??= []).push(name)
      const failed = rules.filter((server) => down.includes(server.server))
      const answered = rules.filter((server) => !down.includes(server.server))
      const full = mergeOf(rules, tools)
      const partial = Rules.merge(answered.map((server) => ({ rules: server, tools: (tools[server.server] ?? []).map(tool) })), failed)
      // Whatever tools the failed servers have, what the partial merge lists the full one lists the same way.
      for (const entry of partial.tools) {
        expect(full.tools.some((other) => other.name === entry.name && other.server === entry.server && other.tool.name === entry.tool.name)).toBe(true)
        expect(failed.some((server) => Rules.couldName(server, entry.name))).toBe(false)
      }
      // Nothing of an answered server is dropped without a word: held back names are reported.
      for (const held of partial.unresolved) {
        expect(held.failed.length).toBeGreaterThan(0)
        expect(partial.tools.some((entry) => entry.name === held.name)).toBe(false)
      }
      const partialNames = new Set([...partial.tools.map((entry) => entry.name), ...partial.unresolved.map((held) => held.name)])
      for (const entry of mergeOf(answered, tools).tools) expect(partialNames.has(entry.name)).toBe(true)
      if (failed.length === 0) expect(partial).toStrictEqual(full)
    },
    { fastCheck: { numRuns: 500 } }
  )
})

describe("couldName", () => {
  it("a prefixed server could give only names of its prefix whose tool its lists admit; a function, any name", () => {
    const [plain, none, fn] = [
      rulesOf(["gh"], { servers: { gh: { blockTools: ["del*"] } } })[0]!,
      rulesOf(["fs"], { prefix: false, servers: { fs: { allowTools: ["read_*"] } } })[0]!,
      rulesOf(["f"], { prefix: (server, name) => `${name}_${server}` })[0]!
    ]
    expect([Rules.couldName(plain, "gh__search"), Rules.couldName(plain, "gh__delete"), Rules.couldName(plain, "fs__search"), Rules.couldName(plain, "gh__")])
      .toEqual([true, false, false, false])
    expect([Rules.couldName(none, "read_file"), Rules.couldName(none, "write_file")]).toEqual([true, false])
    expect([Rules.couldName(fn, "anything"), Rules.couldName(fn, "x_f")]).toEqual([true, true])
  })
})
