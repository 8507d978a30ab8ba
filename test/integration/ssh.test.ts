import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { createSecretBox } from "../../src/lib/crypto/index.js";
import { captureLogger } from "../helpers/log-capture.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { countRows } from "../helpers/db.js";
import { newUser } from "../factories/users.js";
import { newOrg, orgWithRoles } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal, keysDir, makeKey } from "../factories/ssh.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

const readCert = (line: string) => {
  const file = join(keysDir, `c-${Math.random().toString(36).slice(2)}-cert.pub`);
  writeFileSync(file, line + "\n");
  return execFileSync("ssh-keygen", ["-L", "-f", file], { encoding: "utf8" });
};

describe("SSH keys", () => {
  it("adds idempotently per user (201 then 200, same id) and lets another user add the same key", async () => {
    const alice = await newUser(app);
    const bob = await newUser(app);
    const key = makeKey("ecdsa");
    const first = await app.http.post("/api/v1/ssh/keys", { key: key.pub }, { token: alice.token });
    const second = await app.http.post("/api/v1/ssh/keys", { public_key: key.pub }, { token: alice.token });
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body.data.id).toBe(first.body.data.id);
    expect(first.body.data).toMatchObject({ key_type: "ecdsa", verified: false });
    const bobs = await app.http.post("/api/v1/ssh/keys", { key: key.pub }, { token: bob.token });
    expect(bobs.status).toBe(201);
    expect(bobs.body.data.id).not.toBe(first.body.data.id);
    expect((await app.http.get(`/api/v1/ssh/keys/${first.body.data.id}`, { token: bob.token })).status).toBe(404);
    const gql = await app.http.gql("mutation($k: String!) { addSshKey(publicKey: $k) { isNew key { id fingerprint } } }", { k: key.pub }, { token: alice.token });
    expect(gql.data.addSshKey).toMatchObject({ isNew: false, key: { id: first.body.data.id } });
  });

  it("registers a key once when the same add arrives several times at once, and again after it was deleted", async () => {
    const carol = await newUser(app);
    const key = makeKey();
    const adds = await Promise.all(Array.from({ length: 5 }, () => app.http.post("/api/v1/ssh/keys", { key: key.pub }, { token: carol.token })));
    expect(adds.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(new Set(adds.map((r) => r.body.data.id)).size).toBe(1);
    const id = adds[0]!.body.data.id as string;
    expect((await app.http.delete(`/api/v1/ssh/keys/${id}`, { token: carol.token })).status).toBe(200);
    const again = await app.http.post("/api/v1/ssh/keys", { key: key.pub }, { token: carol.token });
    expect(again.status).toBe(201);
    expect(again.body.data.id).not.toBe(id);
  });

  it("refuses private keys, certificates and garbage without echoing them", async () => {
    const user = await newUser(app);
    const key = makeKey();
    const priv = execFileSync("cat", [key.path], { encoding: "utf8" });
    const res = await app.http.post("/api/v1/ssh/keys", { key: priv }, { token: user.token });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe("WRONG_KEY_MATERIAL");
    expect(res.text).not.toContain("PRIVATE KEY");
    expect((await app.http.post("/api/v1/ssh/keys", { key: "ssh-ed25519 garbage" }, { token: user.token })).body.error.type).toBe("SSH_KEY_ERROR");
  });

  it("verifies possession with an ssh-keygen signature and refuses a signature by another key", async () => {
    const user = await newUser(app);
    const { id } = await addVerifiedKey(app, user);
    expect((await app.http.get(`/api/v1/ssh/keys/${id}`, { token: user.token })).body.data.verified).toBe(true);
    const other = makeKey();
    const target = await app.http.post("/api/v1/ssh/keys", { key: makeKey().pub }, { token: user.token });
    const challenge = await app.http.get(`/api/v1/ssh/keys/${target.body.data.id}/verify`, { token: user.token });
    const file = join(keysDir, "wrong-challenge.txt");
    writeFileSync(file, challenge.body.data.challenge_text + "\n");
    execFileSync("ssh-keygen", ["-Y", "sign", "-n", "file", "-f", other.path, file], { stdio: "ignore" });
    const bad = await app.http.post(`/api/v1/ssh/keys/${target.body.data.id}/verify`, { signature: execFileSync("cat", [`${file}.sig`], { encoding: "utf8" }) }, { token: user.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.type).toBe("VERIFICATION_FAILED");
  });
});

describe("certificate authorities and signing", () => {
  it("signs under department policy with the org's CA: principals, validity, extensions, key id", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    const base = `/api/v1/organizations/${org.id}`;
    const dept = (await app.http.post(`${base}/departments`, { name: "Web" }, { token: owner.token })).body.data.department;
    await app.http.post(`${base}/departments/${dept.id}/members`, { email: member.email }, { token: owner.token });
    await app.http.request("PUT", `${base}/departments/${dept.id}/cert-policy`, {
      token: owner.token,
      body: { allow_user_expiry: true, default_expiry_hours: 2, max_expiry_hours: 4, allowed_extensions: ["permit-pty", "permit-agent-forwarding"] },
    });
    await grantPrincipal(app, org.id, owner, member, "web");
    const { id: keyId } = await addVerifiedKey(app, member);

    const res = await app.http.post("/api/v1/ssh/sign", { key_id: keyId }, { token: member.token });
    expect(res.status).toBe(201);
    const data = res.body.data;
    expect(data).toMatchObject({ principals: ["web"], organization_id: org.id, organization_name: org.name, cert_id: data.id });
    expect(new Date(data.valid_before).getTime() - Date.now()).toBeGreaterThan(1.9 * 3600_000);
    expect(new Date(data.valid_before).getTime() - Date.now()).toBeLessThan(2.1 * 3600_000);
    const out = readCert(data.certificate);
    expect(out).toContain(`Key ID: "${member.email} [org:${org.slug}]"`);
    expect(out).toMatch(new RegExp(`Serial: ${data.serial}\\b`));
    expect(out).toMatch(/Principals:\s+web\s/);
    expect(out).toMatch(/Extensions:\s+permit-agent-forwarding\s+permit-pty\s*$/m);

    const tooLong = await app.http.post("/api/v1/ssh/sign", { key_id: keyId, expiry_hours: 5 }, { token: member.token });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.message).toContain("4 hours");
    const notMine = await app.http.post("/api/v1/ssh/sign", { key_id: keyId, principals: ["root"] }, { token: member.token });
    expect(notMine.status).toBe(403);
    expect(notMine.body.error.type).toBe("UNAUTHORIZED_PRINCIPALS");
    expect(await countRows(app, "certificate_audit_logs", `organization_id = '${org.id}' and action = 'failed'`)).toBe(2);
  });

  it("answers MULTIPLE_ORGS_AMBIGUOUS with the organizations, and signs with org_id", async () => {
    const user = await newUser(app);
    const a = await newOrg(app, user, "Alpha Org");
    const b = await newOrg(app, user, "Beta Org");
    await createCa(app, a.id, user);
    await createCa(app, b.id, user);
    await grantPrincipal(app, a.id, user, user, "alpha");
    const { id: keyId } = await addVerifiedKey(app, user);
    const res = await app.http.post("/api/v1/ssh/sign", { key_id: keyId }, { token: user.token });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe("MULTIPLE_ORGS_AMBIGUOUS");
    expect(res.body.error.details.organizations).toEqual(expect.arrayContaining([{ id: a.id, name: "Alpha Org" }, { id: b.id, name: "Beta Org" }]));
    const gql = await app.http.gql("mutation($k: ID!) { signUserCertificate(input: { keyId: $k }) { serial } }", { k: keyId }, { token: user.token });
    expect(gql.errors[0].extensions.code).toBe("MULTIPLE_ORGS_AMBIGUOUS");
    expect(gql.errors[0].extensions.details.organizations).toHaveLength(2);
    const chosen = await app.http.post("/api/v1/ssh/sign", { key_id: keyId, org_id: a.id }, { token: user.token });
    expect(chosen.status).toBe(201);
    expect(chosen.body.data.organization_name).toBe("Alpha Org");
  });

  it("refuses guests, unverified keys, another user's key, and users without a CA", async () => {
    const { org, owner, guest, member } = await orgWithRoles(app);
    expect((await app.http.post("/api/v1/ssh/sign", {}, { token: member.token })).body.error.type).toBe("NO_VERIFIED_KEYS");
    await createCa(app, org.id, owner);
    const guestKey = await addVerifiedKey(app, guest);
    const g = await app.http.post("/api/v1/ssh/sign", { key_id: guestKey.id, org_id: org.id }, { token: guest.token });
    expect(g.status).toBe(403);
    const unverified = await app.http.post("/api/v1/ssh/keys", { key: makeKey().pub }, { token: member.token });
    const u = await app.http.post("/api/v1/ssh/sign", { key_id: unverified.body.data.id }, { token: member.token });
    expect(u.body.error.type).toBe("KEY_NOT_VERIFIED");
    const stolen = await app.http.post("/api/v1/ssh/sign", { key_id: guestKey.id }, { token: member.token });
    expect(stolen.status).toBe(404);
    const lonely = await newUser(app);
    const lonelyKey = await addVerifiedKey(app, lonely);
    const none = await app.http.post("/api/v1/ssh/sign", { key_id: lonelyKey.id }, { token: lonely.token });
    expect(none.status).toBe(404);
    expect(none.body.error.type).toBe("CA_NOT_CONFIGURED");
  });

  it("tells a member who asks before any CA exists how an admin creates one: a 4xx, never an error-level log line", async () => {
    const { logger, lines } = captureLogger("info");
    const logged = await startTestApp({ RATE_LIMIT_ENABLED: "false" }, { logger });
    try {
      const { org, owner, member } = await orgWithRoles(logged);
      await grantPrincipal(logged, org.id, owner, member, "app");
      const { id: keyId } = await addVerifiedKey(logged, member);
      // Named organization: its name, its SSH page and the call that creates the CA.
      const named = await logged.http.post("/api/v1/ssh/sign", { key_id: keyId, org_id: org.id }, { token: member.token });
      expect([named.status, named.body.error.type]).toEqual([404, "CA_NOT_CONFIGURED"]);
      expect(named.body.message).toContain(`${org.name} has no active user certificate authority yet`);
      expect(named.body.message).toContain(`/orgs/${org.slug}/ssh`);
      expect(named.body.message).toContain(`POST /api/v1/organizations/${org.id}/cas`);
      // Without org_id (the CLI's first try): the same code and status, and the same way out.
      const implicit = await logged.http.post("/api/v1/ssh/sign", { key_id: keyId }, { token: member.token });
      expect([implicit.status, implicit.body.error.type]).toEqual([404, "CA_NOT_CONFIGURED"]);
      expect(implicit.body.message).toMatch(/An owner or admin creates one .*POST \/api\/v1\/organizations\/<org id>\/cas/);
      const gql = await logged.http.gql("mutation($k: ID!, $o: ID) { signUserCertificate(input: { keyId: $k, orgId: $o }) { serial } }", { k: keyId, o: org.id }, { token: member.token });
      expect(gql.errors[0].extensions.code).toBe("CA_NOT_CONFIGURED");
      expect(gql.errors[0].message).toBe(named.body.message);
      // The public key of a CA that does not exist: the same code, the same status.
      const publicKey = await logged.http.get(`/api/v1/ssh/ca/public-key?org_id=${org.id}`, { token: member.token });
      expect([publicKey.status, publicKey.body.error.type]).toEqual([404, "CA_NOT_CONFIGURED"]);
      // A person's ordinary mistake: nothing at error level for the alert to page on.
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await logged.close();
    }
  });

  it("refuses * and ? in host certificate principals (OpenSSH reads them as patterns) unless the operator allows patterns", async () => {
    const sign = (a: TestApp, orgId: string, token: string, principals: string[]) =>
      a.http.post("/api/v1/ssh/sign/host", { host_public_key: makeKey().pub, principals, org_id: orgId }, { token });
    const { org, owner } = await orgWithRoles(app);
    await createCa(app, org.id, owner, { name: "Hosts", ca_type: "host" });
    for (const principals of [["*"], ["*.example.com"], ["web?.example.com"], ["web1.example.com", "*"]]) {
      const res = await sign(app, org.id, owner.token, principals);
      expect([res.status, res.body.error?.type], JSON.stringify(principals)).toEqual([400, "VALIDATION_ERROR"]);
      expect(res.body.message).toContain("a pattern (OpenSSH would accept this certificate for every host name it matches)");
      expect(res.body.message).toContain("SSH_HOST_PRINCIPAL_PATTERNS=true");
    }
    const gql = await app.http.gql("mutation($i: SignHostCertificateInput!) { signHostCertificate(input: $i) { serial } }", { i: { hostPublicKey: makeKey().pub, principals: ["*.example.com"], orgId: org.id } }, { token: owner.token });
    expect(gql.errors[0].extensions.code).toBe("VALIDATION_ERROR");
    // Names and addresses sign as before; nothing was issued for the refusals.
    const named = await sign(app, org.id, owner.token, ["web1.example.com", "10.0.0.5"]);
    expect(named.status, named.text).toBe(201);
    expect((await app.http.get(`/api/v1/organizations/${org.id}/certificates?cert_type=host`, { token: owner.token })).body.data.certificates).toHaveLength(1);

    // An operator who wants one certificate for a whole domain says so.
    const open = await startTestApp({ RATE_LIMIT_ENABLED: "false", SSH_HOST_PRINCIPAL_PATTERNS: "true" });
    try {
      const o = await orgWithRoles(open);
      await createCa(open, o.org.id, o.owner, { name: "Hosts", ca_type: "host" });
      const wildcard = await sign(open, o.org.id, o.owner.token, ["*.example.com"]);
      expect(wildcard.status, wildcard.text).toBe(201);
      expect(readCert(wildcard.body.data.certificate)).toMatch(/Principals:\s+\*\.example\.com/);
    } finally {
      await open.close();
    }
  });

  it("keeps at most one active user CA per organization and rotates with an overlap", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    const ca = await createCa(app, org.id, owner, { key_type: "ecdsa" });
    const dup = await app.http.post(`/api/v1/organizations/${org.id}/cas`, { name: "Second" }, { token: owner.token });
    expect(dup.body.error.type).toBe("DUPLICATE_CA_TYPE");
    const rotated = await app.http.post(`/api/v1/organizations/${org.id}/cas/${ca.id}/rotate`, { reason: "yearly" }, { token: owner.token });
    expect(rotated.body.data.old_fingerprint).toBe(ca.fingerprint);
    expect(rotated.body.data.ca.fingerprint).not.toBe(ca.fingerprint);
    const config = await app.http.get(`/api/v1/organizations/${org.id}/ssh/ca-keys`, { token: member.token });
    expect(config.body.data.user_ca_keys).toHaveLength(2);
    expect(config.body.data.trusted_user_ca_keys).toContain(ca.public_key.split(" ")[1]);
    expect((await app.http.get(`/api/v1/organizations/${org.id}/cas`, { token: member.token })).status).toBe(403);
  });

  it("never stores, returns or logs a CA private key in plaintext", async () => {
    const { logger, lines } = captureLogger("trace");
    const logged = await startTestApp({ RATE_LIMIT_ENABLED: "false" }, { logger });
    try {
      const { org, owner, member } = await orgWithRoles(logged);
      const responses: string[] = [];
      for (const keyType of ["rsa", "ecdsa"]) {
        const type = keyType === "rsa" ? "user" : "host";
        const ca = await logged.http.post(`/api/v1/organizations/${org.id}/cas`, { name: `CA ${keyType}`, key_type: keyType, ca_type: type }, { token: owner.token });
        responses.push(ca.text);
        const id = ca.body.data.ca.id;
        responses.push((await logged.http.post(`/api/v1/organizations/${org.id}/cas/${id}/rotate`, {}, { token: owner.token })).text);
      }
      responses.push((await logged.http.get(`/api/v1/organizations/${org.id}/cas`, { token: owner.token })).text);
      await grantPrincipal(logged, org.id, owner, member, "app");
      const { id: keyId } = await addVerifiedKey(logged, member);
      responses.push((await logged.http.post("/api/v1/ssh/sign", { key_id: keyId }, { token: member.token })).text);
      for (const text of responses) expect(text).not.toMatch(/PRIVATE KEY|private_key|sealed/i);
      expect(JSON.stringify(lines)).not.toContain("PRIVATE KEY");

      // Every byte of the table: sealed envelopes only, and they do open to the keys.
      const rows = resultRows<{ sealed: string; id: string; raw: string }>(
        await logged.container.db.execute(sql`select id, private_key_sealed as sealed, t::text as raw from ca_keys t`),
      );
      expect(rows.length).toBe(4);
      for (const row of rows) {
        expect(row.raw).not.toContain("PRIVATE KEY");
        expect(row.sealed).toMatch(/^v1\.t1\.[\w-]+\.[\w-]+$/);
        const body = Buffer.from(row.sealed.split(".")[3]!, "base64url");
        expect(body.includes(Buffer.from("-----BEGIN"))).toBe(false);
        expect(createSecretBox(logged.container.config.crypto.caKeys).decryptString(row.sealed, `ca-key:${row.id}`)).toContain("PRIVATE KEY");
      }
    } finally {
      await logged.close();
    }
  });
});
