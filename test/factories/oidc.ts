import type { TestApp } from "../helpers/app.js";
import type { TestUser } from "./users.js";

export const REDIRECT = "http://127.0.0.1:47999/cb";
export const POST_LOGOUT = "http://127.0.0.1:47999/signed-out";

export interface RegisteredClient {
  clientId: string;
  clientSecret: string | null;
}

/** Registers a client through the REST API as an organization admin. */
export async function registerClient(app: TestApp, orgId: string, admin: TestUser, input: Record<string, unknown> = {}): Promise<RegisteredClient> {
  const res = await app.http.post(
    `/api/v1/organizations/${orgId}/clients`,
    { name: "Test RP", redirect_uris: [REDIRECT], post_logout_redirect_uris: [POST_LOGOUT], ...input },
    { token: admin.token },
  );
  if (res.status !== 201) throw new Error(`register client failed: ${res.status} ${res.text}`);
  return { clientId: res.body.data.client.client_id, clientSecret: res.body.data.client.client_secret };
}

export const CLI_CLIENT = "keyward-cli";
export const CLI_REDIRECT = "http://127.0.0.1:47998/callback";
export const ALL_API_SCOPES = ["profile:read", "orgs:read", "ssh:keys", "ssh:sign", "networks:activate"];

export interface DelegatedTokens {
  accessToken: string;
  refreshToken: string | undefined;
  scope: string;
  /** Whether the user was shown the consent page. */
  consentShown: boolean;
  /** Status and body of the token answer (for refusals). */
  raw: { status: number; body: Record<string, unknown> };
}

type DelegationOptions = { scopes?: string[]; clientId?: string; redirectUri?: string; clientSecret?: string | null; prompt?: string | null; agent?: import("../helpers/oidc-agent.js").OidcAgent };

/** An authorization code of the delegated flow (below), not yet redeemed, and the token request that redeems it. */
export async function delegatedCode(
  app: TestApp,
  user: { email: string; password: string },
  options: DelegationOptions = {},
): Promise<{ code: string; consentShown: boolean; redeem: () => Promise<{ status: number; body: Record<string, unknown> }> }> {
  const { OidcAgent } = await import("../helpers/oidc-agent.js");
  const { createHash, randomBytes } = await import("node:crypto");
  const clientId = options.clientId ?? CLI_CLIENT;
  const redirectUri = options.redirectUri ?? CLI_REDIRECT;
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const resource = `${app.url}/api/v1`;
  const agent = options.agent ?? new OidcAgent(app.url);
  if (!options.agent) await agent.signIn(user.email, user.password);
  const authorize = new URL(`${app.url}/api/v1/oidc/authorize`);
  const params = {
    client_id: clientId,
    response_type: "code",
    redirect_uri: redirectUri,
    scope: ["openid", "offline_access", ...(options.scopes ?? ALL_API_SCOPES)].join(" "),
    resource,
    state: randomBytes(8).toString("hex"),
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...(options.prompt === null ? {} : { prompt: options.prompt ?? "consent" }),
  };
  for (const [k, v] of Object.entries(params)) authorize.searchParams.set(k, v);
  const stop = await agent.follow(authorize.toString(), redirectUri.replace(/\/callback$|\/cb$/, ""));
  const code = new URL(stop.url).searchParams.get("code");
  if (!code) throw new Error(`no code: ${stop.url} ${stop.status} ${stop.body.replace(/[\s\S]*<main[^>]*>/, "").slice(0, 600)}`);
  const redeem = async () => {
    const form = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier });
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
    if (options.clientSecret) headers.authorization = `Basic ${Buffer.from(`${clientId}:${options.clientSecret}`).toString("base64")}`;
    else form.set("client_id", clientId);
    const res = await fetch(`${app.url}/api/v1/oidc/token`, { method: "POST", headers, body: form });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { code, consentShown: stop.consentShown, redeem };
}

/**
 * A delegated access token for Keyward's own API, as the CLI gets one: authorization code with PKCE
 * and the API's resource indicator, the user signed in and consenting in a browser stand-in.
 */
export async function delegatedToken(app: TestApp, user: { email: string; password: string }, options: DelegationOptions = {}): Promise<DelegatedTokens> {
  const { consentShown, redeem } = await delegatedCode(app, user, options);
  const { status, body } = await redeem();
  return { accessToken: String(body.access_token ?? ""), refreshToken: body.refresh_token as string | undefined, scope: String(body.scope ?? ""), consentShown, raw: { status, body } };
}

/** A refresh grant for a public client (the CLI). */
export async function refreshDelegated(app: TestApp, refreshToken: string, clientId = CLI_CLIENT): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${app.url}/api/v1/oidc/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
