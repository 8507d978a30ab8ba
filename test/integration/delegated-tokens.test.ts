import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { isCompositeType, getNamedType, type GraphQLField, type GraphQLSchema } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restRoutes } from "../../rest-shim/index.js";
import { buildGraphqlSchema } from "../../src/graphql/schema.js";
import { API_SCOPE_NAMES } from "../../src/lib/api-scopes.js";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { captureLogger } from "../helpers/log-capture.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";
import { ALL_API_SCOPES, delegatedToken, refreshDelegated, registerClient, REDIRECT } from "../factories/oidc.js";
import { newOrg } from "../factories/orgs.js";
import { login, newSuperadmin, newUser, type TestUser } from "../factories/users.js";

/**
 * Delegated access tokens (OIDC access tokens for Keyward's own API) act for their user only within
 * their scopes: every REST route and GraphQL operation either declares the scope it needs or
 * refuses them, and no scope reaches sessions, credentials, API keys or administration.
 */
let app: TestApp;
let schema: GraphQLSchema;
let user: TestUser;
let orgId: string;
/** One token per scope, and one with all of them. */
const only: Record<string, string> = {};
let all: string;

beforeAll(async () => {
  // Every test signs in through the authorize endpoint several times: lift its per-IP limit.
  app = await startTestApp({ RATE_LIMIT_OIDC_AUTHORIZE: "1000/60", LOG_LEVEL: "error" });
  schema = await buildGraphqlSchema({} as never);
  user = await newUser(app);
  orgId = (await newOrg(app, user)).id;
  all = (await delegatedToken(app, user)).accessToken;
  for (const scope of API_SCOPE_NAMES) only[scope] = (await delegatedToken(app, user, { scopes: [scope] })).accessToken;
});
afterAll(async () => app?.close());

const routes = () => restRoutes({} as never, {} as never);
const otherScope = (scope: string) => API_SCOPE_NAMES.find((s) => s !== scope)!;
const pathFor = (path: string) => path.replace(/:orgId/g, orgId).replace(/:token/g, "not-a-token").replace(/:provider/g, "github").replace(/:clientId/g, "keyward-cli").replace(/:(\w+)/g, () => randomUUID());
const call = (method: string, path: string, token: string) => app.http.request(method.toUpperCase(), `/api/v1${pathFor(path)}`, { token, ...(method === "get" || method === "delete" ? {} : { body: {} }) });

