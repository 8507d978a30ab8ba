import { createHash, generateKeyPairSync, X509Certificate } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { inflateRawSync } from "node:zlib";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { buildLogoutResponse } from "../../src/lib/saml/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import type { HttpResponse } from "../helpers/http.js";
import { CookieJar, browserLogin, followUntil, startSamlIdp, type RealSamlIdp } from "../helpers/saml-idp.js";
import { enrollTotp } from "../factories/mfa.js";
import { login, newUser, PASSWORD } from "../factories/users.js";
import { newOrg, orgWithRoles } from "../factories/orgs.js";

/**
 * Enterprise sign-in through an organization's SAML 2.0 IdP (issue 35), against a REAL one
 * (SimpleSAMLphp, ../shared/tools/saml-idp) walked like a browser: the connection from the IdP's
 * metadata URL and its tenancy, the SP metadata the IdP reads back by URL, SP-initiated sign-in
 * with JIT and group mapping, consent linking, replay (also 20 at once), cross-connection and
 * IdP-initiated responses, encrypted assertions, and SSO-required.
 */
let app: TestApp;
let idp: RealSamlIdp;
const tag = Date.now().toString(36);
const DOMAIN = `saml-${tag}.test`;
const at = (local: string) => `${local}@${DOMAIN}`;
const user = (local: string) => ({ username: at(local), password: `${local}-pass` });

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_OAUTH: "1000/60" });
  idp = await startSamlIdp([
    "--user", `${at("alice")}:alice-pass:Alice Admin:admins,engineering`,
    "--user", `${at("bob")}:bob-pass:Bob Builder:engineering`,
    "--user", `${at("dave")}:dave-pass:Dave Existing:engineering`,
    "--user", `${at("carl")}:carl-pass:Carl Required:engineering`,
    "--user", `${at("erin")}:erin-pass:Erin Post:engineering`,
    "--user", `${at("finn")}:finn-pass:Finn Logout:engineering`,
    "--user", `${at("gwen")}:gwen-pass:Gwen Linked:engineering`,
    "--user", `${at("hugo")}:hugo-pass:Hugo Linked:engineering`,
  ]);
}, 30_000);
afterAll(async () => {
  await app?.close();
  idp?.stop();
});
// A failing step at the IdP (its "Metadata not found" page, say) is explained by its own log: whether it
// could fetch our SP metadata, and what it made of it.
afterEach((ctx) => {
  if (ctx.task.result?.state === "fail") console.error(`the SAML IdP's log, last lines:\n${idp?.logTail(30)}`);
});

const base = (orgId: string) => `/api/v1/organizations/${orgId}/sso/connections`;

/** Tells the IdP where this connection's SP metadata is (re-read at every request, as the tool's README says). */
function registerSp(name: string, metadataUrl: string, options?: Record<string, unknown>) {
  writeFileSync(join(idp.spMetadataDir, `${name}.url`), `${metadataUrl}\n`);
  if (options) writeFileSync(join(idp.spMetadataDir, `${name}.json`), JSON.stringify(options));
}

/** Forgets a deleted connection's SP, as its admin would: the IdP stops fetching its metadata at every request. */
function unregisterSp(name: string) {
  for (const ext of ["url", "json"]) rmSync(join(idp.spMetadataDir, `${name}.${ext}`), { force: true });
}

async function verifyDomain(orgId: string, domain: string) {
  await app.container.db.execute(
    sql`insert into organization_domains (organization_id, domain, verification_token, status, verified_at) values (${orgId}, ${domain}, ${`tok-${domain}`}, 'verified', now())`,
  );
}

async function membership(orgId: string, userId: string) {
  const [row] = resultRows<{ role: string }>(await app.container.db.execute(sql`select role from org_memberships where organization_id = ${orgId} and user_id = ${userId} and deleted_at is null`));
  return row?.role ?? null;
}

async function departmentsOf(userId: string) {
  return resultRows<{ department_id: string }>(await app.container.db.execute(sql`select department_id from department_members where user_id = ${userId} order by department_id`)).map((r) => r.department_id);
}

/** Whether a fresh SP-initiated sign-in with this browser's IdP cookies stops at the IdP's password form (no IdP session). */
async function idpAsksForPassword(jar: CookieJar): Promise<boolean> {
  const started = await fetch(`${app.url}/sso/start/${connection.id}`, { redirect: "manual" });
  let url = started.headers.get("location")!;
  for (let step = 0; step < 8; step++) {
    const res = await fetch(url, { redirect: "manual", headers: { cookie: jar.header() } });
    jar.take(res);
    const location = res.headers.get("location");
    if (!location) return /name="password"/.test(await res.text());
    url = new URL(location, url).href;
  }
  return false;
}

const cookiesOf = (res: Response) => res.headers.getSetCookie().map((c) => c.split(";")[0]!);

/** Starts at Keyward, signs in at the IdP, and returns what the IdP would post (not posted yet) with Keyward's cookies. */
async function toIdp(start: string, who: { username: string; password: string }, jar = new CookieJar()) {
  const started = await fetch(`${app.url}${start}`, { redirect: "manual" });
  expect(started.status, await started.clone().text()).toBe(303);
  const location = started.headers.get("location")!;
  expect(location.startsWith(idp.ssoUrl)).toBe(true);
  const answer = await browserLogin(location, who, jar);
  return { ...answer, cookie: cookiesOf(started).join("; ") };
}

