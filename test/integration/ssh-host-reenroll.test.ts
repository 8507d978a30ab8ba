import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { orgWithRoles } from "../factories/orgs.js";
import { createCa, keysDir, makeKey, type LocalKey } from "../factories/ssh.js";
import type { TestUser } from "../factories/users.js";

/**
 * Enrolling a host again under the same name (a reinstall, with new host keys or the same) replaces
 * the earlier enrollment in one transaction: the old host is retired, its certificates revoked
 * into the KRL (by serial, so a reinstall that kept its keys keeps its new ones), audited; hosts
 * that only share a secondary name (a load-balanced alias) are left alone.
 */
let app: TestApp;
let org: { id: string };
let owner: TestUser;
let seq = 0;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  ({ org, owner } = await orgWithRoles(app));
  await createCa(app, org.id, owner, { ca_type: "host", name: "Host CA" });
});
afterAll(() => app?.close());

const O = () => `/api/v1/organizations/${org.id}`;

async function enroll(names: string[], key: LocalKey) {
  const t = await app.http.post(`${O()}/ssh/host-enrollment-tokens`, { names }, { token: owner.token });
  expect(t.status, t.text).toBe(201);
  const res = await app.http.post("/api/v1/ssh/hosts/enroll", { token: t.body.data.enrollment_token.token, host_keys: [key.pub] });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { host: { id: string; name: string }; certificates: Array<{ certificate: string; serial: string }>; replaced_hosts: string[] };
}

async function revoked(certificate: string): Promise<boolean> {
  const krl = join(keysDir, `reenroll-${seq}.krl`);
  const cert = join(keysDir, `reenroll-${seq++}-cert.pub`);
  writeFileSync(krl, Buffer.from(await (await fetch(`${app.url}${O()}/ssh/krl`)).arrayBuffer()));
  writeFileSync(cert, `${certificate}\n`);
  return spawnSync("ssh-keygen", ["-Q", "-f", krl, cert], { encoding: "utf8" }).stdout.includes("REVOKED");
}

const hosts = async (retired = false) =>
  (await app.http.get(`${O()}/ssh/hosts${retired ? "?include_retired=true" : ""}`, { token: owner.token })).body.data.hosts as Array<{ id: string; name: string; status: string }>;

describe("enrolling a host again under the same name", () => {
  it("replaces the earlier host: retired, its certificates in the KRL, audited; the new ones valid, with new or the same keys", async () => {
    const first = await enroll(["db1.example.com", "10.0.1.1"], makeKey());
    expect(first.replaced_hosts).toEqual([]);
    // Reinstalled with new host keys.
    const key = makeKey();
    const second = await enroll(["db1.example.com", "10.0.1.1"], key);
    expect(second.replaced_hosts).toEqual([first.host.id]);
    expect((await hosts()).filter((h) => h.name === "db1.example.com").map((h) => h.id)).toEqual([second.host.id]);
    expect((await hosts(true)).find((h) => h.id === first.host.id)?.status).toBe("retired");
    expect(await revoked(first.certificates[0]!.certificate)).toBe(true);
    expect(await revoked(second.certificates[0]!.certificate)).toBe(false);
    // Enrolled again with the keys it kept: the old serial is revoked, the new certificate for the same key is not.
    const third = await enroll(["db1.example.com"], key);
    expect(third.replaced_hosts).toEqual([second.host.id]);
    expect(await revoked(second.certificates[0]!.certificate)).toBe(true);
    expect(await revoked(third.certificates[0]!.certificate)).toBe(false);
    // The replaced host renews no more.
    expect((await app.http.post("/api/v1/ssh/hosts/renew/challenge", { host_id: second.host.id })).body.error.type).toBe("HOST_RETIRED");
    const audit = (await app.http.get(`${O()}/audit-logs?action=ssh.host.replaced`, { token: owner.token })).body.data.audit_logs as Array<{ resource_id: string; metadata: { replaced_by: string; revoked_serials: string[] } }>;
    const entry = audit.find((a) => a.resource_id === first.host.id)!;
    expect(entry.metadata.replaced_by).toBe(second.host.id);
    expect(entry.metadata.revoked_serials).toEqual([first.certificates[0]!.serial]);
  });

  it("leaves hosts that only share a secondary name (a load-balanced alias) enrolled", async () => {
    const a = await enroll(["app1.example.com", "www.example.com"], makeKey());
    const b = await enroll(["app2.example.com", "www.example.com"], makeKey());
    expect(b.replaced_hosts).toEqual([]);
    const live = (await hosts()).map((h) => h.id);
    expect(live).toContain(a.host.id);
    expect(live).toContain(b.host.id);
  });

  it("of 10 parallel reinstalls under one name, exactly one host stays live", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => enroll(["cache1.example.com"], makeKey())));
    expect(results).toHaveLength(10);
    expect((await hosts()).filter((h) => h.name === "cache1.example.com")).toHaveLength(1);
  });
});
