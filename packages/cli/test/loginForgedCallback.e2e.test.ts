/**
 * `login` (the Node bundle as a subprocess) when another local party reaches the loopback
 * listener first: a scripted "browser" sends forged callbacks (another state, no state, a
 * foreign Host) before it follows the real authorization URL. Each forged one gets 400, the
 * login waits on, and the real answer completes it.
 */
import * as Testkit from "@phasebound/testkit"
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { run } from "./support/cli.js"

let oauth: Testkit.OAuthTestServer
let server: Testkit.TestServer
let dir: string
let browser: string

// The "browser": forged callbacks to the redirect_uri first (their statuses are written to a
// file), then a GET of the authorization URL, whose 302 leads to the listener.
const browserScript = (statusFile: string) =>
  `#!${process.execPath}
const http = require("node:http")
const { writeFileSync } = require("node:fs")
const authorize = new URL(process.argv[2])
const callback = new URL(authorize.searchParams.get("redirect_uri"))
const send = (target, host) => new Promise((resolve) => {
  const req = http.request({ host: callback.hostname, port: callback.port, path: target, headers: { Host: host }, setHost: false, agent: false }, (res) => {
    res.resume()
    res.on("end", () => resolve(res.statusCode))
  })
  req.on("error", () => resolve(0))
  req.end()
})
;(async () => {
  const statuses = []
  statuses.push(await send(callback.pathname + "?code=forged&state=forged-state", callback.host))
  statuses.push(await send(callback.pathname + "?code=forged", callback.host))
  statuses.push(await send(callback.pathname + "?code=forged&state=" + encodeURIComponent(authorize.searchParams.get("state")), "evil.example:" + callback.port))
  writeFileSync(${JSON.stringify(statusFile)}, JSON.stringify(statuses))
  await fetch(authorize).then((r) => r.text()).catch(() => {})
})()
`

beforeAll(async () => {
  oauth = await Testkit.startOAuthServer()
  server = await Testkit.startServer({ auth: { oauth } })
  dir = mkdtempSync(path.join(tmpdir(), "phasebound-cli-forged-"))
  browser = path.join(dir, "browser.cjs")
  writeFileSync(browser, browserScript(path.join(dir, "statuses.json")))
  chmodSync(browser, 0o755)
})
afterAll(async () => {
  await server?.close()
  await oauth?.close()
})

describe("login with forged callbacks sent first", () => {
  it("each forged callback is 400, and the real one completes the login", async () => {
    const tokenFile = path.join(dir, "state", "tokens.json")
    const authorizations = oauth.calls("authorize")
    const login = await run("node", ["login", server.url, "--json"], {
      env: { PHASEBOUND_BROWSER: browser, PHASEBOUND_TOKEN_FILE: tokenFile }
    })
    expect({ code: login.code, stderr: login.stderr }).toEqual({ code: 0, stderr: "" })
    expect(JSON.parse(readFileSync(path.join(dir, "statuses.json"), "utf8"))).toEqual([400, 400, 400])
    const [, done] = login.stdout.trimEnd().split("\n")
    expect(JSON.parse(done!)).toMatchObject({ loggedIn: true, authorized: true })
    expect(oauth.calls("authorize")).toBe(authorizations + 1)
    expect(JSON.parse(readFileSync(tokenFile, "utf8")).entries).toHaveLength(1)
  })
})
