/**
 * The tag of the secrets given with a server's options beside its headers and environment
 * (`McpConnection.ServerOptions.secrets`: a config file's server gives the values of its
 * `${VAR}`s and inputs). `McpConnection.connect` provides it to the connection it makes, which
 * redacts them from its peer's texts as it does every configured secret.
 */
import * as Context from "effect/Context"

/** Those values, in every form a peer could echo them (`secretValues`). */
export class GivenSecrets extends Context.Tag("@phasebound/client/internal/GivenSecrets")<GivenSecrets, ReadonlyArray<string>>() {}
