/**
 * The MCP registry's `server.json` (a server's own description: docs/GUIDE.md, "server.json"),
 * read as the servers it can be started as: each stdio package becomes a command (npm:
 * `npx -y <identifier>@<version>`, pypi: `uvx <identifier>==<version>`, oci:
 * `docker run -i --rm -e NAME... <identifier>:<version>`, nuget: `dnx <identifier>@<version> --yes`;
 * `runtimeHint` and `runtimeArguments` replace the runner and its arguments when given), each
 * remote an HTTP server. The server named after the last segment of `name` is the first package
 * (else the first remote); every one is also named `<name>:package:<n>` and `<name>:remote:<n>`
 * (from 1), so a caller chooses by name.
 *
 * Values: an environment variable's is `${NAME}` (`${NAME:-default}` with a default,
 * `${NAME:-}` when optional); a header, an argument or a `{variable}` of a URL without a
 * value is an input (`${input:id}`, a secret when `isSecret`); an optional one without a value
 * is left out.
 */
import * as Either from "effect/Either"
import type * as ServersFile from "../../ServersFile.js"
import { type FormatProblem, type Imported, type ImportedServer, type InputSpec, isRecord, strictEntry, type Reader } from "./model.js"

const variableName = /^[A-Za-z_][A-Za-z0-9_]*$/
const serverName = /^[A-Za-z0-9._-]{1,128}$/

const text = (value: unknown): string | undefined => typeof value === "string" ? value : undefined

/** An input id from a name or hint: the characters an id may hold, others as `_`. */
const idOf = (name: string): string => name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 64) || "value"

interface Collect {
  readonly inputs: Map<string, InputSpec>
}

const askFor = (collect: Collect, name: string, description: unknown, secret: unknown): string => {
  const id = idOf(name)
  if (!collect.inputs.has(id)) collect.inputs.set(id, { id, description: text(description), password: secret === true })
  return `\${input:${id}}`
}

/** `{name}` of `variables` in a value: its default, else an input. */
const templated = (value: string, variables: unknown, collect: Collect): string =>
  !isRecord(variables) ? value : value.replace(/\{([A-Za-z0-9_.-]{1,64})\}/g, (whole, name: string) => {
    if (!Object.hasOwn(variables, name) || !isRecord(variables[name])) return whole
    const spec = variables[name] as Record<string, unknown>
    return text(spec["value"]) ?? text(spec["default"]) ?? askFor(collect, name, spec["description"], spec["isSecret"])
  })

/** An argument's words, or undefined when it is optional and has no value; `false` when malformed. */
const argumentWords = (argument: unknown, collect: Collect): ReadonlyArray<string> | undefined | false => {
  if (!isRecord(argument)) return false
  const value = text(argument["value"]) ?? text(argument["default"])
  const resolved = value === undefined
    ? argument["isRequired"] === true
      ? askFor(collect, text(argument["valueHint"]) ?? text(argument["name"]) ?? "value", argument["description"], argument["isSecret"])
      : undefined
    : templated(value, argument["variables"], collect)
  if (argument["type"] === "positional") return resolved === undefined ? undefined : [resolved]
  if (argument["type"] === "named") {
    const name = text(argument["name"])
    if (name === undefined) return false
    if (resolved === undefined) return argument["isRequired"] === true ? [name] : undefined
    return name.endsWith("=") ? [name + resolved] : [name, resolved]
  }
  return false
}

const argumentList = (list: unknown, collect: Collect): ReadonlyArray<string> | false => {
  if (list === undefined) return []
  if (!Array.isArray(list)) return false
  const words: Array<string> = []
  for (const argument of list) {
    const read = argumentWords(argument, collect)
    if (read === false) return false
    if (read !== undefined) { for (const word of read) words.push(word) }
  }
  return words
}

const runners: Readonly<
  Record<
    string,
    {
      readonly command: string
      readonly args: ReadonlyArray<string>
      readonly ref: (id: string, version: string) => string
      readonly after?: ReadonlyArray<string>
    }
  >
> = {
  npm: { command: "npx", args: ["-y"], ref: (id, version) => `${id}@${version}` },
  pypi: { command: "uvx", args: [], ref: (id, version) => `${id}==${version}` },
  oci: { command: "docker", args: ["run", "-i", "--rm"], ref: (id, version) => id.includes(":") || id.includes("@") ? id : `${id}:${version}` },
  nuget: { command: "dnx", args: [], ref: (id, version) => `${id}@${version}`, after: ["--yes"] }
}

