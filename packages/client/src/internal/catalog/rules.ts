/**
 * The rules of a catalog (docs/DESIGN.md, "Catalog"), pure: its options validated into rules per
 * server, a catalog name from a server and a tool, the filter of each server, and the merge of
 * the servers' listings into one listing with its conflicts and rejected names.
 */
import type { InvalidOption } from "../../McpConnectionError.js"
import type * as McpSchema from "../../McpSchema.js"
import * as Failures from "../failures.js"
import * as Glob from "./glob.js"

/** What a catalog name must be (MCP 2025-11-25: 1 to 128 characters of `[A-Za-z0-9_.-]`). */
export const maxNameLength = 128
const nameCharacters = /^[A-Za-z0-9_.-]+$/

/** Whether `name` is a valid MCP tool name. */
export const isValidName = (name: string): boolean => name.length >= 1 && name.length <= maxNameLength && nameCharacters.test(name)

/** The longest prefix and separator accepted, and the most patterns of one list. */
export const maxPrefixLength = 64
export const maxSeparatorLength = 8
export const maxPatterns = 256

export const defaultSeparator = "__"

/** One server's rules as given (options, or the servers file's entry). */
export interface ServerRulesInput {
  readonly prefix?: string | false | undefined
  readonly allowTools?: ReadonlyArray<string> | undefined
  readonly blockTools?: ReadonlyArray<string> | undefined
}

/** The catalog's options as given. */
export interface RulesInput {
  readonly prefix?: false | ((server: string, tool: string) => string) | undefined
  readonly separator?: string | undefined
  readonly servers?: Readonly<Record<string, ServerRulesInput>> | undefined
}

/** How a server's tools are named in the catalog. */
export type Naming =
  | { readonly _tag: "Prefix"; readonly prefix: string }
  | { readonly _tag: "None" }
  | { readonly _tag: "Function"; readonly name: (server: string, tool: string) => string }

/** One server's rules, validated. */
export interface ServerRules {
  readonly server: string
  readonly naming: Naming
  readonly allow: ReadonlyArray<Glob.Glob> | undefined
  readonly block: ReadonlyArray<Glob.Glob>
}

const refused = (option: string): InvalidOption => Failures.invalidConfig(option)

const patternsOf = (patterns: unknown, option: string): ReadonlyArray<Glob.Glob> | InvalidOption => {
  if (!Array.isArray(patterns) || patterns.length > maxPatterns) return refused(option)
  const compiled: Array<Glob.Glob> = []
  for (const pattern of patterns) {
    const glob = typeof pattern === "string" ? Glob.compile(pattern) : undefined
    if (glob === undefined) return refused(option)
    compiled.push(glob)
  }
  return compiled
}

const isPrefix = (prefix: string): boolean => prefix.length <= maxPrefixLength && isValidName(prefix)

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const serverFields: ReadonlySet<string> = new Set(["prefix", "allowTools", "blockTools"])
const topFields: ReadonlySet<string> = new Set(["prefix", "separator", "servers"])

/**
 * The rules of every server of `names`, before any I/O: an unknown field, a rule for a server
 * that is not configured, a prefix or separator that is not made of tool-name characters, a
 * server name used as the default prefix that is not either, a malformed pattern: each is
 * `InvalidOption` naming the option (never the value).
 */
export const validate = (names: ReadonlyArray<string>, input: RulesInput | undefined): ReadonlyArray<ServerRules> | InvalidOption => {
  const given: unknown = input ?? {}
  if (!isRecord(given)) return refused("catalog")
  for (const key of Object.keys(given)) if (!topFields.has(key)) return refused("catalog")
  const separator = given["separator"] ?? defaultSeparator
  if (typeof separator !== "string" || separator.length > maxSeparatorLength || !isValidName(separator)) return refused("separator")
  const prefix = given["prefix"]
  if (prefix !== undefined && prefix !== false && typeof prefix !== "function") return refused("prefix")
  const servers = given["servers"] ?? {}
  if (!isRecord(servers)) return refused("catalog.servers")
  const known = new Set(names)
  for (const name of Object.keys(servers)) if (!known.has(name)) return refused("catalog.servers")
  const rules: Array<ServerRules> = []
  for (const server of names) {
    const own = Object.hasOwn(servers, server) ? servers[server] : {}
    if (!isRecord(own)) return refused("catalog.servers")
    for (const key of Object.keys(own)) if (!serverFields.has(key)) return refused("catalog.servers")
    let naming: Naming
    const ownPrefix = own["prefix"]
    if (ownPrefix === false) naming = { _tag: "None" }
    else if (typeof ownPrefix === "string") {
      if (!isPrefix(ownPrefix)) return refused("prefix")
      naming = { _tag: "Prefix", prefix: `${ownPrefix}${separator}` }
    } else if (ownPrefix !== undefined) return refused("prefix")
    else if (prefix === false) naming = { _tag: "None" }
    else if (typeof prefix === "function") naming = { _tag: "Function", name: prefix as (server: string, tool: string) => string }
    else {
      // The server's name is the default prefix: it must be one.
      if (!isPrefix(server)) return refused("prefix")
      naming = { _tag: "Prefix", prefix: `${server}${separator}` }
    }
    const allow = own["allowTools"] === undefined ? undefined : patternsOf(own["allowTools"], "allowTools")
    if (allow !== undefined && !Array.isArray(allow)) return allow as InvalidOption
    const block = own["blockTools"] === undefined ? [] : patternsOf(own["blockTools"], "blockTools")
    if (!Array.isArray(block)) return block as InvalidOption
    rules.push({ server, naming, allow: allow as ReadonlyArray<Glob.Glob> | undefined, block: block as ReadonlyArray<Glob.Glob> })
  }
  return rules
}

