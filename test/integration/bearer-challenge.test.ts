import * as oauth from "oauth4webapi";
import * as oc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { discover } from "../helpers/oidc-rp.js";
import { delegatedToken, registerClient, type RegisteredClient } from "../factories/oidc.js";
import { orgWithRoles } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * Issue 33: every 401 of the API doors carries a Bearer challenge naming the protected resource
 * document (RFC 6750 §3, RFC 9110 §15.5.2, RFC 9728 §5.1), and a delegated token without the
 * operation's scope gets `insufficient_scope` with the scope it needs. Read through openid-client
 * (which parses the challenge) and oauth4webapi (which checks the resource document, §3.3).
 */
let app: TestApp;
let user: TestUser;
let client: RegisteredClient;
let rp: oc.Configuration;
/** A delegated token holding profile:read only. */
let profileOnly: string;
let metadataUrl: string;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_OIDC_AUTHORIZE: "1000/60", CORS_ORIGINS: "https://app.example.com" });
  const { org, admin } = await orgWithRoles(app);
  client = await registerClient(app, org.id, admin);
  rp = await discover(app.url, client);
  user = await newUser(app);
  profileOnly = (await delegatedToken(app, user, { scopes: ["profile:read"] })).accessToken;
  metadataUrl = `${app.url}/.well-known/oauth-protected-resource/api/v1`;
});
afterAll(() => app?.close());

type Challenge = { scheme: string; parameters: Record<string, string> };

/** The challenge openid-client read from an API answer (it throws on any WWW-Authenticate). */
async function challengeOf(call: Promise<Response>): Promise<{ status: number; challenge: Challenge }> {
  try {
    const res = await call;
    throw new Error(`expected a challenge, got ${res.status} without one`);
  } catch (e) {
    if (!(e instanceof oc.WWWAuthenticateChallengeError)) throw e;
    expect(e.cause).toHaveLength(1);
    return { status: e.status, challenge: e.cause[0] as Challenge };
  }
}

const rest = (token: string, path: string, method = "GET", body?: string) =>
  oc.fetchProtectedResource(rp, token, new URL(`${app.url}/api/v1${path}`), method, body, body ? new Headers({ "content-type": "application/json" }) : undefined);
const graphql = (token: string, query: string) =>
  oc.fetchProtectedResource(rp, token, new URL(`${app.url}/graphql`), "POST", JSON.stringify({ query }), new Headers({ "content-type": "application/json" }));

describe("REST: WWW-Authenticate on 401 and insufficient_scope", () => {
  it("names the resource document without an error code when no credential was sent", async () => {
    const res = await fetch(`${app.url}/api/v1/auth/me`);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    // A wrong password at sign-in is a 401 too: the same challenge, no token to call invalid.
    const login = await fetch(`${app.url}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: user.email, password: "wrong-password-1" }) });
    expect(login.status).toBe(401);
    expect(login.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrl}"`);
  });

  it("says invalid_token for a bearer token sent and refused (unknown access token, unknown session token)", async () => {
    for (const token of ["not-a-token", "kws_0123456789abcdef"]) {
      const { status, challenge } = await challengeOf(rest(token, "/auth/me"));
      expect(status).toBe(401);
      expect(challenge).toEqual({ scheme: "bearer", parameters: { error: "invalid_token", resource_metadata: metadataUrl } });
    }
  });

  it("says invalid_request for an Authorization header that is not Bearer", async () => {
    const res = await fetch(`${app.url}/api/v1/auth/me`, { headers: { authorization: "Basic dXNlcjpwYXNz" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(`Bearer error="invalid_request", resource_metadata="${metadataUrl}"`);
  });

  it("answers 403 insufficient_scope with the scope the route needs, and without one where no scope would do", async () => {
    expect((await rest(profileOnly, "/auth/me")).status).toBe(200);
    const needs = await challengeOf(rest(profileOnly, "/ssh/certificates"));
    expect(needs.status).toBe(403);
    expect(needs.challenge).toEqual({ scheme: "bearer", parameters: { error: "insufficient_scope", scope: "ssh:sign", resource_metadata: metadataUrl } });
    const none = await challengeOf(rest(profileOnly, "/auth/sessions"));
    expect(none.status).toBe(403);
    expect(none.challenge.parameters).toEqual({ error: "insufficient_scope", resource_metadata: metadataUrl });
  });

  it("lets a browser client on an allowed origin read the challenge", async () => {
    const res = await fetch(`${app.url}/api/v1/auth/me`, { headers: { origin: "https://app.example.com" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("access-control-expose-headers")?.split(/,\s*/)).toContain("WWW-Authenticate");
  });
});

describe("GraphQL: WWW-Authenticate on 401 and insufficient_scope", () => {
  it("says invalid_token with HTTP 401 for a bearer token sent and refused", async () => {
    const { status, challenge } = await challengeOf(graphql("not-a-token", "{ me { id } }"));
    expect(status).toBe(401);
    expect(challenge).toEqual({ scheme: "bearer", parameters: { error: "invalid_token", resource_metadata: metadataUrl } });
  });

  it("answers HTTP 403 insufficient_scope with the scope the operation needs", async () => {
    const ok = await graphql(profileOnly, "{ me { id } }");
    expect(ok.status).toBe(200);
    const { status, challenge } = await challengeOf(graphql(profileOnly, "{ mySshCertificates { count } }"));
    expect(status).toBe(403);
    expect(challenge).toEqual({ scheme: "bearer", parameters: { error: "insufficient_scope", scope: "ssh:sign", resource_metadata: metadataUrl } });
  });
});

describe("the resource document a challenge names", () => {
  it("describes the API the token is for, as RFC 9728 §3.3 checks it, and names Keyward as its issuer", async () => {
    const res = await fetch(`${app.url}/api/v1/auth/me`, { headers: { authorization: "Bearer not-a-token" } });
    const url = /resource_metadata="([^"]+)"/.exec(res.headers.get("www-authenticate") ?? "")![1]!;
    const resource = new URL(`${app.url}/api/v1`);
    expect(url).toBe(metadataUrl);
    const meta = await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, { [oauth.allowInsecureRequests]: true }));
    expect(meta).toMatchObject({ resource: resource.href, authorization_servers: [app.url], bearer_methods_supported: ["header"] });
    expect(meta.scopes_supported).toEqual(expect.arrayContaining(["profile:read", "ssh:sign"]));
  });
});

// Issue 33: RFC 9728 §3.3, a document names the resource it is served for; the origin is none.
describe("no protected resource document at the root", () => {
  it("answers 404 at /.well-known/oauth-protected-resource, so no client takes the API's document for the origin's", async () => {
    const origin = new URL(app.url);
    const res = await oauth.resourceDiscoveryRequest(origin, { [oauth.allowInsecureRequests]: true });
    expect(res.status).toBe(404);
    await expect(oauth.processResourceDiscoveryResponse(origin, res)).rejects.toThrow();
    // The API's own document stays at its suffixed path, naming exactly the API.
    const api = await fetch(`${app.url}/.well-known/oauth-protected-resource/api/v1`);
    expect(api.status).toBe(200);
    expect(((await api.json()) as { resource: string }).resource).toBe(`${app.url}/api/v1`);
  });
});