describe("the REST route table", () => {
  it("refuses delegated tokens on every route that declares no scope, whatever the route's own auth", async () => {
    const leaks: string[] = [];
    for (const r of routes().filter((route) => !route.scope)) {
      const res = await call(r.method, r.path, all);
      if (res.status !== 403 || res.body?.error?.type !== "INSUFFICIENT_SCOPE") leaks.push(`${r.method} ${r.path} → ${res.status} ${res.body?.error?.type}`);
    }
    expect(leaks).toEqual([]);
  });

  it("lets a declared route through only with its scope", async () => {
    const wrong: string[] = [];
    for (const r of routes().filter((route) => route.scope)) {
      const without = await call(r.method, r.path, only[otherScope(r.scope!)]!);
      if (without.status !== 403 || without.body?.error?.type !== "INSUFFICIENT_SCOPE") wrong.push(`${r.method} ${r.path} without ${r.scope} → ${without.status}`);
      const withIt = await call(r.method, r.path, only[r.scope!]!);
      if (withIt.status === 401 || withIt.body?.error?.type === "INSUFFICIENT_SCOPE" || withIt.status >= 500) wrong.push(`${r.method} ${r.path} with ${r.scope} → ${withIt.status} ${withIt.body?.error?.type}`);
    }
    expect(wrong).toEqual([]);
  });

  it("declares no scope on a credential, session, API-key, client or admin route", () => {
    const risky = /\/(auth\/(login|logout|sessions|token|totp|mfa|webauthn|external|register|reset|forgot)|admin|api-keys|clients|cli(\/|$)|token_please|users\/me\/(password|email|consents|invites)|members(\/|$)|invites|kill-switch|cas\b|zerotier)/;
    expect(routes().filter((r) => r.scope && (risky.test(r.path) || r.method !== "get" && r.path === "/users/me")).map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });
});

/** A valid document for one root field: every argument as a variable of its declared type. */
function documentFor(kind: "query" | "mutation", field: GraphQLField<unknown, unknown>): string {
  const vars = field.args.map((a) => `$${a.name}: ${a.type.toString()}`);
  const args = field.args.map((a) => `${a.name}: $${a.name}`);
  const selection = isCompositeType(getNamedType(field.type)) ? " { __typename }" : "";
  return `${kind}${vars.length ? `(${vars.join(", ")})` : ""} { ${field.name}${args.length ? `(${args.join(", ")})` : ""}${selection} }`;
}

describe("the GraphQL schema", () => {
  const operations = () => [
    ...Object.values(schema.getQueryType()!.getFields()).map((f) => ["query", f] as const),
    ...Object.values(schema.getMutationType()!.getFields()).map((f) => ["mutation", f] as const),
  ];

  it("refuses delegated tokens on every operation that declares no scope, and passes declared ones only with their scope", async () => {
    const wrong: string[] = [];
    for (const [kind, field] of operations()) {
      const scope = field.extensions?.scope as string | undefined;
      const query = documentFor(kind, field);
      if (!scope) {
        const res = await app.http.gql(query, {}, { token: all });
        if (res.errors?.[0]?.extensions?.code !== "INSUFFICIENT_SCOPE") wrong.push(`${field.name} → ${res.errors?.[0]?.extensions?.code ?? "allowed"}`);
        continue;
      }
      const without = await app.http.gql(query, {}, { token: only[otherScope(scope)] });
      if (without.errors?.[0]?.extensions?.code !== "INSUFFICIENT_SCOPE") wrong.push(`${field.name} without ${scope} → ${without.errors?.[0]?.extensions?.code ?? "allowed"}`);
      const withIt = await app.http.gql(query, {}, { token: only[scope] });
      const code = withIt.errors?.[0]?.extensions?.code;
      if (code === "INSUFFICIENT_SCOPE" || code === "INVALID_TOKEN" || code === "INTERNAL_ERROR") wrong.push(`${field.name} with ${scope} → ${code}`);
    }
    expect(wrong).toEqual([]);
  });

  it("gives each REST route's GraphQL twin the same scope", () => {
    const TWINS: Record<string, string> = {
      "get /auth/me": "me",
      "get /users/me": "me",
      "get /organizations": "myOrganizations",
      "get /organizations/:orgId": "organization",
      "get /users/me/organizations": "myOrganizations",
      "get /users/me/organizations/simple": "myOrganizationsSimple",
      "get /users/me/memberships": "myMemberships",
      "get /ssh/keys": "mySshKeys",
      "post /ssh/keys": "addSshKey",
      "get /ssh/keys/:keyId": "sshKey",
      "patch /ssh/keys/:keyId": "updateSshKeyDescription",
      "patch /ssh/keys/:keyId/update-description": "updateSshKeyDescription",
      "delete /ssh/keys/:keyId": "deleteSshKey",
      "get /ssh/keys/:keyId/verify": "sshKeyChallenge",
      "post /ssh/keys/:keyId/verify": "verifySshKey",
      "get /ssh/dept-cert-policy": "myCertPolicy",
      "post /ssh/sign": "signUserCertificate",
      "get /ssh/certificates": "mySshCertificates",
      "get /ssh/ca/public-key": "caPublicKey",
      "get /ssh/client-config": "mySshClientConfig",
      "get /organizations/:orgId/networks": "portalNetworks",
      "get /organizations/:orgId/devices": "myDevices",
      "get /organizations/:orgId/devices/:deviceId": "device",
      "get /organizations/:orgId/approvals": "myNetworkApprovals",
      "get /organizations/:orgId/memberships": "myNetworkMemberships",
      "post /organizations/:orgId/memberships/activate-all": "activateAllNetworkMemberships",
      "post /organizations/:orgId/memberships/:membershipId/activate": "activateNetworkMembership",
      "post /organizations/:orgId/memberships/:membershipId/deactivate": "deactivateNetworkMembership",
      "post /organizations/:orgId/access-requests": "requestAccess",
      "get /access-requests": "myAccessRequests",
      "post /organizations/:orgId/access-requests/:requestId/cancel": "cancelAccessRequest",
    };
    const fields = { ...schema.getQueryType()!.getFields(), ...schema.getMutationType()!.getFields() };
    const scoped = routes().filter((r) => r.scope);
    expect(scoped.map((r) => `${r.method} ${r.path}`).sort()).toEqual(Object.keys(TWINS).sort());
    const mismatches = scoped.filter((r) => fields[TWINS[`${r.method} ${r.path}`]!]?.extensions?.scope !== r.scope).map((r) => `${r.method} ${r.path}`);
    expect(mismatches).toEqual([]);
    const gqlScoped = Object.values(fields).filter((f) => f.extensions?.scope).map((f) => f.name);
    expect([...new Set(Object.values(TWINS))].sort()).toEqual(gqlScoped.sort());
  });
});

describe("what a delegated token is", () => {
  it("sees the user's organizations in /auth/me only with orgs:read", async () => {
    const listed = await app.http.get("/api/v1/auth/me", { token: all });
    expect(listed.body.data.organizations).toEqual([expect.objectContaining({ id: orgId, role: "owner" })]);
    const profileOnly = await app.http.get("/api/v1/auth/me", { token: only["profile:read"]! });
    expect(profileOnly.status).toBe(200);
    expect(profileOnly.body.data.user.email).toBe(user.email);
    expect(profileOnly.body.data).not.toHaveProperty("organizations");
    expect(JSON.stringify(profileOnly.body)).not.toContain(orgId);
    // How the account signs in is not profile: GET /users/me leaves it out for any token.
    for (const token of [only["profile:read"]!, all]) {
      const profile = await app.http.get("/api/v1/users/me", { token });
      expect(profile.body.data.user.email).toBe(user.email);
      expect(profile.body.data.user).not.toHaveProperty("totp_enabled");
      expect(profile.body.data.user).not.toHaveProperty("linked_providers");
    }
    expect((await app.http.get("/api/v1/users/me", { token: user.token })).body.data.user).toMatchObject({ totp_enabled: false, linked_providers: [] });
  });

  it("acts as its user, never as a superadmin, and never administers an organization it owns", async () => {
    const operator = await newSuperadmin(app);
    const token = (await delegatedToken(app, operator)).accessToken;
    const me = await app.http.get("/api/v1/auth/me", { token });
    expect(me.status).toBe(200);
    expect(me.body.data.user.email).toBe(operator.email);
    expect((await app.http.get("/api/v1/admin/users", { token })).body.error.type).toBe("INSUFFICIENT_SCOPE");
    const gql = await app.http.gql("{ adminUsers { __typename } }", {}, { token });
    expect(gql.errors[0].extensions.code).toBe("INSUFFICIENT_SCOPE");
    // The owner's org, read through the token: allowed; its admin surface: refused.
    const org = await app.http.get(`/api/v1/organizations/${orgId}`, { token: all });
    expect(org.status).toBe(200);
    expect((await app.http.patch(`/api/v1/organizations/${orgId}`, { name: "Taken" }, { token: all })).body.error.type).toBe("INSUFFICIENT_SCOPE");
    expect((await app.http.get(`/api/v1/organizations/${orgId}`, { token: user.token })).body.data.organization.name).not.toBe("Taken");
  });

  it("cannot mint a session, a passkey or an API key, nor sign in a browser on a hosted page", async () => {
    for (const [method, path] of [["get", "/auth/token"], ["post", "/auth/webauthn/register/begin"], ["post", `/organizations/${orgId}/api-keys`], ["post", "/cli/authorize"], ["post", "/auth/login"]] as const) {
      const res = await app.http.request(method.toUpperCase(), `/api/v1${path}`, { token: all, ...(method === "post" ? { body: { email: user.email, password: user.password, name: "k" } } : {}) });
      expect(res.body?.error?.type, path).toBe("INSUFFICIENT_SCOPE");
    }
    const page = await app.http.get("/account", { token: all });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toContain("/login");
  });

  it("answers 401 for garbage, truncated or oversized bearer values, alone and in parallel", async () => {
    const values = ["x", all.slice(0, -1), `${all}x`, "a".repeat(600), "kws_" + "a".repeat(40), "ünïcödé-token-value-1234567890"];
    const answers = await Promise.all(values.flatMap((v) => [app.http.get("/api/v1/auth/me", { token: v }), app.http.gql("{ me { id } }", {}, { token: v })]));
    for (const a of answers) expect(a.status).toBe(401);
    const parallel = await Promise.all(Array.from({ length: 20 }, () => app.http.get("/api/v1/ssh/keys", { token: only["ssh:keys"] })));
    expect(parallel.map((p) => p.status)).toEqual(Array(20).fill(200));
  });

  it("rotates on refresh; a replayed refresh token ends the grant and its access tokens", async () => {
    const first = await delegatedToken(app, user);
    const next = await refreshDelegated(app, first.refreshToken!);
    expect(next.status).toBe(200);
    expect(String(next.body.scope).split(" ").sort()).toEqual([...ALL_API_SCOPES].sort());
    const fresh = String(next.body.access_token);
    expect((await app.http.get("/api/v1/auth/me", { token: fresh })).status).toBe(200);
    // The chain moved on (so this is no retry of a lost answer, see oidc-refresh-grace.test.ts).
    const latest = await refreshDelegated(app, String(next.body.refresh_token));
    expect(latest.status).toBe(200);
    const replay = await refreshDelegated(app, first.refreshToken!);
    expect(replay.body.error).toBe("invalid_grant");
    expect((await app.http.get("/api/v1/auth/me", { token: fresh })).status).toBe(401);
    expect((await app.http.get("/api/v1/auth/me", { token: String(latest.body.access_token) })).status).toBe(401);
  });

  it("refreshes only while the token's account is active and its grant lives, read with the token (adapter.ts)", async () => {
    const u = await newUser(app);
    const t = await delegatedToken(app, u);
    // Rows changed behind the services' back: the token itself stays stored.
    await app.container.db.execute(sql`update users set status = 'suspended' where id = ${u.id}`);
    const refused = await refreshDelegated(app, t.refreshToken!);
    expect(refused.body).toMatchObject({ error: "invalid_grant" });
    await app.container.db.execute(sql`update users set status = 'active' where id = ${u.id}`);
    const next = await refreshDelegated(app, t.refreshToken!);
    expect(next.status).toBe(200);
    await app.container.db.execute(sql`delete from oidc_payloads where type = 'Grant' and payload->>'accountId' = ${u.id}`);
    expect((await refreshDelegated(app, String(next.body.refresh_token))).body).toMatchObject({ error: "invalid_grant" });
  });

  it("answers server_error and spends nothing when a rotation's write fails, as when a save throws", async () => {
    // An app of its own: its log is read, and the trigger below touches no other test.
    const log = captureLogger("error");
    const solo = await startTestApp({}, { logger: log.logger });
    try {
      const u = await newUser(solo);
      const t = await delegatedToken(solo, u);
      const db = solo.container.db;
      const issued = async () =>
        resultRows<{ n: number }>(await db.execute(sql`select count(*)::int as n from audit_logs where action = 'oidc.token.issued' and user_id = ${u.id} and metadata->>'grant_type' = 'refresh_token'`))[0]!.n;
      await db.execute(sql.raw(`create function kw_test_refuse_rotation() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`));
      await db.execute(sql`create trigger kw_test_refuse_rotation before insert on oidc_refresh_tokens for each row execute function kw_test_refuse_rotation()`);
      const failed = await refreshDelegated(solo, t.refreshToken!);
      expect(failed).toEqual({ status: 500, body: { error: "server_error", error_description: "oops! something went wrong" } });
      expect(await issued()).toBe(0);
      expect(log.lines.some((l) => l.msg === "oidc provider error")).toBe(true);
      await db.execute(sql`drop trigger kw_test_refuse_rotation on oidc_refresh_tokens`);
      // The rotation is one statement: the old token was not spent, and works now.
      expect((await refreshDelegated(solo, t.refreshToken!)).status).toBe(200);
      expect(await issued()).toBe(1);
    } finally {
      await solo.close();
    }
  });
});

describe("the built-in keyward-cli client", () => {
  it("asks for consent once, and gets a refresh token that outlives the browser's sign-in", async () => {
    const { OidcAgent } = await import("../helpers/oidc-agent.js");
    const u = await newUser(app);
    const browser = new OidcAgent(app.url);
    await browser.signIn(u.email, u.password);
    const first = await delegatedToken(app, u, { agent: browser, prompt: null });
    expect(first.consentShown).toBe(true);
    expect(first.refreshToken).toBeTruthy();
    const second = await delegatedToken(app, u, { agent: browser, prompt: null });
    expect(second.consentShown).toBe(false);
    expect(second.refreshToken).toBeTruthy();
    // Signing the browser out of Keyward leaves the CLI signed in (its own grant, not the browser's session).
    expect((await browser.fetch(`${app.url}/api/v1/auth/logout`, { method: "POST", headers: { origin: app.url } })).status).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { token: second.accessToken })).status).toBe(200);
    expect((await refreshDelegated(app, second.refreshToken!)).status).toBe(200);
  });
});

