/**
 * Canary secrets: values a connection carries (headers, URL userinfo and query, a child's
 * environment) that must reach the server they were given for and never appear in any public
 * view of a failure, an observation or a span.
 */
export const CANARIES = {
  header: "CANARY-HEADER-7f3a9c",
  user: "canaryuser8b2d",
  password: "CANARY-PASS-41e6",
  query: "CANARY-QUERY-d09b",
  env: "CANARY-ENV-5c1e"
} as const

/** The URL with the canaries in its userinfo and query. */
export const withCanaries = (url: string): string => {
  const u = new URL(url)
  u.username = CANARIES.user
  u.password = CANARIES.password
  u.searchParams.set("token", CANARIES.query)
  return u.href
}

export const CANARY_HEADERS: Readonly<Record<string, string>> = {
  Authorization: `Bearer ${CANARIES.header}`,
  "X-Api-Key": CANARIES.header
}

export const CANARY_ENV: Readonly<Record<string, string>> = { PHASEBOUND_CANARY_TOKEN: CANARIES.env }

/** A refusal message and data that echo every canary, the URL and the header names back. */
export const echoingRefusal = (url: string) => ({
  code: -32000,
  message: `denied for Bearer ${CANARIES.header} (x-api-key ${CANARIES.header}) at ${withCanaries(url)} env ${CANARIES.env}`,
  data: { authorization: `Bearer ${CANARIES.header}`, url: withCanaries(url), env: CANARIES.env }
})

/**
 * A public view without the error family's own words for the authorization phase: the phase
 * and the step named `authorization`, the `authorizationStep` field, the `AuthorizationFailed`
 * tag and its summary. They are the vocabulary of the record, not the header of that name, which
 * `FORBIDDEN` keeps looking for everywhere else in the view.
 */
export const withoutPublicVocabulary = (view: string): string =>
  view
    .replace(/"(?:phase|authorizationStep)":"authorization"/g, "")
    .replace(/"authorizationStep"/g, "")
    .replace(/AuthorizationFailed|authorization failed|phase authorization|authorization step( authorization)?/g, "")
    .replace(/(^|\s)"authorization"(?=\s|$)/g, "$1")

/** What no public view may contain: the canaries, the URL's parts and header names. */
export const FORBIDDEN: ReadonlyArray<string> = [
  ...Object.values(CANARIES),
  "127.0.0.1",
  "http://",
  "/mcp",
  "/sse",
  "/messages",
  "authorization",
  "x-api-key",
  "Bearer",
  "PHASEBOUND_CANARY_TOKEN"
]
