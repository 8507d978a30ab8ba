import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { countRows } from "../helpers/db.js";
import { newUser } from "../factories/users.js";
import { addMember, orgWithRoles } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../factories/ssh.js";
import { DEFAULT_CERT_POLICY, mergePolicies, resolveLifetimeHours } from "../../src/modules/ssh-ca/policy.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

describe("department policy at signing", () => {
  it("merges several departments to the strictest, and caps admins by the maximum too", async () => {
    const { org, owner, admin, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    const base = `/api/v1/organizations/${org.id}`;
    const put = (deptId: string, body: object) => app.http.request("PUT", `${base}/departments/${deptId}/cert-policy`, { token: owner.token, body });
    const a = (await app.http.post(`${base}/departments`, { name: "A" }, { token: owner.token })).body.data.department;
    const b = (await app.http.post(`${base}/departments`, { name: "B" }, { token: owner.token })).body.data.department;
    await put(a.id, { allow_user_expiry: true, default_expiry_hours: 4, max_expiry_hours: 12, allowed_extensions: ["permit-pty", "permit-port-forwarding"], custom_extensions: ["login@corp"] });
    await put(b.id, { allow_user_expiry: true, default_expiry_hours: 2, max_expiry_hours: 8, allowed_extensions: ["permit-pty", "permit-X11-forwarding"], custom_extensions: ["login@corp"] });
    for (const dept of [a, b]) {
      await app.http.post(`${base}/departments/${dept.id}/members`, { email: member.email }, { token: owner.token });
      await app.http.post(`${base}/departments/${dept.id}/members`, { email: admin.email }, { token: owner.token });
    }
    await grantPrincipal(app, org.id, owner, member, "app");
    const policy = await app.http.get(`/api/v1/ssh/dept-cert-policy`, { token: member.token });
    expect(policy.body.data.policy).toMatchObject({ allow_user_expiry: true, default_expiry_hours: 2, max_expiry_hours: 8, extensions: ["permit-pty", "login@corp"] });

    const key = await addVerifiedKey(app, member);
    const signed = await app.http.post("/api/v1/ssh/sign", { key_id: key.id, expiry_hours: 8 }, { token: member.token });
    expect(signed.status).toBe(201);
    expect(signed.body.data.extensions).toEqual(["permit-pty", "login@corp"]);
    const rest = await app.http.post("/api/v1/ssh/sign", { key_id: key.id, expiry_hours: 9 }, { token: member.token });
    const gql = await app.http.gql("mutation($k: ID!) { signUserCertificate(input: { keyId: $k, expiryHours: 9 }) { serial } }", { k: key.id }, { token: member.token });
    expect(rest.body.error.type).toBe("EXPIRY_TOO_LONG");
    expect(gql.errors[0].extensions.code).toBe("EXPIRY_TOO_LONG");
    expect(gql.errors[0].message).toBe(rest.body.message);
    const viaGql = await app.http.gql("mutation($k: ID!) { signUserCertificate(input: { keyId: $k }) { principals extensions organizationName } }", { k: key.id }, { token: member.token });
    expect(viaGql.data.signUserCertificate).toEqual({ principals: ["app"], extensions: ["permit-pty", "login@corp"], organizationName: org.name });

    // Admins may request any principal and choose the lifetime, but not beyond the maximum.
    await app.http.post(`${base}/principals`, { name: "root" }, { token: owner.token });
    const adminKey = await addVerifiedKey(app, admin);
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: adminKey.id, principals: ["root"], expiry_hours: 8 }, { token: admin.token })).status).toBe(201);
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: adminKey.id, principals: ["root"], expiry_hours: 9 }, { token: admin.token })).body.error.type).toBe("EXPIRY_TOO_LONG");
  });

  it("counts a department without a stored policy as the default policy in the merge", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    const base = `/api/v1/organizations/${org.id}`;
    const loose = (await app.http.post(`${base}/departments`, { name: "Loose" }, { token: owner.token })).body.data.department;
    const plain = (await app.http.post(`${base}/departments`, { name: "Plain" }, { token: owner.token })).body.data.department;
    const put = await app.http.request("PUT", `${base}/departments/${loose.id}/cert-policy`, {
      token: owner.token,
      body: { allow_user_expiry: true, default_expiry_hours: 8, max_expiry_hours: 72, allowed_extensions: ["permit-pty"], custom_extensions: [] },
    });
    expect(put.status).toBe(200);
    await app.http.post(`${base}/departments/${loose.id}/members`, { email: member.email }, { token: owner.token });
    const looseOnly = await app.http.get(`/api/v1/ssh/dept-cert-policy`, { token: member.token });
    expect(looseOnly.body.data.policy).toMatchObject({ allow_user_expiry: true, default_expiry_hours: 8, max_expiry_hours: 72 });

    // Joining a department that shows the default policy makes the merge the default's strictness.
    const shown = await app.http.get(`${base}/departments/${plain.id}/cert-policy`, { token: owner.token });
    expect(shown.body.data.cert_policy).toMatchObject({ allow_user_expiry: false, default_expiry_hours: 1, max_expiry_hours: 24 });
    await app.http.post(`${base}/departments/${plain.id}/members`, { email: member.email }, { token: owner.token });
    const merged = await app.http.get(`/api/v1/ssh/dept-cert-policy`, { token: member.token });
    expect(merged.body.data.policy).toMatchObject({ allow_user_expiry: false, default_expiry_hours: 1, max_expiry_hours: 24, extensions: ["permit-pty"] });
    await grantPrincipal(app, org.id, owner, member, "app");
    const key = await addVerifiedKey(app, member);
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: key.id, expiry_hours: 48 }, { token: member.token })).body.error.type).toBe("EXPIRY_NOT_ALLOWED");
  });

  it("refuses a chosen lifetime when the policy does not allow it, and uses the default otherwise", () => {
    const strict = mergePolicies([{ ...DEFAULT_CERT_POLICY, allowedExtensions: ["permit-pty"] }], false);
    expect(() => resolveLifetimeHours(strict, 720, 2)).toThrow(expect.objectContaining({ code: "EXPIRY_NOT_ALLOWED" }));
    expect(resolveLifetimeHours(strict, 720, undefined)).toBe(1);
    expect(resolveLifetimeHours(mergePolicies([], false), 720, undefined)).toBe(1);
    expect(resolveLifetimeHours(mergePolicies([], true), 12, 10)).toBe(10);
    expect(() => resolveLifetimeHours(mergePolicies([], true), 12, 30)).toThrow(expect.objectContaining({ code: "EXPIRY_TOO_LONG" }));
  });
});

