/**
 * The tag of a proxy's credentials (`HttpProxy.Secrets`), apart from the proxy client: a
 * connection reads it without loading the proxy code (and, through it, undici).
 */
import * as Context from "effect/Context"

/** The credentials of the proxies an `HttpClient` goes through, in every form a peer could echo them. */
export class Secrets extends Context.Tag("@phasebound/client/HttpProxy/Secrets")<Secrets, ReadonlyArray<string>>() {}
