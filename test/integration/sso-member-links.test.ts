import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { Browser, startIdp, type RealIdp } from "../helpers/oidc-idp.js";
import { addMember, newOrg, orgWithRoles } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * The member's side of enterprise sign-in (issue 35), against a REAL OpenID provider
 * (../shared/tools/oidc-idp): the connections a member can link to, linking from GraphQL, SSO
 * identities among linked accounts, unlinking them (and when it is refused), and departments a
 * removed group mapping had granted taken away at the next sign-in, never hand-made ones.
 */
let app: TestApp;
let idp: RealIdp;
let callback: string;
const tag = Date.now().toString(36);
const DOMAIN = `links-${tag}.test`;
const at = (local: string) => `${local}@${DOMAIN}`;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_OAUTH: "1000/60" });
  callback = `${app.url}/sso/oidc/callback`;
  idp = await startIdp({
    redirectUri: callback,
    users: [`${at("dave")}:dave-pass:Dave Existing:engineering`, `${at("jit")}:jit-pass:Jit Person:engineering`],
  });
});
afterAll(async () => {
  await app?.close();
  idp?.stop();
});

const base = (orgId: string) => `/api/v1/organizations/${orgId}/sso/connections`;
const MY_CONNECTIONS = `{ mySsoConnections { id name kind organization { id name slug } linked linkedAt } }`;
const LINKED = `{ linkedAccounts { unlinkAvailable ssoIdentities { id connectionId connectionName kind organization { id slug } email linkedAt lastUsedAt unlinkBlockedBy } } }`;
const UNLINK = `mutation($id: ID!) { unlinkSsoIdentity(identityId: $id) }`;

async function verifyDomain(orgId: string, domain: string) {
  await app.container.db.execute(
    sql`insert into organization_domains (organization_id, domain, verification_token, status, verified_at) values (${orgId}, ${domain}, ${`tok-${domain}`}, 'verified', now())`,
  );
}

async function createConnection(orgId: string, token: string, body: Record<string, unknown>): Promise<string> {
  const res = await app.http.post(`${base(orgId)}/oidc`, { issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, ...body }, { token });
  expect(res.status, res.text).toBe(201);
  return res.body.data.connection.id;
}

async function audit(prefix: string, userId: string) {
  return resultRows<{ action: string; success: boolean; metadata: Record<string, unknown> }>(
    await app.container.db.execute(sql`select action, success, metadata from audit_logs where user_id = ${userId} and action like ${`${prefix}%`} order by created_at, id`),
  );
}

async function departmentsOf(userId: string) {
  return resultRows<{ department_id: string }>(await app.container.db.execute(sql`select department_id from department_members where user_id = ${userId} order by department_id`))
    .map((r) => r.department_id)
    .sort();
}

/** Linking as the web app does it: the GraphQL mutation sets the binding cookie, the browser goes to the provider and back. */
async function linkThroughGraphql(user: TestUser, connectionId: string, password: string) {
  const started = await app.http.gql(`mutation($id: ID!) { startSsoLink(connectionId: $id) { authorizationUrl } }`, { id: connectionId }, { token: user.token });
  expect(started.errors).toBeUndefined();
  const binding = started.headers.getSetCookie().find((c) => c.startsWith("keyward.sso="));
  expect(binding, "the mutation sets the SSO binding cookie").toBeTruthy();
  expect(binding).toMatch(/HttpOnly/i);
  const back = await new Browser().loginAtIdp(started.data.startSsoLink.authorizationUrl, { username: user.email, password }, callback);
  const done = await fetch(back, { headers: { cookie: binding!.split(";")[0]! }, redirect: "manual" });
  expect(done.status).toBe(303);
  return new URL(done.headers.get("location")!);
}

/** A sign-in through the connection in a fresh browser; the landing and the session cookie. */
async function signIn(connectionId: string, user: { username: string; password: string }) {
  const browser = new Browser();
  const started = await browser.fetch(`${app.url}/sso/start/${connectionId}`);
  expect(started.status).toBe(303);
  const back = await browser.loginAtIdp(started.headers.get("location")!, user, callback);
  const done = await browser.fetch(back);
  expect(done.status).toBe(303);
  return { landing: new URL(done.headers.get("location")!), sid: done.headers.getSetCookie().find((c) => c.includes(".sid="))?.split(";")[0] };
}

