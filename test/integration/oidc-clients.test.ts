import { sql } from "drizzle-orm";
import * as oc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { countRows } from "../helpers/db.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { discover as discoverAt, oauthError } from "../helpers/oidc-rp.js";
import { orgWithRoles } from "../factories/orgs.js";
import { REDIRECT, registerClient, type RegisteredClient } from "../factories/oidc.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * Registered clients (REST and GraphQL), users' consents, signing-key rotation and the purge of
 * expired provider rows.
 */
let app: TestApp;
let org: { id: string };
let admin: TestUser;
let member: TestUser;

const discover = (c: RegisteredClient) => discoverAt(app.url, c);

async function codeFlowTokens(config: oc.Configuration, user: TestUser, scope = "openid email") {
  const agent = new OidcAgent(app.url);
  await agent.signIn(user.email, user.password);
  const verifier = oc.randomPKCECodeVerifier();
  const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });
  const stop = await agent.follow(url.toString(), REDIRECT);
  return { stop, tokens: stop.url.startsWith(REDIRECT) ? await oc.authorizationCodeGrant(config, new URL(stop.url), { pkceCodeVerifier: verifier }) : null };
}

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  ({ org, admin, member } = await orgWithRoles(app));
});
afterAll(() => app?.close());

describe("registered clients", () => {
  it("shows a confidential client's secret once, and never again", async () => {
    const created = await app.http.post(`/api/v1/organizations/${org.id}/clients`, { name: "Wiki", redirect_uris: [REDIRECT], cors_origins: ["https://wiki.example.com"], access_token_ttl: 600 }, { token: admin.token });
    expect(created.status, created.text).toBe(201);
    const client = created.body.data.client;
    expect(client).toMatchObject({ name: "Wiki", public: false, token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code", "refresh_token"], access_token_ttl: 600, cors_origins: ["https://wiki.example.com"] });
    expect(client.client_id).toMatch(/^kwc_[0-9a-f]{24}$/);
    expect(client.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const listed = await app.http.get(`/api/v1/organizations/${org.id}/clients`, { token: admin.token });
    expect(listed.body.data.count).toBeGreaterThan(0);
    expect(listed.text).not.toContain(client.client_secret);
    const one = await app.http.get(`/api/v1/organizations/${org.id}/clients/${client.client_id}`, { token: admin.token });
    expect(one.body.data.client.client_secret).toBeUndefined();
    // Only the grant types it was registered with (RFC 6749 §5.2: unauthorized_client).
    expect(await oauthError(oc.clientCredentialsGrant(await discover({ clientId: client.client_id, clientSecret: client.client_secret })))).toBe("unauthorized_client");
  });

  it("applies an update at once: a removed redirect URI is refused, lifetimes change", async () => {
    const c = await registerClient(app, org.id, admin, { redirect_uris: [REDIRECT, "http://127.0.0.1:47999/old"], grant_types: ["client_credentials"] });
    const config = await discover(c);
    expect((await oc.clientCredentialsGrant(config)).expiresIn()).toBeGreaterThan(3500);
    const patched = await app.http.patch(`/api/v1/organizations/${org.id}/clients/${c.clientId}`, { access_token_ttl: 120, redirect_uris: [REDIRECT] }, { token: admin.token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.client.redirect_uris).toEqual([REDIRECT]);
    expect((await oc.clientCredentialsGrant(config)).expiresIn()).toBeLessThanOrEqual(120);
  });

  it("rotates a secret: the old one stops working, the new one works", async () => {
    const c = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"] });
    const rotated = await app.http.post(`/api/v1/organizations/${org.id}/clients/${c.clientId}/rotate-secret`, {}, { token: admin.token });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.data.client.client_secret as string;
    expect(fresh).not.toBe(c.clientSecret);
    expect(await oauthError(oc.clientCredentialsGrant(await discover(c)))).toBe("invalid_client");
    expect((await oc.clientCredentialsGrant(await discover({ clientId: c.clientId, clientSecret: fresh }))).access_token).toBeTruthy();
    const audit = await app.http.get(`/api/v1/organizations/${org.id}/audit-logs?action=oidc.client.secret_rotated`, { token: admin.token });
    expect(audit.body.data.audit_logs[0]).toMatchObject({ resource_id: c.clientId, actor_id: admin.id });
  });

  it("deletes a client with every token it holds", async () => {
    const c = await registerClient(app, org.id, admin, { grant_types: ["authorization_code", "refresh_token"] });
    const config = await discover(c);
    const { tokens } = await codeFlowTokens(config, member);
    expect((await oc.fetchUserInfo(config, tokens!.access_token, member.id)).sub).toBe(member.id);
    const deleted = await app.http.delete(`/api/v1/organizations/${org.id}/clients/${c.clientId}`, { token: admin.token });
    expect(deleted.status).toBe(200);
    const userinfo = await fetch(`${app.url}/api/v1/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens!.access_token}` } });
    expect(userinfo.status).toBe(401);
    expect((await app.http.get(`/api/v1/organizations/${org.id}/clients/${c.clientId}`, { token: admin.token })).body.error.type).toBe("CLIENT_NOT_FOUND");
  });

  it("refuses unsafe or inconsistent registrations with VALIDATION_ERROR", async () => {
    const bad = [
      { name: "x", redirect_uris: ["javascript:alert(1)"] },
      { name: "x", redirect_uris: ["https://app.example.com/cb#frag"] },
      { name: "x", redirect_uris: ["http://app.example.com/cb"] },
      { name: "x", grant_types: ["authorization_code"] },
      { name: "x", public: true, grant_types: ["client_credentials"] },
      { name: "x", redirect_uris: [REDIRECT], cors_origins: ["https://app.example.com/path"] },
      { name: "x", redirect_uris: [REDIRECT], grant_types: ["implicit"] },
    ];
    for (const body of bad) {
      const res = await app.http.post(`/api/v1/organizations/${org.id}/clients`, body, { token: admin.token });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.type).toBe("VALIDATION_ERROR");
    }
  });

  it("gives the same answers through GraphQL, and refuses members", async () => {
    const create = await app.http.gql(
      `mutation($orgId: ID!, $input: OidcClientInput!) { createOidcClient(orgId: $orgId, input: $input) { clientId clientSecret public grantTypes } }`,
      { orgId: org.id, input: { name: "SPA", redirectUris: [REDIRECT], public: true } },
      { token: admin.token },
    );
    expect(create.errors).toBeUndefined();
    expect(create.data.createOidcClient).toMatchObject({ clientSecret: null, public: true, grantTypes: ["authorization_code", "refresh_token"] });
    const clientId = create.data.createOidcClient.clientId as string;
    const rest = await app.http.get(`/api/v1/organizations/${org.id}/clients/${clientId}`, { token: admin.token });
    const gql = await app.http.gql(`query($orgId: ID!, $clientId: String!) { oidcClient(orgId: $orgId, clientId: $clientId) { clientId name redirectUris public } }`, { orgId: org.id, clientId }, { token: admin.token });
    expect(gql.data.oidcClient).toEqual({ clientId, name: rest.body.data.client.name, redirectUris: rest.body.data.client.redirect_uris, public: true });
    const rotate = await app.http.gql(`mutation($orgId: ID!, $clientId: String!) { rotateOidcClientSecret(orgId: $orgId, clientId: $clientId) { clientSecret } }`, { orgId: org.id, clientId }, { token: admin.token });
    expect(rotate.errors[0].extensions.code).toBe("BAD_REQUEST");
    const byMember = await app.http.gql(`query($orgId: ID!) { oidcClients(orgId: $orgId) { clientId } }`, { orgId: org.id }, { token: member.token });
    expect(byMember.errors[0].extensions.code).toBe("AUTHORIZATION_ERROR");
    const restMember = await app.http.post(`/api/v1/organizations/${org.id}/clients`, { name: "x", redirect_uris: [REDIRECT] }, { token: member.token });
    expect(restMember.status).toBe(403);
  });

  // Issue 16: discovery offered ES256 for ID tokens, but no client could choose it.
  it("lets a client choose its ID token algorithm (RS256 by default, or ES256) through REST and GraphQL", async () => {
    const rest = await app.http.post(`/api/v1/organizations/${org.id}/clients`, { name: "Default alg", redirect_uris: [REDIRECT] }, { token: admin.token });
    expect(rest.body.data.client.id_token_signed_response_alg).toBe("RS256");
    const refused = await app.http.post(`/api/v1/organizations/${org.id}/clients`, { name: "HMAC", redirect_uris: [REDIRECT], id_token_signed_response_alg: "HS256" }, { token: admin.token });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.errors[0].path).toBe("id_token_signed_response_alg");
    const create = await app.http.gql(
      `mutation($orgId: ID!, $input: OidcClientInput!) { createOidcClient(orgId: $orgId, input: $input) { clientId idTokenSignedResponseAlg } }`,
      { orgId: org.id, input: { name: "EC", redirectUris: [REDIRECT], idTokenSignedResponseAlg: "ES256" } },
      { token: admin.token },
    );
    expect(create.errors).toBeUndefined();
    expect(create.data.createOidcClient.idTokenSignedResponseAlg).toBe("ES256");
    const clientId = create.data.createOidcClient.clientId as string;
    expect((await app.http.get(`/api/v1/organizations/${org.id}/clients/${clientId}`, { token: admin.token })).body.data.client.id_token_signed_response_alg).toBe("ES256");
    const back = await app.http.gql(
      `mutation($orgId: ID!, $clientId: String!, $input: UpdateOidcClientInput!) { updateOidcClient(orgId: $orgId, clientId: $clientId, input: $input) { idTokenSignedResponseAlg } }`,
      { orgId: org.id, clientId, input: { idTokenSignedResponseAlg: "RS256" } },
      { token: admin.token },
    );
    expect(back.data.updateOidcClient.idTokenSignedResponseAlg).toBe("RS256");
    const bad = await app.http.gql(
      `mutation($orgId: ID!, $clientId: String!, $input: UpdateOidcClientInput!) { updateOidcClient(orgId: $orgId, clientId: $clientId, input: $input) { idTokenSignedResponseAlg } }`,
      { orgId: org.id, clientId, input: { idTokenSignedResponseAlg: "none" } },
      { token: admin.token },
    );
    expect(bad.errors[0].extensions.code).toBe("VALIDATION_ERROR");
  });

  // Issue 12: an update used to skip the rules a registration enforces.
  describe("updates keep the registration rules (checked on the client after the update)", () => {
    const patch = (c: RegisteredClient, body: Record<string, unknown>) => app.http.patch(`/api/v1/organizations/${org.id}/clients/${c.clientId}`, body, { token: admin.token });
    const gqlUpdate = (c: RegisteredClient, input: Record<string, unknown>) =>
      app.http.gql(`mutation($orgId: ID!, $clientId: String!, $input: UpdateOidcClientInput!) { updateOidcClient(orgId: $orgId, clientId: $clientId, input: $input) { grantTypes redirectUris } }`, { orgId: org.id, clientId: c.clientId, input }, { token: admin.token });
    const stored = async (c: RegisteredClient) => (await app.http.get(`/api/v1/organizations/${org.id}/clients/${c.clientId}`, { token: admin.token })).body.data.client;

    it("refuses client_credentials for a public client, in REST and GraphQL, and the client gets no token", async () => {
      const c = await registerClient(app, org.id, admin, { name: "SPA", public: true, grant_types: ["authorization_code"] });
      const rest = await patch(c, { grant_types: ["authorization_code", "client_credentials"] });
      expect(rest.status).toBe(400);
      expect(rest.body.error.type).toBe("VALIDATION_ERROR");
      expect(rest.body.error.details.errors).toEqual([{ path: "grant_types", message: "client_credentials needs a confidential client" }]);
      const gql = await gqlUpdate(c, { grantTypes: ["client_credentials"] });
      expect(gql.errors[0].extensions.code).toBe("VALIDATION_ERROR");
      expect(gql.errors[0].message).toContain("client_credentials needs a confidential client");
      expect((await stored(c)).grant_types).toEqual(["authorization_code"]);
      // The answer for a grant type the client is not registered for (RFC 6749 §5.2).
      expect(await oauthError(oc.clientCredentialsGrant(await discover(c)))).toBe("unauthorized_client");
    });

    it("refuses an empty redirect_uris while the code grant stays, and the code grant without redirect URIs", async () => {
      const code = await registerClient(app, org.id, admin, { grant_types: ["authorization_code", "refresh_token"] });
      const rest = await patch(code, { redirect_uris: [] });
      expect(rest.status).toBe(400);
      expect(rest.body.error.details.errors).toEqual([{ path: "redirect_uris", message: "at least one is required for the authorization_code grant" }]);
      expect((await gqlUpdate(code, { redirectUris: [] })).errors[0].extensions.code).toBe("VALIDATION_ERROR");
      expect((await stored(code)).redirect_uris).toEqual([REDIRECT]);

      const machine = await registerClient(app, org.id, admin, { redirect_uris: [], grant_types: ["client_credentials"] });
      expect((await patch(machine, { grant_types: ["authorization_code"] })).status).toBe(400);
      expect((await gqlUpdate(machine, { grantTypes: ["authorization_code"] })).errors[0].extensions.code).toBe("VALIDATION_ERROR");
      expect((await stored(machine)).grant_types).toEqual(["client_credentials"]);
    });

    it("accepts an update whose result is valid, even when a field alone would not be", async () => {
      const c = await registerClient(app, org.id, admin, { grant_types: ["authorization_code"] });
      // Dropping the code grant and its redirect URIs together leaves a valid machine client.
      const rest = await patch(c, { grant_types: ["client_credentials"], redirect_uris: [] });
      expect(rest.status, rest.text).toBe(200);
      const gql = await gqlUpdate(c, { grantTypes: ["authorization_code"], redirectUris: [REDIRECT] });
      expect(gql.errors).toBeUndefined();
      expect(gql.data.updateOidcClient).toEqual({ grantTypes: ["authorization_code"], redirectUris: [REDIRECT] });
    });

    it("never lets a public client use client_credentials, even when its stored row allows it", async () => {
      const c = await registerClient(app, org.id, admin, { name: "Legacy CLI", public: true, grant_types: ["authorization_code"] });
      // A row registration and update now refuse (older data, a manual edit).
      await app.container.db.execute(sql`update oidc_clients set grant_types = array['authorization_code','client_credentials'] where client_id = ${c.clientId}`);
      // The answer for a grant type the client is not registered for (RFC 6749 §5.2).
      expect(await oauthError(oc.clientCredentialsGrant(await discover(c)))).toBe("unauthorized_client");
      expect(await countRows(app, "oidc_payloads", `type = 'ClientCredentials' and payload->>'clientId' = '${c.clientId}'`)).toBe(0);
      // Its user-facing grant still works.
      const { tokens } = await codeFlowTokens(await discover(c), member);
      expect(tokens?.access_token).toBeTruthy();
    });
  });

  it("hides another organization's client from its admins (not found, not forbidden)", async () => {
    const c = await registerClient(app, org.id, admin);
    const other = await orgWithRoles(app);
    const res = await app.http.patch(`/api/v1/organizations/${other.org.id}/clients/${c.clientId}`, { name: "stolen" }, { token: other.admin.token });
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe("CLIENT_NOT_FOUND");
  });
});

