/**
 * A throwaway PostgreSQL cluster for one test: `initdb` into a temp dir (trust auth), `pg_ctl
 * start` listening on 127.0.0.1 at a free port with its unix socket in the same dir, and a
 * `stop` that shuts it down and removes the dir. Missing binaries are an error, never a skip:
 * CI installs them (.ci/run).
 */
import { execFile, execFileSync } from "node:child_process"
import { existsSync, readdirSync, rmSync } from "node:fs"
import { chown, mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { promisify } from "node:util"
import { freePort } from "./freePort.js"

const run = promisify(execFile)

export interface Postgres {
  readonly host: "127.0.0.1"
  readonly port: number
  readonly database: "postgres"
  readonly username: "postgres"
  /** Stops the server (immediate shutdown) and removes its directory; safe to call twice. */
  readonly stop: () => Promise<void>
}

/** The directory holding `initdb` and `pg_ctl`: on PATH, else Debian's /usr/lib/postgresql/<major>/bin. */
export const findBinaries = (): string => {
  const onPath = (process.env["PATH"] ?? "").split(delimiter).find((dir) => dir !== "" && existsSync(join(dir, "initdb")))
  if (onPath !== undefined && existsSync(join(onPath, "pg_ctl"))) return onPath
  const debian = "/usr/lib/postgresql"
  const majors = existsSync(debian) ? readdirSync(debian).sort((a, b) => Number(b) - Number(a)) : []
  const bin = majors.map((major) => join(debian, major, "bin")).find((dir) => existsSync(join(dir, "initdb")))
  if (bin === undefined) {
    throw new Error(
      "PostgreSQL binaries (initdb, pg_ctl) not found on PATH nor in /usr/lib/postgresql/*/bin: install the Debian package postgresql"
    )
  }
  return bin
}

/** initdb and postgres refuse to run as root: as root, they run as the postgres user (else nobody). */
const unprivileged = async (): Promise<{ readonly uid: number; readonly gid: number } | undefined> => {
  if (process.getuid?.() !== 0) return undefined
  for (const user of ["postgres", "nobody"]) {
    try {
      const uid = Number((await run("id", ["-u", user])).stdout.trim())
      const gid = Number((await run("id", ["-g", user])).stdout.trim())
      return { uid, gid }
    } catch {
      continue
    }
  }
  throw new Error("running as root, and neither a postgres nor a nobody user to run PostgreSQL as")
}

export const startPostgres = async (): Promise<Postgres> => {
  const bin = findBinaries()
  const dir = await mkdtemp(join(tmpdir(), "phasebound-pg-"))
  const data = join(dir, "data")
  const log = join(dir, "server.log")
  const user = await unprivileged()
  const as = user === undefined ? {} : { uid: user.uid, gid: user.gid }
  if (user !== undefined) await chown(dir, user.uid, user.gid)
  const port = await freePort()

  const stopArgs = ["stop", "-D", data, "-m", "immediate", "-w", "-t", "30"]
  // If the test process exits without stopping it (a crash, a killed worker), the server must not outlive it.
  const onExit = () => {
    try {
      execFileSync(join(bin, "pg_ctl"), stopArgs, { ...as, stdio: "ignore" })
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true })
  }
  process.once("exit", onExit)
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    process.removeListener("exit", onExit)
    await run(join(bin, "pg_ctl"), stopArgs, as).catch(() => undefined)
    await rm(dir, { recursive: true, force: true })
  }

  try {
    await run(join(bin, "initdb"), ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"], as)
    // Durability of the test store itself is not under test: fsync off keeps it fast.
    const settings = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`
    await run(join(bin, "pg_ctl"), ["start", "-D", data, "-l", log, "-w", "-t", "60", "-o", settings], as)
  } catch (error) {
    const serverLog = await readFile(log, "utf8").catch(() => "")
    await stop()
    throw new Error(`PostgreSQL did not start: ${error instanceof Error ? error.message : String(error)}\n${serverLog}`, { cause: error })
  }
  return { host: "127.0.0.1", port, database: "postgres", username: "postgres", stop }
}
