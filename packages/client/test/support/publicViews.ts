/**
 * Every view of an error a user could print or log: what must never hold a secret. The cause is
 * included: the authorization modules keep none that holds one (the HTTP client's errors hold
 * the request's form and headers, and are not kept).
 */
import { McpConnectionError } from "../../src/index.js"

export const publicViews = (error: McpConnectionError.McpConnectionError): ReadonlyArray<string> => [
  String(error),
  error.message,
  JSON.stringify(error),
  JSON.stringify(McpConnectionError.toRecord(error)),
  JSON.stringify({ ...error }),
  JSON.stringify(error.cause ?? null),
  JSON.stringify({ ...(typeof error.cause === "object" && error.cause !== null ? error.cause : {}) })
]
