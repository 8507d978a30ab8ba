import { generateKeyPairSync } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { Browser, startIdp, type RealIdp } from "../helpers/oidc-idp.js";
import { SoftAuthenticator } from "../helpers/soft-authenticator.js";
import { errorOf as landingError, githubAccount, newBrowser, runExternalFlow, startFakeIdps, type FakeIdps } from "../helpers/external-idp.js";
import { login, newSuperadmin, newUser, PASSWORD } from "../factories/users.js";
import { newApiKey } from "../factories/api-keys.js";
import { newOrg, orgWithRoles } from "../factories/orgs.js";

/**
 * Enterprise sign-in through an organization's own OpenID Connect provider (issue 35), against a
 * REAL provider (oidc-provider, Entra-shaped, ../shared/tools/oidc-idp) walked like a browser:
 * connections and their tenancy, home-realm discovery, just-in-time accounts with mapped role and
 * departments, consent linking, mix-up, replay and state checks, SSO-required, and a JIT race.
 */
let app: TestApp;
let idp: RealIdp;
let entra: RealIdp;
let consumer: FakeIdps;
let callback: string;
const tag = Date.now().toString(36);
const DOMAIN = `acme-${tag}.test`;
const OTHER = `elsewhere-${tag}.test`;
const ENTRA_DOMAIN = `contoso-${tag}.test`;
const at = (local: string, domain = DOMAIN) => `${local}@${domain}`;

beforeAll(async () => {
  // Many sign-ins from one loopback address: the per-IP flow limit is raised for the suite.
  consumer = await startFakeIdps();
  app = await startTestApp({ ...consumer.env, RATE_LIMIT_OAUTH: "1000/60" });
  consumer.register(app);
  callback = `${app.url}/sso/oidc/callback`;
  [idp, entra] = await Promise.all([
    startIdp({
      redirectUri: callback,
      users: [
        `${at("alice")}:alice-pass:Alice Admin:admins,engineering`,
        `${at("bob")}:bob-pass:Bob Builder:engineering`,
        `${at("dave")}:dave-pass:Dave Existing:engineering`,
        `${at("erin", OTHER)}:erin-pass:Erin Outside:engineering`,
        `${at("race")}:race-pass:Race Condition:engineering`,
        `${at("olga")}:olga-pass:Olga Owner:owners`,
        `${at("sam")}:sam-pass:Sam Scim:engineering`,
      ],
    }),
    startIdp({ redirectUri: callback, issuerPath: "/5f2b1c1e-0000-4000-8000-000000000001/v2.0", users: [`${at("zoe", ENTRA_DOMAIN)}:zoe-pass:Zoe Entra:staff`] }),
  ]);
});
afterAll(async () => {
  await app?.close();
  idp?.stop();
  entra?.stop();
  await consumer?.close();
});

const base = (orgId: string) => `/api/v1/organizations/${orgId}/sso/connections`;

async function verifyDomain(orgId: string, domain: string) {
  await app.container.db.execute(
    sql`insert into organization_domains (organization_id, domain, verification_token, status, verified_at) values (${orgId}, ${domain}, ${`tok-${domain}`}, 'verified', now())`,
  );
}

async function departmentIn(orgId: string, token: string, name: string): Promise<string> {
  const res = await app.http.post(`/api/v1/organizations/${orgId}/departments`, { name }, { token });
  expect(res.status).toBe(201);
  return res.body.data.department.id;
}

async function audit(orgId: string, prefix: string) {
  return resultRows<{ action: string; success: boolean; user_id: string | null; metadata: Record<string, unknown> }>(
    await app.container.db.execute(sql`select action, success, user_id, metadata from audit_logs where organization_id = ${orgId} and action like ${`${prefix}%`} order by created_at, id`),
  );
}

async function membership(orgId: string, userId: string) {
  const [row] = resultRows<{ role: string }>(await app.container.db.execute(sql`select role from org_memberships where organization_id = ${orgId} and user_id = ${userId} and deleted_at is null`));
  return row?.role ?? null;
}

async function departmentsOf(userId: string) {
  return resultRows<{ department_id: string }>(await app.container.db.execute(sql`select department_id from department_members where user_id = ${userId} order by department_id`)).map((r) => r.department_id);
}