const packageEntry = (pkg: unknown, collect: Collect): Either.Either<{ entry: unknown; notes: Array<string> } | undefined, "invalid"> => {
  if (!isRecord(pkg)) return Either.left("invalid")
  const registry = text(pkg["registryType"])
  const identifier = text(pkg["identifier"])
  if (registry === undefined || identifier === undefined) return Either.left("invalid")
  const transport = pkg["transport"]
  if (isRecord(transport) && transport["type"] !== undefined && transport["type"] !== "stdio") return Either.right(undefined)
  const runner = runners[registry]
  if (runner === undefined) return Either.right(undefined)
  const version = text(pkg["version"])
  const env: Record<string, string> = {}
  const variables = pkg["environmentVariables"]
  if (variables !== undefined && !Array.isArray(variables)) return Either.left("invalid")
  for (const variable of variables ?? []) {
    if (!isRecord(variable) || typeof variable["name"] !== "string" || !variableName.test(variable["name"])) return Either.left("invalid")
    const name = variable["name"]
    const value = text(variable["value"])
    const fallback = text(variable["default"])
    env[name] = value !== undefined
      ? templated(value, variable["variables"], collect)
      : fallback !== undefined
      ? `\${${name}:-${fallback.replace(/\}/g, "")}}`
      : variable["isRequired"] === true
      ? `\${${name}}`
      : `\${${name}:-}`
  }
  const runtimeArgs = pkg["runtimeArguments"] === undefined ? runner.args : argumentList(pkg["runtimeArguments"], collect)
  const packageArgs = argumentList(pkg["packageArguments"], collect)
  if (runtimeArgs === false || packageArgs === false) return Either.left("invalid")
  const dockerEnv = registry === "oci" ? Object.keys(env).flatMap((name) => ["-e", name]) : []
  const args = [...runtimeArgs, ...dockerEnv, version === undefined ? identifier : runner.ref(identifier, version), ...(runner.after ?? []), ...packageArgs]
  return Either.right({
    entry: { command: text(pkg["runtimeHint"]) ?? runner.command, args, ...(Object.keys(env).length > 0 ? { env } : {}) },
    notes: []
  })
}

const remoteEntry = (remote: unknown, collect: Collect): Either.Either<{ entry: unknown; notes: Array<string> } | undefined, "invalid"> => {
  if (!isRecord(remote)) return Either.left("invalid")
  const url = text(remote["url"])
  const type = remote["type"]
  if (url === undefined || (type !== "streamable-http" && type !== "sse")) return Either.left("invalid")
  const headers: Record<string, string> = {}
  const list = remote["headers"]
  if (list !== undefined && !Array.isArray(list)) return Either.left("invalid")
  for (const header of list ?? []) {
    if (!isRecord(header) || typeof header["name"] !== "string") return Either.left("invalid")
    const value = text(header["value"]) ?? text(header["default"])
    if (value !== undefined) headers[header["name"]] = templated(value, header["variables"], collect)
    else if (header["isRequired"] === true) headers[header["name"]] = askFor(collect, header["name"], header["description"], header["isSecret"])
  }
  return Either.right({
    entry: { url: templated(url, remote["variables"], collect), type, ...(Object.keys(headers).length > 0 ? { headers } : {}) },
    notes: []
  })
}

export const read: Reader = (value) => {
  if (!isRecord(value) || typeof value["name"] !== "string") return Either.left({ reason: "invalid-value", at: "name" })
  const base = value["name"].slice(value["name"].lastIndexOf("/") + 1)
  if (!serverName.test(base)) return Either.left({ reason: "invalid-name", at: "name" })
  const collect: Collect = { inputs: new Map() }
  const servers: Array<ImportedServer> = []
  const add = (
    kind: "package" | "remote",
    list: unknown,
    make: (item: unknown, collect: Collect) => Either.Either<{ entry: unknown; notes: Array<string> } | undefined, "invalid">
  ): FormatProblem | undefined => {
    if (list === undefined) return undefined
    if (!Array.isArray(list)) return { reason: "invalid-value", at: `${kind}s` }
    for (const [index, item] of list.entries()) {
      const name = `${base}:${kind}:${index + 1}`
      const made = make(item, collect)
      if (Either.isLeft(made)) return { reason: "invalid-value", at: name }
      if (made.right === undefined) continue
      const entry = strictEntry(name, made.right.entry)
      if (Either.isLeft(entry)) return entry.left
      servers.push({ name, entry: entry.right as ServersFile.ServerEntry, notes: made.right.notes })
    }
    return undefined
  }
  const problem = add("package", value["packages"], packageEntry) ?? add("remote", value["remotes"], remoteEntry)
  if (problem !== undefined) return Either.left(problem)
  if (servers.length === 0) return Either.left({ reason: "unsupported", at: "packages" })
  const first = servers[0]!
  const imported: Imported = { servers: [{ ...first, name: base }, ...servers], inputs: [...collect.inputs.values()] }
  return Either.right(imported)
}
