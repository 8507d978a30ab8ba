import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SK_USER_PRESENCE, SK_USER_VERIFICATION } from "../../src/lib/ssh/index.js";
import { addMember, newOrg, orgWithRoles } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";
import { FIXED_SK_FINGERPRINTS, FIXED_SK_KEYS, FIXED_SK_SEEDS } from "../fixtures/sk-keys.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { auditRows, countRows } from "../helpers/db.js";
import { softSkKey, skSshsig, type SkSignOptions, type SoftSkKey } from "../helpers/soft-sk.js";

/**
 * Hardware-bound keys (issue 37): the registry takes FIDO2 security keys (a fixed test key's public
 * half), proof of possession reads the authenticator's flags, and the department policy can require
 * a security key, a touch and a PIN/biometric check — refused with HARDWARE_KEY_REQUIRED naming the
 * department, or certified with what sshd then enforces (`ssh-keygen -L` reads it).
 *
 * CI has no authenticator: `ssh-keygen -Y sign` with an sk key would need one. The challenge is
 * answered by test/helpers/soft-sk.ts, a software authenticator holding the fixed key's private half
 * that produces the very SSHSIG bytes ssh-keygen sends (test/unit/ssh-sk.test.ts checks them with
 * `ssh-keygen -Y check-novalidate`); the flags byte is whatever the test says, which is how a key
 * made with -O no-touch-required or -O verify-required answers.
 */
let app: TestApp;
const dir = mkdtempSync(join(tmpdir(), "kw-sk-int-"));
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

const fixed = (kind: "ed25519" | "ecdsa") => softSkKey(kind, FIXED_SK_SEEDS[kind], "ssh:", `fixed-${kind}-sk@test`);
const UP = SK_USER_PRESENCE;
const UV = SK_USER_VERIFICATION;

/** Answers the key's challenge with the software authenticator; the POST's answer. */
async function prove(user: TestUser, keyId: string, key: SoftSkKey, o: SkSignOptions = {}) {
  const challenge = await app.http.get(`/api/v1/ssh/keys/${keyId}/verify`, { token: user.token });
  const signature = skSshsig(key, Buffer.from(`${challenge.body.data.challenge_text}\n`), o);
  return app.http.post(`/api/v1/ssh/keys/${keyId}/verify`, { signature }, { token: user.token });
}

async function addSkKey(user: TestUser, key: SoftSkKey, o: SkSignOptions = { flags: UP }): Promise<string> {
  const added = await app.http.post("/api/v1/ssh/keys", { key: key.line }, { token: user.token });
  expect([200, 201]).toContain(added.status);
  const proved = await prove(user, added.body.data.id, key, o);
  expect(proved.status, proved.text).toBe(200);
  return added.body.data.id;
}

function keygenL(cert: string): string {
  const path = join(dir, `c${Math.random().toString(36).slice(2)}-cert.pub`);
  writeFileSync(path, `${cert}\n`);
  return execFileSync("ssh-keygen", ["-L", "-f", path], { encoding: "utf8" });
}

async function department(orgId: string, owner: TestUser, name: string, policy: Record<string, unknown> | null, members: TestUser[]) {
  const base = `/api/v1/organizations/${orgId}`;
  const dept = (await app.http.post(`${base}/departments`, { name }, { token: owner.token })).body.data.department;
  if (policy) {
    const put = await app.http.request("PUT", `${base}/departments/${dept.id}/cert-policy`, { token: owner.token, body: policy });
    expect(put.status, put.text).toBe(200);
  }
  for (const m of members) await app.http.post(`${base}/departments/${dept.id}/members`, { email: m.email }, { token: owner.token });
  return dept.id as string;
}

