import { apiResource } from "../lib/api-scopes.js";
import type { AppError } from "../lib/errors.js";

/**
 * Where the API's protected resource metadata lives (RFC 9728 §3.1): the well-known path inserted
 * between the host and the resource's path, so `<PUBLIC_URL>/api/v1` is described at
 * `<PUBLIC_URL>/.well-known/oauth-protected-resource/api/v1`. GraphQL takes the same tokens (their
 * audience is the API resource), so its challenges name the same document.
 */
export function protectedResourceMetadataUrl(publicUrl: string): string {
  const resource = new URL(apiResource(publicUrl));
  return `${resource.origin}/.well-known/oauth-protected-resource${resource.pathname}`;
}

/** An auth-param value as a quoted string (RFC 9110 §5.6.4). */
const quoted = (value: string) => `"${value.replace(/["\\]/g, "\\$&")}"`;

/**
 * The `WWW-Authenticate` challenge that goes with an error of the API doors, or undefined when the
 * error needs none. Every 401 carries one (RFC 9110 §15.5.2) naming the Bearer scheme and where the
 * client learns which authorization server to ask (RFC 6750 §3, RFC 9728 §5.1):
 *
 * - no credential at all (or a wrong password at sign-in): no error code (RFC 6750 §3.1);
 * - a bearer token sent and refused (unknown, expired, revoked, a suspended user's): `invalid_token`;
 * - an Authorization header that is not `Bearer <token>`: `invalid_request`;
 * - 403 INSUFFICIENT_SCOPE (a delegated token without the operation's scope): `insufficient_scope`
 *   with the scope it needs, when one would do (operations no token may use name none).
 */
export function bearerChallenge(error: Pick<AppError, "code" | "status" | "details">, resourceMetadata: string): string | undefined {
  const params: Array<[string, string]> = [];
  if (error.status === 401) {
    if (error.code === "INVALID_TOKEN") params.push(["error", "invalid_token"]);
    else if (error.code === "INVALID_AUTH_FORMAT") params.push(["error", "invalid_request"]);
  } else if (error.status === 403 && error.code === "INSUFFICIENT_SCOPE") {
    params.push(["error", "insufficient_scope"]);
    const scope = error.details?.required_scope;
    if (typeof scope === "string") params.push(["scope", scope]);
  } else {
    return undefined;
  }
  params.push(["resource_metadata", resourceMetadata]);
  return `Bearer ${params.map(([k, v]) => `${k}=${quoted(v)}`).join(", ")}`;
}
