/**
 * VS Code: a workspace's `.vscode/mcp.json`, the user's `mcp.json`, and the `mcp` object of a
 * `settings.json`. Servers are under `servers`; `inputs` declares the `${input:id}` values a
 * server's settings may reference (`promptString`, with `password: true` for a secret). VS
 * Code's `http` type tries Streamable HTTP and falls back to SSE, which is the model's
 * `auto` (no `type`).
 */
import * as Either from "effect/Either"
import { type FormatProblem, foreignEntry, type Imported, type InputSpec, isRecord, type Prepare, type Reader, readServers } from "./model.js"

const inputId = /^[A-Za-z0-9_.-]{1,64}$/

const readInputs = (value: unknown): Either.Either<ReadonlyArray<InputSpec>, FormatProblem> => {
  if (value === undefined) return Either.right([])
  if (!Array.isArray(value)) return Either.left({ reason: "invalid-value", at: "inputs" })
  const inputs: Array<InputSpec> = []
  const seen = new Set<string>()
  for (const input of value) {
    if (!isRecord(input) || typeof input["id"] !== "string" || !inputId.test(input["id"]) || seen.has(input["id"])) {
      return Either.left({ reason: "invalid-value", at: "inputs" })
    }
    const description = input["description"]
    const password = input["password"]
    if ((description !== undefined && typeof description !== "string") || (password !== undefined && typeof password !== "boolean")) {
      return Either.left({ reason: "invalid-value", at: `inputs.${input["id"]}` })
    }
    seen.add(input["id"])
    inputs.push({ id: input["id"], description, password: password === true })
  }
  return Either.right(inputs)
}

const notes = {
  envFile: "envFile is not read: set its variables in the environment",
  dev: "dev (watch and debug) is VS Code's own"
}

/** VS Code's `http` tries Streamable HTTP, then SSE: the model's `auto`. */
const httpType: Prepare = (_, raw) => {
  if (raw["type"] !== "http") return Either.right({ raw })
  const { type: _type, ...rest } = raw
  return Either.right({ raw: rest })
}

const entry = foreignEntry(notes, httpType)

const readSection = (section: unknown, at: string): Either.Either<Imported, FormatProblem> => {
  if (!isRecord(section) || !Object.hasOwn(section, "servers")) return Either.left({ reason: "invalid-value", at: `${at}servers` })
  return Either.zipWith(readServers(section["servers"], `${at}servers`, entry), readInputs(section["inputs"]), (read, inputs) => ({ ...read, inputs }))
}

/** `mcp.json` (workspace or user). */
export const mcpJson: Reader = (value) => readSection(value, "")

/** `settings.json`: its `mcp` object. */
export const settings: Reader = (value) =>
  isRecord(value) && Object.hasOwn(value, "mcp") ? readSection(value["mcp"], "mcp.") : Either.left({ reason: "invalid-value", at: "mcp" })
