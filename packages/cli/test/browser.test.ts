/**
 * openBrowser with a recording opener (a script that writes its argv to a file): the URL
 * arrives as one argv element whatever it holds, no shell ever sees it, nothing is spawned when
 * disabled, headless or given a non-http URL, and a missing opener is `false`, never a failure.
 * The platform commands are checked through the pure planBrowserOpen and, on Unix, through a
 * fake `xdg-open`/`open` first on PATH.
 */
import { Effect } from "effect"
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import * as childProcess from "node:child_process"
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest"
import { openBrowser, planBrowserOpen, windowsUrlVariable, type OpenBrowserOptions } from "../src/browser.js"

vi.mock("node:child_process", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:child_process")>()
  return { ...actual, spawn: vi.fn(actual.spawn) }
})

const dir = mkdtempSync(path.join(tmpdir(), "phasebound-browser-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Writes {argv, pid} as JSON to $RECORD_TO (atomically), then stays alive $LINGER_MS if set. */
const recorder = path.join(dir, "recorder.mjs")
writeFileSync(
  recorder,
  `#!${process.execPath}
import { renameSync, writeFileSync } from "node:fs"
const to = process.env.RECORD_TO
writeFileSync(to + ".tmp", JSON.stringify({ argv: process.argv.slice(2), pid: process.pid }))
renameSync(to + ".tmp", to)
const linger = Number(process.env.LINGER_MS ?? 0)
if (linger > 0) setTimeout(() => {}, linger)
`
)
chmodSync(recorder, 0o755)

// xdg-open and open that are the recorder, for a PATH of their own.
const fakeBin = path.join(dir, "bin")
mkdirSync(fakeBin)
for (const name of ["xdg-open", "open"]) {
  copyFileSync(recorder, path.join(fakeBin, name))
  chmodSync(path.join(fakeBin, name), 0o755)
}

let counter = 0
const recordFile = () => path.join(dir, `record-${++counter}.json`)

const baseEnv = (): Record<string, string> => ({ PATH: process.env["PATH"] ?? "/usr/bin:/bin" })

interface Recorded {
  readonly argv: ReadonlyArray<string>
  readonly pid: number
}

/** Waits for the recorder's file (the spawn resolves before the script has run). */
const readRecord = async (file: string, withinMs = 5_000): Promise<Recorded> => {
  const deadline = Date.now() + withinMs
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error("the opener never recorded")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return JSON.parse(readFileSync(file, "utf8")) as Recorded
}

/**
 * Nothing was spawned: openBrowser calls `spawn` before it resolves, so at its answer the spy's
 * count is final (no waiting); the recorder's file, which only a run of it writes, is absent too.
 */
const expectNoRecord = (file: string) => {
  expect(spawned.mock.calls).toEqual([])
  expect(existsSync(file)).toBe(false)
}

// The real spawn, counted: every test starts from no call.
const spawned = vi.mocked(childProcess.spawn)
beforeEach(() => {
  spawned.mockClear()
})

const open = (url: string, options: OpenBrowserOptions) => Effect.runPromise(openBrowser(url, options))

const posix = process.platform !== "win32"

const awkwardUrls = (pwned: string): ReadonlyArray<string> => [
  "https://as.example/authorize?response_type=code&client_id=abc&state=x;y",
  `https://as.example/authorize?a=$(touch ${pwned})&b=\`touch ${pwned}\``,
  `https://as.example/authorize?q=it's "quoted" & spaced; $HOME | cat > ${pwned}`,
  "https://as.example/a b/c?x=%PATH%&y=^&z=!x!&w=(1)<2>",
  "http://127.0.0.1:8080/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%3A5555%2Fcallback&scope=a+b"
]

describe.runIf(posix)("the opener override", () => {
  it("PHASEBOUND_BROWSER receives exactly the URL as one argv element, no shell involved", async () => {
    const pwned = path.join(dir, "pwned")
    for (const url of awkwardUrls(pwned)) {
      const file = recordFile()
      const launched = await open(url, { env: { ...baseEnv(), PHASEBOUND_BROWSER: recorder, RECORD_TO: file } })
      expect(launched).toBe(true)
      expect((await readRecord(file)).argv).toEqual([url])
    }
    expect(existsSync(pwned)).toBe(false)
  })

  it("the opener option beats PHASEBOUND_BROWSER, and bypasses the display check", async () => {
    const file = recordFile()
    const url = "https://as.example/authorize?x=1&y=2"
    const launched = await open(url, {
      opener: recorder,
      platform: "linux",
      env: { ...baseEnv(), PHASEBOUND_BROWSER: "/nonexistent/opener", RECORD_TO: file }
    })
    expect(launched).toBe(true)
    expect((await readRecord(file)).argv).toEqual([url])
  })

  it("resolves at the spawn, without waiting for the opener to exit", async () => {
    const file = recordFile()
    const started = Date.now()
    const launched = await open("https://as.example/authorize", {
      env: { ...baseEnv(), PHASEBOUND_BROWSER: recorder, RECORD_TO: file, LINGER_MS: "30000" }
    })
    expect(launched).toBe(true)
    expect(Date.now() - started).toBeLessThan(1_000)
    // The opener is still running (it lingers), detached from this process.
    const { pid } = await readRecord(file)
    try {
      expect(() => process.kill(pid, 0)).not.toThrow()
    } finally {
      // The lingering recorder this test started, by its own pid.
      process.kill(pid)
    }
  })

  it("a missing opener is false, not a failure", async () => {
    expect(await open("https://as.example/", { env: { ...baseEnv(), PHASEBOUND_BROWSER: path.join(dir, "no-such-opener") } })).toBe(false)
    expect(await open("https://as.example/", { env: { PATH: dir, PHASEBOUND_BROWSER: "no-such-opener-on-path" } })).toBe(false)
  })

  it("an opener that is not executable is false", async () => {
    const file = path.join(dir, "not-executable")
    writeFileSync(file, "#!/bin/sh\n")
    chmodSync(file, 0o644)
    expect(await open("https://as.example/", { env: { ...baseEnv(), PHASEBOUND_BROWSER: file } })).toBe(false)
  })
})

describe.runIf(posix)("nothing spawned", () => {
  it("PHASEBOUND_NO_BROWSER=1: false, the opener never runs", async () => {
    const file = recordFile()
    const env = { ...baseEnv(), PHASEBOUND_NO_BROWSER: "1", PHASEBOUND_BROWSER: recorder, RECORD_TO: file }
    expect(await open("https://as.example/", { env })).toBe(false)
    expect(await open("https://as.example/", { env, opener: recorder })).toBe(false)
    expectNoRecord(file)
  })

  it("PHASEBOUND_NO_BROWSER empty or 0 does not disable", async () => {
    for (const value of ["", "0"]) {
      const file = recordFile()
      expect(await open("https://as.example/", { env: { ...baseEnv(), PHASEBOUND_NO_BROWSER: value, PHASEBOUND_BROWSER: recorder, RECORD_TO: file } })).toBe(
        true
      )
      await readRecord(file)
    }
  })

  it("a URL that is not plain http(s) is false: file:, javascript:, options, control characters", async () => {
    const file = recordFile()
    for (
      const url of [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "vscode://x/y",
        "-a Calculator",
        " https://as.example/",
        "https://as.example/\nhttps://evil.example/",
        "https://as.example/\u0000",
        "https://",
        "not a url"
      ]
    ) {
      expect(await open(url, { env: { ...baseEnv(), PHASEBOUND_BROWSER: recorder, RECORD_TO: file } }), url).toBe(false)
    }
    expectNoRecord(file)
  })
})

describe.runIf(posix)("the platform opener (a fake one first on PATH)", () => {
  const url = "https://as.example/authorize?a=1&b=$(id)"

  it("linux with a display: xdg-open <url>", async () => {
    for (const display of [{ DISPLAY: ":0" }, { WAYLAND_DISPLAY: "wayland-0" }]) {
      const file = recordFile()
      expect(await open(url, { platform: "linux", env: { PATH: fakeBin, RECORD_TO: file, ...display } })).toBe(true)
      expect((await readRecord(file)).argv).toEqual([url])
    }
  })

  it("linux without DISPLAY or WAYLAND_DISPLAY: false, xdg-open never runs", async () => {
    const file = recordFile()
    expect(await open(url, { platform: "linux", env: { PATH: fakeBin, RECORD_TO: file, DISPLAY: "", WAYLAND_DISPLAY: "" } })).toBe(false)
    expect(await open(url, { platform: "freebsd", env: { PATH: fakeBin, RECORD_TO: file } })).toBe(false)
    expectNoRecord(file)
  })

  it("macOS: open <url>, no display needed", async () => {
    const file = recordFile()
    expect(await open(url, { platform: "darwin", env: { PATH: fakeBin, RECORD_TO: file } })).toBe(true)
    expect((await readRecord(file)).argv).toEqual([url])
  })

  it("no opener on PATH: false", async () => {
    expect(await open(url, { platform: "linux", env: { PATH: dir, DISPLAY: ":0" } })).toBe(false)
  })
})

describe("planBrowserOpen", () => {
  it("windows: cmd.exe start with the URL in an environment variable, never on the command line", () => {
    const raw = "https://as.example/a b/c?x=%PATH%&y=^&z=!x!&w=(1)<2>\"q\"|more"
    const plan = planBrowserOpen(raw, { platform: "win32", env: { Path: "C:\\Windows\\System32" } })
    expect(plan).toEqual({
      _tag: "Spawn",
      command: "cmd.exe",
      args: ["/d", "/v:off", "/s", "/c", `"start "" "%${windowsUrlVariable}%""`],
      env: { Path: "C:\\Windows\\System32", [windowsUrlVariable]: new URL(raw).href },
      windowsVerbatimArguments: true
    })
    if (plan._tag !== "Spawn") throw new Error("unreachable")
    // The command line holds nothing of the URL; the variable holds no double quote.
    expect(plan.args.join(" ")).not.toContain("as.example")
    expect(plan.env[windowsUrlVariable]).not.toContain("\"")
  })

  it("windows with an override: the override, argv-quoted by Node (not verbatim)", () => {
    expect(planBrowserOpen("https://as.example/?a=1&b=2", { platform: "win32", env: { PHASEBOUND_BROWSER: "C:\\b\\open.exe" } })).toMatchObject({
      _tag: "Spawn",
      command: "C:\\b\\open.exe",
      args: ["https://as.example/?a=1&b=2"],
      windowsVerbatimArguments: false
    })
  })

  it("the reasons for not opening", () => {
    expect(planBrowserOpen("https://as.example/", { platform: "darwin", env: { PHASEBOUND_NO_BROWSER: "1" } })).toEqual({ _tag: "Skip", reason: "disabled" })
    expect(planBrowserOpen("https://as.example/", { platform: "darwin", env: { PHASEBOUND_NO_BROWSER: "true" } })).toEqual({ _tag: "Skip", reason: "disabled" })
    expect(planBrowserOpen("file:///x", { platform: "darwin", env: {} })).toEqual({ _tag: "Skip", reason: "invalid-url" })
    expect(planBrowserOpen("https://as.example/", { platform: "linux", env: {} })).toEqual({ _tag: "Skip", reason: "no-display" })
    expect(planBrowserOpen("https://as.example/", { platform: "linux", env: { DISPLAY: ":1" } })).toMatchObject({
      _tag: "Spawn",
      command: "xdg-open",
      args: ["https://as.example/"]
    })
  })
})