/** The whole browser journey: start, the provider's form, the callback. Returns the landing and session cookie. */
async function signIn(start: string, user: { username: string; password: string }, browser = new Browser()) {
  const started = await browser.fetch(start.startsWith("http") ? start : `${app.url}${start}`);
  expect(started.status, await started.clone().text()).toBe(303);
  const back = await browser.loginAtIdp(started.headers.get("location")!, user, callback);
  const done = await browser.fetch(back);
  expect(done.status).toBe(303);
  const landing = new URL(done.headers.get("location")!);
  const sid = done.headers.getSetCookie().find((c) => c.includes(".sid="))?.split(";")[0];
  return { landing, sid, browser, callbackUrl: back };
}

async function me(cookie: string) {
  return app.http.get("/api/v1/users/me", { cookie });
}

let org: { id: string };
let owner: Awaited<ReturnType<typeof orgWithRoles>>["owner"];
let admin: Awaited<ReturnType<typeof orgWithRoles>>["admin"];
let member: Awaited<ReturnType<typeof orgWithRoles>>["member"];
let connectionId: string;
let eng: string;
let ops: string;

describe("SSO connections: admins of the organization only; secrets write-only", () => {
  it("creates an OIDC connection from the issuer's discovery, never returning the secret", async () => {
    ({ org, owner, admin, member } = await orgWithRoles(app));
    await verifyDomain(org.id, DOMAIN);
    eng = await departmentIn(org.id, owner.token, "Engineering");
    ops = await departmentIn(org.id, owner.token, "Ops");
    const created = await app.http.post(
      `${base(org.id)}/oidc`,
      {
        name: "Acme IdP",
        issuer: idp.issuer,
        client_id: idp.clientId,
        client_secret: idp.clientSecret,
        default_role: "guest",
        group_mappings: [
          { group: "admins", role: "admin" },
          { group: "engineering", role: "member", department_ids: [eng] },
          { group: "operations", department_ids: [ops] },
        ],
      },
      { token: admin.token },
    );
    expect(created.status, created.text).toBe(201);
    const c = created.body.data.connection;
    expect(c).toMatchObject({ kind: "oidc", enabled: true, issuer: idp.issuer, client_id: idp.clientId, has_secret: true, default_role: "guest", redirect_uri: callback });
    expect(created.text).not.toContain(idp.clientSecret);
    connectionId = c.id;
    const listed = await app.http.get(base(org.id), { token: owner.token });
    expect(listed.body.data.count).toBe(1);
    expect(listed.text).not.toContain(idp.clientSecret);
    const [row] = resultRows<{ secret_sealed: string }>(await app.container.db.execute(sql`select secret_sealed from sso_connections where id = ${connectionId}`));
    expect(row!.secret_sealed.startsWith("v1.")).toBe(true);
    expect(row!.secret_sealed).not.toContain(idp.clientSecret);
    const gql = await app.http.gql("query($orgId: ID!) { ssoConnections(orgId: $orgId) { id name hasSecret issuer } }", { orgId: org.id }, { token: admin.token });
    expect(gql.data.ssoConnections).toEqual([{ id: connectionId, name: "Acme IdP", hasSecret: true, issuer: idp.issuer }]);
    expect((await audit(org.id, "sso.connection")).map((r) => r.action)).toEqual(["sso.connection.created"]);
  });

  it("refuses members, other organizations' admins, malformed input, an owner mapping and a bad issuer", async () => {
    const body = { name: "x", issuer: idp.issuer, client_id: "keyward", client_secret: "s" };
    expect((await app.http.post(`${base(org.id)}/oidc`, body, { token: member.token })).status).toBe(403);
    expect((await app.http.get(base(org.id), { token: member.token })).status).toBe(403);
    const stranger = await newUser(app);
    const strangerOrg = await newOrg(app, stranger);
    expect((await app.http.post(`${base(org.id)}/oidc`, body, { token: stranger.token })).status).toBe(404);
    expect((await app.http.patch(`${base(org.id)}/${connectionId}`, { require_sso: true }, { token: stranger.token })).status).toBe(404);
    // Their own organization does not reach ours through the connection id.
    expect((await app.http.patch(`${base(strangerOrg.id)}/${connectionId}`, { require_sso: true }, { token: stranger.token })).status).toBe(404);
    expect((await app.http.delete(`${base(strangerOrg.id)}/${connectionId}`, { token: stranger.token })).status).toBe(404);
    const malformed = await app.http.post(`${base(org.id)}/oidc`, { name: "", issuer: "not a url", client_id: "" }, { token: admin.token });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.type).toBe("VALIDATION_ERROR");
    const owners = await app.http.post(`${base(org.id)}/oidc`, { ...body, group_mappings: [{ group: "owners", role: "owner" }] }, { token: admin.token });
    expect(owners.status).toBe(400);
    expect((await app.http.post(`${base(org.id)}/oidc`, { ...body, default_role: "owner" }, { token: admin.token })).status).toBe(400);
    const insecure = await app.http.post(`${base(org.id)}/oidc`, { ...body, issuer: "http://idp.example.org" }, { token: admin.token });
    expect(insecure.status).toBe(400);
    expect(insecure.body.error.type).toBe("SSO_DISCOVERY_FAILED");
    // A discovery document whose issuer is not the one given (the Entra tenant's, asked at its host).
    const mismatch = await app.http.post(`${base(org.id)}/oidc`, { ...body, issuer: `${entra.issuer}/extra` }, { token: admin.token });
    expect(mismatch.status).toBe(400);
    expect((await app.http.post(`${base(org.id)}/oidc`, { name: "x", issuer: idp.issuer, client_id: "keyward" }, { token: admin.token })).status).toBe(400);
    // private_key_jwt takes a PKCS#8 private key (sealed, write-only) instead of a secret.
    const jwtBody = { name: "JWT client", issuer: idp.issuer, client_id: "keyward-jwt", auth_method: "private_key_jwt", enabled: false };
    expect((await app.http.post(`${base(org.id)}/oidc`, { ...jwtBody, private_key: "not a key" }, { token: admin.token })).status).toBe(400);
    expect((await app.http.post(`${base(org.id)}/oidc`, { ...jwtBody, client_secret: "a secret is not a key" }, { token: admin.token })).status).toBe(400);
    // A client registered at the provider with its public key (dynamic registration, RFC 7591).
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const pem = pair.privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    const registered = await fetch(idp.registrationEndpoint, {
      method: "POST",
      headers: { authorization: `Bearer ${idp.initialAccessToken}`, "content-type": "application/json" },
      body: JSON.stringify({
        redirect_uris: [callback],
        token_endpoint_auth_method: "private_key_jwt",
        token_endpoint_auth_signing_alg: "ES256",
        jwks: { keys: [{ ...pair.publicKey.export({ format: "jwk" }), alg: "ES256", use: "sig" }] },
      }),
    });
    expect(registered.status).toBe(201);
    const jwtClientId = ((await registered.json()) as { client_id: string }).client_id;
    const jwt = await app.http.post(`${base(org.id)}/oidc`, { ...jwtBody, client_id: jwtClientId, private_key: pem, enabled: true }, { token: admin.token });
    expect(jwt.status, jwt.text).toBe(201);
    expect(jwt.body.data.connection).toMatchObject({ auth_method: "private_key_jwt", has_secret: true });
    expect(jwt.text).not.toContain("PRIVATE KEY");
    // The code is redeemed with a signed client assertion and the ID token's claims are read: Erin's
    // address is outside the organization's domains, so the answer is that refusal (nothing is created).
    const viaJwt = await signIn(`/sso/start/${jwt.body.data.connection.id}`, { username: at("erin", OTHER), password: "erin-pass" });
    expect(viaJwt.landing.searchParams.get("error_type")).toBe("SSO_EMAIL_NOT_ALLOWED");
    expect((await app.http.delete(`${base(org.id)}/${jwt.body.data.connection.id}`, { token: admin.token })).status).toBe(200);
    const superadmin = await newSuperadmin(app);
    expect((await app.http.get(base(org.id), { token: superadmin.token })).status).toBe(200);
  });
});