describe("what a signature writes", () => {
  it("writes the certificate with its certificate-audit row and audit record, and a failed signature's two rows", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await grantPrincipal(app, org.id, owner, member, "app");
    const key = await addVerifiedKey(app, member);
    const base = `/api/v1/organizations/${org.id}`;

    const signed = await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: member.token, headers: { "x-request-id": "sign-ok-1" } });
    expect(signed.status).toBe(201);
    const cert = signed.body.data;
    const metadata = { serial: cert.serial, principals: ["app"], cert_type: "user", key_id: `${member.email} [org:${org.slug}]`, valid_before: cert.valid_before };
    const issued = (await app.http.get(`${base}/certificates/audit?action=issued`, { token: owner.token })).body.data.entries;
    expect(issued).toEqual([expect.objectContaining({ certificate_id: cert.id, user_id: member.id, action: "issued", success: true, message: null, request_id: "sign-ok-1", metadata })]);
    const records = (await app.http.get(`${base}/audit-logs?action=ssh.cert.issued`, { token: owner.token })).body.data.audit_logs;
    expect(records).toEqual([
      expect.objectContaining({ actor_id: member.id, user_id: member.id, resource_type: "ssh_certificate", resource_id: cert.id, success: true, request_id: "sign-ok-1", metadata }),
    ]);
    const stored = (await app.http.get(`/api/v1/ssh/certificates/${cert.id}`, { token: member.token })).body.data.certificate;
    expect(stored).toMatchObject({ id: cert.id, serial: cert.serial, certificate: cert.certificate, principals: ["app"], status: "active" });

    // Refused by the policy (a member may not choose the lifetime by default): no certificate, two rows saying why.
    const refused = await app.http.post("/api/v1/ssh/sign", { key_id: key.id, expiry_hours: 2 }, { token: member.token, headers: { "x-request-id": "sign-refused-1" } });
    expect(refused.body.error.type).toBe("EXPIRY_NOT_ALLOWED");
    const failed = (await app.http.get(`${base}/certificates/audit?action=failed`, { token: owner.token })).body.data.entries;
    expect(failed).toEqual([
      expect.objectContaining({ certificate_id: null, user_id: member.id, success: false, message: `EXPIRY_NOT_ALLOWED: ${refused.body.message}`, request_id: "sign-refused-1", metadata: {} }),
    ]);
    const failedRecords = (await app.http.get(`${base}/audit-logs?action=ssh.cert.failed`, { token: owner.token })).body.data.audit_logs;
    expect(failedRecords).toEqual([expect.objectContaining({ actor_id: member.id, user_id: member.id, success: false, request_id: "sign-refused-1", resource_id: null })]);
    expect(await countRows(app, "ssh_certificates", `organization_id = '${org.id}'`)).toBe(1);
  });

  it("lets a member sign for their own and their departments' principals, and an admin for any of the organization's", async () => {
    const { org, owner, admin, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    const base = `/api/v1/organizations/${org.id}`;
    const principal = async (name: string) => (await app.http.post(`${base}/principals`, { name }, { token: owner.token })).body.data.principal;
    const [web, db] = [await principal("web"), await principal("db")];
    await principal("root");
    const dept = (await app.http.post(`${base}/departments`, { name: "Ops" }, { token: owner.token })).body.data.department;
    await app.http.post(`${base}/departments/${dept.id}/members`, { email: member.email }, { token: owner.token });
    expect((await app.http.post(`${base}/principals/${db.id}/departments/${dept.id}`, {}, { token: owner.token })).status).toBe(201);
    await grantPrincipal(app, org.id, owner, member, web.name);

    const memberKey = await addVerifiedKey(app, member);
    const mine = await app.http.post("/api/v1/ssh/sign", { key_id: memberKey.id }, { token: member.token });
    expect(mine.body.data.principals).toEqual(["db", "web"]);
    const root = await app.http.post("/api/v1/ssh/sign", { key_id: memberKey.id, principals: ["web", "root"] }, { token: member.token });
    expect(root.body.error).toMatchObject({ type: "UNAUTHORIZED_PRINCIPALS" });
    const adminKey = await addVerifiedKey(app, admin);
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: adminKey.id }, { token: admin.token })).body.data.principals).toEqual(["db", "root", "web"]);
  });
});