describe("the key registry takes security keys", () => {
  it("registers the fixed sk keys (REST and GraphQL), shows their type, and records the flags of the proof", async () => {
    const user = await newUser(app);
    const added = await app.http.post("/api/v1/ssh/keys", { key: FIXED_SK_KEYS.ed25519 }, { token: user.token });
    expect(added.status).toBe(201);
    expect(added.body.data).toMatchObject({
      key_type: "sk-ed25519",
      hardware_backed: true,
      sk_user_presence: null,
      sk_user_verification: null,
      key_bits: 256,
      fingerprint: FIXED_SK_FINGERPRINTS.ed25519,
      public_key: FIXED_SK_KEYS.ed25519.split(" ").slice(0, 2).join(" "),
      key_comment: "fixed-ed25519-sk@test",
      verified: false,
    });
    const viaGql = await app.http.gql(
      "mutation($k: String!) { addSshKey(publicKey: $k) { isNew key { keyType hardwareBacked skUserPresence fingerprint } } }",
      { k: FIXED_SK_KEYS.ecdsa },
      { token: user.token },
    );
    expect(viaGql.data.addSshKey).toEqual({ isNew: true, key: { keyType: "sk-ecdsa", hardwareBacked: true, skUserPresence: null, fingerprint: FIXED_SK_FINGERPRINTS.ecdsa } });

    // Proof of possession: touched, then touched with a PIN.
    const proved = await prove(user, added.body.data.id, fixed("ed25519"), { flags: UP, counter: 12 });
    expect(proved.status).toBe(200);
    expect(proved.body.data.key).toMatchObject({ verified: true, sk_user_presence: true, sk_user_verification: false });
    expect((await prove(user, added.body.data.id, fixed("ed25519"), { flags: UP | UV, counter: 13 })).body.data.key).toMatchObject({ sk_user_verification: true });
    const verifiedRows = (await auditRows(app, user.id)).filter((r) => r.action === "ssh.key.verified");
    expect(verifiedRows.map((r) => r.metadata)).toEqual([
      { fingerprint: FIXED_SK_FINGERPRINTS.ed25519, key_type: "sk-ed25519", sk_flags: UP, sk_counter: 12 },
      { fingerprint: FIXED_SK_FINGERPRINTS.ed25519, key_type: "sk-ed25519", sk_flags: UP | UV, sk_counter: 13 },
    ]);

    // A plain key shows as such.
    const plain = await addVerifiedKey(app, user);
    const list = await app.http.gql("{ mySshKeys { id keyType hardwareBacked skUserPresence skUserVerification } }", {}, { token: user.token });
    expect(list.data.mySshKeys.find((k: { id: string }) => k.id === plain.id)).toMatchObject({ keyType: "ed25519", hardwareBacked: false, skUserPresence: null });
  });

  it("refuses a proof with the wrong application, tampered flags, another key, or a plain signature", async () => {
    const user = await newUser(app);
    const key = fixed("ecdsa");
    const id = (await app.http.post("/api/v1/ssh/keys", { key: key.line }, { token: user.token })).body.data.id;
    expect((await prove(user, id, key, { application: "ssh:other" })).body.error.type).toBe("VERIFICATION_FAILED");
    expect((await prove(user, id, softSkKey("ecdsa", "someone else's key"))).body.error.type).toBe("VERIFICATION_FAILED");
    const challenge = await app.http.get(`/api/v1/ssh/keys/${id}/verify`, { token: user.token });
    const armored = skSshsig(key, Buffer.from(`${challenge.body.data.challenge_text}\n`), { flags: UP });
    const blob = Buffer.from(armored.replace(/-----[A-Z ]+-----|\s/g, ""), "base64");
    blob[blob.length - 5] = UP | UV; // claims a PIN the authenticator never signed for
    const tampered = await app.http.post(`/api/v1/ssh/keys/${id}/verify`, { signature: blob.toString("base64") }, { token: user.token });
    expect(tampered.body.error.type).toBe("VERIFICATION_FAILED");
    expect((await app.http.get(`/api/v1/ssh/keys/${id}`, { token: user.token })).body.data).toMatchObject({ verified: false, sk_user_presence: null });
    // Malformed sk keys are a 400, never stored.
    const broken = await app.http.post("/api/v1/ssh/keys", { key: `sk-ssh-ed25519@openssh.com ${Buffer.from("garbage").toString("base64")}` }, { token: user.token });
    expect(broken.status).toBe(400);
    expect(broken.body.error.type).toBe("SSH_KEY_ERROR");
  });
});