/**
 * Whether the server's filter lets its tool through: no block pattern matches it, and the allow
 * list, when there is one, has a pattern that does. Block wins. A name longer than a tool name
 * may be is not matched at all: it is refused by the listing anyway.
 */
export const admits = (rules: ServerRules, tool: string): boolean => {
  if (tool.length > maxNameLength) return false
  for (const glob of rules.block) if (Glob.matches(glob, tool)) return false
  if (rules.allow === undefined) return true
  for (const glob of rules.allow) if (Glob.matches(glob, tool)) return true
  return false
}

/**
 * The catalog name of a server's tool; `undefined` when it is not a valid tool name (a function
 * that throws or returns anything else counts as that).
 */
export const nameOf = (rules: ServerRules, tool: string): string | undefined => {
  let name: unknown
  switch (rules.naming._tag) {
    case "None":
      name = tool
      break
    case "Prefix":
      name = `${rules.naming.prefix}${tool}`
      break
    case "Function":
      try {
        name = rules.naming.name(rules.server, tool)
      } catch {
        name = undefined
      }
  }
  return typeof name === "string" && isValidName(name) ? name : undefined
}

/**
 * The tools a catalog name may stand for, found without listing: for each server named by a
 * prefix (or by none), the tool the name would be. `complete` is false when a server is named by
 * a function (it cannot be inverted: only a listing tells).
 */
export const candidates = (
  rules: ReadonlyArray<ServerRules>,
  name: string
): { readonly found: ReadonlyArray<{ readonly rules: ServerRules; readonly tool: string }>; readonly complete: boolean } => {
  const found: Array<{ readonly rules: ServerRules; readonly tool: string }> = []
  let complete = true
  for (const server of rules) {
    switch (server.naming._tag) {
      case "None":
        found.push({ rules: server, tool: name })
        break
      case "Prefix":
        if (name.startsWith(server.naming.prefix) && name.length > server.naming.prefix.length) {
          found.push({ rules: server, tool: name.slice(server.naming.prefix.length) })
        }
        break
      case "Function":
        complete = false
    }
  }
  return { found, complete }
}

/**
 * Whether the server could give a tool the catalog name `name`, without its listing: a tool its
 * filter lets through would have it. Always true under a naming function, which cannot be
 * inverted.
 */
export const couldName = (rules: ServerRules, name: string): boolean => {
  const { complete, found } = candidates([rules], name)
  return !complete || found.some((candidate) => admits(candidate.rules, candidate.tool))
}

/** A catalog entry: its catalog name, its server, and the server's tool (its own name unchanged). */
export interface Entry {
  readonly name: string
  readonly server: string
  readonly tool: McpSchema.Tool
}

/** Tools of different servers (or of one) that map to one catalog name: none of them is listed. */
export interface Conflict {
  readonly name: string
  readonly tools: ReadonlyArray<{ readonly server: string; readonly tool: string }>
}

/** A tool whose catalog name would not be a valid tool name: not listed. */
export interface Rejected {
  readonly server: string
  readonly tool: string
  readonly reason: "invalid-name"
}

/**
 * A tool held back because a server that could not be listed could give its catalog name too:
 * offering it could shadow that server's tool. `failed` names those servers.
 */
export interface Unresolved {
  readonly name: string
  readonly server: string
  readonly tool: string
  readonly failed: ReadonlyArray<string>
}

export interface Merged {
  readonly tools: ReadonlyArray<Entry>
  readonly conflicts: ReadonlyArray<Conflict>
  readonly rejected: ReadonlyArray<Rejected>
  readonly unresolved: ReadonlyArray<Unresolved>
}

/**
 * The merge: each server's tools through its filter (blocked tools are left out, not reported),
 * named, then grouped by catalog name; a name given to more than one tool is a conflict and none
 * of its tools is listed; a name that one of the `failed` servers (those that could not be
 * listed) could also give is unresolved, and not listed either. Order: servers in their order,
 * tools in the server's order.
 */
export const merge = (
  lists: ReadonlyArray<{ readonly rules: ServerRules; readonly tools: ReadonlyArray<McpSchema.Tool> }>,
  failed: ReadonlyArray<ServerRules> = []
): Merged => {
  const byName = new Map<string, Array<Entry>>()
  const rejected: Array<Rejected> = []
  for (const { rules, tools } of lists) {
    for (const tool of tools) {
      if (tool.name.length > maxNameLength) {
        // Too long to be a tool name, or to be matched: refused as it is.
        rejected.push({ server: rules.server, tool: tool.name, reason: "invalid-name" })
        continue
      }
      if (!admits(rules, tool.name)) continue
      const name = nameOf(rules, tool.name)
      if (name === undefined) {
        rejected.push({ server: rules.server, tool: tool.name, reason: "invalid-name" })
        continue
      }
      const entries = byName.get(name)
      if (entries === undefined) byName.set(name, [{ name, server: rules.server, tool }])
      else entries.push({ name, server: rules.server, tool })
    }
  }
  const entries: Array<Entry> = []
  const conflicts: Array<Conflict> = []
  const unresolved: Array<Unresolved> = []
  for (const [name, group] of byName) {
    if (group.length > 1) {
      conflicts.push({ name, tools: group.map((entry) => ({ server: entry.server, tool: entry.tool.name })) })
      continue
    }
    const entry = group[0]!
    const others = failed.filter((server) => couldName(server, name)).map((server) => server.server)
    if (others.length === 0) entries.push(entry)
    else unresolved.push({ name, server: entry.server, tool: entry.tool.name, failed: others })
  }
  return { tools: entries, conflicts, rejected, unresolved }
}