describe("signing under concurrency", () => {
  it("200 concurrent requests: 200 certificates, 200 distinct serials, 200 audit entries", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await grantPrincipal(app, org.id, owner, member, "app");
    const key = await addVerifiedKey(app, member);
    const results = await Promise.all(Array.from({ length: 200 }, () => app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: member.token })));
    expect(results.map((r) => r.status).filter((s) => s !== 201)).toEqual([]);
    const serials = new Set(results.map((r) => r.body.data.serial));
    expect(serials.size).toBe(200);
    expect(await countRows(app, "ssh_certificates", `organization_id = '${org.id}'`)).toBe(200);
    expect(await countRows(app, "certificate_audit_logs", `organization_id = '${org.id}' and action = 'issued'`)).toBe(200);
    expect(await countRows(app, "audit_logs", `organization_id = '${org.id}' and action = 'ssh.cert.issued'`)).toBe(200);
  }, 120_000);
});

describe("revocation and the sudo check", () => {
  it("revokes all of a user's certificates in an org, rebuilds the KRL, and the sudo check follows", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await grantPrincipal(app, org.id, owner, member, "app");
    const base = `/api/v1/organizations/${org.id}`;
    const sudoers = (await app.http.post(`${base}/departments`, { name: "Sudoers", can_sudo: true }, { token: owner.token })).body.data.department;
    await app.http.post(`${base}/departments/${sudoers.id}/members`, { email: member.email }, { token: owner.token });
    const apiKey = (await app.http.post(`${base}/api-keys`, { name: "bastion" }, { token: owner.token })).body.data.api_key.key;
    const key = await addVerifiedKey(app, member);
    const c1 = (await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: member.token })).body.data;
    await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: member.token });

    const check = await app.http.post("/api/v1/sudo/check", { api_key: apiKey, certificate_serial: c1.serial });
    expect(check.status).toBe(200);
    expect(check.body.data).toMatchObject({ can_sudo: true, user_id: member.id, user_email: member.email, certificate_serial: c1.serial, sudoer_departments: [{ id: sudoers.id, name: "Sudoers" }], all_departments_count: 1 });
    expect((await app.http.post("/api/v1/sudo/check", { api_key: "kwk_wrong_key", certificate_serial: c1.serial })).status).toBe(401);
    expect((await app.http.post("/api/v1/sudo/check", { api_key: apiKey, certificate_serial: "999999999" })).status).toBe(404);
    const stranger = await newUser(app);
    expect((await app.http.post(`${base}/users/${member.id}/certificates/revoke`, {}, { token: stranger.token })).status).toBe(404);

    const before = await fetch(`${app.url}${base.replace("/api/v1", "/api/v1")}/ssh/krl`);
    const v0 = Number(before.headers.get("x-krl-version"));
    const revoked = await app.http.post(`${base}/users/${member.id}/certificates/revoke`, { reason: "offboarded" }, { token: owner.token });
    expect(revoked.body.data.revoked).toBe(2);
    const after = await fetch(`${app.url}/api/v1/organizations/${org.id}/ssh/krl`);
    expect(Number(after.headers.get("x-krl-version"))).toBe(v0 + 1);
    expect((await app.http.post("/api/v1/sudo/check", { api_key: apiKey, certificate_serial: c1.serial })).body.data.can_sudo).toBe(false);
    const again = await app.http.post(`/api/v1/ssh/certificates/${c1.id}/revoke`, {}, { token: member.token });
    expect(again.body.error.type).toBe("ALREADY_REVOKED");
    const audit = await app.http.get(`${base}/certificates/audit?action=revoked`, { token: owner.token });
    expect(audit.body.data.entries).toHaveLength(2);
    expect(audit.body.data.entries.every((e: { organization_id: string }) => e.organization_id === org.id)).toBe(true);
  });

  it("lets admins see the org's certificates and members only their own", async () => {
    const { org, owner, admin, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await grantPrincipal(app, org.id, owner, member, "app");
    const key = await addVerifiedKey(app, member);
    const cert = (await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: member.token })).body.data;
    expect((await app.http.get("/api/v1/ssh/certificates", { token: member.token })).body.data.certificates.map((c: { id: string }) => c.id)).toEqual([cert.id]);
    expect((await app.http.get(`/api/v1/ssh/certificates/${cert.id}`, { token: admin.token })).status).toBe(200);
    const other = await newUser(app);
    await addMember(app, org.id, owner, other, "member");
    expect((await app.http.get(`/api/v1/ssh/certificates/${cert.id}`, { token: other.token })).status).toBe(404);
    const list = await app.http.get(`/api/v1/organizations/${org.id}/certificates?user_id=${member.id}`, { token: admin.token });
    expect(list.body.data).toMatchObject({ count: 1, page: 1 });
  });
});