describe("clients held in memory (client-cache.ts, src/infra/announced-cache.ts)", () => {
  const token = async (c: RegisteredClient) => (await oc.clientCredentialsGrant(await discover(c))).access_token;

  it("stops a client at once when this instance rotates its secret, narrows its grants or deletes it, right after using it", async () => {
    const c = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"] });
    expect(await token(c)).toBeTruthy();
    const rotated = await app.http.post(`/api/v1/organizations/${org.id}/clients/${c.clientId}/rotate-secret`, {}, { token: admin.token });
    const fresh = { clientId: c.clientId, clientSecret: rotated.body.data.client.client_secret as string };
    expect(await oauthError(token(c))).toBe("invalid_client");
    expect(await token(fresh)).toBeTruthy();

    const patched = await app.http.patch(`/api/v1/organizations/${org.id}/clients/${c.clientId}`, { grant_types: ["authorization_code"] }, { token: admin.token });
    expect(patched.status, patched.text).toBe(200);
    expect(await oauthError(token(fresh))).toBe("unauthorized_client");

    const d = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"] });
    expect(await token(d)).toBeTruthy();
    expect((await app.http.delete(`/api/v1/organizations/${org.id}/clients/${d.clientId}`, { token: admin.token })).status).toBe(200);
    expect(await oauthError(token(d))).toBe("invalid_client");
  });

  it("stops a client as soon as a change made elsewhere commits (an organization's deletion, an operator's SQL), long before the TTL", async () => {
    const other = await orgWithRoles(app);
    const c = await registerClient(app, other.org.id, other.admin, { grant_types: ["client_credentials"] });
    const d = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"] });
    expect(await token(c)).toBeTruthy();
    expect(await token(d)).toBeTruthy();
    // The organization's deletion is another module's write; the client's deletion, another instance's.
    expect((await app.http.request("DELETE", `/api/v1/organizations/${other.org.id}`, { token: other.owner.token, body: { confirm: true } })).status).toBe(200);
    await app.container.db.execute(sql`update oidc_clients set deleted_at = now() where client_id = ${d.clientId}`);
    // The database announces both commits (on PostgreSQL over the listener connection, so poll briefly;
    // the cache's TTL is 30 s here).
    for (const client of [c, d]) {
      const until = Date.now() + 2_000;
      const attempt = () => oauthError(token(client)).catch(() => "still accepted");
      let error = await attempt();
      while (error !== "invalid_client" && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 20));
        error = await attempt();
      }
      expect(error).toBe("invalid_client");
    }
  });
});

