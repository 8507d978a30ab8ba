import { createHash, X509Certificate } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { assertionXml, responseXml, signElement } from "../helpers/saml-forge.js";
import { generateSelfSignedRsa, type SelfSignedKeyPair as TestKeyPair } from "../../src/lib/crypto/index.js";
import { orgWithRoles } from "../factories/orgs.js";
import { login } from "../factories/users.js";

/** An IdP signing key and its self-signed certificate (Keyward's own generator: no openssl needed). */
const makeKeyPair = (cn: string): TestKeyPair => generateSelfSignedRsa(cn, new Date());

/**
 * IdP signing-certificate rollover, live (issue 35): the IdP's metadata URL is served by a small
 * server in this test whose signing certificate is replaced at run time by a key pair made here.
 * The 12-hour refresh picks the new certificate up; responses signed with the old and the new one
 * both pass during the 7-day overlap; after it the old one is refused; a failed metadata read
 * keeps the current certificates. Responses are signed here (a real IdP's timestamps could not
 * follow the test clock over a week): this is the one test that signs as the IdP itself.
 */
let app: TestApp;
let server: Server;
let metadataUrl: string;
const tag = Date.now().toString(36);
const DOMAIN = `rollover-${tag}.test`;
const ENTITY = `https://idp.rollover-${tag}.test/metadata`;
const HOUR = 3600;
let serving: { mode: "ok" | "error" | "garbage"; certs: TestKeyPair[] } = { mode: "ok", certs: [] };
let connection: { id: string; saml: { sp_entity_id: string; acs_url: string; idp_certificate_count: number } };
let org: { id: string };
let admin: Awaited<ReturnType<typeof orgWithRoles>>["admin"];
const oldKey = makeKeyPair("keyward-rotation-test");

