/**
 * What `call` (and every command that sends a request) leaves when the server refuses it until
 * the user completes URL elicitations (`UrlElicitationRequired`, packages/cli/README.md, "URL
 * elicitations"). The error record on stderr stays the record alone, without a URL, as every
 * record; what the user needs to go on is printed beside it:
 *
 * - machine mode: one JSON line on stdout, `{"urlElicitationRequired":{"elicitations":[...]}}`,
 *   each with `elicitationId`, `message`, `url`, `host` and `punycode`;
 * - human mode: lines after the record, on a terminal stderr only: each message, its whole URL
 *   and its host (flagged when written in punycode), and that the call may be run again once
 *   they are done.
 *
 * The CLI opens nothing itself (the spec forbids opening without the user's consent) and gives
 * no URL handler: a server request in URL mode is never declared, so never sent.
 */
import { McpConnectionError } from "@phasebound/client"
import type { UrlElicitation } from "@phasebound/client/ClientHandlers"
import * as Effect from "effect/Effect"
import type { RunContext } from "./runContext.js"

/** A server's text shown on a terminal: no control or invisible character (no escape sequence), cut. */
const shown = (text: string): string => {
  // eslint-disable-next-line no-control-regex -- a server's control characters never reach the terminal
  const visible = text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g, " ")
  return visible.length > 512 ? `${visible.slice(0, 512)}...` : visible
}

/** The JSON line of machine mode. */
export const machineLine = (elicitations: ReadonlyArray<UrlElicitation>): string =>
  `${
    JSON.stringify({
      urlElicitationRequired: {
        elicitations: elicitations.map(({ elicitationId, host, message, punycode, url }) => ({ elicitationId, message, url, host, punycode }))
      }
    })
  }\n`

/** The lines of human mode. */
export const humanLines = (elicitations: ReadonlyArray<UrlElicitation>): string => {
  const lines = [
    `the server asks you to open ${elicitations.length === 1 ? "this URL" : `these ${elicitations.length} URLs`} first, then to run the command again:`
  ]
  elicitations.forEach(({ host, message, punycode, url }, i) => {
    lines.push(`  ${i + 1}. ${shown(message)}`, `     ${url}`, `     host: ${host}${punycode ? " (punycode: the name may imitate another; check it)" : ""}`)
  })
  return lines.join("\n")
}

/**
 * Leaves what the user needs, when `error` is a refusal until URL elicitations are done: in
 * machine mode printed on stdout at once (a failed run's stdout is otherwise empty), in human
 * mode the hint the entry point prints after the record.
 */
export const leaveElicitations = (
  ctx: Pick<RunContext, "state" | "print">,
  machine: boolean,
  error: McpConnectionError.McpConnectionError
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const elicitations = McpConnectionError.urlElicitationsOf(error)
    if (elicitations.length === 0) return Effect.void
    if (machine) return ctx.print(machineLine(elicitations))
    ctx.state.hint = humanLines(elicitations)
    return Effect.void
  })
