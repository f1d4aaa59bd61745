/**
 * Opening the authorization URL in the user's browser: best effort, never fails, never prints.
 * The caller prints the URL itself in every case; `openBrowser` only says whether an opener was
 * launched (`true`) or not (`false`).
 *
 * Decisions, in order:
 *
 * 1. `PHASEBOUND_NO_BROWSER` set to anything but `""` or `"0"`: `false`, nothing spawned.
 * 2. The URL must be an absolute `http:` or `https:` URL with no control characters, starting
 *    with the scheme itself (no leading blank or `-`): anything else is `false`, nothing
 *    spawned. An authorization endpoint comes from server metadata, so `file:`, `javascript:`
 *    or an application scheme must never reach the platform opener.
 * 3. The opener override: the `opener` option, else `PHASEBOUND_BROWSER` (non-empty). It is one
 *    executable (a path, or a name looked up on PATH; no arguments, no shell) run as
 *    `<opener> <url>`, the URL one argv element exactly as given. It bypasses the display check
 *    below, on every platform. It lets a user pick a browser or a wrapper, and lets tests record
 *    what would be opened. (On Windows it must be a real executable: Node refuses to spawn a
 *    `.cmd`/`.bat` without a shell.)
 * 4. The platform opener:
 *    - macOS: `open <url>`;
 *    - Windows: `cmd.exe /d /v:off /s /c "start "" "%PHASEBOUND_OPEN_URL%""` with the URL in the
 *      child's environment variable `PHASEBOUND_OPEN_URL` (the normalised `URL.href`, which never
 *      holds a `"`). cmd expands `%…%` once, so nothing inside the URL (`%VAR%`, `&`, `|`, `^`,
 *      `(`, `)`) is expanded or parsed as syntax: it sits inside double quotes after expansion;
 *    - Linux and the other Unixes: `xdg-open <url>`, but only with a display: when neither
 *      `DISPLAY` nor `WAYLAND_DISPLAY` is set (an SSH session, a container, CI) it is `false`
 *      and nothing is spawned, so a headless machine does not start a text-mode browser on the
 *      terminal the CLI is using.
 *
 * The opener runs detached (its own process group, so Ctrl-C on the CLI does not reach it), with
 * stdio ignored (it can print nothing on the CLI's terminal) and unref'd (the CLI never waits
 * for it). `openBrowser` waits only for the `spawn` event (`true`) or an `error` event such as
 * ENOENT or EACCES (`false`), at most `spawnTimeoutMs` (1 s by default; `false` when neither came).
 * It never waits for the opener or the browser to exit, and an opener that fails later (xdg-open
 * with no handler) still counts as `true`: the URL is printed anyway.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"

export interface OpenBrowserOptions {
  /** The opener override (see the module comment); takes precedence over `PHASEBOUND_BROWSER`. */
  readonly opener?: string | undefined
  /** The environment read for the switches and given to the opener; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** Default `process.platform`. */
  readonly platform?: NodeJS.Platform | undefined
  /** How long to wait for the spawn or its error; default 1000 ms. */
  readonly spawnTimeoutMs?: number | undefined
}

/** Why no opener is launched. */
export type BrowserSkipReason = "disabled" | "invalid-url" | "no-display"

/** What `openBrowser` would do: launch a command, or skip with a reason. */
export type BrowserPlan =
  | { readonly _tag: "Skip"; readonly reason: BrowserSkipReason }
  | {
    readonly _tag: "Spawn"
    readonly command: string
    readonly args: ReadonlyArray<string>
    /** The environment of the opener. */
    readonly env: Readonly<Record<string, string | undefined>>
    /** Windows only: the arguments are the command line as written (see the module comment). */
    readonly windowsVerbatimArguments: boolean
  }

/** The environment variable carrying the URL to `cmd.exe` on Windows. */
export const windowsUrlVariable = "PHASEBOUND_OPEN_URL"

const skip = (reason: BrowserSkipReason): BrowserPlan => ({ _tag: "Skip", reason })

const isSet = (value: string | undefined): boolean => value !== undefined && value !== ""

/** The normalised URL when `url` is one `openBrowser` may open, else undefined. */
const checkedUrl = (url: string): URL | undefined => {
  // eslint-disable-next-line no-control-regex -- a URL with a C0 control character or DEL is refused
  if (!/^https?:\/\//i.test(url) || /[\u0000-\u001f\u007f]/.test(url)) return undefined
  try {
    const parsed = new URL(url)
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed : undefined
  } catch {
    return undefined
  }
}

/** What `openBrowser(url, options)` would do, without doing it. Pure. */
export const planBrowserOpen = (url: string, options: OpenBrowserOptions = {}): BrowserPlan => {
  const env = options.env ?? process.env
  const platform = options.platform ?? process.platform
  const disabled = env["PHASEBOUND_NO_BROWSER"]
  if (isSet(disabled) && disabled !== "0") return skip("disabled")
  const parsed = checkedUrl(url)
  if (parsed === undefined) return skip("invalid-url")
  const override = isSet(options.opener) ? options.opener : env["PHASEBOUND_BROWSER"]
  if (override !== undefined && override !== "") {
    return { _tag: "Spawn", command: override, args: [url], env, windowsVerbatimArguments: false }
  }
  switch (platform) {
    case "darwin":
      return { _tag: "Spawn", command: "open", args: [url], env, windowsVerbatimArguments: false }
    case "win32":
      return {
        _tag: "Spawn",
        command: "cmd.exe",
        // Joined with spaces as written; /s strips the outer quotes of what follows /c.
        args: ["/d", "/v:off", "/s", "/c", `"start "" "%${windowsUrlVariable}%""`],
        env: { ...env, [windowsUrlVariable]: parsed.href },
        windowsVerbatimArguments: true
      }
    default:
      if (!isSet(env["DISPLAY"]) && !isSet(env["WAYLAND_DISPLAY"])) return skip("no-display")
      return { _tag: "Spawn", command: "xdg-open", args: [url], env, windowsVerbatimArguments: false }
  }
}

const launch = (plan: Extract<BrowserPlan, { _tag: "Spawn" }>): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    let settled = false
    const settle = (launched: boolean) => {
      if (settled) return
      settled = true
      resume(Effect.succeed(launched))
    }
    try {
      const child = spawn(plan.command, [...plan.args], {
        detached: true,
        stdio: "ignore",
        windowsHide: true,
        windowsVerbatimArguments: plan.windowsVerbatimArguments,
        env: plan.env as NodeJS.ProcessEnv
      })
      // Stays attached: a late error (after the timeout) must not be an uncaught exception.
      child.on("error", () => settle(false))
      child.once("spawn", () => settle(true))
      child.unref()
    } catch {
      // Some runtimes and platforms throw synchronously (EINVAL for a .cmd on Windows).
      settle(false)
    }
  })

/**
 * Opens `url` in the user's browser, best effort (see the module comment): `true` when an
 * opener was launched, `false` otherwise. Never fails, never prints.
 */
export const openBrowser = (url: string, options: OpenBrowserOptions = {}): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const plan = planBrowserOpen(url, options)
    if (plan._tag === "Skip") return Effect.succeed(false)
    return launch(plan).pipe(
      Effect.timeoutTo({
        duration: Duration.millis(options.spawnTimeoutMs ?? 1_000),
        onTimeout: () => false,
        onSuccess: (launched) => launched
      })
    )
  }).pipe(Effect.catchAllDefect(() => Effect.succeed(false)))
