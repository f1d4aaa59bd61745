/**
 * `phasebound servers`' listing (src/servers.ts): a URL's userinfo, query and fragment masked
 * whatever they hold (FastCheck), header and environment values never listed, the table and
 * the JSON of the same listing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigImport from "@phasebound/client/ConfigImport"
import { Either, FastCheck as fc } from "effect"
import { describeServer, maskedUrl, renderServers } from "../src/servers.js"

const secretText = fc.string({ unit: fc.constantFrom("a", "Z", "9", "%", "-", ":", "=", "&", "$", "{", "}", "~", "é"), minLength: 6, maxLength: 20 })

describe("maskedUrl", () => {
  it.prop(
    "userinfo, query and fragment never survive; scheme, host and path do",
    [secretText, secretText, secretText, fc.constantFrom("example.com", "127.0.0.1:8080", "${HOST}"), fc.constantFrom("/mcp", "", "/a/b")],
    ([user, query, fragment, host, path]) => {
      const marked = { user: `U${user}`, query: `Q${query}`, fragment: `F${fragment}` }
      for (
        const url of [
          `https://${marked.user}@${host}${path}?k=${marked.query}#${marked.fragment}`,
          `https://${marked.user}:${marked.query}@${host}${path}`,
          `http://${host}${path}#${marked.fragment}`
        ]
      ) {
        const masked = maskedUrl(url)
        for (const secret of Object.values(marked)) {
          if (url.includes(secret)) expect(masked, url).not.toContain(secret)
        }
        expect(masked.startsWith(url.slice(0, url.indexOf("://") + 3))).toBe(true)
        expect(masked).toContain(host)
      }
    }
  )

  it("a URL without secrets is shown as written", () => {
    expect(maskedUrl("https://mcp.example.com/mcp")).toBe("https://mcp.example.com/mcp")
    expect(maskedUrl("https://u:p@h/x?y#z")).toBe("https://***@h/x?***")
    expect(maskedUrl("http://h/a@b")).toBe("http://h/a@b")
  })
})

describe("the listing", () => {
  const file = ConfigImport.parse(
    JSON.stringify({
      mcpServers: {
        remote: { url: "https://h/mcp?token=SECRET-A", headers: { Authorization: "Bearer SECRET-B" } },
        local: { command: "node", args: ["s.js"], env: { KEY: "SECRET-C" } }
      }
    }),
    "/p/.mcp.json"
  )
  const listing = Either.map(file, (file) => ({
    files: [{ path: file.path, format: file.format, scope: file.scope, servers: file.servers.length }],
    refused: [{ path: "/h/.cursor/mcp.json", format: "cursor", reason: "invalid-syntax", at: undefined }],
    servers: ConfigImport.serversOf([file]).map((server) => describeServer(server, ConfigImport.inputsOf(server)))
  }))

  it("JSON and table: values masked, names kept, refused files named", () => {
    const value = Either.getOrThrow(listing)
    const machine = renderServers(value, true)
    const human = renderServers(value, false)
    for (const text of [machine, human]) expect(text).not.toMatch(/SECRET-/)
    expect(JSON.parse(machine)).toMatchObject({ servers: [{ name: "remote", headers: { Authorization: "***" } }, { name: "local", env: { KEY: "***" } }] })
    expect(human).toContain("remote")
    expect(human).toContain("node s.js")
    expect(human).toContain("KEY")
    expect(human).toContain("refused: /h/.cursor/mcp.json (invalid-syntax)")
    expect(renderServers({ files: [], refused: [], servers: [] }, false)).toBe("no servers found\n")
  })
})
