import { chmodSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { verify } from "../helpers/audit-chain.js";
import { sessionCookie } from "../helpers/http.js";
import { newScimUser, patchOf, scimClient, type ScimClient } from "../helpers/scim.js";
import { startSshd } from "../helpers/sshd.js";
import { startZeroTierController, type RealController } from "../helpers/zerotier.js";
import { delegatedToken } from "../factories/oidc.js";
import { addManagedMember } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal, keysDir, makeKey, type LocalKey } from "../factories/ssh.js";
import { login, PASSWORD, type TestUser } from "../factories/users.js";

/**
 * Issue 36's Must-show: ONE offboarding, every effect observed on its real peer. Before it the
 * person logs in over SSH to a real sshd (RevokedKeys = the KRL the host fetched from Keyward), their
 * device is authorized at a real ZeroTier controller, the CLI's delegated token and the browser's
 * session cookie work. After it the host refreshes the KRL (fetch, atomic rename) and sshd refuses the
 * same certificate, the controller shows the device deauthorized, the token and the cookie are
 * refused, and the receipt lists each cut, in the audit log, verified by the audit chain. Once by the
 * admin's Offboard (REST), once by the identity provider's SCIM active=false.
 */
let app: TestApp;
let zt: RealController;
let scim: ScimClient;
let owner: TestUser;
let network: { id: string; nwid: string };
let sshd: Awaited<ReturnType<typeof startSshd>>;
const krlPath = join(keysDir, "offboarding-peers.krl");
let seq = 0;
let nodeSeq = 0x10;

const O = () => `/api/v1/organizations/${scim.orgId}`;

/** What a host does from cron: fetch the KRL to a temporary file and rename it over the one sshd reads. */
async function refreshKrl(): Promise<void> {
  const res = await fetch(`${app.url}${O()}/ssh/krl`);
  expect(res.status).toBe(200);
  const tmp = `${krlPath}.tmp-${seq++}`;
  writeFileSync(tmp, Buffer.from(await res.arrayBuffer()));
  renameSync(tmp, krlPath);
}

beforeAll(async () => {
  zt = await startZeroTierController();
  app = await startTestApp({ ZEROTIER_CONTROLLER_URLS: zt.url, NETWORK_CONTROLLER_TIMEOUT_MS: "2000", NETWORK_CONTROLLER_RETRIES: "1", RATE_LIMIT_ENABLED: "false" });
  scim = await scimClient(app);
  owner = scim.owner;
  await createCa(app, scim.orgId, owner, { key_type: "ed25519" });
  const config = await app.http.request("PUT", `${O()}/zerotier-config`, { token: owner.token, body: { zt_api_mode: "controller", zt_api_url: zt.url, zt_api_token: zt.token } });
  expect(config.status, config.text).toBe(200);
  const nwid = await zt.client.createNetwork!(`kw-peers-${Math.random().toString(36).slice(2, 6)}`);
  const res = await app.http.post(`${O()}/networks`, { name: `net ${nwid}`, zerotier_network_id: nwid }, { token: owner.token });
  expect(res.status, res.text).toBe(201);
  network = { id: res.body.data.network.id, nwid };

  // The host: trusts the organization's user CA, reads the KRL it fetched on every attempt.
  const hostKey = makeKey("ed25519");
  chmodSync(hostKey.path, 0o600);
  await refreshKrl();
  const caKeys = await app.http.get(`${O()}/ssh/ca-keys`, { token: owner.token });
  expect(caKeys.status, caKeys.text).toBe(200);
  sshd = await startSshd({ trustedUserCaKeys: caKeys.body.data.trusted_user_ca_keys, hostKeyPath: hostKey.path, krlPath });
}, 90_000);
afterAll(async () => {
  sshd?.stop();
  await app?.close();
  await zt?.stop();
});

const authorizedAtController = async (nodeId: string) => (await zt.client.getMember(network.nwid, nodeId))?.authorized ?? false;

