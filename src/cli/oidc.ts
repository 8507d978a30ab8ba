import * as oc from "openid-client";
import { CliError, ExitCode } from "./errors.js";
import { fetchWithTimeout } from "./http.js";

export const CLIENT_ID = "keyward-cli";
export const SCOPES = "openid offline_access profile:read orgs:read ssh:keys ssh:sign networks:activate";

/** What the API says about itself (RFC 9728): the resource to ask tokens for and who issues them. */
export interface ResourceMetadata {
  resource: string;
  issuer: string;
}

/** The API's protected resource document: the resource `<server>/api/v1` described at its own well-known path (RFC 9728 §3.1). */
export async function resourceMetadata(server: string): Promise<ResourceMetadata> {
  const res = await fetchWithTimeout(`${server}/.well-known/oauth-protected-resource/api/v1`, { headers: { accept: "application/json" } });
  if (!res.ok) throw new CliError(`${server} is not a Keyward server (no protected resource metadata: HTTP ${res.status})`, ExitCode.ERROR, "NOT_KEYWARD");
  const meta = (await res.json().catch(() => ({}))) as { resource?: unknown; authorization_servers?: unknown };
  const issuer = Array.isArray(meta.authorization_servers) ? meta.authorization_servers[0] : undefined;
  if (typeof meta.resource !== "string" || typeof issuer !== "string") throw new CliError(`${server} answered unusable protected resource metadata`, ExitCode.ERROR, "NOT_KEYWARD");
  return { resource: meta.resource, issuer };
}

/**
 * The openid-client configuration for the built-in public client: no secret (PKCE protects the
 * code), and plain http allowed only when the issuer itself is http (a local or test server).
 */
export function discover(issuer: string): Promise<oc.Configuration> {
  const insecure = new URL(issuer).protocol === "http:";
  return oc.discovery(new URL(issuer), CLIENT_ID, { token_endpoint_auth_method: "none" }, oc.None(), {
    ...(insecure ? { execute: [oc.allowInsecureRequests] } : {}),
    timeout: 30,
  });
}

/** What the cache keeps of a token response; a refresh that returns no new refresh token keeps the old one. */
export function tokenFields(tokens: oc.TokenEndpointResponse, previousRefresh?: string) {
  return {
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? previousRefresh,
    expiresAt: Date.now() + (tokens.expires_in ?? 3600) * 1000,
    scope: tokens.scope ?? SCOPES,
  };
}