describe("which clients may ask", () => {
  it("refuses the API to a client no superadmin allowed, and honours narrowing at once", async () => {
    const admin = await newUser(app);
    const org = await newOrg(app, admin);
    const client = await registerClient(app, org.id, admin);
    const refused = await delegatedToken(app, admin, { clientId: client.clientId, clientSecret: client.clientSecret, redirectUri: REDIRECT }).catch((e: Error) => e.message);
    expect(String(refused)).toContain("invalid_target");
    // An org admin cannot grant API scopes to their own client.
    const selfGrant = await app.http.patch(`/api/v1/organizations/${org.id}/clients/${client.clientId}`, { allowed_api_scopes: ["ssh:sign"] }, { token: admin.token });
    expect(selfGrant.status).toBe(400);
    expect((await app.http.patch(`/api/v1/admin/oidc-clients/${client.clientId}`, { allowed_api_scopes: ["ssh:sign"] }, { token: admin.token })).status).toBe(403);

    const operator = await newSuperadmin(app);
    const allowed = await app.http.patch(`/api/v1/admin/oidc-clients/${client.clientId}`, { allowed_api_scopes: ["profile:read", "ssh:keys"] }, { token: operator.token });
    expect(allowed.status).toBe(200);
    expect(allowed.body.data.client.allowed_api_scopes).toEqual(["profile:read", "ssh:keys"]);
    const granted = await delegatedToken(app, admin, { clientId: client.clientId, clientSecret: client.clientSecret, redirectUri: REDIRECT });
    // Asked for all five, got the two it may have.
    expect(granted.scope.split(" ").sort()).toEqual(["profile:read", "ssh:keys"]);
    expect((await app.http.get("/api/v1/ssh/keys", { token: granted.accessToken })).status).toBe(200);

    await app.http.patch(`/api/v1/admin/oidc-clients/${client.clientId}`, { allowed_api_scopes: ["profile:read"] }, { token: operator.token });
    expect((await app.http.get("/api/v1/ssh/keys", { token: granted.accessToken })).body.error.type).toBe("INSUFFICIENT_SCOPE");
    expect((await app.http.get("/api/v1/auth/me", { token: granted.accessToken })).status).toBe(200);

    // Removing the client ends its tokens.
    expect((await app.http.delete(`/api/v1/organizations/${org.id}/clients/${client.clientId}`, { token: admin.token })).status).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { token: granted.accessToken })).status).toBe(401);
  });

  it("keeps the built-in keyward-cli client out of every organization's reach", async () => {
    const res = await app.http.delete(`/api/v1/organizations/${orgId}/clients/keyward-cli`, { token: user.token });
    expect(res.status).toBe(404);
    const list = await app.http.get(`/api/v1/organizations/${orgId}/clients`, { token: user.token });
    expect(list.body.data.clients.map((c: { client_id: string }) => c.client_id)).not.toContain("keyward-cli");
    const operator = await newSuperadmin(app);
    const builtIn = await app.http.get("/api/v1/admin/oidc-clients", { token: operator.token });
    expect(builtIn.body.data.clients).toEqual([expect.objectContaining({ client_id: "keyward-cli", built_in: true, public: true, organization_id: null })]);
  });

  it("refuses a client-credentials token for the API (it would act for nobody)", async () => {
    const admin = await newUser(app);
    const org = await newOrg(app, admin);
    const client = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"], redirect_uris: [] });
    const operator = await newSuperadmin(app);
    await app.http.patch(`/api/v1/admin/oidc-clients/${client.clientId}`, { allowed_api_scopes: ["profile:read"] }, { token: operator.token });
    const res = await fetch(`${app.url}/api/v1/oidc/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString("base64")}` },
      body: new URLSearchParams({ grant_type: "client_credentials", resource: `${app.url}/api/v1`, scope: "profile:read" }),
    });
    expect((await res.json()).error).toBe("invalid_target");
  });
});

