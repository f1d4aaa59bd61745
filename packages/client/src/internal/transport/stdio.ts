/**
 * The stdio transport: a child process owned by the connection's scope, speaking
 * newline-delimited JSON-RPC on stdin and stdout.
 *
 * stdout is a shared stream: each line is bounded by the largest ceiling among
 * `unsolicited.maxBytes` and the pending requests, counted in raw bytes including its `\n`.
 * A line that passes the bound aborts the session (the child is released and every pending
 * request fails with `ByteCeilingExceeded`); a complete line answering a request but over that
 * request's own ceiling fails that request only. A line that is not JSON at all is dropped and
 * counted (servers that print banners to stdout are common); JSON that is not a JSON-RPC
 * message, or invalid UTF-8, is a `ProtocolViolation` for every pending request.
 *
 * stderr is the server's log, not an error signal: by default it is always drained (an unread
 * pipe would block the child) and its last 64 KiB are kept in process (`logTail`), never in an
 * error. The `stderr` option changes that: passed to this process's own stderr (`inherit`), or
 * drained and discarded (`drop`); `onSpawn` hands the kept tail to a caller that wants to show it
 * after a failed start (the CLI does, on a terminal).
 *
 * Release is bounded at every step: stdin closed, a wait, SIGTERM, a wait, SIGKILL, reaped.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { McpConnectionError, Outcome } from "../../McpConnectionError.js"
import * as Failures from "../failures.js"
import { decodeLines, type Line } from "../lineDecoder.js"
import * as Messages from "../messages.js"
import * as SharedStream from "../sharedStream.js"
import type { Exchange, Inbound, Transport } from "./transport.js"

/**
 * What to run. No shell is involved: `command` is executed with `args` as given.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerCommand {
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  /** Added to the small safe environment the child gets from this process (docs/GUIDE.md, "stdio"). */
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly cwd?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends ServerCommand {
  readonly secrets: ReadonlyArray<string>
  /** Bound of each release step (stdin close, SIGTERM, SIGKILL) and of cancellation notices. */
  readonly releaseTimeoutMs: number
  readonly unsolicitedMaxBytes: number
  /** What becomes of the child's stderr (default `{ mode: "tail" }`). */
  readonly stderr?: StderrHandling | undefined
  /** Answers the server's requests. */
  readonly inbound: Inbound
}

/**
 * The variables a child inherits from this process, when set: enough to find programs and a
 * home, nothing else (no tokens, no proxies, no cloud credentials). Callers add what their
 * server needs with `env`.
 *
 * @since 0.1.0
 * @category constants
 */
export const inheritedVariables: ReadonlyArray<string> = process.platform === "win32"
  ? [
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
    "WINDIR"
  ]
  : ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG"]

/**
 * The child's environment: the inherited safe set plus the caller's variables.
 *
 * @since 0.1.0
 * @category constructors
 */
export const safeEnvironment = (extra: Readonly<Record<string, string>> = {}): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const name of inheritedVariables) {
    const value = process.env[name]
    if (value !== undefined) env[name] = value
  }
  return { ...env, ...extra }
}

/** How much of the child's stderr is kept for diagnostics. */
const logTailBytes = 64 * 1024

/**
 * What becomes of a child's stderr: `tail` (the default) drains it and keeps its last 64 KiB
 * (`logTail`); `inherit` passes it to this process's own stderr (nothing is kept); `drop` drains
 * it and keeps nothing.
 *
 * @since 0.1.0
 * @category models
 */
export type StderrMode = "tail" | "inherit" | "drop"

/**
 * @since 0.1.0
 * @category models
 */
export interface StderrHandling {
  readonly mode: StderrMode
  /**
   * Called when a child is spawned with the reader of its kept tail (empty unless the mode is
   * `tail`), which stays readable after the child is released: a caller can show it when the
   * connection failed (redacted and bounded by the caller; the library never puts it in an error).
   */
  readonly onSpawn?: ((tail: Effect.Effect<string>) => void) | undefined
}

/** The last bytes of a stream, kept in a bounded buffer. */
const makeTail = (limit: number) => {
  let chunks: Array<Uint8Array> = []
  let size = 0
  return {
    push: (chunk: Uint8Array) => {
      chunks.push(chunk)
      size += chunk.length
      while (size - chunks[0]!.length >= limit) size -= chunks.shift()!.length
    },
    text: () => {
      const joined = new Uint8Array(size)
      let offset = 0
      for (const chunk of chunks) {
        joined.set(chunk, offset)
        offset += chunk.length
      }
      const start = Math.max(0, size - limit)
      chunks = [joined]
      return new TextDecoder().decode(joined.subarray(start))
    }
  }
}

