import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { orgWithRoles } from "../factories/orgs.js";
import { createCa, keysDir, makeKey, type LocalKey } from "../factories/ssh.js";
import type { TestUser } from "../factories/users.js";

/**
 * Host enrollment tokens and enrolled hosts through the REST API: one-time tokens (shown once,
 * hashed, listed without the secret, revocable), enrollment and its refusals (nothing issued, the
 * token left unspent), renewal by proof of a host key, retirement revoking through the KRL, and
 * tenancy (members, other organizations' admins).
 */
let app: TestApp;
let org: { id: string };
let owner: TestUser;
let member: TestUser;
let other: { org: { id: string }; owner: TestUser };

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  const a = await orgWithRoles(app);
  ({ org, owner, member } = a);
  await createCa(app, org.id, owner, { ca_type: "host", name: "Host CA" });
  const b = await orgWithRoles(app);
  other = { org: b.org, owner: b.owner };
  await createCa(app, b.org.id, b.owner, { ca_type: "host", name: "Host CA" });
});
afterAll(() => app?.close());

const T = (orgId: string) => `/api/v1/organizations/${orgId}/ssh/host-enrollment-tokens`;

async function newToken(names: string[] = ["web1.example.com", "10.0.0.5"], body: Record<string, unknown> = {}, orgId = org.id, by = owner) {
  const res = await app.http.post(T(orgId), { names, ...body }, { token: by.token });
  expect(res.status, res.text).toBe(201);
  return res.body.data.enrollment_token as { id: string; token: string; prefix: string; names: string[]; expires_at: string; status: string };
}

let seq = 0;
function signChallenge(key: LocalKey, challenge: string, namespace = "keyward-host-renew"): string {
  const file = join(keysDir, `host-challenge-${seq++}.txt`);
  writeFileSync(file, `${challenge}\n`);
  execFileSync("ssh-keygen", ["-Y", "sign", "-n", namespace, "-f", key.path, file], { stdio: "ignore" });
  return readFileSync(`${file}.sig`, "utf8");
}

async function renew(hostId: string, key: LocalKey, extra: Record<string, unknown> = {}, namespace?: string) {
  const c = await app.http.post("/api/v1/ssh/hosts/renew/challenge", { host_id: hostId });
  expect(c.status, c.text).toBe(200);
  return app.http.post("/api/v1/ssh/hosts/renew", { host_id: hostId, challenge: c.body.data.challenge, signature: signChallenge(key, c.body.data.challenge, namespace), ...extra });
}

describe("enrollment tokens", () => {
  it("are created by admins only, shown once, listed without the secret, with one hour by default and a day at most", async () => {
    const t = await newToken();
    expect(t.token).toMatch(/^kwh_[0-9a-f]{8}_[A-Za-z0-9_-]{43}$/);
    expect(t.status).toBe("active");
    const hours = (Date.parse(t.expires_at) - app.clock.now().getTime()) / 3600_000;
    expect(hours).toBeGreaterThan(0.98);
    expect(hours).toBeLessThanOrEqual(1);
    const listed = await app.http.get(T(org.id), { token: owner.token });
    expect(listed.status).toBe(200);
    const row = listed.body.data.enrollment_tokens.find((x: { id: string }) => x.id === t.id);
    expect(row.prefix).toBe(t.prefix);
    expect(JSON.stringify(listed.body)).not.toContain(t.token);
    expect(JSON.stringify(listed.body)).not.toContain("token_hash");

    expect((await app.http.post(T(org.id), { names: ["a.example.com"], lifetime_minutes: 1441 }, { token: owner.token })).status).toBe(400);
    expect((await app.http.post(T(org.id), { names: ["a.example.com"] }, { token: member.token })).status).toBe(403);
    expect((await app.http.get(T(org.id), { token: member.token })).status).toBe(403);
    expect((await app.http.post(T(org.id), { names: ["a.example.com"] }, { token: other.owner.token })).status).toBe(404);
    expect((await app.http.post(T(org.id), { names: [] }, { token: owner.token })).status).toBe(400);
    expect((await app.http.post(T(org.id), { names: ["bad name"] }, { token: owner.token })).status).toBe(400);
  });

  it("refuse wildcard names unless the operator allows patterns", async () => {
    const res = await app.http.post(T(org.id), { names: ["*.example.com"] }, { token: owner.token });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("SSH_HOST_PRINCIPAL_PATTERNS");
  });

  it("are revocable once, by their organization's admins, and audited", async () => {
    const t = await newToken();
    expect((await app.http.delete(`${T(org.id)}/${t.id}`, { token: other.owner.token })).status).toBe(404);
    expect((await app.http.delete(`${T(other.org.id)}/${t.id}`, { token: other.owner.token })).status).toBe(404);
    const res = await app.http.delete(`${T(org.id)}/${t.id}`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data.enrollment_token.status).toBe("revoked");
    expect((await app.http.delete(`${T(org.id)}/${t.id}`, { token: owner.token })).status).toBe(409);
    const used = await app.http.post("/api/v1/ssh/hosts/enroll", { token: t.token, host_keys: [makeKey().pub] });
    expect(used.status).toBe(410);
    expect(used.body.error.type).toBe("ENROLLMENT_TOKEN_REVOKED");
    const audit = await app.http.get(`/api/v1/organizations/${org.id}/audit-logs?per_page=100`, { token: owner.token });
    const actions = JSON.stringify(audit.body);
    expect(actions).toContain("ssh.host.enrollment_token.created");
    expect(actions).toContain("ssh.host.enrollment_token.revoked");
    expect(actions).toContain("ssh.host.enroll.failed");
  });
});