describe("tokens die with", () => {
  const alive = async (token: string) => (await app.http.get("/api/v1/auth/me", { token })).status;

  it("consent withdrawal, and the refresh token with them", async () => {
    const u = await newUser(app);
    const t = await delegatedToken(app, u);
    expect(await alive(t.accessToken)).toBe(200);
    expect((await app.http.delete("/api/v1/users/me/consents/keyward-cli", { token: u.token })).status).toBe(200);
    expect(await alive(t.accessToken)).toBe(401);
    expect((await refreshDelegated(app, t.refreshToken!)).body.error).toBe("invalid_grant");
  });

  it("signing out everywhere else, and a password reset", async () => {
    const u = await newUser(app);
    const t = await delegatedToken(app, u);
    expect((await app.http.delete("/api/v1/auth/sessions", { token: u.token })).status).toBe(200);
    expect(await alive(t.accessToken)).toBe(401);
    expect((await refreshDelegated(app, t.refreshToken!)).status).toBe(400);

    const again = await delegatedToken(app, u);
    await app.http.post("/api/v1/auth/forgot-password", { email: u.email });
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.lastWith(u.email, "/reset-password?token="), "/reset-password"));
    expect((await app.http.post("/api/v1/auth/reset-password", { token, password: "a brand new passphrase 42" })).status).toBe(200);
    expect(await alive(again.accessToken)).toBe(401);
  });

  it("suspension and deletion of the account", async () => {
    const operator = await newSuperadmin(app);
    const u = await newUser(app);
    const t = await delegatedToken(app, u);
    expect((await app.http.post(`/api/v1/admin/users/${u.id}/suspend`, { reason: "test" }, { token: operator.token })).status).toBe(200);
    expect(await alive(t.accessToken)).toBe(401);

    const v = await newUser(app);
    const tv = await delegatedToken(app, v);
    expect((await app.http.request("DELETE", "/api/v1/users/me", { token: v.token, body: { password: v.password } })).status).toBe(200);
    expect(await alive(tv.accessToken)).toBe(401);
    expect((await login(app, v.email, v.password)).status).toBe(401);
  });
});