let org: { id: string; name: string; slug: string };
let admin: TestUser;
let dave: TestUser;
let outsider: TestUser;
let other: { id: string };
let otherAdmin: TestUser;
let connectionId: string;
let disabledId: string;
let otherConnectionId: string;

describe("the connections a member can link to", () => {
  it("lists the enabled connections of the caller's organizations only, without their configuration", async () => {
    const roles = await orgWithRoles(app);
    admin = roles.admin;
    org = roles.org;
    await verifyDomain(org.id, DOMAIN);
    connectionId = await createConnection(org.id, admin.token, { name: "Acme IdP", default_role: "member" });
    disabledId = await createConnection(org.id, admin.token, { name: "Old IdP", enabled: false });
    otherAdmin = await newUser(app);
    other = await newOrg(app, otherAdmin);
    otherConnectionId = await createConnection(other.id, otherAdmin.token, { name: "Other IdP" });
    dave = await newUser(app, { email: at("dave") });
    await addMember(app, org.id, admin, dave, "guest");
    outsider = await newUser(app);

    const rest = await app.http.get("/api/v1/sso/connections", { token: dave.token });
    expect(rest.status, rest.text).toBe(200);
    expect(rest.body.data).toEqual({
      connections: [{ id: connectionId, name: "Acme IdP", kind: "oidc", organization: { id: org.id, name: org.name, slug: org.slug }, linked: false, linked_at: null }],
      count: 1,
    });
    // A plain member (here a guest) sees name and kind, never the provider's configuration.
    expect(rest.text).not.toContain(idp.issuer);
    expect(rest.text).not.toContain(idp.clientId);
    const gql = await app.http.gql(MY_CONNECTIONS, {}, { token: dave.token });
    expect(gql.data.mySsoConnections).toEqual([{ id: connectionId, name: "Acme IdP", kind: "oidc", organization: { id: org.id, name: org.name, slug: org.slug }, linked: false, linkedAt: null }]);

    // An outsider sees none; the other organization's admin sees only theirs; nobody sees the disabled one.
    expect((await app.http.get("/api/v1/sso/connections", { token: outsider.token })).body.data).toEqual({ connections: [], count: 0 });
    expect((await app.http.gql(MY_CONNECTIONS, {}, { token: outsider.token })).data.mySsoConnections).toEqual([]);
    const theirs = await app.http.gql(MY_CONNECTIONS, {}, { token: otherAdmin.token });
    expect(theirs.data.mySsoConnections.map((c: { id: string }) => c.id)).toEqual([otherConnectionId]);
    const adminSees = (await app.http.get("/api/v1/sso/connections", { token: admin.token })).body.data.connections.map((c: { id: string }) => c.id);
    expect(adminSees).toEqual([connectionId]);
    expect(adminSees).not.toContain(disabledId);
    // Signed-out callers are refused.
    expect((await app.http.get("/api/v1/sso/connections")).status).toBe(401);
    expect((await app.http.gql(MY_CONNECTIONS, {})).errors[0].extensions.code).toBe("AUTH_REQUIRED");
  });
});