describe("SSO connections over GraphQL", () => {
  it("creates, updates and deletes a connection with the same rules as REST", async () => {
    const create = `mutation($orgId: ID!, $input: CreateOidcConnectionInput!) { createOidcConnection(orgId: $orgId, input: $input) { id enabled hasSecret defaultRole groupMappings { group role departmentIds } } }`;
    const input = { name: "Second", issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, enabled: false, groupMappings: [{ group: "engineering", departmentIds: [eng] }] };
    const created = await app.http.gql(create, { orgId: org.id, input }, { token: admin.token });
    expect(created.errors).toBeUndefined();
    expect(created.data.createOidcConnection).toMatchObject({ enabled: false, hasSecret: true, defaultRole: "member", groupMappings: [{ group: "engineering", role: null, departmentIds: [eng] }] });
    const id = created.data.createOidcConnection.id;
    const refused = await app.http.gql(create, { orgId: org.id, input: { ...input, defaultRole: "owner" } }, { token: admin.token });
    expect(refused.errors[0].extensions.code).toBe("VALIDATION_ERROR");
    const byMember = await app.http.gql(create, { orgId: org.id, input }, { token: member.token });
    expect(byMember.errors[0].extensions.code).toBe("AUTHORIZATION_ERROR");
    const updated = await app.http.gql(
      `mutation($orgId: ID!, $id: ID!, $input: UpdateSsoConnectionInput!) { updateSsoConnection(orgId: $orgId, connectionId: $id, input: $input) { name sessionMaxAgeSeconds } }`,
      { orgId: org.id, id, input: { name: "Renamed", sessionMaxAgeSeconds: 3600 } },
      { token: admin.token },
    );
    expect(updated.data.updateSsoConnection).toEqual({ name: "Renamed", sessionMaxAgeSeconds: 3600 });
    const deleted = await app.http.gql(`mutation($orgId: ID!, $id: ID!) { deleteSsoConnection(orgId: $orgId, connectionId: $id) { id enabled } }`, { orgId: org.id, id }, { token: admin.token });
    expect(deleted.data.deleteSsoConnection).toEqual({ id, enabled: false });
    expect((await app.http.get(base(org.id), { token: admin.token })).body.data.count).toBe(1);
  });
});

