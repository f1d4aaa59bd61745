/**
 * The scope each `McpServers` service lives in (closing it releases every connection), for what
 * runs in the background on the servers' behalf and must end with them: a catalog's retry of a
 * server that failed (docs/DESIGN.md, "Catalog").
 */
import type * as Scope from "effect/Scope"

const scopes = new WeakMap<object, Scope.Scope>()

export const register = (service: object, scope: Scope.Scope): void => {
  scopes.set(service, scope)
}

/** The service's scope; `undefined` for a service not made by `McpServers.make`. */
export const scopeOf = (service: object): Scope.Scope | undefined => scopes.get(service)
