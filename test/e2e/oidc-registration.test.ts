import { createHash } from "node:crypto";
import * as oauth from "oauth4webapi";
import * as oc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { countRows } from "../helpers/db.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { discover } from "../helpers/oidc-rp.js";
import { delegatedToken, REDIRECT } from "../factories/oidc.js";
import { orgWithRoles } from "../factories/orgs.js";
import { newSuperadmin, type TestUser } from "../factories/users.js";

/**
 * Issue 33: Dynamic Client Registration (RFC 7591) and its management (RFC 7592), never open. An
 * organization's admin (or a superadmin) issues an initial access token through REST or GraphQL;
 * a tool registers with it through oauth4webapi, reads and updates its registration, and signs a
 * user in through openid-client. The client belongs to the token's organization.
 */
let app: TestApp;
let org: { id: string; name: string };
let admin: TestUser;
let member: TestUser;
let other: { org: { id: string }; admin: TestUser };
let as: oauth.AuthorizationServer;
const insecure = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false", OIDC_DYNAMIC_REGISTRATION: "true" });
  ({ org, admin, member } = await orgWithRoles(app));
  other = await orgWithRoles(app);
  const issuer = new URL(app.url);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
});
afterAll(() => app?.close());

/** Issues an initial access token through REST as `by`. */
async function issueToken(orgId: string, by: TestUser, body: Record<string, unknown> = {}) {
  return app.http.post(`/api/v1/organizations/${orgId}/registration-tokens`, { name: "IDE plugin", ...body }, { token: by.token });
}
async function tokenFor(orgId = org.id, by = admin, body: Record<string, unknown> = {}): Promise<{ id: string; token: string }> {
  const res = await issueToken(orgId, by, body);
  expect(res.status, res.text).toBe(201);
  return res.body.data.registration_token;
}

/** A registration as a tool sends it, through oauth4webapi. */
const register = (metadata: Record<string, unknown>, initialAccessToken?: string) =>
  oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT], ...metadata }, { ...insecure, ...(initialAccessToken ? { initialAccessToken } : {}) });
const registered = async (metadata: Record<string, unknown>, iat: string) => oauth.processDynamicClientRegistrationResponse(await register(metadata, iat));

/** The OAuth error of a refused registration (a challenge's error for a 401, the body's otherwise). */
async function refusal(res: Response): Promise<{ status: number; error: string }> {
  try {
    await oauth.processDynamicClientRegistrationResponse(res);
  } catch (e) {
    if (e instanceof oauth.WWWAuthenticateChallengeError) return { status: e.status, error: e.cause[0]!.parameters.error! };
    if (e instanceof oauth.ResponseBodyError) return { status: e.status, error: e.error };
    throw e;
  }
  throw new Error("expected the registration to be refused");
}