describe("enrollment", () => {
  it("certifies each host key for the token's names, once; 20 parallel uses enroll one host", async () => {
    const t = await newToken(["web2.example.com", "127.0.0.1"]);
    const ed = makeKey("ed25519");
    const ec = makeKey("ecdsa");
    const results = await Promise.all(Array.from({ length: 20 }, () => app.http.post("/api/v1/ssh/hosts/enroll", { token: t.token, host_keys: [ed.pub, ec.pub] })));
    const ok = results.filter((r) => r.status === 201);
    expect(ok).toHaveLength(1);
    expect(results.filter((r) => r.status === 409).map((r) => r.body.error.type)).toEqual(Array(19).fill("ENROLLMENT_TOKEN_USED"));
    const data = ok[0]!.body.data;
    expect(data.certificates).toHaveLength(2);
    expect(data.trusted_user_ca_keys).toBe("");
    expect(data.krl_path).toBe(`/api/v1/organizations/${org.id}/ssh/krl`);
    const certFile = join(keysDir, `enrolled-${seq++}-cert.pub`);
    writeFileSync(certFile, data.certificates[0].certificate + "\n");
    const listing = spawnSync("ssh-keygen", ["-L", "-f", certFile], { encoding: "utf8" }).stdout;
    expect(listing).toContain("host certificate");
    expect(listing).toMatch(/Principals:\s+web2\.example\.com\s+127\.0\.0\.1/);

    const hosts = await app.http.get(`/api/v1/organizations/${org.id}/ssh/hosts`, { token: owner.token });
    const host = hosts.body.data.hosts.find((h: { id: string }) => h.id === data.host.id);
    expect(host.names).toEqual(["web2.example.com", "127.0.0.1"]);
    expect(host.host_keys.map((k: { fingerprint: string }) => k.fingerprint)).toHaveLength(2);
    expect(host.certificates.map((c: { serial: string }) => c.serial)).toEqual(data.certificates.map((c: { serial: string }) => c.serial));
    expect(host.status).toBe("active");
    expect(host.enrolled_by).toBe(owner.id);
    expect(JSON.stringify(hosts.body)).not.toContain("renew_challenge");
    expect((await app.http.get(`/api/v1/organizations/${org.id}/ssh/hosts`, { token: member.token })).status).toBe(403);
    expect((await app.http.get(`/api/v1/organizations/${org.id}/ssh/hosts`, { token: other.owner.token })).status).toBe(404);
    const tokens = (await app.http.get(T(org.id), { token: owner.token })).body.data.enrollment_tokens;
    expect(tokens.find((x: { id: string }) => x.id === t.id)).toMatchObject({ status: "used", host_id: data.host.id });
  });

  it("refuses expired, unknown, malformed and foreign tokens, names the token does not allow, and bad keys; a refusal leaves the token unspent", async () => {
    const key = makeKey();
    const enroll = (body: Record<string, unknown>) => app.http.post("/api/v1/ssh/hosts/enroll", { host_keys: [key.pub], ...body });
    const t = await newToken(["db1.example.com"]);
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ token: "kwh_0000_nope" }, 401, "ENROLLMENT_TOKEN_INVALID"],
      [{ token: "not a token" }, 400, "VALIDATION_ERROR"],
      [{ token: t.token, names: ["db2.example.com"] }, 403, "HOST_NAME_NOT_ALLOWED"],
      [{ token: t.token, organization_id: other.org.id }, 403, "ENROLLMENT_TOKEN_FOREIGN"],
      [{ token: t.token, host_keys: ["ssh-ed25519 AAAA"] }, 400, "WRONG_KEY_MATERIAL"],
      [{ token: t.token, host_keys: [key.pub, key.pub] }, 400, "VALIDATION_ERROR"],
      [{ token: t.token, host_keys: [] }, 400, "VALIDATION_ERROR"],
      [{ token: t.token, host_keys: "x" }, 400, "VALIDATION_ERROR"],
    ];
    for (const [body, status, type] of cases) {
      const res = await enroll(body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(status);
      expect(res.body.error.type).toBe(type);
    }
    // Still unspent: it enrolls now.
    expect((await enroll({ token: t.token, organization_id: org.id })).status).toBe(201);

    const late = await newToken(["db3.example.com"], { lifetime_minutes: 5 });
    app.clock.advance(6 * 60);
    try {
      const res = await enroll({ token: late.token });
      expect(res.status).toBe(410);
      expect(res.body.error.type).toBe("ENROLLMENT_TOKEN_EXPIRED");
    } finally {
      app.clock.advance(-6 * 60);
    }
  });

  it("refuses when the organization has no host CA, without spending the token", async () => {
    const c = await orgWithRoles(app);
    const t = await newToken(["x.example.com"], {}, c.org.id, c.owner);
    const key = makeKey();
    const res = await app.http.post("/api/v1/ssh/hosts/enroll", { token: t.token, host_keys: [key.pub] });
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe("CA_NOT_CONFIGURED");
    await createCa(app, c.org.id, c.owner, { ca_type: "host", name: "Host CA" });
    expect((await app.http.post("/api/v1/ssh/hosts/enroll", { token: t.token, host_keys: [key.pub] })).status).toBe(201);
  });
});