describe("token storage (adapter.ts)", () => {
  it("a token the database refuses fails its own request only, not the others saved with it", async () => {
    const good = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"] });
    const bad = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"] });
    const db = app.container.db;
    await db.execute(sql.raw(`create function kw_test_refuse_client() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`));
    await db.execute(sql.raw(`create trigger kw_test_refuse_client before insert on oidc_payloads for each row when (new.payload->>'clientId' = '${bad.clientId}') execute function kw_test_refuse_client()`));
    try {
      // Saved in the same turn of the event loop: one statement, which the database refuses.
      const { provider } = app.oidc;
      const [goodClient, badClient] = await Promise.all([provider.Client.find(good.clientId), provider.Client.find(bad.clientId)]);
      const save = (client: typeof goodClient) => new provider.ClientCredentials({ client: client!, scope: "" }).save();
      const results = await Promise.allSettled([save(goodClient), save(badClient), save(goodClient), save(badClient), save(goodClient)]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected", "fulfilled"]);
      expect(await countRows(app, "oidc_payloads", `type = 'ClientCredentials' and payload->>'clientId' = '${good.clientId}'`)).toBe(3);
      for (const r of results) if (r.status === "fulfilled") expect((await oc.tokenIntrospection(await discover(good), r.value)).active).toBe(true);
    } finally {
      await db.execute(sql.raw(`drop trigger kw_test_refuse_client on oidc_payloads`));
      await db.execute(sql.raw(`drop function kw_test_refuse_client()`));
    }
  });

  it("stores a client-credentials token with the record of its issuance, both or neither", async () => {
    const c = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"] });
    const config = await discover(c);
    const issuedRecords = () => countRows(app, "audit_logs", `action = 'oidc.token.issued' and resource_id = '${c.clientId}' and metadata->>'grant_type' = 'client_credentials'`);
    const stored = () => countRows(app, "oidc_payloads", `type = 'ClientCredentials' and payload->>'clientId' = '${c.clientId}'`);
    const token = (await oc.clientCredentialsGrant(config)).access_token;
    expect((await oc.tokenIntrospection(config, token)).active).toBe(true);
    expect([await stored(), await issuedRecords()]).toEqual([1, 1]);

    // The token's row refused: no token, no record of one, and the provider's own server_error.
    const db = app.container.db;
    await db.execute(sql.raw(`create function kw_test_refuse_cc() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`));
    await db.execute(sql.raw(`create trigger kw_test_refuse_cc before insert on oidc_payloads for each row when (new.type = 'ClientCredentials') execute function kw_test_refuse_cc()`));
    try {
      const res = await fetch(`${app.url}/api/v1/oidc/token`, {
        method: "POST",
        headers: { authorization: `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials",
      });
      expect({ status: res.status, body: await res.json() }).toEqual({ status: 500, body: { error: "server_error", error_description: "oops! something went wrong" } });
      expect([await stored(), await issuedRecords()]).toEqual([1, 1]);
      expect(await countRows(app, "audit_logs", `action = 'oidc.error' and resource_id = '${c.clientId}' and metadata->>'error' = 'server_error'`)).toBe(1);
    } finally {
      await db.execute(sql.raw(`drop trigger kw_test_refuse_cc on oidc_payloads`));
      await db.execute(sql.raw(`drop function kw_test_refuse_cc()`));
    }
    expect(await oc.clientCredentialsGrant(config)).toMatchObject({ token_type: expect.stringMatching(/bearer/i) });
    expect([await stored(), await issuedRecords()]).toEqual([2, 2]);
  });

  it("stores every client-credentials token of a burst before answering, several in one statement", async () => {
    const c = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"] });
    const config = await discover(c);
    const answered = await Promise.all(Array.from({ length: 12 }, async () => (await oc.clientCredentialsGrant(config)).access_token));
    // Saved in the same turn of the event loop: one batch.
    const { provider } = app.oidc;
    const client = (await provider.Client.find(c.clientId))!;
    const saved = await Promise.all(Array.from({ length: 12 }, () => new provider.ClientCredentials({ client, scope: "" }).save()));
    const tokens = [...answered, ...saved];
    expect(new Set(tokens).size).toBe(24);
    const answers = await Promise.all(tokens.map((t) => oc.tokenIntrospection(config, t)));
    expect(answers.every((a) => a.active && a.client_id === c.clientId)).toBe(true);
    expect(await countRows(app, "oidc_payloads", `type = 'ClientCredentials' and payload->>'clientId' = '${c.clientId}'`)).toBe(24);
  });
});

describe("consents", () => {
  it("lets a user withdraw consent: the client's tokens stop and it must ask again", async () => {
    const c = await registerClient(app, org.id, admin);
    const config = await discover(c);
    const user = await newUser(app, { fullName: "Consenting" });
    const { tokens } = await codeFlowTokens(config, user);
    const listed = await app.http.get("/api/v1/users/me/consents", { token: user.token });
    expect(listed.body.data.consents).toEqual([expect.objectContaining({ client_id: c.clientId, client_name: "Test RP", scopes: ["email", "openid"] })]);
    const gql = await app.http.gql(`{ myConsents { clientId scopes } }`, {}, { token: user.token });
    expect(gql.data.myConsents).toEqual([{ clientId: c.clientId, scopes: ["email", "openid"] }]);

    const withdrawn = await app.http.delete(`/api/v1/users/me/consents/${c.clientId}`, { token: user.token });
    expect(withdrawn.status).toBe(200);
    expect((await oc.tokenIntrospection(config, tokens!.access_token)).active).toBe(false);
    const again = await codeFlowTokens(config, user);
    expect(again.stop.consentShown).toBe(true);
    expect((await app.http.delete(`/api/v1/users/me/consents/kwc_000000000000000000000000`, { token: user.token })).status).toBe(404);
  });
});

describe("signing keys", () => {
  it("seals private keys at rest and rotates on schedule, publishing the old key through its grace period", async () => {
    expect(await countRows(app, "oidc_signing_keys", "private_jwk_sealed like 'v1.%' and private_jwk_sealed not like '%\"d\"%'")).toBe(2);
    const c = await registerClient(app, org.id, admin);
    const config = await discover(c);
    const jwks = async () => ((await (await fetch(`${app.url}/api/v1/oidc/jwks`)).json()) as { keys: { kid: string; alg: string }[] }).keys;
    const before = await jwks();
    const { tokens } = await codeFlowTokens(config, member);
    const oldKid = JSON.parse(Buffer.from(tokens!.id_token!.split(".")[0]!, "base64url").toString()).kid as string;
    expect(before.map((k) => k.kid)).toContain(oldKid);

    try {
      app.clock.advance(91 * 86_400);
      const rotated = await app.oidc.maintain();
      expect(rotated.created).toHaveLength(2);
      expect(rotated.retired.sort()).toEqual(before.map((k) => k.kid).sort());
      expect(rotated.reloaded).toBe(true);
      const during = await jwks();
      expect(during).toHaveLength(4);
      expect(during.slice(0, 2).map((k) => k.kid).sort()).toEqual(rotated.created.sort());

      // New ID tokens carry the new key id and still validate through discovery + JWKS.
      const user = await newUser(app);
      const fresh = await codeFlowTokens(await discover(c), user);
      const newKid = JSON.parse(Buffer.from(fresh.tokens!.id_token!.split(".")[0]!, "base64url").toString()).kid as string;
      expect(rotated.created).toContain(newKid);

      app.clock.advance(31 * 86_400);
      await app.oidc.maintain();
      expect((await jwks()).map((k) => k.kid).sort()).toEqual(rotated.created.sort());
    } finally {
      app.clock.reset();
    }
  });
});

describe("housekeeping", () => {
  it("purges expired codes, tokens and interactions", async () => {
    const c = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"] });
    await oc.clientCredentialsGrant(await discover(c));
    const before = await countRows(app, "oidc_payloads", "type = 'ClientCredentials'");
    expect(before).toBeGreaterThan(0);
    try {
      app.clock.advance(2 * 3600);
      expect(await app.services.oidcClients.purgeExpired()).toBeGreaterThan(0);
      expect(await countRows(app, "oidc_payloads", "type = 'ClientCredentials'")).toBe(0);
    } finally {
      app.clock.reset();
    }
  });

  it("records token issuance in the organization's activity", async () => {
    const c = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"] });
    await oc.clientCredentialsGrant(await discover(c));
    const res = await app.http.get(`/api/v1/organizations/${org.id}/audit-logs?action=oidc.token.issued`, { token: admin.token });
    expect(res.body.data.audit_logs.find((e: { resource_id: string }) => e.resource_id === c.clientId)).toMatchObject({ success: true, metadata: { grant_type: "client_credentials", client_id: c.clientId } });
  });
});