/**
 * Spawns the server and wires its pipes. `readiness` describes the spawn step for errors
 * (stage `connect`); the caller bounds it with the discovery deadline.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options,
  readiness: Exchange
): Effect.Effect<Transport, McpConnectionError, CommandExecutor.CommandExecutor | Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    // The child lives in a scope of its own, closed the moment the session is given up.
    const processScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
    const stdinQueue = yield* Queue.unbounded<Uint8Array>()
    const stderrHandling = options.stderr ?? { mode: "tail" }
    const tail = makeTail(logTailBytes)
    const encoder = new TextEncoder()

    const send = (message: unknown) => Queue.offer(stdinQueue, encoder.encode(`${JSON.stringify(message)}\n`))
    const stream = SharedStream.make({
      unsolicitedMaxBytes: options.unsolicitedMaxBytes,
      secrets: options.secrets,
      inbound: options.inbound,
      streamExchange: readiness,
      notice: (message) => Effect.asVoid(send(message))
    })

    const command = Command.make(options.command, ...(options.args ?? [])).pipe(
      Command.env(safeEnvironment(options.env), { extendEnv: false }),
      (c) => (options.cwd === undefined ? c : Command.workingDirectory(c, options.cwd)),
      Command.stdin("pipe"),
      Command.stdout("pipe"),
      Command.stderr(stderrHandling.mode === "inherit" ? "inherit" : "pipe")
    )
    const child = yield* Command.start(command).pipe(
      Scope.extend(processScope),
      // The platform error names the command and its path: it stays in the cause only.
      Effect.mapError((cause) => Failures.transport(readiness, "spawn-failed", "not-sent", {}, cause))
    )
    const exited = yield* Deferred.make<number | undefined>()
    /** Completed when the stdout reader has stopped (EOF, a refused line, a failure). */
    const stdoutDone = yield* Deferred.make<void>()

    const outcomeOf = (exchange: Exchange): Outcome => (exchange.stage === "connect" ? "not-sent" : "unknown")

    /**
     * Releases the child once. The release runs in a daemon fiber: started from one of the
     * session's own fibers (a refused line, an exit), it must not be cut short when the
     * connection closes meanwhile; the connection's finalizer joins it instead. It is bounded
     * by the shutdown's steps.
     */
    let releasing: Fiber.RuntimeFiber<void> | undefined
    const releaseInBackground = Effect.suspend(() =>
      releasing !== undefined
        ? Effect.void
        : Effect.map(Effect.forkDaemon(Scope.close(processScope, Exit.void)), (fiber) => {
          releasing = fiber
        })
    )
    const release = Effect.zipRight(releaseInBackground, Effect.suspend(() => Fiber.join(releasing!)))

    /** Gives up the session from one of its own fibers: the child is released in the background. */
    const terminate = (termination: SharedStream.Termination) => Effect.zipRight(stream.terminate(termination), releaseInBackground)

    const onLine = (line: Line): Effect.Effect<void> => {
      const text = line.text.trim()
      if (text === "") return Effect.void
      // A line that is not JSON at all (a banner, a stray log line) is dropped and counted: the
      // documented exception. A line that starts like a JSON object or array is a message,
      // and if it does not parse, a ProtocolViolation like any other bad message.
      if (!text.startsWith("{") && !text.startsWith("[")) return Effect.sync(stream.drop)
      return Effect.zipRight(
        stream.dispatch(line.text, line.bytes),
        // A bad message gave up the session: release the child too.
        Effect.suspend(() => (stream.isTerminated() ? releaseInBackground : Effect.void))
      )
    }

    // stdin: one writer, fed by a queue; shutting the queue down ends the child's stdin.
    // A write failure (the child closed stdin) is reported by the exit; a defect fails what waits.
    const writer = yield* Stream.fromQueue(stdinQueue).pipe(
      Stream.run(child.stdin),
      Effect.ignore,
      Effect.catchAllDefect((defect) => terminate((exchange) => Failures.internal(exchange, outcomeOf(exchange), defect))),
      Effect.interruptible,
      Effect.forkIn(processScope)
    )
    // stderr: drained (unless it is this process's own), the tail kept in `tail` mode.
    /** Completed when the stderr reader has stopped (at once when stderr is inherited). */
    const stderrDone = yield* Deferred.make<void>()
    if (stderrHandling.mode === "inherit") yield* Deferred.succeed(stderrDone, undefined)
    else {
      const keep = stderrHandling.mode === "tail"
      yield* Stream.runForEach(child.stderr, (chunk) =>
        Effect.sync(() => {
          if (keep) tail.push(chunk)
        })).pipe(
          Effect.ignore,
          Effect.ensuring(Deferred.succeed(stderrDone, undefined)),
          Effect.interruptible,
          Effect.forkIn(processScope)
        )
    }
    const logTail = Effect.sync(() => tail.text())
    stderrHandling.onSpawn?.(logTail)
    // The exit: fails everything still waiting, at once. The platform failing to report the
    // exit code is still an exit (without a code); a defect fails the waiting requests as one.
    // What the child wrote before it exited is read first (at most one release step: a
    // grandchild may hold stdout open), so an answer written just before the exit is not lost
    // to it, and an answer cut by the exit fails as the cut line it is; its last stderr lines
    // are in the tail too.
    const stdoutDrained = Effect.zipRight(Deferred.await(stdoutDone), Deferred.await(stderrDone)).pipe(
      Effect.timeoutOption(Duration.millis(options.releaseTimeoutMs))
    )
    const exitedWith = (code: number | undefined) =>
      Effect.zipRight(
        Effect.zipRight(Deferred.succeed(exited, code), stdoutDrained),
        terminate((exchange) => Failures.transport(exchange, "process-exited", outcomeOf(exchange), code === undefined ? {} : { exitCode: code }))
      )
    yield* child.exitCode.pipe(
      Effect.matchCauseEffect({
        onSuccess: (code) => exitedWith(code),
        onFailure: (cause) => {
          if (Cause.isInterruptedOnly(cause)) return Effect.void
          if (Cause.isFailure(cause)) return exitedWith(undefined)
          return Effect.zipRight(
            Deferred.succeed(exited, undefined),
            terminate((exchange) => Failures.internal(exchange, outcomeOf(exchange), cause))
          )
        }
      }),
      Effect.interruptible,
      Effect.forkIn(scope)
    )
    // stdout: the shared stream of messages.
    yield* decodeLines(child.stdout, { maxLineBytes: stream.frameBound }).pipe(
      Stream.runForEach(onLine),
      Effect.matchCauseEffect({
        onSuccess: () => Effect.void, // EOF: the exit watcher reports the exit itself
        onFailure: (cause) => {
          const termination = SharedStream.readerStopped(cause, {
            onFailure: (exchange) => Failures.transport(exchange, "stream-ended", outcomeOf(exchange)),
            // Interrupted: the child is being released, which fails what still waits.
            onInterrupt: undefined,
            outcome: outcomeOf
          })
          return termination === undefined ? Effect.void : terminate(termination)
        }
      }),
      Effect.ensuring(Deferred.succeed(stdoutDone, undefined)),
      Effect.interruptible,
      Effect.forkIn(processScope)
    )
    const releaseTimeout = Duration.millis(options.releaseTimeoutMs)
    /** Waits for `effect` at most one release step (interruptible, as finalizers are not). */
    const step = <A, E>(effect: Effect.Effect<A, E>) => effect.pipe(Effect.ignore, Effect.interruptible, Effect.timeoutOption(releaseTimeout))
    /** Bounded shutdown: stdin EOF, wait, SIGTERM, wait, SIGKILL, wait. Never unbounded. */
    const shutdown = Effect.gen(function*() {
      yield* Queue.shutdown(stdinQueue)
      yield* step(Fiber.await(writer))
      if ((yield* step(Deferred.await(exited)))._tag === "Some") return
      yield* step(child.kill("SIGTERM"))
      if (yield* Deferred.isDone(exited)) return
      yield* step(child.kill("SIGKILL"))
    })
    // Added after the pipes' fibers and the executor's own finalizer, so it runs first: the
    // pipes stay open while the child winds down, and the executor finds the child gone (its
    // own release waits on SIGTERM without a bound).
    yield* Scope.addFinalizer(processScope, shutdown)
    // Closing the connection: whatever still waits fails as closed, then the child is released.
    yield* Scope.addFinalizer(
      scope,
      stream.terminate((exchange) => Failures.transport(exchange, "session-closed", outcomeOf(exchange))).pipe(
        Effect.zipRight(release)
      )
    )

    return {
      kind: "stdio",
      // The child is the session (the connection's scope releases it), and stdout is already the
      // stream of the server's messages: no session to end, nothing to listen to.
      capabilities: { messageHeaders: false, cancelsByClosing: false, mayIgnoreUnknownRequests: true, forgetfulSessions: false },
      request: (request, exchange) => stream.request(request, exchange, (message) => Effect.asVoid(send(message))),
      notify: (notification, exchange) =>
        stream.isTerminated()
          ? Effect.fail(Failures.transport(exchange, "stream-ended", "not-sent"))
          : Effect.asVoid(send(Messages.envelope(notification))),
      // Replies and notices are lines queued for stdin: nothing runs in the background.
      diagnostics: Effect.sync(() => stream.diagnostics(0)),
      logTail
    } satisfies Transport
  })