/** RFC 7592: a request to the client configuration endpoint with the registration access token. */
const manage = (client: { readonly [key: string]: unknown }, rat: string, method = "GET", body?: unknown) =>
  fetch(String(client.registration_client_uri), {
    method,
    headers: { authorization: `Bearer ${rat}`, accept: "application/json", ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

const orgClients = async (orgId = org.id, by = admin) => (await app.http.get(`/api/v1/organizations/${orgId}/clients`, { token: by.token })).body.data.clients as Array<Record<string, unknown>>;

describe("initial access tokens (REST and GraphQL)", () => {
  it("are issued by an organization admin, shown once, stored as a hash and audited", async () => {
    const res = await issueToken(org.id, admin, { expires_in: 3600, max_uses: 3 });
    expect(res.status, res.text).toBe(201);
    const issued = res.body.data.registration_token;
    expect(issued.token).toMatch(/^kwr_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(issued).toMatchObject({ organization_id: org.id, name: "IDE plugin", max_uses: 3, uses: 0, revoked_at: null, prefix: issued.token.slice(0, 16) });
    const listed = await app.http.get(`/api/v1/organizations/${org.id}/registration-tokens`, { token: admin.token });
    expect(listed.text).not.toContain(issued.token);
    expect(listed.body.data.registration_tokens.map((t: { id: string }) => t.id)).toContain(issued.id);
    const hash = createHash("sha256").update(issued.token).digest("hex");
    expect(await countRows(app, "oidc_registration_tokens", `id = '${issued.id}' and token_hash = '${hash}'`)).toBe(1);
    expect(await countRows(app, "audit_logs", `action = 'oidc.registration_token.created' and resource_id = '${issued.id}' and actor_id = '${admin.id}'`)).toBe(1);
  });

  it("are issued, listed and revoked through GraphQL the same way", async () => {
    const created = await app.http.gql(
      `mutation($orgId: ID!, $input: RegistrationTokenInput!) { createRegistrationToken(orgId: $orgId, input: $input) { id token prefix maxUses expiresAt } }`,
      { orgId: org.id, input: { name: "Agent", maxUses: 1 } },
      { token: admin.token },
    );
    expect(created.errors).toBeUndefined();
    const { id, token } = created.data.createRegistrationToken;
    const listed = await app.http.gql(`query($orgId: ID!) { registrationTokens(orgId: $orgId) { id uses } }`, { orgId: org.id }, { token: admin.token });
    expect(listed.data.registrationTokens).toContainEqual({ id, uses: 0 });
    const revoked = await app.http.gql(`mutation($orgId: ID!, $id: ID!) { revokeRegistrationToken(orgId: $orgId, tokenId: $id) { revokedAt } }`, { orgId: org.id, id }, { token: admin.token });
    expect(revoked.data.revokeRegistrationToken.revokedAt).toBeTruthy();
    expect(await countRows(app, "audit_logs", `action = 'oidc.registration_token.revoked' and resource_id = '${id}'`)).toBe(1);
    // Revoked: it registers nothing.
    expect(await refusal(await register({}, token))).toEqual({ status: 401, error: "invalid_token" });
    const again = await app.http.delete(`/api/v1/organizations/${org.id}/registration-tokens/${id}`, { token: admin.token });
    expect([again.status, again.body.error.type]).toEqual([409, "ALREADY_REVOKED"]);
  });

  it("are refused to members, to other organizations' admins and to delegated tokens; a superadmin issues for any organization", async () => {
    expect((await issueToken(org.id, member)).body.error.type).toBe("AUTHORIZATION_ERROR");
    expect((await issueToken(org.id, other.admin)).body.error.type).toBe("ORG_NOT_FOUND");
    const mine = await tokenFor();
    const revokeElsewhere = await app.http.delete(`/api/v1/organizations/${other.org.id}/registration-tokens/${mine.id}`, { token: other.admin.token });
    expect([revokeElsewhere.status, revokeElsewhere.body.error.type]).toEqual([404, "REGISTRATION_TOKEN_NOT_FOUND"]);
    const delegated = await delegatedToken(app, admin);
    const viaToken = await app.http.post(`/api/v1/organizations/${org.id}/registration-tokens`, { name: "x" }, { token: delegated.accessToken });
    expect([viaToken.status, viaToken.body.error.type]).toEqual([403, "INSUFFICIENT_SCOPE"]);

    const root = await newSuperadmin(app);
    const byRoot = await tokenFor(org.id, root);
    expect(await countRows(app, "audit_logs", `action = 'oidc.registration_token.created' and resource_id = '${byRoot.id}' and metadata->>'by_superadmin' = 'true'`)).toBe(1);
    const client = await registered({ client_name: "Root's" }, byRoot.token);
    expect((await orgClients()).map((c) => c.client_id)).toContain(client.client_id);
  });

  it("refuses bad input with a 4xx", async () => {
    for (const body of [{ name: "" }, { name: "x", expires_in: 10 }, { name: "x", max_uses: 0 }, { name: "x", expires_in: "soon" }]) {
      const res = await issueToken(org.id, admin, body);
      expect([res.status, res.body.error.type]).toEqual([400, "VALIDATION_ERROR"]);
    }
    expect((await app.http.delete(`/api/v1/organizations/${org.id}/registration-tokens/not-a-uuid`, { token: admin.token })).status).toBe(404);
  });
});

describe("registration (RFC 7591), management (RFC 7592) and use", () => {
  it("registers with the token, reads and updates the registration, and signs a user in through the client", async () => {
    const { token } = await tokenFor();
    expect(as.registration_endpoint).toBe(`${app.url}/api/v1/oidc/register`);
    const client = await registered(
      {
        client_name: "Editor plugin",
        grant_types: ["authorization_code", "refresh_token"],
        post_logout_redirect_uris: ["http://127.0.0.1:47999/signed-out"],
        // Not stored, so not in the answer: Keyward keeps what it enforces.
        logo_uri: "https://plugin.example/logo.png",
        // Keyward's own metadata is the admins' to set, never a registrant's.
        "urn:keyward:api_scopes": ["ssh:sign"],
        "urn:keyward:organization_id": other.org.id,
      },
      token,
    );
    expect(client).toMatchObject({ client_name: "Editor plugin", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], token_endpoint_auth_method: "client_secret_basic", client_secret_expires_at: 0 });
    expect(client.client_id).toMatch(/^kwc_[0-9a-f]{24}$/);
    expect(typeof client.client_secret).toBe("string");
    expect(client.logo_uri).toBeUndefined();
    expect(Object.keys(client).filter((k) => k.startsWith("urn:"))).toEqual([]);
    const rat = String(client.registration_access_token);
    expect(client.registration_client_uri).toBe(`${app.url}/api/v1/oidc/register/${client.client_id}`);

    // It belongs to the token's organization, with no API scopes, and says how it came.
    const listed = (await orgClients()).find((c) => c.client_id === client.client_id)!;
    expect(listed).toMatchObject({ organization_id: org.id, allowed_api_scopes: [], name: "Editor plugin", registration_token_id: expect.any(String) });
    expect((await orgClients(other.org.id, other.admin)).map((c) => c.client_id)).not.toContain(client.client_id);
    expect(await countRows(app, "audit_logs", `action = 'oidc.client.created' and resource_id = '${client.client_id}' and organization_id = '${org.id}' and metadata->>'dynamic' = 'true'`)).toBe(1);

    // RFC 7592 §2.1: read.
    const read = await manage(client, rat);
    expect(read.status).toBe(200);
    const current = (await read.json()) as Record<string, unknown>;
    expect(current).toMatchObject({ client_id: client.client_id, client_name: "Editor plugin", redirect_uris: [REDIRECT], client_secret: client.client_secret, client_secret_expires_at: 0, registration_access_token: rat });
    // What the registration answered is what is stored: the read shows the same registrable metadata.
    for (const key of ["client_name", "redirect_uris", "post_logout_redirect_uris", "grant_types", "response_types", "token_endpoint_auth_method", "id_token_signed_response_alg", "application_type"]) {
      expect([key, current[key]]).toEqual([key, client[key]]);
    }
    expect(Object.keys(current).filter((k) => k.startsWith("urn:"))).toEqual([]);

    // RFC 7592 §2.2: update (every field sent again); the registration access token rotates.
    const { registration_access_token: _r, registration_client_uri: _u, client_secret_expires_at: _e, client_id_issued_at: _i, ...rest } = current;
    const updated = await manage(client, rat, "PUT", { ...rest, client_name: "Editor plugin 2", redirect_uris: [REDIRECT, "http://127.0.0.1:47999/cb2"] });
    expect(updated.status, await updated.clone().text()).toBe(200);
    const after = (await updated.json()) as Record<string, unknown>;
    expect(after).toMatchObject({ client_name: "Editor plugin 2", redirect_uris: [REDIRECT, "http://127.0.0.1:47999/cb2"] });
    const newRat = String(after.registration_access_token);
    expect(newRat).not.toBe(rat);
    expect((await manage(client, rat)).status).toBe(401);
    expect((await manage(client, newRat)).status).toBe(200);
    expect((await orgClients()).find((c) => c.client_id === client.client_id)).toMatchObject({ name: "Editor plugin 2" });

    // The client in a code flow, through openid-client: the user's membership is the token organization's.
    const config = await discover(app.url, { clientId: client.client_id, clientSecret: client.client_secret as string });
    const agent = new OidcAgent(app.url);
    await agent.signIn(member.email, member.password);
    const verifier = oc.randomPKCECodeVerifier();
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid organizations offline_access", prompt: "consent", state: "dcr", code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });
    const stop = await agent.follow(url.toString(), REDIRECT);
    const tokens = await oc.authorizationCodeGrant(config, new URL(stop.url), { pkceCodeVerifier: verifier, expectedState: "dcr" });
    expect(tokens.claims()).toMatchObject({ sub: member.id, aud: client.client_id, organizations: [{ id: org.id, name: org.name, role: "member" }] });
    expect(tokens.refresh_token).toBeTruthy();

    // RFC 7592 §2.3: delete; the client and what it was issued are gone.
    const deleted = await manage(client, newRat, "DELETE");
    expect(deleted.status).toBe(204);
    expect((await orgClients()).map((c) => c.client_id)).not.toContain(client.client_id);
    expect((await oc.tokenIntrospection(await discover(app.url, { clientId: client.client_id, clientSecret: client.client_secret as string }), tokens.access_token).catch((e: Error) => e)) instanceof Error).toBe(true);
    expect(await countRows(app, "audit_logs", `action = 'oidc.client.deleted' and resource_id = '${client.client_id}'`)).toBe(1);
  });

  it("registers a public client (PKCE alone, no secret), as tools that cannot keep one do", async () => {
    const { token } = await tokenFor();
    const client = await registered({ client_name: "Agent", token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] }, token);
    expect(client.client_secret).toBeUndefined();
    expect((await orgClients()).find((c) => c.client_id === client.client_id)).toMatchObject({ public: true, token_endpoint_auth_method: "none" });
  });

  it("refuses without a token, with a wrong, expired or used-up token, and spends nothing on a refused client", async () => {
    // No credential at all: a challenge without an error code (RFC 6750 §3.1).
    const bare = await register({});
    expect(bare.status).toBe(401);
    expect(bare.headers.get("www-authenticate")).toMatch(/^Bearer realm="[^"]+"$/);
    expect(await refusal(await register({}, "kwr_000000000000_not-a-token"))).toEqual({ status: 401, error: "invalid_token" });
    // Another bearer credential is no initial access token.
    expect(await refusal(await register({}, admin.token))).toEqual({ status: 401, error: "invalid_token" });

    const once = await tokenFor(org.id, admin, { max_uses: 1 });
    // Malformed registrations: a 4xx, never a 500.
    const endpoint = as.registration_endpoint!;
    for (const body of ["[]", "not json", JSON.stringify({ redirect_uris: "http://127.0.0.1:47999/cb" })]) {
      const res = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${once.token}` }, body });
      expect(res.status, body).toBe(400);
    }
    expect(await refusal(await register({ client_name: "x".repeat(300) }, once.token))).toEqual({ status: 400, error: "invalid_client_metadata" });
    // Refused metadata: nothing registered, the use not spent.
    expect(await refusal(await register({ redirect_uris: ["http://app.example.com/cb"] }, once.token))).toEqual({ status: 400, error: "invalid_redirect_uri" });
    expect(await refusal(await register({ grant_types: ["client_credentials"], token_endpoint_auth_method: "none", redirect_uris: [] }, once.token))).toEqual({ status: 400, error: "invalid_client_metadata" });
    expect(await refusal(await register({ grant_types: ["password"] }, once.token))).toEqual({ status: 400, error: "invalid_client_metadata" });
    expect(await refusal(await register({ grant_types: ["authorization_code"], redirect_uris: [] }, once.token))).toEqual({ status: 400, error: "invalid_redirect_uri" });
    await registered({ client_name: "Once" }, once.token);
    expect(await refusal(await register({ client_name: "Twice" }, once.token))).toEqual({ status: 401, error: "invalid_token" });

    const short = await tokenFor(org.id, admin, { expires_in: 300 });
    app.clock.advance(301);
    try {
      expect(await refusal(await register({}, short.token))).toEqual({ status: 401, error: "invalid_token" });
    } finally {
      app.clock.reset();
    }
  });

  it("gives one client for the last use of a token, whatever the number of registrations racing for it", async () => {
    const { id, token } = await tokenFor(org.id, admin, { max_uses: 1 });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => register({ client_name: `Racer ${i}` }, token)));
    expect(answers.map((r) => r.status).sort()).toEqual([201, ...Array<number>(19).fill(401)]);
    expect(await countRows(app, "oidc_clients", `registration_token_id = '${id}'`)).toBe(1);
    expect(await countRows(app, "oidc_registration_tokens", `id = '${id}' and uses = 1`)).toBe(1);

    // The same race past the endpoint's first check (all 20 already found the token usable): the
    // write itself decides.
    const second = await tokenFor(org.id, admin, { max_uses: 1 });
    const caller = { actor: { kind: "anonymous" as const }, requestId: "race", ip: null, userAgent: null };
    const fields = { name: "Racer", redirectUris: [REDIRECT], postLogoutRedirectUris: [], grantTypes: ["authorization_code"], tokenEndpointAuthMethod: "client_secret_basic", idTokenSignedResponseAlg: "RS256" };
    const writes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => app.services.oidcRegistration.registerClient(caller, second.token, { clientId: `kwc_race${String(i).padStart(20, "0")}`, clientSecret: "s".repeat(43), fields })),
    );
    expect(writes.filter((w) => w.status === "fulfilled")).toHaveLength(1);
    expect(writes.filter((w) => w.status === "rejected").map((w) => (w as PromiseRejectedResult).reason.code)).toEqual(Array(19).fill("REGISTRATION_TOKEN_INVALID"));
    expect(await countRows(app, "oidc_clients", `registration_token_id = '${second.id}'`)).toBe(1);
  });

  it("lets a registration access token manage its own client only, and keeps public and confidential apart", async () => {
    const { token } = await tokenFor();
    const a = await registered({ client_name: "A" }, token);
    // B registered with another organization's token: it belongs there, and its token manages nothing of A.
    const b = await registered({ client_name: "B" }, (await tokenFor(other.org.id, other.admin)).token);
    expect((await orgClients(other.org.id, other.admin)).map((c) => c.client_id)).toContain(b.client_id);
    // B's token on A's configuration endpoint: refused (and B's token is destroyed, as oidc-provider does on a mismatch).
    const crossed = await manage(a, String(b.registration_access_token));
    expect(crossed.status).toBe(401);
    expect((await manage(a, String(a.registration_access_token))).status).toBe(200);
    // An admin-created client has no registration access token: nothing manages it here.
    const c = await registered({ client_name: "C" }, token);
    const made = await app.http.post(`/api/v1/organizations/${org.id}/clients`, { name: "Admin's", redirect_uris: [REDIRECT] }, { token: admin.token });
    const adminClient = { registration_client_uri: `${app.url}/api/v1/oidc/register/${made.body.data.client.client_id}` };
    expect((await manage(adminClient, String(c.registration_access_token))).status).toBe(401);
    expect((await manage(adminClient, String(c.registration_access_token), "DELETE")).status).toBe(401);
    expect((await orgClients()).map((x) => x.client_id)).toContain(made.body.data.client.client_id);

    const current = (await (await manage(a, String(a.registration_access_token))).json()) as Record<string, unknown>;
    const { registration_access_token: rat, registration_client_uri: _u, client_secret_expires_at: _e, client_id_issued_at: _i, client_secret: _s, ...rest } = current;
    const toPublic = await manage(a, String(rat), "PUT", { ...rest, token_endpoint_auth_method: "none" });
    expect(toPublic.status).toBe(400);
    expect(((await toPublic.json()) as { error: string }).error).toBe("invalid_client_metadata");
    expect((await orgClients()).find((c) => c.client_id === a.client_id)).toMatchObject({ public: false });
  });
});

describe("off unless configured", () => {
  it("has no registration endpoint and issues no tokens by default", async () => {
    const off = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
    try {
      const { org: o, admin: a } = await orgWithRoles(off);
      const meta = (await (await fetch(`${off.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(meta.registration_endpoint).toBeUndefined();
      const post = await fetch(`${off.url}/api/v1/oidc/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ redirect_uris: [REDIRECT] }) });
      expect(post.status).toBe(404);
      const res = await off.http.post(`/api/v1/organizations/${o.id}/registration-tokens`, { name: "x" }, { token: a.token });
      expect([res.status, res.body.error.type]).toEqual([409, "DYNAMIC_REGISTRATION_DISABLED"]);
    } finally {
      await off.close();
    }
  });
});