describe("signing in through the organization's identity provider", () => {
  it("answers an address without SSO as it answers an unclaimed domain (no enumeration beyond routing)", async () => {
    const browser = new Browser();
    for (const email of [at("nobody", `unclaimed-${tag}.test`), at("x", OTHER), "not-an-email"]) {
      const res = await browser.fetch(`${app.url}/sso/start?email=${encodeURIComponent(email)}`);
      expect(res.status).toBe(404);
      expect((await res.json()).error.type).toBe("SSO_NOT_AVAILABLE");
    }
    expect((await browser.fetch(`${app.url}/sso/start/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  });

  it("creates a managed account just in time, with the mapped role and department, and re-applies the mapping", async () => {
    const first = await signIn(`/sso/start?email=${encodeURIComponent(at("alice"))}`, { username: at("alice"), password: "alice-pass" });
    expect(first.landing.searchParams.get("error_type")).toBeNull();
    expect(first.sid).toBeTruthy();
    const profile = await me(first.sid!);
    expect(profile.status).toBe(200);
    const user = profile.body.data.user;
    expect(user).toMatchObject({ email: at("alice"), full_name: "Alice Admin" });
    expect(user.managed_by).toMatchObject({ id: org.id });
    expect(user.email_verified).toBe(true);
    // admins → admin (the highest mapped role); engineering → the Engineering department.
    expect(await membership(org.id, user.id)).toBe("admin");
    expect(await departmentsOf(user.id)).toEqual([eng]);

    // The admin changes the mapping; the next sign-in applies it: engineering now puts people in
    // Ops, and Engineering is for a group Alice is not in (so she leaves it); admins map to nothing.
    const mappings = [
      { group: "engineering", role: "member", department_ids: [ops] },
      { group: "platform", role: "admin", department_ids: [eng] },
    ];
    const changed = await app.http.patch(`${base(org.id)}/${connectionId}`, { group_mappings: mappings }, { token: admin.token });
    expect(changed.status).toBe(200);
    const again = await signIn(`/sso/start/${connectionId}`, { username: at("alice"), password: "alice-pass" });
    expect(again.sid).toBeTruthy();
    expect((await me(again.sid!)).body.data.user.id).toBe(user.id);
    expect(await membership(org.id, user.id)).toBe("member");
    expect((await departmentsOf(user.id)).sort()).toEqual([ops]);
    const logins = await audit(org.id, "sso.");
    expect(logins.filter((r) => r.action === "sso.login").map((r) => [r.metadata.connectionId, r.metadata.newAccount])).toEqual([
      [connectionId, true],
      [connectionId, false],
    ]);
    expect(logins.some((r) => r.action === "sso.jit.provisioned")).toBe(true);
    expect(logins.some((r) => r.action === "sso.membership.synced")).toBe(true);
    const activity = await app.http.get(`/api/v1/organizations/${org.id}/audit-logs`, { token: owner.token });
    expect(activity.status).toBe(200);
    expect(activity.text).toContain("sso.login");
  });

  it("never makes an owner: a group mapped to nothing gives the default role", async () => {
    const olga = await signIn(`/sso/start?email=${encodeURIComponent(at("olga"))}`, { username: at("olga"), password: "olga-pass" });
    const id = (await me(olga.sid!)).body.data.user.id;
    expect(await membership(org.id, id)).toBe("guest");
  });

  it("refuses an address outside the organization's verified domains", async () => {
    const erin = await signIn(`/sso/start/${connectionId}`, { username: at("erin", OTHER), password: "erin-pass" });
    expect(erin.sid).toBeUndefined();
    expect(erin.landing.searchParams.get("error_type")).toBe("SSO_EMAIL_NOT_ALLOWED");
  });

  it("never links an existing account silently; links it once its holder asks while signed in", async () => {
    const dave = await newUser(app, { email: at("dave") });
    const refused = await signIn(`/sso/start?email=${encodeURIComponent(at("dave"))}`, { username: at("dave"), password: "dave-pass" });
    expect(refused.sid).toBeUndefined();
    // A pending link for its holder to confirm (test/integration/sso-consent-link.test.ts); nothing linked yet.
    expect(refused.landing.pathname).toBe("/login");
    expect(refused.landing.searchParams.get("sso_link")).toBeTruthy();
    expect(await membership(org.id, dave.id)).toBeNull();

    const browser = new Browser();
    const started = await app.http.post(`/api/v1/sso/link/${connectionId}`, {}, { token: dave.token });
    expect(started.status).toBe(200);
    // The binding cookie goes to the browser that follows the link.
    const binding = started.headers.getSetCookie().find((c) => c.startsWith("keyward.sso="))!.split(";")[0]!;
    const back = await browser.loginAtIdp(started.body.data.authorization_url, { username: at("dave"), password: "dave-pass" }, callback);
    const done = await fetch(back, { headers: { cookie: binding }, redirect: "manual" });
    expect(done.status).toBe(303);
    expect(new URL(done.headers.get("location")!).searchParams.get("error_type")).toBeNull();
    expect(await membership(org.id, dave.id)).toBe("member");
    const linked = await signIn(`/sso/start/${connectionId}`, { username: at("dave"), password: "dave-pass" });
    expect((await me(linked.sid!)).body.data.user.id).toBe(dave.id);
    expect((await audit(org.id, "sso.link")).map((r) => r.action)).toEqual(["sso.link.pending", "sso.link.started", "sso.linked"]);
  });

  it("signs in an account the organization provisioned (SCIM) without a consent step, and links it", async () => {
    const key = await newApiKey(app, org.id, owner, { name: "provisioning", scopes: ["scim"] });
    const created = await app.http.request("POST", "/scim/v2/Users", {
      token: key.key,
      body: { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: at("sam"), name: { givenName: "Sam", familyName: "Scim" }, active: true },
      headers: { "content-type": "application/scim+json" },
    });
    expect(created.status, created.text).toBe(201);
    const samId = created.body.id as string;
    const sam = await signIn(`/sso/start?email=${encodeURIComponent(at("sam"))}`, { username: at("sam"), password: "sam-pass" });
    expect(sam.landing.searchParams.get("sso_link")).toBeNull();
    expect(sam.sid).toBeTruthy();
    expect((await me(sam.sid!)).body.data.user.id).toBe(samId);
    // Linked once, on the organization's word (rule 16), with the mapping applied.
    expect(await departmentsOf(samId)).toEqual([ops]); // engineering maps to Ops since the mapping test
    const linked = (await audit(org.id, "sso.link")).filter((r) => r.metadata.subject && r.metadata.managedByOrganization);
    expect(linked).toHaveLength(1);
    const again = await signIn(`/sso/start/${connectionId}`, { username: at("sam"), password: "sam-pass" });
    expect((await me(again.sid!)).body.data.user.id).toBe(samId);
  });

  it("refuses a wrong state, a replayed callback, another browser and a code from another connection's issuer", async () => {
    const bob = { username: at("bob"), password: "bob-pass" };
    const browser = new Browser();
    const started = await browser.fetch(`${app.url}/sso/start/${connectionId}`);
    const back = await browser.loginAtIdp(started.headers.get("location")!, bob, callback);
    const wrongState = new URL(back);
    wrongState.searchParams.set("state", "x".repeat(43));
    const errorOf = async (res: Response) => new URL(res.headers.get("location")!).searchParams.get("error_type");
    expect(await errorOf(await browser.fetch(wrongState.toString()))).toBe("OAUTH_STATE_INVALID");
    // Another browser (no binding cookie) cannot complete it.
    expect(await errorOf(await fetch(back, { redirect: "manual" }))).toBe("OAUTH_STATE_INVALID");
    // The state was taken by that attempt: replaying it in the right browser fails too.
    const replay = await browser.fetch(back);
    expect(await errorOf(replay)).toBe("OAUTH_STATE_INVALID");
    expect(replay.headers.getSetCookie().some((c) => c.includes(".sid="))).toBe(false);

    // A successful callback cannot be replayed.
    const ok = await signIn(`/sso/start/${connectionId}`, bob);
    expect(ok.sid).toBeTruthy();
    expect(await errorOf(await ok.browser.fetch(ok.callbackUrl))).toBe("OAUTH_STATE_INVALID");

    // Mix-up: the Entra tenant's answer delivered to a flow started for this connection.
    const other = await newOrg(app, owner);
    await verifyDomain(other.id, ENTRA_DOMAIN);
    const entraConn = await app.http.post(`${base(other.id)}/oidc`, { name: "Contoso Entra", issuer: entra.issuer, client_id: entra.clientId, client_secret: entra.clientSecret }, { token: owner.token });
    expect(entraConn.status, entraConn.text).toBe(201);
    const mixBrowser = new Browser();
    const startA = await mixBrowser.fetch(`${app.url}/sso/start/${connectionId}`);
    const stateA = new URL(startA.headers.get("location")!).searchParams.get("state")!;
    const startB = await mixBrowser.fetch(`${app.url}/sso/start/${entraConn.body.data.connection.id}`);
    const backB = new URL(await mixBrowser.loginAtIdp(startB.headers.get("location")!, { username: at("zoe", ENTRA_DOMAIN), password: "zoe-pass" }, callback));
    expect(backB.searchParams.get("iss")).toBe(entra.issuer);
    const stripped = new URL(backB);
    backB.searchParams.set("state", stateA);
    const mixed = await mixBrowser.fetch(backB.toString());
    expect(await errorOf(mixed)).toBe("OAUTH_ERROR");
    expect(mixed.headers.getSetCookie().some((c) => c.includes(".sid="))).toBe(false);
    // Without the iss parameter, or with this connection's issuer claimed, it is refused all the same.
    for (const iss of [null, idp.issuer]) {
      const again = await mixBrowser.fetch(`${app.url}/sso/start/${connectionId}`);
      stripped.searchParams.set("state", new URL(again.headers.get("location")!).searchParams.get("state")!);
      if (iss) stripped.searchParams.set("iss", iss);
      else stripped.searchParams.delete("iss");
      const res = await mixBrowser.fetch(stripped.toString());
      expect(await errorOf(res)).toBe("OAUTH_ERROR");
      expect(res.headers.getSetCookie().some((c) => c.includes(".sid="))).toBe(false);
    }
    const failures = await audit(org.id, "sso.login_failed");
    expect(failures.filter((r) => r.metadata.code === "OAUTH_ERROR").length).toBeGreaterThanOrEqual(3);
  });

  it("refuses an ID token signed with an algorithm the connection does not allow, and a suspended account", async () => {
    const bob = { username: at("bob"), password: "bob-pass" };
    expect((await app.http.patch(`${base(org.id)}/${connectionId}`, { allowed_id_token_algs: ["PS256"] }, { token: admin.token })).status).toBe(200);
    const wrongAlg = await signIn(`/sso/start/${connectionId}`, bob);
    expect(wrongAlg.sid).toBeUndefined();
    expect(wrongAlg.landing.searchParams.get("error_type")).toBe("OAUTH_ERROR");
    expect((await app.http.patch(`${base(org.id)}/${connectionId}`, { allowed_id_token_algs: ["RS256", "ES256"] }, { token: admin.token })).status).toBe(200);
    const ok = await signIn(`/sso/start/${connectionId}`, bob);
    const bobId = (await me(ok.sid!)).body.data.user.id;
    await app.container.db.execute(sql`update users set status = 'suspended', suspended_at = now() where id = ${bobId}`);
    const suspended = await signIn(`/sso/start/${connectionId}`, bob);
    expect(suspended.sid).toBeUndefined();
    expect(suspended.landing.searchParams.get("error_type")).toBe("ACCOUNT_SUSPENDED");
    await app.container.db.execute(sql`update users set status = 'active', suspended_at = null where id = ${bobId}`);
  });

  it("signs in through an Entra-style issuer with a tenant path", async () => {
    const zoe = await signIn(`/sso/start?email=${encodeURIComponent(at("zoe", ENTRA_DOMAIN))}`, { username: at("zoe", ENTRA_DOMAIN), password: "zoe-pass" });
    expect(zoe.landing.searchParams.get("error_type")).toBeNull();
    expect((await me(zoe.sid!)).body.data.user.email).toBe(at("zoe", ENTRA_DOMAIN));
  });

  it("makes one account of twenty parallel first sign-ins of the same person", async () => {
    const browser = new Browser();
    const callbacks: string[] = [];
    for (let i = 0; i < 20; i++) {
      const started = await browser.fetch(`${app.url}/sso/start/${connectionId}`);
      callbacks.push(await browser.loginAtIdp(started.headers.get("location")!, { username: at("race"), password: "race-pass" }, callback));
    }
    const results = await Promise.all(callbacks.map((u) => browser.fetch(u)));
    const errors = results.map((r) => new URL(r.headers.get("location")!).searchParams.get("error_type"));
    expect(errors.filter((e) => e !== null)).toEqual([]);
    const rows = resultRows<{ n: number | string }>(await app.container.db.execute(sql`select count(*) as n from users where email = ${at("race")}`));
    expect(Number(rows[0]!.n)).toBe(1);
    const ids = resultRows<{ n: number | string }>(await app.container.db.execute(sql`select count(*) as n from sso_identities where connection_id = ${connectionId} and email = ${at("race")}`));
    expect(Number(ids[0]!.n)).toBe(1);
  });
});

describe("SSO required for the organization's verified domains", () => {
  it("refuses password sign-in with SSO_REQUIRED and bounds SSO sessions", async () => {
    const carl = await newUser(app, { email: at("carl") });
    expect((await login(app, at("carl"), PASSWORD)).status).toBe(200);
    const authenticator = new SoftAuthenticator(app.url, "localhost");
    const reg = await app.http.post("/api/v1/auth/webauthn/register/begin", {}, { token: carl.token });
    const enrolled = await app.http.post("/api/v1/auth/webauthn/register/complete", { challenge_id: reg.body.data.challenge_id, response: authenticator.register(reg.body.data.options), name: "Laptop" }, { token: carl.token });
    expect(enrolled.status, enrolled.text).toBe(201);
    const changed = await app.http.patch(`${base(org.id)}/${connectionId}`, { require_sso: true, session_max_age_seconds: 600 }, { token: admin.token });
    expect(changed.status).toBe(200);
    const refused = await login(app, at("carl"), PASSWORD);
    expect(refused.status).toBe(403);
    expect(refused.body.error.type).toBe("SSO_REQUIRED");
    expect(refused.text).toContain("/sso/start?email=");
    // Nor with a passkey: the organization's provider decides who is in.
    const passkeyBegin = await app.http.post("/api/v1/auth/webauthn/login/begin", {});
    const passkey = await app.http.post("/api/v1/auth/webauthn/login/complete", { challenge_id: passkeyBegin.body.data.challenge_id, response: authenticator.assert(passkeyBegin.body.data.options) });
    expect(passkey.status).toBe(403);
    expect(passkey.body.error.type).toBe("SSO_REQUIRED");
    // Unknown addresses in the domain get the same answer (the domain decides, not the account).
    expect((await login(app, at("nobody-here"), "whatever-password")).body.error.type).toBe("SSO_REQUIRED");
    // Other domains are untouched.
    const elsewhere = await newUser(app);
    expect((await login(app, elsewhere.email, PASSWORD)).status).toBe(200);
    // GitHub (a consumer provider) is refused for an address in the domain, new or existing.
    consumer.github.signIn(githubAccount(at("gina")));
    const viaGithub = await runExternalFlow(app, newBrowser(app), "github");
    expect(landingError(viaGithub.landing)).toBe("SSO_REQUIRED");

    const bob = await signIn(`/sso/start/${connectionId}`, { username: at("bob"), password: "bob-pass" });
    const sessions = await app.http.get("/api/v1/auth/sessions", { cookie: bob.sid! });
    expect(sessions.status).toBe(200);
    const current = sessions.body.data.sessions.find((s: { current: boolean }) => s.current);
    expect(new Date(current.expires_at).getTime() - Date.now()).toBeLessThanOrEqual(600_000 + 5_000);
    expect((await audit(org.id, "sso.required")).length).toBeGreaterThanOrEqual(2);

    // `keyward login` from that browser: the CLI's session ends with the SSO session's bound.
    const started = await app.http.get(`/api/v1/token_please?redirect_url=${encodeURIComponent("http://127.0.0.1:8250/?token=")}`);
    const cliToken = new URL(started.headers.get("location")!).searchParams.get("cli_token")!;
    const approved = await app.http.post("/api/v1/cli/authorize", { cli_token: cliToken }, { cookie: bob.sid!, headers: { origin: app.url } });
    expect(approved.status).toBe(200);
    const cliSession = new URL(approved.body.data.redirect_url).searchParams.get("token")!;
    const cliView = await app.http.get("/api/v1/auth/sessions", { token: cliSession });
    const cli = cliView.body.data.sessions.find((s: { current: boolean }) => s.current);
    expect(new Date(cli.expires_at).getTime() - Date.now()).toBeLessThanOrEqual(600_000 + 5_000);
  });
});

describe("removing a connection", () => {
  it("leaves the people it created able to recover: an admin of the organization sets a password, and it works", async () => {
    // Alice's account was created just in time (managed by the organization); SSO is required.
    const alice = await signIn(`/sso/start/${connectionId}`, { username: at("alice"), password: "alice-pass" });
    const aliceId = (await me(alice.sid!)).body.data.user.id as string;
    expect((await login(app, at("alice"), "set by an admin later")).body.error.type).toBe("SSO_REQUIRED");
    // A plain member cannot reach her account (not even its existence); the organization's admin can (it manages it).
    expect((await app.http.post(`/api/v1/admin/users/${aliceId}/password`, { password: "set by an admin later" }, { token: member.token })).status).toBe(404);
    expect((await app.http.delete(`${base(org.id)}/${connectionId}`, { token: admin.token })).status).toBe(200);
    const set = await app.http.post(`/api/v1/admin/users/${aliceId}/password`, { password: "set by an admin later" }, { token: admin.token });
    expect(set.status, set.text).toBe(200);
    // The requirement went with the connection: the password now opens a session for the same account.
    const back = await login(app, at("alice"), "set by an admin later");
    expect(back.status, back.text).toBe(200);
    expect(back.body.data.user.id).toBe(aliceId);
    // She is still a member of the organization: removing the connection takes nobody out.
    expect(await membership(org.id, aliceId)).not.toBeNull();
  });
});