describe("renewal and retirement", () => {
  it("renews with proof of an enrolled host key inside the window or forced, refuses other keys, replays and retired hosts", async () => {
    const ed = makeKey("ed25519");
    const rsa = makeKey("rsa");
    const t = await newToken(["app.example.com"]);
    const enrolled = (await app.http.post("/api/v1/ssh/hosts/enroll", { token: t.token, host_keys: [ed.pub, rsa.pub] })).body.data;
    const hostId = enrolled.host.id as string;
    const first = enrolled.certificates.map((c: { serial: string }) => c.serial);

    // Early: proof accepted, nothing renewed, the current certificates handed back.
    const early = await renew(hostId, ed);
    expect(early.status, early.text).toBe(200);
    expect(early.body.data.renewed).toBe(false);
    expect(early.body.data.certificates.map((c: { serial: string }) => c.serial)).toEqual(first);
    // Forced, with the other host key as proof.
    const forced = await renew(hostId, rsa, { force: true });
    expect(forced.body.data.renewed).toBe(true);

    // A key the host does not hold, the wrong namespace, a challenge for another host, a replay.
    const stranger = makeKey();
    expect((await renew(hostId, stranger)).body.error.type).toBe("RENEW_PROOF_INVALID");
    expect((await renew(hostId, ed, {}, "file")).body.error.type).toBe("RENEW_PROOF_INVALID");
    const c = (await app.http.post("/api/v1/ssh/hosts/renew/challenge", { host_id: hostId })).body.data.challenge as string;
    const sig = signChallenge(ed, c);
    expect((await app.http.post("/api/v1/ssh/hosts/renew", { host_id: hostId, challenge: c, signature: sig })).status).toBe(200);
    const replay = await app.http.post("/api/v1/ssh/hosts/renew", { host_id: hostId, challenge: c, signature: sig });
    expect(replay.status).toBe(400);
    expect(replay.body.error.type).toBe("RENEW_CHALLENGE_INVALID");
    expect((await app.http.post("/api/v1/ssh/hosts/renew", { host_id: hostId, challenge: c.replace(/.$/, c.endsWith("0") ? "1" : "0"), signature: sig })).status).toBe(400);
    expect((await app.http.post("/api/v1/ssh/hosts/renew/challenge", { host_id: "00000000-0000-4000-8000-000000000000" })).status).toBe(404);
    expect((await app.http.post("/api/v1/ssh/hosts/renew/challenge", { host_id: "nope" })).status).toBe(400);

    // In the last third of the lifetime (the host CA's default 8 hours): renewed. (The clock
    // moves forward only: a challenge must expire after the last one used.)
    app.clock.advance(6 * 3600);
    const due = await renew(hostId, ed);
    expect(due.body.data.renewed).toBe(true);
    const serials = due.body.data.certificates.map((c: { serial: string }) => c.serial);
    expect(serials.some((s: string) => first.includes(s))).toBe(false);

    // Retire: other organizations' admins and members cannot; the owner can, once; its certificates land in the KRL.
    const path = `/api/v1/organizations/${org.id}/ssh/hosts/${hostId}/retire`;
    expect((await app.http.post(path, {}, { token: member.token })).status).toBe(403);
    expect((await app.http.post(`/api/v1/organizations/${other.org.id}/ssh/hosts/${hostId}/retire`, {}, { token: other.owner.token })).status).toBe(404);
    const retired = await app.http.post(path, { reason: "decommissioned" }, { token: owner.token });
    expect(retired.status, retired.text).toBe(200);
    expect(retired.body.data.host.status).toBe("retired");
    expect(retired.body.data.host.revoked_serials.length).toBeGreaterThanOrEqual(2);
    expect((await app.http.post(path, {}, { token: owner.token })).status).toBe(409);
    const krl = join(keysDir, `hosts-${seq++}.krl`);
    writeFileSync(krl, Buffer.from(await (await fetch(`${app.url}/api/v1/organizations/${org.id}/ssh/krl`)).arrayBuffer()));
    const certFile = join(keysDir, `retired-${seq++}-cert.pub`);
    const latest = (await app.http.get(`/api/v1/organizations/${org.id}/ssh/hosts?include_retired=true`, { token: owner.token })).body.data.hosts.find((h: { id: string }) => h.id === hostId);
    writeFileSync(certFile, latest.certificates[0].certificate + "\n");
    expect(spawnSync("ssh-keygen", ["-Q", "-f", krl, certFile], { encoding: "utf8" }).stdout).toContain("REVOKED");
    // A retired host cannot renew.
    expect((await app.http.post("/api/v1/ssh/hosts/renew/challenge", { host_id: hostId })).body.error.type).toBe("HOST_RETIRED");
    expect((await app.http.get(`/api/v1/organizations/${org.id}/ssh/hosts`, { token: owner.token })).body.data.hosts.some((h: { id: string }) => h.id === hostId)).toBe(false);
  });
});