interface Person {
  user: TestUser;
  key: LocalKey;
  cert: { id: string; serial: string; path: string };
  device: { nodeId: string; membershipId: string };
  cliToken: string;
  cookie: string;
}

/** Every way in a person has: an SSH certificate for root, an active device, a CLI token, a browser session. */
async function equip(user: TestUser): Promise<Person> {
  await grantPrincipal(app, scim.orgId, owner, user, "root");
  const { id: keyId, key } = await addVerifiedKey(app, user, makeKey("ed25519"));
  const signed = await app.http.post("/api/v1/ssh/sign", { key_id: keyId, org_id: scim.orgId, principals: ["root"] }, { token: user.token });
  expect(signed.status, signed.text).toBe(201);
  const path = join(keysDir, `peers-${seq++}-cert.pub`);
  writeFileSync(path, `${signed.body.data.certificate}\n`);

  const nodeId = `feed00${(nodeSeq++).toString(16).padStart(4, "0")}`;
  const device = await app.http.post(`${O()}/devices`, { node_id: nodeId, nickname: `laptop ${nodeId.slice(-4)}`, hostname: "dev.local" }, { token: user.token });
  expect(device.status, device.text).toBe(201);
  const req = await app.http.post(`${O()}/approvals`, { portal_network_id: network.id, device_id: device.body.data.device.id, justification: "work" }, { token: user.token });
  expect(req.status, req.text).toBe(201);
  if (req.body.data.approval.state === "pending") expect((await app.http.post(`${O()}/approvals/${req.body.data.approval.id}/approve`, {}, { token: owner.token })).status).toBe(200);
  const memberships = (await app.http.get(`${O()}/memberships`, { token: user.token })).body.data.memberships;
  const membershipId = memberships.find((m: { node_id: string }) => m.node_id === nodeId).id as string;
  expect((await app.http.post(`${O()}/memberships/${membershipId}/activate`, {}, { token: user.token })).status).toBe(200);

  const cli = await delegatedToken(app, user);
  const browser = await login(app, user.email, user.password);
  expect(browser.status, browser.text).toBe(200);
  return { user, key, cert: { id: signed.body.data.id, serial: signed.body.data.serial, path }, device: { nodeId, membershipId }, cliToken: cli.accessToken, cookie: sessionCookie(browser.headers) };
}

/** Each way in works, on its peer. */
async function expectAllWaysIn(p: Person) {
  const ssh = sshd.login("root", p.key.path, p.cert.path);
  expect(ssh.status, `${ssh.stderr}\n${sshd.log()}`).toBe(0);
  expect(await authorizedAtController(p.device.nodeId)).toBe(true);
  expect((await app.http.get("/api/v1/auth/me", { token: p.cliToken })).status).toBe(200);
  expect((await app.http.get("/api/v1/auth/me", { cookie: p.cookie })).status).toBe(200);
}

/** Each way in is cut, on its peer: sshd (after the host's KRL refresh), the controller, the API. */
async function expectAllCut(p: Person) {
  // Until the host refreshes its KRL, sshd has nothing to refuse the certificate with: the refresh is
  // what carries the revocation to the host.
  expect(sshd.login("root", p.key.path, p.cert.path).status).toBe(0);
  await refreshKrl();
  const logMark = sshd.log().length;
  const ssh = sshd.login("root", p.key.path, p.cert.path);
  expect(ssh.status, ssh.stderr).not.toBe(0);
  expect(ssh.stderr).toMatch(/Permission denied/);
  // sshd says why, for this attempt (its per-connection log arrives asynchronously).
  await expect.poll(() => sshd.log().slice(logMark), { timeout: 3000 }).toMatch(/revoked/i);
  expect(await authorizedAtController(p.device.nodeId)).toBe(false);
  expect((await app.http.get("/api/v1/auth/me", { token: p.cliToken })).status).toBe(401);
  expect((await app.http.get("/api/v1/auth/me", { cookie: p.cookie })).status).toBe(401);
  expect((await app.http.get("/api/v1/users/me", { token: p.user.token })).status).toBe(401);
}