async function post(action: string, fields: { SAMLResponse: string; RelayState?: string }, cookie = "") {
  const body = new URLSearchParams({ SAMLResponse: fields.SAMLResponse, ...(fields.RelayState ? { RelayState: fields.RelayState } : {}) });
  const res = await fetch(action, { method: "POST", redirect: "manual", body: body.toString(), headers: { "content-type": "application/x-www-form-urlencoded", cookie } });
  expect(res.status).toBe(303);
  const landing = new URL(res.headers.get("location")!);
  const sid = res.headers.getSetCookie().find((c) => c.includes(".sid="))?.split(";")[0];
  return { landing, sid, cookies: cookiesOf(res) };
}

async function signIn(start: string, who: { username: string; password: string }, jar = new CookieJar()) {
  const a = await toIdp(start, who, jar);
  return { ...(await post(a.action, { SAMLResponse: a.samlResponse, RelayState: a.relayState }, a.cookie)), answer: a };
}

let org: { id: string };
let owner: Awaited<ReturnType<typeof orgWithRoles>>["owner"];
let admin: Awaited<ReturnType<typeof orgWithRoles>>["admin"];
let member: Awaited<ReturnType<typeof orgWithRoles>>["member"];
let connection: { id: string; saml: { sp_entity_id: string; acs_url: string; sp_metadata_url: string } };
let eng: string;

describe("SAML connections", () => {
  it("an admin creates one from the IdP's metadata URL; private keys are never returned", async () => {
    ({ org, owner, admin, member } = await orgWithRoles(app));
    await verifyDomain(org.id, DOMAIN);
    const dep = await app.http.post(`/api/v1/organizations/${org.id}/departments`, { name: "Engineering" }, { token: owner.token });
    eng = dep.body.data.department.id;
    const created = await app.http.post(
      `${base(org.id)}/saml`,
      { name: "Acme SAML", metadata_url: idp.metadataUrl, default_role: "guest", group_mappings: [{ group: "admins", role: "admin" }, { group: "engineering", role: "member", department_ids: [eng] }] },
      { token: admin.token },
    );
    expect(created.status, created.text).toBe(201);
    connection = created.body.data.connection;
    expect(created.body.data.connection).toMatchObject({ kind: "saml", enabled: true, has_secret: true, default_role: "guest" });
    expect(connection.saml).toMatchObject({
      sp_entity_id: `${app.url}/sso/saml/${connection.id}/metadata`,
      acs_url: `${app.url}/sso/saml/${connection.id}/acs`,
      idp_entity_id: idp.entityId,
      idp_metadata_url: idp.metadataUrl,
      allow_idp_initiated: false,
      sign_authn_requests: true,
      want_encrypted_assertions: true,
      email_attribute: "email",
      groups_attribute: "groups",
    });
    expect(created.text).not.toContain("PRIVATE KEY");
    const listed = await app.http.get(base(org.id), { token: owner.token });
    expect(listed.text).not.toContain("PRIVATE KEY");
    const gql = await app.http.gql("query($orgId: ID!) { ssoConnections(orgId: $orgId) { id kind saml { acsUrl idpEntityId } } }", { orgId: org.id }, { token: admin.token });
    expect(gql.data.ssoConnections).toEqual([{ id: connection.id, kind: "saml", saml: { acsUrl: connection.saml.acs_url, idpEntityId: idp.entityId } }]);
    const [row] = resultRows<{ secret_sealed: string }>(await app.container.db.execute(sql`select secret_sealed from sso_connections where id = ${connection.id}`));
    expect(row!.secret_sealed.startsWith("v1.")).toBe(true);
    expect(row!.secret_sealed).not.toContain("PRIVATE");
    // SimpleSAMLphp signs logout messages only when asked to (Keyward refuses unsigned ones).
    registerSp("acme", connection.saml.sp_metadata_url, { "sign.logout": true });
  });

  it("shows each pinned IdP certificate's SHA-256 fingerprint, subject and validity (REST and GraphQL), never private material", async () => {
    // Computed here from the IdP's own PEM: SHA-256 over the DER, colon hex as IdP consoles show it.
    const x509 = new X509Certificate(idp.certPem);
    const fingerprint = createHash("sha256").update(x509.raw).digest("hex").toUpperCase().match(/../g)!.join(":");
    const cn = /^CN=(.*)$/m.exec(x509.subject)?.[1] ?? null;
    const rest = await app.http.get(base(org.id), { token: admin.token });
    const [c] = rest.body.data.connections;
    expect(c.saml.idp_certificate_count).toBe(1);
    expect(c.saml.idp_certificates).toEqual([
      { fingerprint_sha256: fingerprint, subject_cn: cn, not_before: new Date(x509.validFrom).toISOString(), not_after: new Date(x509.validTo).toISOString(), in_rollover_overlap: false, overlap_ends_at: null },
    ]);
    const gql = await app.http.gql(
      "query($orgId: ID!) { ssoConnections(orgId: $orgId) { saml { idpCertificates { fingerprintSha256 subjectCn notBefore notAfter inRolloverOverlap overlapEndsAt } } } }",
      { orgId: org.id },
      { token: admin.token },
    );
    expect(gql.errors).toBeUndefined();
    expect(gql.data.ssoConnections[0].saml.idpCertificates).toEqual([
      { fingerprintSha256: fingerprint, subjectCn: cn, notBefore: new Date(x509.validFrom).toISOString(), notAfter: new Date(x509.validTo).toISOString(), inRolloverOverlap: false, overlapEndsAt: null },
    ]);
    expect(rest.text).not.toContain("PRIVATE KEY");
    // A plain member sees none of it.
    const denied = await app.http.gql("query($orgId: ID!) { ssoConnections(orgId: $orgId) { saml { idpCertificates { fingerprintSha256 } } } }", { orgId: org.id }, { token: member.token });
    expect(denied.errors?.length).toBeGreaterThan(0);
    expect(denied.data?.ssoConnections ?? null).toBeNull();
  });

  it("refuses plain members, other organizations' admins and malformed metadata", async () => {
    const body = { name: "x", metadata_url: idp.metadataUrl };
    expect((await app.http.post(`${base(org.id)}/saml`, body, { token: member.token })).status).toBe(403);
    const stranger = await newUser(app);
    const strangerOrg = await newOrg(app, stranger);
    expect((await app.http.post(`${base(org.id)}/saml`, body, { token: stranger.token })).status).toBe(404);
    expect((await app.http.patch(`${base(strangerOrg.id)}/${connection.id}`, { allow_idp_initiated: true }, { token: stranger.token })).status).toBe(404);
    const malformed = await app.http.post(`${base(org.id)}/saml`, { name: "x", metadata_xml: "<md:EntityDescriptor" }, { token: admin.token });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.type).toBe("SSO_METADATA_INVALID");
    const noIdp = await app.http.post(`${base(org.id)}/saml`, { name: "x", metadata_xml: `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>` }, { token: admin.token });
    expect(noIdp.status).toBe(400);
    expect((await app.http.post(`${base(org.id)}/saml`, { name: "x" }, { token: admin.token })).status).toBe(400);
    // By hand: entity id + SSO URL + certificate.
    const manual = await app.http.post(`${base(org.id)}/saml`, { name: "Manual", idp_entity_id: idp.entityId, idp_sso_url: idp.ssoUrl, idp_certificates: [idp.certPem], enabled: false }, { token: admin.token });
    expect(manual.status, manual.text).toBe(201);
    expect((await app.http.delete(`${base(org.id)}/${manual.body.data.connection.id}`, { token: admin.token })).status).toBe(200);
  });

  it("serves well-formed SP metadata at the entity id", async () => {
    const res = await fetch(connection.saml.sp_metadata_url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("xml");
    const xml = await res.text();
    expect(xml).toContain(`entityID="${connection.saml.sp_entity_id}"`);
    expect(xml).toContain(`Location="${connection.saml.acs_url}"`);
    expect(xml).toContain('AuthnRequestsSigned="true"');
    expect(xml).toContain('use="encryption"');
    expect(xml).not.toContain("PRIVATE");
    expect((await fetch(`${app.url}/sso/saml/00000000-0000-4000-8000-000000000000/metadata`)).status).toBe(404);
  });
});