describe("department policy: hardware-bound keys", () => {
  it("refuses or certifies by policy, strictest of the departments, naming the department and the requirement", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await grantPrincipal(app, org.id, owner, member, "app");
    const plain = await addVerifiedKey(app, member);
    const touched = await addSkKey(member, fixed("ed25519"), { flags: UP });
    const untouched = await addSkKey(member, softSkKey("ed25519", "made with -O no-touch-required"), { flags: 0 });
    const verified = await addSkKey(member, fixed("ecdsa"), { flags: UP | UV });
    const sign = (keyId: string) => app.http.post("/api/v1/ssh/sign", { key_id: keyId }, { token: member.token });

    // No requirement: every key signs; the sk key gets an sk certificate.
    const loose = await department(org.id, owner, "Loose", { custom_extensions: ["no-touch-required"] }, [member]);
    expect((await sign(plain.id)).status).toBe(201);
    const skCert = await sign(untouched);
    expect(skCert.status).toBe(201);
    // Touch not required: the admin's custom extension reaches the certificate.
    expect(keygenL(skCert.body.data.certificate)).toMatch(/Type: sk-ssh-ed25519-cert-v01@openssh.com user certificate[\s\S]*no-touch-required/);

    // A second department requires a security key: the strictest wins, and names it.
    const ops = await department(org.id, owner, "Ops", { require_hardware_key: true, custom_extensions: ["no-touch-required"] }, [member]);
    const refused = await sign(plain.id);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toEqual({ type: "HARDWARE_KEY_REQUIRED", details: { department: "Ops", requirement: "hardware_key", key_type: "ed25519" } });
    expect(refused.body.message).toContain('"Ops" requires a hardware-backed security key');
    expect((await sign(untouched)).status).toBe(201);
    const policy = await app.http.get("/api/v1/ssh/dept-cert-policy", { token: member.token });
    expect(policy.body.data.policy).toMatchObject({ require_hardware_key: true, require_touch: false, require_verify: false });

    // Touch required: the untouched key is refused; a touched one is certified without no-touch-required.
    await app.http.request("PUT", `/api/v1/organizations/${org.id}/departments/${ops}/cert-policy`, { token: owner.token, body: { require_touch: true } });
    expect((await sign(untouched)).body.error.details).toEqual({ department: "Ops", requirement: "touch", key_type: "sk-ed25519" });
    const touchedCert = await sign(touched);
    expect(touchedCert.status).toBe(201);
    expect(touchedCert.body.data.extensions).not.toContain("no-touch-required");
    const shown = keygenL(touchedCert.body.data.certificate);
    expect(shown).toContain("Type: sk-ssh-ed25519-cert-v01@openssh.com user certificate");
    expect(shown).toContain(`Public key: ED25519-SK-CERT ${FIXED_SK_FINGERPRINTS.ed25519}`);
    expect(shown).not.toContain("no-touch-required");
    expect(shown).toMatch(/Critical Options: \(none\)/);

    // Verify required: a touched key without a PIN is refused; the verified ecdsa-sk key gets verify-required.
    await app.http.request("PUT", `/api/v1/organizations/${org.id}/departments/${ops}/cert-policy`, { token: owner.token, body: { require_verify: true } });
    const noPin = await sign(touched);
    expect(noPin.body.error.details).toEqual({ department: "Ops", requirement: "verify", key_type: "sk-ed25519" });
    expect(noPin.body.message).toContain("-O verify-required");
    const pinCert = await sign(verified);
    expect(pinCert.status).toBe(201);
    const pinShown = keygenL(pinCert.body.data.certificate);
    expect(pinShown).toContain("Type: sk-ecdsa-sha2-nistp256-cert-v01@openssh.com user certificate");
    expect(pinShown).toMatch(/Critical Options:\s+verify-required/);
    expect(pinShown).not.toContain("no-touch-required");
    // Re-proving the touched key with a PIN lets it sign too.
    expect((await prove(member, touched, fixed("ed25519"), { flags: UP | UV })).status).toBe(200);
    expect((await sign(touched)).status).toBe(201);

    // GraphQL answers the same refusal; every refusal left a failed-issuance row.
    const gql = await app.http.gql("mutation($k: ID!) { signUserCertificate(input: { keyId: $k }) { serial } }", { k: plain.id }, { token: member.token });
    expect(gql.errors[0].extensions.code).toBe("HARDWARE_KEY_REQUIRED");
    expect(gql.errors[0].message).toBe(refused.body.message);
    const failed = (await app.http.get(`/api/v1/organizations/${org.id}/certificates/audit?action=failed`, { token: owner.token })).body.data.entries;
    expect(failed.filter((e: { message: string }) => e.message.startsWith("HARDWARE_KEY_REQUIRED:"))).toHaveLength(4);
    expect(loose).toBeTruthy();
  });

  it("binds admins too", async () => {
    const { org, owner, admin } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await app.http.post(`/api/v1/organizations/${org.id}/principals`, { name: "root" }, { token: owner.token });
    await department(org.id, owner, "Prod", { require_hardware_key: true, require_touch: true }, [admin]);
    const plain = await addVerifiedKey(app, admin);
    const refused = await app.http.post("/api/v1/ssh/sign", { key_id: plain.id, principals: ["root"] }, { token: admin.token });
    expect(refused.body.error).toMatchObject({ type: "HARDWARE_KEY_REQUIRED", details: { department: "Prod", requirement: "hardware_key" } });
    const id = await addSkKey(admin, fixed("ecdsa"), { flags: UP });
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: id, principals: ["root"] }, { token: admin.token })).status).toBe(201);
  });

  it("never certifies a security key as a host key", async () => {
    const { org, owner } = await orgWithRoles(app);
    await createCa(app, org.id, owner, { ca_type: "host" });
    const res = await app.http.post("/api/v1/ssh/sign/host", { host_public_key: FIXED_SK_KEYS.ecdsa, principals: ["db1.example.com"], org_id: org.id }, { token: owner.token });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe("WRONG_KEY_MATERIAL");
    expect(res.body.message).toContain("never a host key");
    expect(await countRows(app, "ssh_certificates", `organization_id = '${org.id}'`)).toBe(0);
  });

  it("keeps the policy consistent, audited, and in the hands of the organization's admins", async () => {
    const { org, owner, admin, member } = await orgWithRoles(app);
    const dept = await department(org.id, owner, "Sec", null, []);
    const path = `/api/v1/organizations/${org.id}/departments/${dept}/cert-policy`;
    const bad = await app.http.request("PUT", path, { token: owner.token, body: { require_touch: true } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("require_hardware_key");
    const notBool = await app.http.request("PUT", path, { token: owner.token, body: { require_hardware_key: "yes" } });
    expect(notBool.body.error.type).toBe("VALIDATION_ERROR");

    const ok = await app.http.gql(
      "mutation($o: ID!, $d: ID!) { updateCertPolicy(orgId: $o, departmentId: $d, input: { requireHardwareKey: true, requireVerify: true }) { requireHardwareKey requireTouch requireVerify } }",
      { o: org.id, d: dept },
      { token: admin.token },
    );
    expect(ok.errors).toBeUndefined();
    expect(ok.data.updateCertPolicy).toEqual({ requireHardwareKey: true, requireTouch: false, requireVerify: true });
    const audit = (await app.http.get(`/api/v1/organizations/${org.id}/audit-logs?action=department.cert_policy.updated`, { token: owner.token })).body.data.audit_logs;
    expect(audit[0]).toMatchObject({ actor_id: admin.id, resource_id: dept, metadata: expect.objectContaining({ requireHardwareKey: true, requireVerify: true, requireTouch: false }) });

    // A plain member, an outsider and another organization's owner may not change it.
    const stranger = await newUser(app);
    const otherOwner = await newUser(app);
    const other = await newOrg(app, otherOwner);
    await addMember(app, other.id, otherOwner, stranger, "member");
    for (const who of [member, stranger, otherOwner]) {
      const res = await app.http.request("PUT", path, { token: who.token, body: { require_hardware_key: false } });
      expect([403, 404], `${who.email}: ${res.status}`).toContain(res.status);
    }
    const after = await app.http.get(path, { token: owner.token });
    expect(after.body.data.cert_policy).toMatchObject({ require_hardware_key: true, require_verify: true });
    expect(await countRows(app, "department_cert_policies", `department_id = '${dept}' and require_hardware_key`)).toBe(1);
  });

  it("signs 20 certificates for a touched sk key at once under a touch-requiring policy", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await grantPrincipal(app, org.id, owner, member, "app");
    await department(org.id, owner, "Ops", { require_hardware_key: true, require_touch: true }, [member]);
    const id = await addSkKey(member, fixed("ed25519"), { flags: UP });
    const answers = await Promise.all(Array.from({ length: 20 }, () => app.http.post("/api/v1/ssh/sign", { key_id: id }, { token: member.token })));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    expect(new Set(answers.map((a) => a.body.data.serial)).size).toBe(20);
    expect(answers.every((a) => a.body.data.certificate.startsWith("sk-ssh-ed25519-cert-v01@openssh.com "))).toBe(true);
  });
});
