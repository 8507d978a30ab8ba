import { errors, type KoaContextWithOIDC } from "oidc-provider";
import { SCOPES } from "./provider.js";

/** oidc-provider's refusal of a grant the client did not register (token endpoint, device authorization). */
const GRANT_NOT_ALLOWED = /^(requested grant type|urn:ietf:params:oauth:grant-type:device_code) is not allowed for this client$/;

/**
 * The back-channel errors RFC 6749 §5.2 names, where oidc-provider answers otherwise. Called once the
 * provider has built its answer and before anything is settled (a held client-credentials token is
 * then dropped, token-issuance.ts); returns the error that now stands, if it changed.
 *
 * - A grant the client is not registered for is `unauthorized_client` ("not authorized to use this
 *   authorization grant type"), not `invalid_request` (the request itself is well formed). The
 *   device authorization endpoint takes the same errors (RFC 8628 §3.2).
 * - Unknown scopes at the token endpoint are `invalid_scope` for every grant that takes a scope
 *   there: oidc-provider already refuses a refresh asking for a scope the grant lacks, unknown ones
 *   included, but issued client-credentials tokens for "foo" (granting nothing, and saying nothing
 *   about it, where §5.1 asks for the granted scope). The code and device grants take no scope at
 *   the token endpoint: their scopes come with the authorization request, which ignores unknown
 *   ones (OpenID Connect Core §3.1.2.1), and their token responses name the scope granted.
 */
export function conformTokenErrors(ctx: KoaContextWithOIDC, error: errors.OIDCProviderError | undefined): errors.OIDCProviderError | undefined {
  const { route, params } = ctx.oidc;
  if (route !== "token" && route !== "device_authorization") return undefined;
  if (error?.error === "invalid_request" && GRANT_NOT_ALLOWED.test(error.error_description ?? "")) {
    return refuse(ctx, new errors.UnauthorizedClient(route === "token" ? "the client is not registered for this grant type" : "the client is not registered for the device authorization grant"));
  }
  if (error || ctx.status !== 200 || route !== "token" || params?.grant_type !== "client_credentials") return undefined;
  // As the client sent it: the provider drops scopes it does not know from params.scope itself.
  const requested = (ctx.oidc.body as Record<string, unknown> | undefined)?.scope;
  const unknown = (typeof requested === "string" ? requested : "").split(" ").filter((s) => s !== "" && !SCOPES.includes(s));
  if (unknown.length === 0) return undefined;
  return refuse(ctx, new errors.InvalidScope("requested scope is not supported", unknown.join(" ")));
}

function refuse(ctx: KoaContextWithOIDC, err: errors.OIDCProviderError & { scope?: string }): errors.OIDCProviderError {
  ctx.status = err.statusCode;
  ctx.body = { error: err.error, error_description: err.error_description, ...(err.scope ? { scope: err.scope } : {}) };
  return err;
}
