/**
 * Where the search order looks (`ConfigImport.searchOrder`), its defaults filled in once for
 * every reader of it: the project's directory, the environment, the platform, and the home
 * directory they name (`USERPROFILE` on Windows, else `HOME`).
 */

/** The current directory: `process.cwd()`, or `.` where there is no process. */
export const currentDirectory = (): string => typeof process === "object" && typeof process.cwd === "function" ? process.cwd() : "."

/** The search's place, each option given or its default. */
export interface Place {
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  readonly platform: string
  readonly home: string | undefined
}

/** `cwd` (else the current directory), `env` (else `process.env`), `platform` (else `process.platform`), and the home they name. */
export const placeOf = (options: {
  readonly cwd?: string | undefined
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly platform?: string | undefined
}): Place => {
  const env = options.env ?? (typeof process === "object" ? process.env : {})
  const platform = options.platform ?? (typeof process === "object" ? process.platform : "linux")
  return { cwd: options.cwd ?? currentDirectory(), env, platform, home: platform === "win32" ? env["USERPROFILE"] : env["HOME"] }
}