/** The receipt lists every cut, is the audit record of the offboarding, and the chain verifies. */
async function expectReceipt(p: Person, receipt: Record<string, any>, mode: string) {
  expect(receipt).toMatchObject({
    user_id: p.user.id, mode, managed: true,
    certificates: { count: 1, ids: [p.cert.id], serials: [p.cert.serial] },
    devices: { count: 1, ids: [p.device.membershipId] },
    principals: { count: 1 },
    pending: { devices: [] },
  });
  expect(receipt.sessions.count).toBeGreaterThanOrEqual(2);
  expect(receipt.cli_tokens.count).toBeGreaterThanOrEqual(1);
  const log = await app.http.get(`${O()}/audit-logs?action=org.member.offboarded`, { token: owner.token });
  expect(log.status, log.text).toBe(200);
  const record = log.body.data.audit_logs.find((r: { id: string }) => r.id === receipt.audit_id);
  expect(record).toMatchObject({ user_id: p.user.id, metadata: expect.objectContaining({ certificates: expect.objectContaining({ serials: [p.cert.serial] }) }) });
  const followUp = await app.http.get(`${O()}/audit-logs?action=org.member.offboarded.devices`, { token: owner.token });
  expect(followUp.body.data.audit_logs.filter((r: { resource_id: string }) => r.resource_id === receipt.id)).toEqual([
    expect.objectContaining({ metadata: expect.objectContaining({ deauthorized: [p.device.membershipId], pending: [] }) }),
  ]);
  await app.services.auditChain.chainAll();
  expect((await verify(app)).ok).toBe(true);
}

describe("one offboarding, observed on every real peer", () => {
  it("the admin's Offboard: sshd refuses the certificate through the KRL, the controller deauthorizes, token and cookie refused", async () => {
    const person = await equip(await addManagedMember(app, scim.orgId, owner, "member"));
    await expectAllWaysIn(person);

    const res = await app.http.post(`${O()}/members/${person.user.id}/offboard`, { mode: "remove", reason: "left the company" }, { token: owner.token });
    expect(res.status, res.text).toBe(201);
    await expectAllCut(person);
    await expectReceipt(person, res.body.data.receipt, "remove");

    // Someone else's certificate from the same CA still logs in: the KRL names this one, not the CA.
    const colleague = await equip(await addManagedMember(app, scim.orgId, owner, "member"));
    expect(sshd.login("root", colleague.key.path, colleague.cert.path).status).toBe(0);
  }, 90_000);

  it("the identity provider's SCIM active=false: the same cuts, on the same peers, with one receipt", async () => {
    const email = scim.at(`peers.${seq++}`);
    const created = await scim.post("/Users", newScimUser(email));
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    expect((await app.http.post(`/api/v1/admin/users/${id}/password`, { password: PASSWORD }, { token: owner.token })).status).toBe(200);
    const signedIn = await login(app, email);
    expect(signedIn.status, signedIn.text).toBe(200);
    const person = await equip({ id, email, password: PASSWORD, token: signedIn.body.data.token });
    await expectAllWaysIn(person);

    const off = await scim.patch(`/Users/${id}`, patchOf({ op: "replace", path: "active", value: false }));
    expect([off.status, off.body.active], off.text).toEqual([200, false]);
    await expectAllCut(person);
    const receipts = await app.http.get(`${O()}/offboardings?user_id=${id}`, { token: owner.token });
    expect(receipts.body.data.offboardings).toHaveLength(1);
    const receipt = receipts.body.data.offboardings[0];
    expect(receipt).toMatchObject({ account_suspended: true, actor_id: null });
    await expectReceipt(person, receipt, "suspend");
    expect((await login(app, email)).status).not.toBe(200);
  }, 90_000);
});
