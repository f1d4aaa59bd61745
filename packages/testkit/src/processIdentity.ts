/**
 * A process named by its pid AND its start time. A pid alone is not a name for long: the system
 * gives it to another process (or thread) once the pid space wraps, and a test run that spawns
 * thousands of processes and threads wraps it within minutes where `pid_max` is 32768. A check
 * like "no child outlives the run", made minutes after the pid was recorded, would otherwise
 * report (and a safety net would kill) a stranger that happens to hold the same pid.
 *
 * The start time is Linux's (field 22 of `/proc/<pid>/stat`, clock ticks since boot). Where
 * there is no `/proc`, an identity has no start time and the pid is all that is compared.
 */
import { readFileSync } from "node:fs"

export interface ProcessIdentity {
  readonly pid: number
  /** When the process started, where the system says (Linux); absent elsewhere. */
  readonly start?: string | undefined
}

/** The start time of `pid` (Linux `/proc`), or undefined where it cannot be read. */
export const processStart = (pid: number | "self"): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (field 2) is in parentheses and may hold spaces: count after its end.
    // Field 3 is the first after ") "; field 22 is the 20th.
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
    return start !== undefined && /^\d+$/.test(start) ? start : undefined
  } catch {
    return undefined
  }
}

/** `pid start` (or `pid` alone), as a process writes its own identity to a file. */
export const formatIdentity = (identity: ProcessIdentity): string => identity.start === undefined ? String(identity.pid) : `${identity.pid} ${identity.start}`

/** The identity in a file's text written by `formatIdentity`, or undefined. */
export const parseIdentity = (text: string | undefined): ProcessIdentity | undefined => {
  const [pidText, start] = (text ?? "").trim().split(/\s+/)
  const pid = Number(pidText)
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined
  return start !== undefined && /^\d+$/.test(start) ? { pid, start } : { pid }
}

/**
 * Whether the process is still running (or not yet reaped): its pid is live and, where the
 * identity has a start time, the process holding the pid now started then.
 */
export const isRunning = (identity: ProcessIdentity): boolean => {
  if (!isLive(identity.pid)) return false
  if (identity.start === undefined) return true
  const now = processStart(identity.pid)
  // Unreadable (gone between the two looks): live or not; only another start time is a stranger.
  return now === undefined ? isLive(identity.pid) : now === identity.start
}

/** Whether some process holds `pid` (`kill(pid, 0)`; EPERM: one we may not signal). */
const isLive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}