const body = (pem: string) => pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
function metadata(certs: TestKeyPair[]): string {
  return (
    `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${ENTITY}">` +
    `<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">` +
    certs.map((c) => `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${body(c.certPem)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`).join("") +
    `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${metadataUrl.replace("/metadata", "/sso")}"/>` +
    `</md:IDPSSODescriptor></md:EntityDescriptor>`
  );
}

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_OAUTH: "1000/60" });
  server = createServer((_req, res) => {
    if (serving.mode === "error") return void res.writeHead(503).end("down for maintenance");
    res.setHeader("content-type", "application/samlmetadata+xml");
    res.end(serving.mode === "garbage" ? "<md:EntityDescriptor" : metadata(serving.certs));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  metadataUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`;
  serving = { mode: "ok", certs: [oldKey] };
  ({ org, admin } = await orgWithRoles(app));
  await app.container.db.execute(sql`insert into organization_domains (organization_id, domain, verification_token, status, verified_at) values (${org.id}, ${DOMAIN}, ${`tok-${DOMAIN}`}, 'verified', now())`);
  const created = await app.http.post(
    `/api/v1/organizations/${org.id}/sso/connections/saml`,
    { name: "Rolling IdP", metadata_url: metadataUrl, allow_idp_initiated: true, want_encrypted_assertions: false },
    { token: admin.token },
  );
  expect(created.status, created.text).toBe(201);
  connection = created.body.data.connection;
}, 30_000);
afterAll(async () => {
  await app?.close();
  await new Promise((r) => server?.close(r));
});

let n = 0;
/** An IdP-initiated response signed with `key`, timed by the app's clock; posted to the ACS. Returns the error type, or null for a session. */
async function signInSignedBy(key: TestKeyPair): Promise<string | null> {
  const now = app.clock.now().getTime();
  const email = `person${++n}@${DOMAIN}`;
  const responseId = `_r${tag}${n}`;
  const xml = responseXml({ id: responseId, issuer: ENTITY, destination: connection.saml.acs_url, now, inner: assertionXml({ issuer: ENTITY, nameId: email, audience: connection.saml.sp_entity_id, recipient: connection.saml.acs_url, now }) });
  const signed = signElement(xml, responseId, { keyPem: key.keyPem });
  const res = await fetch(connection.saml.acs_url, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ SAMLResponse: Buffer.from(signed).toString("base64") }).toString(),
  });
  expect(res.status).toBe(303);
  const landing = new URL(res.headers.get("location")!);
  const sid = res.headers.getSetCookie().some((c) => c.includes(".sid="));
  const error = landing.searchParams.get("error_type");
  expect(sid).toBe(error === null);
  return error;
}

const refresh = () => app.container.services.samlMetadata.refreshDue();
/** The pinned certificates (the admin's session would not outlive the clock jumps; the stored settings are what counts). */
async function pinned(): Promise<{ current: number; previous: number }> {
  const [row] = resultRows<{ current: number; previous: number }>(
    await app.container.db.execute(sql`select jsonb_array_length(config->'idpCertsPem')::int as current, jsonb_array_length(config->'previousCertsPem')::int as previous from sso_connections where id = ${connection.id}`),
  );
  return row!;
}

/** SHA-256 over the DER, colon hex: computed here, independently of the view. */
const fingerprintOf = (pem: string) => createHash("sha256").update(new X509Certificate(pem).raw).digest("hex").toUpperCase().match(/../g)!.join(":");
interface CertFacts {
  fingerprint_sha256: string;
  subject_cn: string | null;
  not_before: string | null;
  not_after: string | null;
  in_rollover_overlap: boolean;
  overlap_ends_at: string | null;
}
/** The certificates the admin sees, by REST and by GraphQL (in REST's spelling), with a fresh session (the clock jumps). */
async function shownCertificates(): Promise<CertFacts[]> {
  const signedIn = await login(app, admin.email, admin.password);
  const token = signedIn.body.data.token as string;
  const rest = await app.http.get(`/api/v1/organizations/${org.id}/sso/connections`, { token });
  expect(rest.status, rest.text).toBe(200);
  const restCerts = rest.body.data.connections[0].saml.idp_certificates as CertFacts[];
  const gql = await app.http.gql(
    "query($orgId: ID!) { ssoConnections(orgId: $orgId) { saml { idpCertificates { fingerprintSha256 subjectCn notBefore notAfter inRolloverOverlap overlapEndsAt } } } }",
    { orgId: org.id },
    { token },
  );
  expect(gql.errors).toBeUndefined();
  const gqlCerts = (gql.data.ssoConnections[0].saml.idpCertificates as Array<Record<string, unknown>>).map((c) => ({
    fingerprint_sha256: c.fingerprintSha256,
    subject_cn: c.subjectCn,
    not_before: c.notBefore,
    not_after: c.notAfter,
    in_rollover_overlap: c.inRolloverOverlap,
    overlap_ends_at: c.overlapEndsAt,
  }));
  expect(gqlCerts).toEqual(restCerts);
  return restCerts;
}
const factsOf = (key: TestKeyPair, overlapEndsAt: string | null): CertFacts => {
  const x = new X509Certificate(key.certPem);
  return {
    fingerprint_sha256: fingerprintOf(key.certPem),
    subject_cn: "keyward-rotation-test",
    not_before: new Date(x.validFrom).toISOString(),
    not_after: new Date(x.validTo).toISOString(),
    in_rollover_overlap: overlapEndsAt !== null,
    overlap_ends_at: overlapEndsAt,
  };
};

describe("SAML IdP certificate rollover through the metadata URL", () => {
  const newKey = makeKeyPair("keyward-rotation-test");

  it("before the rollover: the old certificate signs in, the new one (not yet published) does not", async () => {
    expect(await shownCertificates()).toEqual([factsOf(oldKey, null)]);
    expect(await signInSignedBy(oldKey)).toBeNull();
    expect(await signInSignedBy(newKey)).toBe("SSO_SAML_REFUSED");
  });

  it("the IdP switches keys: the refresh picks the new certificate up when due (12 h), not before", async () => {
    serving = { mode: "ok", certs: [newKey] };
    expect(await refresh()).toBe(0);
    expect(await signInSignedBy(newKey)).toBe("SSO_SAML_REFUSED");
    app.clock.advance(12 * HOUR + 60);
    const before = app.clock.now().getTime();
    expect(await refresh()).toBe(1);
    const after = app.clock.now().getTime();
    expect(await pinned()).toEqual({ current: 1, previous: 1 });
    // The admin sees the new certificate, and the old one as kept for the 7-day overlap only.
    const shown = await shownCertificates();
    const overlapEnds = Date.parse(shown[1]!.overlap_ends_at!);
    expect(overlapEnds).toBeGreaterThanOrEqual(before + 7 * 24 * HOUR * 1000);
    expect(overlapEnds).toBeLessThanOrEqual(after + 7 * 24 * HOUR * 1000);
    expect(shown).toEqual([factsOf(newKey, null), factsOf(oldKey, shown[1]!.overlap_ends_at)]);
    const audit = resultRows<{ metadata: Record<string, unknown> }>(
      await app.container.db.execute(sql`select metadata from audit_logs where organization_id = ${org.id} and action = 'sso.connection.updated' order by created_at desc limit 1`),
    );
    expect(audit[0]!.metadata).toMatchObject({ fields: ["idpMetadata"], certificates: 1, inOverlap: 1 });
  });

  it("during the 7-day overlap both the new and the old certificate are accepted", async () => {
    expect(await signInSignedBy(newKey)).toBeNull();
    expect(await signInSignedBy(oldKey)).toBeNull();
    app.clock.advance(6 * 24 * HOUR);
    expect(await signInSignedBy(oldKey)).toBeNull();
  });

  it("a metadata URL that fails or serves garbage keeps the current certificates", async () => {
    serving = { mode: "error", certs: [] };
    app.clock.advance(12 * HOUR);
    expect(await refresh()).toBe(0);
    serving = { mode: "garbage", certs: [] };
    expect(await refresh()).toBe(0);
    expect(await pinned()).toEqual({ current: 1, previous: 1 });
    expect(await signInSignedBy(newKey)).toBeNull();
    // Still inside the overlap (6.5 days): the old one too.
    expect(await signInSignedBy(oldKey)).toBeNull();
  });

  it("after the overlap the old certificate is refused, the new one still signs in", async () => {
    app.clock.advance(12 * HOUR + 120);
    // Past the overlap the old certificate is no longer shown, even before the next refresh drops it.
    expect(await shownCertificates()).toEqual([factsOf(newKey, null)]);
    expect(await signInSignedBy(oldKey)).toBe("SSO_SAML_REFUSED");
    expect(await signInSignedBy(newKey)).toBeNull();
    serving = { mode: "ok", certs: [newKey] };
    expect(await refresh()).toBe(1);
    // The expired overlap entry is dropped at the next refresh.
    expect(await pinned()).toEqual({ current: 1, previous: 0 });
    expect(await shownCertificates()).toEqual([factsOf(newKey, null)]);
    expect(await signInSignedBy(oldKey)).toBe("SSO_SAML_REFUSED");
    const reasons = resultRows<{ code: string }>(
      await app.container.db.execute(sql`select metadata->>'code' as code from audit_logs where organization_id = ${org.id} and action = 'sso.login_failed' order by created_at`),
    ).map((r) => r.code);
    expect(reasons.every((c) => c === "SSO_SAML_REFUSED")).toBe(true);
    expect(reasons).toHaveLength(4);
  });
});