describe("GraphQL", () => {
  it("creates, lists and revokes tokens, lists and retires hosts, for admins of the organization only", async () => {
    const created = await app.http.gql(
      `mutation($o: ID!, $i: HostEnrollmentTokenInput!) { createHostEnrollmentToken(orgId: $o, input: $i) { id token status names } }`,
      { o: org.id, i: { names: ["gql.example.com"], lifetimeMinutes: 30 } },
      { token: owner.token },
    );
    expect(created.errors).toBeUndefined();
    const t = created.data.createHostEnrollmentToken;
    expect(t).toMatchObject({ status: "active", names: ["gql.example.com"] });
    const listed = await app.http.gql(`query($o: ID!) { hostEnrollmentTokens(orgId: $o) { id prefix status } }`, { o: org.id }, { token: owner.token });
    expect(listed.data.hostEnrollmentTokens.some((x: { id: string }) => x.id === t.id)).toBe(true);
    const enrolled = await app.http.post("/api/v1/ssh/hosts/enroll", { token: t.token, host_keys: [makeKey().pub] });
    expect(enrolled.status).toBe(201);
    const hostId = enrolled.body.data.host.id as string;

    const hosts = `query($o: ID!) { sshHosts(orgId: $o) { id name status hostKeys { keyType fingerprint } certificates { serial } } }`;
    const mine = await app.http.gql(hosts, { o: org.id }, { token: owner.token });
    expect(mine.data.sshHosts.find((h: { id: string }) => h.id === hostId)).toMatchObject({ name: "gql.example.com", status: "active" });
    for (const who of [member, other.owner]) {
      const refused = await app.http.gql(hosts, { o: org.id }, { token: who.token });
      expect(refused.data).toBeNull();
      expect(["AUTHORIZATION_ERROR", "ORG_NOT_FOUND"]).toContain(refused.errors[0].extensions.code);
    }
    const retire = `mutation($o: ID!, $h: ID!) { retireSshHost(orgId: $o, hostId: $h) { id status } }`;
    expect((await app.http.gql(retire, { o: other.org.id, h: hostId }, { token: other.owner.token })).errors[0].extensions.code).toBe("HOST_NOT_FOUND");
    expect((await app.http.gql(retire, { o: org.id, h: hostId }, { token: owner.token })).data.retireSshHost.status).toBe("retired");
    const revoked = await app.http.gql(`mutation($o: ID!, $t: ID!) { revokeHostEnrollmentToken(orgId: $o, tokenId: $t) { status } }`, { o: org.id, t: t.id }, { token: owner.token });
    expect(revoked.errors[0].extensions.code).toBe("ENROLLMENT_TOKEN_CLOSED");
  });
});

