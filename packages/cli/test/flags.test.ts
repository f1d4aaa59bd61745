/**
 * The table of flags (src/flags.ts): what each command takes, in the order its help shows, the
 * names a usage record may carry, and the values a command that lacks a flag sees.
 */
import { Option } from "effect"
import { describe, expect, it } from "vitest"
import {
  type CommandName,
  commandOptions,
  completeFlags,
  connectingCommands,
  flag,
  flagNames,
  flagTable,
  policyFlags
} from "../src/flags.js"

const connectionFlags = [
  "stdio",
  "config",
  "format",
  "header",
  "transport",
  "revision",
  "timeout",
  "maxBytes",
  "discoveryTimeout",
  "discoveryMaxBytes",
  "callTimeout",
  "callMaxBytes",
  "releaseTimeout",
  "env",
  "envPass",
  "serverStderr",
  "json",
  "debug",
  "authGrant",
  "authClientId",
  "authClientSecret",
  "authClientMetadataUrl",
  "authPrivateKeyFile",
  "authPrivateKeyAlg",
  "authScope",
  "authIssuer",
  "authAllowPrivateAuthority",
  "authAllowScopeStepUp",
  "tokenFile"
]

/** `tools` and `call` also take `--catalog`, after `--config` (the config file's servers as one catalog). */
const catalogFlags = connectionFlags.flatMap((key) => (key === "format" ? [key, "catalog"] : [key]))

const keysOf = (command: CommandName, sections?: Parameters<typeof commandOptions>[1]) => Object.keys(commandOptions(command, sections))

describe("the table of flags", () => {
  it("gives each command its flags in help order", () => {
    expect(keysOf("tools")).toEqual(catalogFlags)
    for (const command of ["resources", "templates", "read", "prompts", "skills", "skill", "discover", "ping"] as const) {
      expect(keysOf(command)).toEqual(connectionFlags)
    }
    expect(keysOf("call")).toEqual([...catalogFlags, "args", "idleTimeout", "serverLogLevel", "effectIdentity", "task", "taskTimeout"])
    expect(keysOf("tasks")).toEqual(connectionFlags)
    expect(keysOf("task")).toEqual([...connectionFlags, "wait", "cancel", "taskTimeout"])
    expect(keysOf("prompt")).toEqual([...connectionFlags, "args"])
    expect(keysOf("complete")).toEqual([...connectionFlags, "prompt", "resource", "argument", "value", "context"])
    // login: HTTP only, no stdio flags; then its own.
    expect(keysOf("login")).toEqual([
      ...connectionFlags.filter((key) => !["stdio", "env", "envPass", "serverStderr"].includes(key)),
      "authRedirectPort",
      "authTimeout"
    ])
    expect(keysOf("logout", ["target", "auth", "output"])).toEqual([
      "config",
      "format",
      "authClientId",
      "authClientMetadataUrl",
      "tokenFile",
      "json",
      "debug"
    ])
    expect(keysOf("demo")).toEqual(["json", "debug"])
    expect(keysOf("servers")).toEqual(["config", "format", "json", "debug"])
  })

  it("names every flag once, each taken by some command", () => {
    const names = Object.values(flagTable).map((spec) => spec.name)
    expect(new Set(names).size).toBe(names.length)
    expect([...flagNames]).toEqual(names.map((name) => `--${name}`))
    for (const spec of Object.values(flagTable)) expect(spec.commands.length).toBeGreaterThan(0)
    expect(flag("maxBytes")).toBe("--max-bytes")
    expect(flagNames.has("--log-level")).toBe(false)
  })

  it("maps the budget flags to the policy, in the order they are checked", () => {
    expect(policyFlags.map(({ field, key }) => `${flag(key)} ${field}`)).toEqual([
      "--timeout timeout",
      "--max-bytes maxBytes",
      "--discovery-timeout discovery.timeout",
      "--discovery-max-bytes discovery.maxBytes",
      "--call-timeout call.timeout",
      "--call-max-bytes call.maxBytes",
      "--release-timeout releaseTimeout",
      "--task-timeout task.timeout"
    ])
  })

  it("gives a command the empty value of each flag it does not take", () => {
    const flags = completeFlags({ json: true, timeout: Option.some("5s") })
    expect(flags.json).toBe(true)
    expect(flags.timeout).toEqual(Option.some("5s"))
    expect(flags.stdio).toEqual(Option.none())
    expect(flags.env).toEqual([])
    expect(flags.authAllowScopeStepUp).toBe(false)
    expect(Object.keys(flags)).toEqual(Object.keys(flagTable))
  })

  it("lists the connecting commands, each with the target and OAuth flags", () => {
    for (const command of connectingCommands) {
      expect(keysOf(command)).toEqual(expect.arrayContaining(["stdio", "authGrant", "tokenFile"]))
    }
  })
})