describe("linking from GraphQL, and SSO identities among linked accounts", () => {
  it("starts a link with the binding cookie; the callback links and lands on the account page", async () => {
    const landing = await linkThroughGraphql(dave, connectionId, "dave-pass");
    expect(landing.pathname).toBe("/account");
    expect(landing.searchParams.get("linked")).toBe("sso");
    expect(landing.searchParams.get("error_type")).toBeNull();
    const listed = (await app.http.gql(MY_CONNECTIONS, {}, { token: dave.token })).data.mySsoConnections;
    expect(listed[0]).toMatchObject({ id: connectionId, linked: true });
    expect(listed[0].linkedAt).toBeTruthy();
    expect((await audit("sso.link", dave.id)).map((r) => r.action)).toEqual(["sso.link.started", "sso.linked"]);

    const viaGql = (await app.http.gql(LINKED, {}, { token: dave.token })).data.linkedAccounts;
    expect(viaGql.ssoIdentities).toHaveLength(1);
    expect(viaGql.ssoIdentities[0]).toMatchObject({ connectionId, connectionName: "Acme IdP", kind: "oidc", organization: { id: org.id, slug: org.slug }, email: at("dave"), unlinkBlockedBy: null });
    expect(viaGql.ssoIdentities[0].linkedAt).toBeTruthy();
    const viaRest = await app.http.get("/api/v1/auth/external/linked-accounts", { token: dave.token });
    expect(viaRest.status).toBe(200);
    expect(viaRest.body.data.sso_identities[0]).toMatchObject({ id: viaGql.ssoIdentities[0].id, connection_name: "Acme IdP", organization: { id: org.id }, unlink_blocked_by: null });
    // Its provider-side subject never leaves the server.
    const [row] = resultRows<{ subject: string }>(await app.container.db.execute(sql`select subject from sso_identities where user_id = ${dave.id}`));
    expect(viaRest.text).not.toContain(row!.subject);

    // A sign-in through it records its last use.
    await signIn(connectionId, { username: at("dave"), password: "dave-pass" });
    const used = (await app.http.gql(LINKED, {}, { token: dave.token })).data.linkedAccounts.ssoIdentities[0];
    expect(used.lastUsedAt).toBeTruthy();
  });

  it("refuses a link start for an unknown or disabled connection alike", async () => {
    for (const id of [disabledId, "00000000-0000-4000-8000-000000000000", "nope"]) {
      const res = await app.http.gql(`mutation($id: ID!) { startSsoLink(connectionId: $id) { authorizationUrl } }`, { id }, { token: dave.token });
      expect(res.errors[0].extensions.code).toBe("SSO_NOT_AVAILABLE");
    }
  });
});

describe("unlinking an SSO identity", () => {
  let identityId: string;

  it("is impossible for anyone but its holder", async () => {
    identityId = (await app.http.gql(LINKED, {}, { token: dave.token })).data.linkedAccounts.ssoIdentities[0].id;
    for (const who of [admin, otherAdmin, outsider]) {
      const rest = await app.http.delete(`/api/v1/sso/identities/${identityId}`, { token: who.token });
      expect(rest.status).toBe(404);
      expect(rest.body.error.type).toBe("SSO_IDENTITY_NOT_FOUND");
      expect((await app.http.gql(UNLINK, { id: identityId }, { token: who.token })).errors[0].extensions.code).toBe("SSO_IDENTITY_NOT_FOUND");
    }
    expect((await app.http.delete("/api/v1/sso/identities/not-a-uuid", { token: dave.token })).status).toBe(404);
    expect((await app.http.gql(LINKED, {}, { token: dave.token })).data.linkedAccounts.ssoIdentities).toHaveLength(1);
  });

  it("is refused while the organization requires SSO for the account's address", async () => {
    expect((await app.http.patch(`${base(org.id)}/${connectionId}`, { require_sso: true }, { token: admin.token })).status).toBe(200);
    try {
      const listed = (await app.http.gql(LINKED, {}, { token: dave.token })).data.linkedAccounts.ssoIdentities[0];
      expect(listed.unlinkBlockedBy).toBe("sso_required");
      const refused = await app.http.delete(`/api/v1/sso/identities/${identityId}`, { token: dave.token });
      expect(refused.status).toBe(409);
      expect(refused.body.error.type).toBe("SSO_UNLINK_REQUIRED");
      expect((await app.http.gql(UNLINK, { id: identityId }, { token: dave.token })).errors[0].extensions.code).toBe("SSO_UNLINK_REQUIRED");
    } finally {
      await app.http.patch(`${base(org.id)}/${connectionId}`, { require_sso: false }, { token: admin.token });
    }
    expect((await audit("sso.unlinked", dave.id)).map((r) => [r.success, r.metadata.code])).toEqual([
      [false, "SSO_UNLINK_REQUIRED"],
      [false, "SSO_UNLINK_REQUIRED"],
    ]);
  });

  it("unlinks once of twenty parallel requests, with one audit record and no server error", async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 ? app.http.delete(`/api/v1/sso/identities/${identityId}`, { token: dave.token }).then((r) => r.status) : app.http.gql(UNLINK, { id: identityId }, { token: dave.token }).then((r) => (r.errors ? r.errors[0].extensions.code : 200)),
      ),
    );
    expect(answers.filter((a) => a === 200)).toHaveLength(1);
    expect(answers.filter((a) => a !== 200).every((a) => a === 404 || a === "SSO_IDENTITY_NOT_FOUND")).toBe(true);
    expect((await audit("sso.unlinked", dave.id)).filter((r) => r.success)).toHaveLength(1);
    expect((await app.http.gql(LINKED, {}, { token: dave.token })).data.linkedAccounts.ssoIdentities).toEqual([]);
    expect((await app.http.gql(MY_CONNECTIONS, {}, { token: dave.token })).data.mySsoConnections[0]).toMatchObject({ linked: false, linkedAt: null });
    // Unlinked: signing in through the provider no longer reaches the account (it asks to confirm a link again).
    const again = await signIn(connectionId, { username: at("dave"), password: "dave-pass" });
    expect(again.sid).toBeFalsy();
    expect(again.landing.pathname).toBe("/login");
    expect(again.landing.searchParams.get("sso_link")).toBeTruthy();
  });

  it("is refused for an account the organization created through its provider", async () => {
    const jit = await signIn(connectionId, { username: at("jit"), password: "jit-pass" });
    expect(jit.sid).toBeTruthy();
    const [identity] = (await app.http.gql(LINKED, {}, { cookie: jit.sid!, headers: { origin: app.url } })).data.linkedAccounts.ssoIdentities;
    expect(identity.unlinkBlockedBy).toBe("managed");
    const refused = await app.http.delete(`/api/v1/sso/identities/${identity.id}`, { cookie: jit.sid!, headers: { origin: app.url } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.type).toBe("SSO_UNLINK_MANAGED");
    expect((await app.http.gql(LINKED, {}, { cookie: jit.sid!, headers: { origin: app.url } })).data.linkedAccounts.ssoIdentities).toHaveLength(1);
  });
});

