import { spawnSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startSshd } from "../helpers/sshd.js";
import { orgWithRoles } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal, keysDir, makeKey, type LocalKey } from "../factories/ssh.js";
import type { TestUser } from "../factories/users.js";

/**
 * End to end with real OpenSSH: certificates Keyward signs are accepted by sshd trusting the
 * organization's TrustedUserCAKeys output, refused for principals the user does not hold, and
 * refused once revoked (through the KRL); a host certificate satisfies a client that trusts the
 * host CA through @cert-authority.
 */
let app: TestApp;
let ctx: { orgId: string; owner: TestUser; member: TestUser; key: LocalKey; keyId: string };

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  const { org, owner, member } = await orgWithRoles(app);
  await grantPrincipal(app, org.id, owner, member, "root");
  await grantPrincipal(app, org.id, owner, member, "deploy");
  const key = makeKey("ed25519");
  const { id } = await addVerifiedKey(app, member, key);
  ctx = { orgId: org.id, owner, member, key, keyId: id };
});
afterAll(() => app?.close());

let certSeq = 0;
async function signFor(principals: string[]): Promise<{ path: string; id: string; serial: string; line: string }> {
  const res = await app.http.post("/api/v1/ssh/sign", { key_id: ctx.keyId, principals }, { token: ctx.member.token });
  expect(res.status).toBe(201);
  const path = join(keysDir, `e2e-${certSeq++}-cert.pub`);
  writeFileSync(path, res.body.data.certificate + "\n");
  return { path, id: res.body.data.id, serial: res.body.data.serial, line: res.body.data.certificate };
}

async function fetchKrl(path: string) {
  const res = await fetch(`${app.url}/api/v1/organizations/${ctx.orgId}/ssh/krl`);
  expect(res.status).toBe(200);
  writeFileSync(path, Buffer.from(await res.arrayBuffer()));
}

async function trustedUserCaKeys(): Promise<string> {
  return (await app.http.get(`/api/v1/organizations/${ctx.orgId}/ssh/ca-keys`, { token: ctx.member.token })).body.data.trusted_user_ca_keys;
}

describe("sshd with Keyward certificates", () => {
  it("accepts certificates from every CA key type, refuses a principal not held, and honours the KRL", async () => {
    const ca = await createCa(app, ctx.orgId, ctx.owner, { key_type: "ed25519" });
    const hostKey = makeKey("ed25519");
    chmodSync(hostKey.path, 0o600);
    const krl = join(keysDir, "org.krl");
    await fetchKrl(krl);

    // One CA, three key types in turn: rotation keeps the previous keys trusted, so each one signs a
    // certificate that the same sshd (restarted with the current TrustedUserCAKeys) accepts.
    const certs: Array<{ type: string; path: string; id: string }> = [];
    for (const type of ["ed25519", "ecdsa", "rsa"]) {
      if (type !== "ed25519") await app.http.post(`/api/v1/organizations/${ctx.orgId}/cas/${ca.id}/rotate`, { key_type: type }, { token: ctx.owner.token });
      const cert = await signFor(["root"]);
      const listing = spawnSync("ssh-keygen", ["-L", "-f", cert.path], { encoding: "utf8" });
      expect(listing.status).toBe(0);
      expect(listing.stdout).toContain(`Key ID: "${ctx.member.email}`);
      expect(listing.stdout).toMatch(/Principals:\s+root\s/);
      if (type === "rsa") expect(listing.stdout).toContain("rsa-sha2-512");
      certs.push({ type, ...cert });
    }
    const sshd = await startSshd({ trustedUserCaKeys: await trustedUserCaKeys(), hostKeyPath: hostKey.path, krlPath: krl });
    try {
      for (const cert of certs) {
        const login = sshd.login("root", ctx.key.path, cert.path);
        expect(login.status, `${cert.type}: ${login.stderr}\n${sshd.log()}`).toBe(0);
      }
      expect(await sshd.waitForLog(/Accepted certificate ID/)).toBe(true);

      // A valid certificate, but only for "deploy": sshd refuses it for root.
      const deployOnly = await signFor(["deploy"]);
      expect(sshd.login("root", ctx.key.path, deployOnly.path).status).not.toBe(0);

      // Revoke the RSA-signed certificate; sshd reads the fresh KRL on the next attempt.
      const revoked = certs.at(-1)!;
      expect((await app.http.post(`/api/v1/ssh/certificates/${revoked.id}/revoke`, { reason: "lost laptop" }, { token: ctx.member.token })).status).toBe(200);
      await fetchKrl(krl);
      const query = spawnSync("ssh-keygen", ["-Q", "-f", krl, revoked.path], { encoding: "utf8" });
      expect(query.status).toBe(1);
      expect(query.stdout).toContain("REVOKED");
      expect(spawnSync("ssh-keygen", ["-Q", "-f", krl, certs[0]!.path], { encoding: "utf8" }).stdout).toMatch(/ok$/m);
      expect(sshd.login("root", ctx.key.path, revoked.path).status).not.toBe(0);
      expect(await sshd.waitForLog(/revoked/i)).toBe(true);
      expect(sshd.login("root", ctx.key.path, certs[0]!.path).status).toBe(0);
    } finally {
      sshd.stop();
    }
  });

  it("presents a host certificate a client accepts through @cert-authority", async () => {
    await createCa(app, ctx.orgId, ctx.owner, { ca_type: "host", name: "Host CA", key_type: "ecdsa" });
    const hostKey = makeKey("ed25519");
    chmodSync(hostKey.path, 0o600);
    const res = await app.http.post("/api/v1/ssh/sign/host", { host_public_key: hostKey.pub, principals: ["127.0.0.1", "localhost"], org_id: ctx.orgId }, { token: ctx.owner.token });
    expect(res.status).toBe(201);
    const hostCert = `${hostKey.path}-cert.pub`;
    writeFileSync(hostCert, res.body.data.certificate + "\n");
    expect(spawnSync("ssh-keygen", ["-L", "-f", hostCert], { encoding: "utf8" }).stdout).toContain("host certificate");
    const krl = join(keysDir, "org-host.krl");
    await fetchKrl(krl);
    const config = (await app.http.get(`/api/v1/organizations/${ctx.orgId}/ssh/ca-keys`, { token: ctx.member.token })).body.data;
    const sshd = await startSshd({ trustedUserCaKeys: config.trusted_user_ca_keys, hostKeyPath: hostKey.path, hostCertPath: hostCert, krlPath: krl });
    try {
      const cert = await signFor(["root"]);
      const strict = sshd.login("root", ctx.key.path, cert.path, config.known_hosts);
      expect(strict.status, strict.stderr).toBe(0);
      // Without the @cert-authority line the client cannot trust the host and stops.
      const unknown = sshd.login("root", ctx.key.path, cert.path, "# nothing trusted\n");
      expect(unknown.status).not.toBe(0);
    } finally {
      sshd.stop();
    }
  });
});