describe("SAML sign-in", () => {
  let saved: { action: string; samlResponse: string; relayState?: string; cookie: string };

  it("HRD by email → IdP form → ACS: a managed account with the mapped role and department (assertion encrypted)", async () => {
    const first = await signIn(`/sso/start?email=${encodeURIComponent(at("alice"))}`, user("alice"));
    expect(first.landing.searchParams.get("error_type"), first.landing.toString()).toBeNull();
    expect(first.answer.action).toBe(connection.saml.acs_url);
    // The IdP encrypted the assertion to the SP's published encryption certificate.
    expect(Buffer.from(first.answer.samlResponse, "base64").toString()).toContain("EncryptedAssertion");
    expect(first.sid).toBeTruthy();
    const me = await app.http.get("/api/v1/users/me", { cookie: first.sid! });
    expect(me.status).toBe(200);
    const u = me.body.data.user;
    expect(u).toMatchObject({ email: at("alice"), full_name: "Alice Admin" });
    expect(u.managed_by).toMatchObject({ id: org.id });
    expect(await membership(org.id, u.id)).toBe("admin");
    expect(await departmentsOf(u.id)).toEqual([eng]);
    saved = { ...first.answer, cookie: first.answer.cookie };
    // Second sign-in re-applies the (changed) mapping.
    const mappings = [{ group: "engineering", role: "member" }, { group: "platform", role: "admin", department_ids: [eng] }];
    expect((await app.http.patch(`${base(org.id)}/${connection.id}`, { group_mappings: mappings }, { token: admin.token })).status).toBe(200);
    const again = await signIn(`/sso/start/${connection.id}`, user("alice"));
    expect(again.sid).toBeTruthy();
    expect((await app.http.get("/api/v1/users/me", { cookie: again.sid! })).body.data.user.id).toBe(u.id);
    expect(await membership(org.id, u.id)).toBe("member");
    expect(await departmentsOf(u.id)).toEqual([]);
    const audit = resultRows<{ action: string; metadata: Record<string, unknown> }>(
      await app.container.db.execute(sql`select action, metadata from audit_logs where organization_id = ${org.id} and action like 'sso.%' order by created_at, id`),
    );
    expect(audit.filter((r) => r.action === "sso.login").map((r) => [r.metadata.connectionId, r.metadata.newAccount])).toEqual([
      [connection.id, true],
      [connection.id, false],
    ]);
    expect(audit.some((r) => r.action === "sso.jit.provisioned")).toBe(true);
    expect(audit.some((r) => r.action === "sso.membership.synced")).toBe(true);
    const [{ n }] = resultRows<{ n: number }>(await app.container.db.execute(sql`select count(*)::int as n from sso_identities where connection_id = ${connection.id}`)) as [{ n: number }];
    expect(n).toBe(1);
  });

  it("refuses a replayed SAMLResponse", async () => {
    const replay = await post(saved.action, { SAMLResponse: saved.samlResponse, RelayState: saved.relayState }, saved.cookie);
    expect(replay.sid).toBeUndefined();
    expect(replay.landing.searchParams.get("error_type")).toBe("SSO_SAML_REPLAY");
  });

  it("an existing account is not linked silently: its holder confirms with their password in the same browser", async () => {
    const dave = await newUser(app, { email: at("dave") });
    const pending = await signIn(`/sso/start?email=${encodeURIComponent(at("dave"))}`, user("dave"));
    expect(pending.sid).toBeUndefined();
    expect(pending.landing.pathname).toBe("/login");
    const id = pending.landing.searchParams.get("sso_link")!;
    const linkCookie = pending.cookies.find((c) => c.startsWith("keyward.sso-link="))!;
    expect(linkCookie).toBeDefined();
    const count = async () => resultRows<{ n: number }>(await app.container.db.execute(sql`select count(*)::int as n from sso_identities where user_id = ${dave.id}`))[0]!.n;
    expect(await count()).toBe(0);
    // Without this browser's binding the pending link does nothing: a plain password sign-in.
    const plain = await login(app, at("dave"), PASSWORD, { sso_link: id });
    expect(plain.status).toBe(200);
    expect(await count()).toBe(0);
    const confirmed = await app.http.post("/api/v1/auth/login", { email: at("dave"), password: PASSWORD, sso_link: id }, { cookie: linkCookie, headers: { origin: app.url } });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(await count()).toBe(1);
    // Now linked: the provider signs Dave in, and the flow's next is where he lands.
    const again = await signIn(`/sso/start/${connection.id}?next=${encodeURIComponent("/account")}`, user("dave"));
    expect(again.sid).toBeDefined();
    expect(again.landing.pathname).toBe("/account");
  });

  it("refuses a response for another connection's ACS", async () => {
    const other = await app.http.post(`${base(org.id)}/saml`, { name: "Second", metadata_url: idp.metadataUrl, allow_idp_initiated: true }, { token: admin.token });
    expect(other.status).toBe(201);
    const a = await toIdp(`/sso/start/${connection.id}`, user("bob"));
    const res = await post(other.body.data.connection.saml.acs_url, { SAMLResponse: a.samlResponse, RelayState: a.relayState }, a.cookie);
    expect(res.sid).toBeUndefined();
    expect(res.landing.searchParams.get("error_type")).not.toBeNull();
    expect((await app.http.delete(`${base(org.id)}/${other.body.data.connection.id}`, { token: admin.token })).status).toBe(200);
  });

  it("refuses IdP-initiated responses unless the connection allows them", async () => {
    const unsolicited = async () => {
      const a = await browserLogin(`${idp.initSsoUrl}${encodeURIComponent(connection.saml.sp_entity_id)}`, user("bob"), new CookieJar());
      return post(a.action, { SAMLResponse: a.samlResponse });
    };
    const refused = await unsolicited();
    expect(refused.sid).toBeUndefined();
    expect(refused.landing.searchParams.get("error_type")).toBe("OAUTH_STATE_INVALID");
    expect((await app.http.patch(`${base(org.id)}/${connection.id}`, { allow_idp_initiated: true }, { token: admin.token })).status).toBe(200);
    const allowed = await unsolicited();
    expect(allowed.landing.searchParams.get("error_type"), allowed.landing.toString()).toBeNull();
    expect(allowed.sid).toBeTruthy();
    expect((await app.http.patch(`${base(org.id)}/${connection.id}`, { allow_idp_initiated: false }, { token: admin.token })).status).toBe(200);
  });

  it("accepts plain (unencrypted, signed) assertions when the connection does not publish an encryption key", async () => {
    expect((await app.http.patch(`${base(org.id)}/${connection.id}`, { want_encrypted_assertions: false }, { token: admin.token })).status).toBe(200);
    const plain = await signIn(`/sso/start/${connection.id}`, user("bob"));
    expect(Buffer.from(plain.answer.samlResponse, "base64").toString()).not.toContain("EncryptedAssertion");
    expect(plain.sid).toBeTruthy();
    expect((await app.http.patch(`${base(org.id)}/${connection.id}`, { want_encrypted_assertions: true }, { token: admin.token })).status).toBe(200);
  });

  it("20 parallel posts of one response: one session, the rest refused", async () => {
    const a = await toIdp(`/sso/start/${connection.id}`, user("bob"));
    const results = await Promise.all(Array.from({ length: 20 }, () => post(a.action, { SAMLResponse: a.samlResponse, RelayState: a.relayState }, a.cookie)));
    expect(results.filter((r) => r.sid).length).toBe(1);
    const refusals = results.filter((r) => !r.sid).map((r) => r.landing.searchParams.get("error_type"));
    expect(refusals).toHaveLength(19);
    expect(new Set(refusals)).toEqual(new Set(["SSO_SAML_REPLAY"]));
    const replays = resultRows<{ n: number }>(await app.container.db.execute(sql`select count(*)::int as n from audit_logs where organization_id = ${org.id} and action = 'sso.login_failed' and metadata->>'refusal' = 'replay'`));
    expect(replays[0]!.n).toBeGreaterThanOrEqual(19);
  });

  it("IdP-initiated single logout ends the sessions the connection issued", async () => {
    const jar = new CookieJar();
    const bob = await signIn(`/sso/start/${connection.id}`, user("bob"), jar);
    expect(bob.sid).toBeTruthy();
    expect((await app.http.get("/api/v1/users/me", { cookie: bob.sid! })).status).toBe(200);
    const sloUrl = `${app.url}/sso/saml/${connection.id}/slo`;
    const query = await followUntil(`${idp.url}/saml2/idp/initSLO.php?RelayState=${encodeURIComponent(`${idp.url}/`)}`, sloUrl, jar);
    const answered = await fetch(`${sloUrl}?${query}`, { redirect: "manual" });
    expect(answered.status, await answered.clone().text()).toBe(303);
    expect(answered.headers.get("location")!.startsWith(idp.sloUrl)).toBe(true);
    expect(answered.headers.get("location")).toContain("SAMLResponse=");
    expect((await app.http.get("/api/v1/users/me", { cookie: bob.sid! })).status).toBe(401);
    // An unsigned or tampered logout request ends nothing.
    const forged = await fetch(`${sloUrl}?${query.replace(/&Signature=[^&]*/, "")}`, { redirect: "manual" });
    expect(forged.status).toBe(400);
  });

  it("SP-initiated single logout: the session ends at once, the IdP's signed LogoutResponse lands on the sign-in page", async () => {
    const jar = new CookieJar();
    const finn = await signIn(`/sso/start/${connection.id}`, user("finn"), jar);
    expect(finn.sid, finn.landing.toString()).toBeTruthy();
    const out = await app.http.post("/api/v1/auth/logout", {}, { cookie: finn.sid!, headers: { origin: app.url } });
    expect(out.status, out.text).toBe(200);
    const idpLogoutUrl: string = out.body.data.idp_logout_url;
    expect(idpLogoutUrl.startsWith(`${idp.sloUrl}?SAMLRequest=`)).toBe(true);
    // Keyward's session is gone before the browser even reaches the IdP.
    expect((await app.http.get("/api/v1/users/me", { cookie: finn.sid! })).status).toBe(401);
    const q = new URL(idpLogoutUrl).searchParams;
    expect(q.get("SigAlg")).toBeTruthy();
    expect(q.get("Signature")).toBeTruthy();
    const request = inflateRawSync(Buffer.from(q.get("SAMLRequest")!, "base64")).toString();
    expect(request).toContain(`>${at("finn")}</saml:NameID>`);
    expect(request).toMatch(/<samlp:SessionIndex>[^<]+<\/samlp:SessionIndex>/);
    // The IdP (SimpleSAMLphp) verifies the signed request, ends its session and answers.
    const sloUrl = `${app.url}/sso/saml/${connection.id}/slo`;
    const query = await followUntil(idpLogoutUrl, sloUrl, jar);
    expect(query).toContain("SAMLResponse=");
    // Tampered (unsigned, signature of other bytes, another connection's endpoint) is refused, and leaves the real answer usable.
    expect((await fetch(`${sloUrl}?${query.replace(/&Signature=[^&]*/, "")}`, { redirect: "manual" })).status).toBe(400);
    expect((await fetch(`${sloUrl}?${query.replace(/RelayState=[^&]*/, "RelayState=other")}`, { redirect: "manual" })).status).toBe(400);
    const other = await app.http.post(`${base(org.id)}/saml`, { name: "Other SLO", metadata_url: idp.metadataUrl }, { token: admin.token });
    expect(other.status).toBe(201);
    expect((await fetch(`${app.url}/sso/saml/${other.body.data.connection.id}/slo?${query}`, { redirect: "manual" })).status).toBe(400);
    expect((await app.http.delete(`${base(org.id)}/${other.body.data.connection.id}`, { token: admin.token })).status).toBe(200);
    const answered = await fetch(`${sloUrl}?${query}`, { redirect: "manual" });
    expect(answered.status, await answered.clone().text()).toBe(303);
    expect(answered.headers.get("location")).toBe(`${app.url}/login?signed_out=1`);
    // One answer per request: the same LogoutResponse again is refused (InResponseTo no longer outstanding).
    expect((await fetch(`${sloUrl}?${query}`, { redirect: "manual" })).status).toBe(400);
    // The IdP session ended too: the next sign-in with the same browser shows the IdP's password form again.
    expect(await idpAsksForPassword(jar)).toBe(true);
    const audit = resultRows<{ success: boolean; metadata: Record<string, unknown> }>(
      await app.container.db.execute(sql`select success, metadata from audit_logs where action = 'sso.logout' and metadata->>'initiatedBy' = 'sp' and metadata->>'connectionId' = ${connection.id} order by created_at, id`),
    );
    expect(audit.filter((r) => r.success).map((r) => r.metadata.idpConfirmed)).toEqual([true]);
    expect(audit.filter((r) => !r.success).length).toBeGreaterThanOrEqual(2);
  });

  it("refuses a LogoutResponse signed by a key that is not pinned, and one nobody asked for", async () => {
    const jar = new CookieJar();
    const finn = await signIn(`/sso/start/${connection.id}`, user("finn"), jar);
    const out = await app.http.post("/api/v1/auth/logout", {}, { cookie: finn.sid!, headers: { origin: app.url } });
    const relayState = new URL(out.body.data.idp_logout_url).searchParams.get("RelayState")!;
    const requestXml = inflateRawSync(Buffer.from(new URL(out.body.data.idp_logout_url).searchParams.get("SAMLRequest")!, "base64")).toString();
    const requestId = /ID="([^"]+)"/.exec(requestXml)![1]!;
    const sloUrl = `${app.url}/sso/saml/${connection.id}/slo`;
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const forged = buildLogoutResponse({ spEntityId: idp.entityId, idpSloUrl: sloUrl, inResponseTo: requestId, relayState, signingKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString() });
    expect((await fetch(forged, { redirect: "manual" })).status).toBe(400);
    // Unsigned, and signed but answering no request of ours.
    const unsigned = buildLogoutResponse({ spEntityId: idp.entityId, idpSloUrl: sloUrl, inResponseTo: requestId, relayState });
    expect((await fetch(unsigned, { redirect: "manual" })).status).toBe(400);
    const stray = buildLogoutResponse({ spEntityId: idp.entityId, idpSloUrl: sloUrl, inResponseTo: "_unknown", signingKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString() });
    expect((await fetch(stray, { redirect: "manual" })).status).toBe(400);
    // A password session has no IdP to send anyone to.
    const dave = await login(app, at("dave"), PASSWORD);
    const plain = await app.http.post("/api/v1/auth/logout", {}, { token: dave.body.data.token });
    expect(plain.status).toBe(200);
    expect(plain.body.data.idp_logout_url).toBeNull();
  });

  it("GraphQL logout returns the IdP logout URL too (the web app navigates there)", async () => {
    const finn = await signIn(`/sso/start/${connection.id}`, user("finn"));
    const res = await app.http.gql("mutation { logout { message idpLogoutUrl } }", {}, { cookie: finn.sid!, headers: { origin: app.url } });
    expect(res.errors).toBeUndefined();
    expect(res.data.logout.idpLogoutUrl.startsWith(`${idp.sloUrl}?SAMLRequest=`)).toBe(true);
    expect((await app.http.get("/api/v1/users/me", { cookie: finn.sid! })).status).toBe(401);
  });

  it("20 parallel sign-outs of one session, all inside the sign-out at once: one LogoutRequest goes to the IdP, 19 plain answers", async () => {
    // The answer to signing out a session no IdP issued: what the 19 that lose the race must get.
    const dave = await login(app, at("dave"), PASSWORD);
    const plain = await app.http.post("/api/v1/auth/logout", {}, { token: dave.body.data.token });
    expect(plain.status, plain.text).toBe(200);
    const jar = new CookieJar();
    const finn = await signIn(`/sso/start/${connection.id}`, user("finn"), jar);
    expect(finn.sid).toBeTruthy();
    // Real overlap on either runtime (the embedded stores may otherwise run the requests one after
    // the other, and a request that comes after the first sign-out is simply not signed in): each
    // request is held where the sign-out reads the session's SSO record, after it was
    // authenticated and before any of them ended the session, until all 20 are there.
    const kv = app.container.kv;
    const realGet = kv.get;
    const realSet = kv.set;
    let held = 0;
    let openedByAll = false;
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    const timer = setTimeout(open, 20_000);
    kv.get = async (key) => {
      if (key.startsWith("sso-session:")) {
        held++;
        if (held === 20) {
          openedByAll = true;
          open();
        }
        await opened;
      }
      return realGet(key);
    };
    // Each LogoutRequest Keyward signs waits for the IdP's answer under a key of its own.
    let logoutRequests = 0;
    kv.set = async (key, value, ttl) => {
      if (key.startsWith(`saml-logout:${connection.id}:`)) logoutRequests++;
      return realSet(key, value, ttl);
    };
    let outs: HttpResponse[];
    try {
      outs = await Promise.all(Array.from({ length: 20 }, () => app.http.post("/api/v1/auth/logout", {}, { cookie: finn.sid!, headers: { origin: app.url } })));
    } finally {
      clearTimeout(timer);
      kv.get = realGet;
      kv.set = realSet;
    }
    expect(openedByAll, `only ${held} of 20 sign-outs reached the session's SSO record before the first ended it`).toBe(true);
    expect(outs.map((o) => o.status)).toEqual(Array(20).fill(200));
    const toIdp = outs.filter((o) => o.body.data.idp_logout_url !== null);
    expect(toIdp).toHaveLength(1);
    expect(logoutRequests).toBe(1);
    const others = outs.filter((o) => o.body.data.idp_logout_url === null);
    expect(others).toHaveLength(19);
    for (const o of others) expect(o.body.data).toEqual(plain.body.data);
    expect((await app.http.get("/api/v1/users/me", { cookie: finn.sid! })).status).toBe(401);
    // That one LogoutRequest is a real one: the IdP ends its session and its answer closes the loop, once.
    const sloUrl = `${app.url}/sso/saml/${connection.id}/slo`;
    const query = await followUntil(toIdp[0]!.body.data.idp_logout_url, sloUrl, jar);
    const answered = await fetch(`${sloUrl}?${query}`, { redirect: "manual" });
    expect(answered.status, await answered.clone().text()).toBe(303);
    expect(answered.headers.get("location")).toBe(`${app.url}/login?signed_out=1`);
    expect(await idpAsksForPassword(jar)).toBe(true);
  });

  /** An existing account's SSO sign-in (IdP session in `jar`) leaves a pending link: the id, and this browser's binding cookie. */
  async function pendingLinkFor(local: string, jar: CookieJar) {
    const pending = await signIn(`/sso/start?email=${encodeURIComponent(at(local))}`, user(local), jar);
    expect(pending.sid).toBeUndefined();
    expect(pending.landing.pathname).toBe("/login");
    return { id: pending.landing.searchParams.get("sso_link")!, cookie: pending.cookies.find((c) => c.startsWith("keyward.sso-link="))! };
  }
  const sidOf = (headers: Headers) => headers.getSetCookie().find((c) => c.includes(".sid="))?.split(";")[0];

  it("a session opened by confirming a pending link with the password signs out at the IdP too (SP-initiated SLO)", async () => {
    await newUser(app, { email: at("gwen") });
    const jar = new CookieJar();
    const { id, cookie } = await pendingLinkFor("gwen", jar);
    const confirmed = await app.http.post("/api/v1/auth/login", { email: at("gwen"), password: PASSWORD, sso_link: id }, { cookie, headers: { origin: app.url } });
    expect(confirmed.status, confirmed.text).toBe(200);
    const sid = sidOf(confirmed.headers)!;
    expect((await app.http.get("/api/v1/users/me", { cookie: sid })).status).toBe(200);
    const out = await app.http.post("/api/v1/auth/logout", {}, { cookie: sid, headers: { origin: app.url } });
    expect(out.status, out.text).toBe(200);
    const idpLogoutUrl: string | null = out.body.data.idp_logout_url;
    expect(idpLogoutUrl?.startsWith(`${idp.sloUrl}?SAMLRequest=`), out.text).toBe(true);
    expect((await app.http.get("/api/v1/users/me", { cookie: sid })).status).toBe(401);
    // The LogoutRequest names the assertion the pending link was found with: its NameID and SessionIndex.
    const request = inflateRawSync(Buffer.from(new URL(idpLogoutUrl!).searchParams.get("SAMLRequest")!, "base64")).toString();
    expect(request).toContain(`>${at("gwen")}</saml:NameID>`);
    expect(request).toMatch(/<samlp:SessionIndex>[^<]+<\/samlp:SessionIndex>/);
    // SimpleSAMLphp knows that session: it ends it and answers; Keyward accepts its LogoutResponse.
    const sloUrl = `${app.url}/sso/saml/${connection.id}/slo`;
    const query = await followUntil(idpLogoutUrl!, sloUrl, jar);
    const answered = await fetch(`${sloUrl}?${query}`, { redirect: "manual" });
    expect(answered.status, await answered.clone().text()).toBe(303);
    expect(answered.headers.get("location")).toBe(`${app.url}/login?signed_out=1`);
    expect(await idpAsksForPassword(jar)).toBe(true);
  });

  it("IdP-initiated single logout ends a session opened by confirming a pending link (password and second step)", async () => {
    const hugo = await newUser(app, { email: at("hugo") });
    const { backupCodes } = await enrollTotp(app, hugo);
    const jar = new CookieJar();
    const { id, cookie } = await pendingLinkFor("hugo", jar);
    const first = await app.http.post("/api/v1/auth/login", { email: at("hugo"), password: PASSWORD, sso_link: id }, { cookie, headers: { origin: app.url } });
    expect(first.body.data.requires_mfa, first.text).toBe(true);
    const done = await app.http.post("/api/v1/auth/mfa/backup-code", { mfa_token: first.body.data.mfa_token, code: backupCodes![0] }, { cookie, headers: { origin: app.url } });
    expect(done.status, done.text).toBe(200);
    const sid = sidOf(done.headers)!;
    // A password session of the same person, not the connection's: the IdP's logout leaves it alone.
    const plainFirst = await login(app, at("hugo"), PASSWORD);
    const plain = await app.http.post("/api/v1/auth/mfa/backup-code", { mfa_token: plainFirst.body.data.mfa_token, code: backupCodes![1] });
    expect(plain.status, plain.text).toBe(200);
    expect((await app.http.get("/api/v1/users/me", { cookie: sid })).status).toBe(200);
    const sloUrl = `${app.url}/sso/saml/${connection.id}/slo`;
    const query = await followUntil(`${idp.url}/saml2/idp/initSLO.php?RelayState=${encodeURIComponent(`${idp.url}/`)}`, sloUrl, jar);
    const answered = await fetch(`${sloUrl}?${query}`, { redirect: "manual" });
    expect(answered.status, await answered.clone().text()).toBe(303);
    expect(answered.headers.get("location")!.startsWith(idp.sloUrl)).toBe(true);
    expect((await app.http.get("/api/v1/users/me", { cookie: sid })).status).toBe(401);
    expect((await app.http.get("/api/v1/users/me", { token: plain.body.data.token })).status).toBe(200);
    const [audit] = resultRows<{ metadata: Record<string, unknown> }>(
      await app.container.db.execute(sql`select metadata from audit_logs where action = 'sso.logout' and user_id = ${hugo.id} order by created_at desc, id desc limit 1`),
    );
    expect(audit!.metadata).toMatchObject({ connectionId: connection.id, sessionsEnded: 1 });
  });

  it("HTTP-POST binding: an IdP whose metadata offers only POST gets a signed AuthnRequest through an auto-posting form", async () => {
    const metadata = (await (await fetch(idp.metadataUrl)).text()).replace(
      /(<md:SingleSignOnService[^>]*Binding=")urn:oasis:names:tc:SAML:2\.0:bindings:HTTP-Redirect"/,
      '$1urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"',
    );
    expect(metadata).toContain("bindings:HTTP-POST");
    const created = await app.http.post(`${base(org.id)}/saml`, { name: "POST only", metadata_xml: metadata }, { token: admin.token });
    expect(created.status, created.text).toBe(201);
    const conn = created.body.data.connection;
    registerSp("post-only", conn.saml.sp_metadata_url, { "sign.logout": true });
    const started = await fetch(`${app.url}/sso/start/${conn.id}`, { redirect: "manual" });
    expect(started.status).toBe(200);
    const csp = started.headers.get("content-security-policy")!;
    expect(csp).toContain(`form-action 'self' ${new URL(idp.url).origin}`);
    expect(csp).toContain("script-src 'self'");
    const html = await started.text();
    expect(html).toContain(`action="${idp.ssoUrl}"`);
    expect(html).toContain("data-auto-submit");
    expect(html).toContain('src="/assets/auto-submit.js"');
    const field = (name: string) => /value="([^"]*)"/.exec(new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(html)![0])![1]!;
    const fields = { SAMLRequest: field("SAMLRequest"), RelayState: field("RelayState") };
    const requestXml = Buffer.from(fields.SAMLRequest, "base64").toString();
    // Signed inside the XML (enveloped), as the POST binding requires.
    expect(requestXml).toContain("<ds:Signature");
    expect(requestXml).toContain(`Destination="${idp.ssoUrl}"`);
    const answer = await browserLogin(idp.ssoUrl, user("erin"), new CookieJar(), fields);
    expect(answer.relayState).toBe(fields.RelayState);
    const done = await post(answer.action, { SAMLResponse: answer.samlResponse, RelayState: answer.relayState }, cookiesOf(started).join("; "));
    expect(done.landing.searchParams.get("error_type"), done.landing.toString()).toBeNull();
    expect(done.sid).toBeTruthy();
    expect((await app.http.get("/api/v1/users/me", { cookie: done.sid! })).body.data.user.email).toBe(at("erin"));
    // A tampered signed request is refused by the IdP itself.
    const tampered = { ...fields, SAMLRequest: Buffer.from(requestXml.replace(conn.saml.acs_url, `${conn.saml.acs_url}x`)).toString("base64") };
    await expect(browserLogin(idp.ssoUrl, user("erin"), new CookieJar(), tampered)).rejects.toThrow();
    expect((await app.http.delete(`${base(org.id)}/${conn.id}`, { token: admin.token })).status).toBe(200);
    unregisterSp("post-only");
  });

  it("HTTP-Redirect stays the default where the IdP offers both; prefer_post_binding switches to POST", async () => {
    const metadata = (await (await fetch(idp.metadataUrl)).text()).replace(
      /<md:SingleSignOnService[^>]*Binding="urn:oasis:names:tc:SAML:2\.0:bindings:HTTP-Redirect"[^>]*\/>/,
      (redirect) => `${redirect}${redirect.replace("HTTP-Redirect", "HTTP-POST")}`,
    );
    expect(metadata.match(/SingleSignOnService/g)!.length).toBeGreaterThanOrEqual(2);
    const created = await app.http.post(`${base(org.id)}/saml`, { name: "Both bindings", metadata_xml: metadata }, { token: admin.token });
    expect(created.status, created.text).toBe(201);
    const conn = created.body.data.connection;
    expect(conn.saml).toMatchObject({ prefer_post_binding: false, authn_request_binding: "redirect" });
    registerSp("both", conn.saml.sp_metadata_url);
    const redirected = await fetch(`${app.url}/sso/start/${conn.id}`, { redirect: "manual" });
    expect(redirected.status).toBe(303);
    expect(redirected.headers.get("location")!.startsWith(`${idp.ssoUrl}?SAMLRequest=`)).toBe(true);
    const patched = await app.http.patch(`${base(org.id)}/${conn.id}`, { prefer_post_binding: true }, { token: admin.token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.connection.saml).toMatchObject({ prefer_post_binding: true, authn_request_binding: "post" });
    const posted = await fetch(`${app.url}/sso/start/${conn.id}`, { redirect: "manual" });
    expect(posted.status).toBe(200);
    const html = await posted.text();
    const field = (name: string) => /value="([^"]*)"/.exec(new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(html)![0])![1]!;
    const answer = await browserLogin(idp.ssoUrl, user("erin"), new CookieJar(), { SAMLRequest: field("SAMLRequest"), RelayState: field("RelayState") });
    const done = await post(answer.action, { SAMLResponse: answer.samlResponse, RelayState: answer.relayState }, cookiesOf(posted).join("; "));
    // Erin's account was made just in time by this organization (through the POST-only connection):
    // its other connection signs her in on the organization's word, no consent step.
    expect(done.landing.pathname).toBe("/");
    expect(done.landing.searchParams.get("sso_link")).toBeNull();
    expect((await app.http.delete(`${base(org.id)}/${conn.id}`, { token: admin.token })).status).toBe(200);
    unregisterSp("both");
  });

  it("SSO-required refuses password sign-in", async () => {
    await newUser(app, { email: at("carl") });
    expect((await login(app, at("carl"), PASSWORD)).status).toBe(200);
    expect((await app.http.patch(`${base(org.id)}/${connection.id}`, { require_sso: true }, { token: admin.token })).status).toBe(200);
    const refused = await login(app, at("carl"), PASSWORD);
    expect(refused.status).toBe(403);
    expect(refused.body.error.type).toBe("SSO_REQUIRED");
  });
});