describe("departments granted through a group mapping", () => {
  it("takes away at the next sign-in only what a removed mapping granted, never a department added by hand", async () => {
    const dept = async (name: string) => (await app.http.post(`/api/v1/organizations/${org.id}/departments`, { name }, { token: admin.token })).body.data.department.id as string;
    const [eng, handmade, both] = [await dept(`Engineering ${tag}`), await dept(`Handmade ${tag}`), await dept(`Both ${tag}`)];
    const addByHand = async (id: string) =>
      expect((await app.http.post(`/api/v1/organizations/${org.id}/departments/${id}/members`, { email: dave.email }, { token: admin.token })).status).toBe(201);
    await addByHand(handmade);
    await addByHand(both);
    // engineering (Dave's group) → Engineering and Both; Handmade is named by a mapping Dave's groups do not match.
    const mappings = [
      { group: "engineering", department_ids: [eng, both] },
      { group: "platform", department_ids: [handmade] },
    ];
    expect((await app.http.patch(`${base(org.id)}/${connectionId}`, { group_mappings: mappings }, { token: admin.token })).status).toBe(200);
    expect((await linkThroughGraphql(dave, connectionId, "dave-pass")).searchParams.get("linked")).toBe("sso");
    expect(await departmentsOf(dave.id)).toEqual([eng, handmade, both].sort());

    // The admin removes every mapping: what SSO granted goes, what the admin added stays.
    expect((await app.http.patch(`${base(org.id)}/${connectionId}`, { group_mappings: [] }, { token: admin.token })).status).toBe(200);
    const again = await signIn(connectionId, { username: at("dave"), password: "dave-pass" });
    expect(again.sid).toBeTruthy();
    expect(await departmentsOf(dave.id)).toEqual([handmade, both].sort());
    const synced = (await audit("sso.membership.synced", dave.id)).at(-1)!;
    expect(synced.metadata).toMatchObject({ connectionId, departmentsRemoved: [eng], departmentsAdded: [] });

  });
});

describe("the last way in", () => {
  it("is never unlinked: without a password, passkey or other identity, unlinking is refused", async () => {
    const [identity] = (await app.http.gql(LINKED, {}, { token: dave.token })).data.linkedAccounts.ssoIdentities;
    expect(identity).toBeTruthy();
    // Dave's password goes (as for an account created through GitHub that later linked SSO only).
    await app.container.db.execute(sql`delete from password_credentials where user_id = ${dave.id}`);
    const refused = await app.http.delete(`/api/v1/sso/identities/${identity.id}`, { token: dave.token });
    expect(refused.status).toBe(409);
    expect(refused.body.error.type).toBe("LAST_SIGN_IN_METHOD");
    expect((await app.http.gql(LINKED, {}, { token: dave.token })).data.linkedAccounts.ssoIdentities).toHaveLength(1);
  });
});
