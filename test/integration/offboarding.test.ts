import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { query, tamper, verify } from "../helpers/audit-chain.js";
import { startZeroTierController, type RealController } from "../helpers/zerotier.js";
import { delegatedToken } from "../factories/oidc.js";
import { addManagedMember, addMember, newOrg } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal, keysDir } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * Offboarding as one action (issue 36), every effect observed on its real peer: the session and the
 * CLI's delegated token are refused, ssh-keygen reads the certificate as revoked in the published
 * KRL, the real ZeroTier controller shows the device deauthorized, the API key the person created
 * is refused, and one audit record, verified by the chain, is the receipt listing each.
 */
let app: TestApp;
let zt: RealController;
let owner: TestUser;
let orgId: string;
let network: { id: string; nwid: string };
let seq = 0;
let nodeSeq = 0x40;

beforeAll(async () => {
  zt = await startZeroTierController();
  app = await startTestApp({ ZEROTIER_CONTROLLER_URLS: zt.url, NETWORK_CONTROLLER_TIMEOUT_MS: "700", NETWORK_CONTROLLER_RETRIES: "1", RATE_LIMIT_ENABLED: "false" });
  owner = await newUser(app, { fullName: "Owner" });
  orgId = (await newOrg(app, owner)).id;
  await createCa(app, orgId, owner);
  const config = await app.http.request("PUT", `${O()}/zerotier-config`, { token: owner.token, body: { zt_api_mode: "controller", zt_api_url: zt.url, zt_api_token: zt.token } });
  expect(config.status, config.text).toBe(200);
  const nwid = await zt.client.createNetwork!(`kw-off-${Math.random().toString(36).slice(2, 6)}`);
  const res = await app.http.post(`${O()}/networks`, { name: `net ${nwid}`, zerotier_network_id: nwid }, { token: owner.token });
  expect(res.status, res.text).toBe(201);
  network = { id: res.body.data.network.id, nwid };
}, 60_000);
afterAll(async () => {
  await app?.close();
  await zt?.stop();
});

const O = () => `/api/v1/organizations/${orgId}`;
const authorizedAtController = async (nodeId: string) => (await zt.client.getMember(network.nwid, nodeId))?.authorized ?? false;

/** A certificate signed for the person by this organization's CA. */
async function sign(user: TestUser): Promise<{ certificate: string; id: string; serial: string }> {
  await grantPrincipal(app, orgId, owner, user, "app");
  const key = await addVerifiedKey(app, user);
  const res = await app.http.post("/api/v1/ssh/sign", { key_id: key.id, org_id: orgId }, { token: user.token });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** What ssh-keygen says of the certificate against the organization's published KRL. */
async function revokedInKrl(certificate: string): Promise<boolean> {
  const res = await fetch(`${app.url}${O()}/ssh/krl`);
  const krl = join(keysDir, `offboard-${seq}.krl`);
  const cert = join(keysDir, `offboard-${seq++}-cert.pub`);
  writeFileSync(krl, Buffer.from(await res.arrayBuffer()));
  writeFileSync(cert, `${certificate}\n`);
  const check = spawnSync("ssh-keygen", ["-Q", "-f", krl, cert], { encoding: "utf8" });
  return check.status !== 0 && /REVOKED/.test(check.stdout);
}

/** A device of the person approved on the network and activated: authorized at the controller. */
async function activeDevice(user: TestUser): Promise<{ nodeId: string; membershipId: string }> {
  const nodeId = `c0ffee${(nodeSeq++).toString(16).padStart(4, "0")}`;
  const device = await app.http.post(`${O()}/devices`, { node_id: nodeId, nickname: `laptop ${nodeId.slice(-4)}`, hostname: "dev.local" }, { token: user.token });
  expect(device.status, device.text).toBe(201);
  const req = await app.http.post(`${O()}/approvals`, { portal_network_id: network.id, device_id: device.body.data.device.id, justification: "work" }, { token: user.token });
  expect(req.status, req.text).toBe(201);
  if (req.body.data.approval.state === "pending") expect((await app.http.post(`${O()}/approvals/${req.body.data.approval.id}/approve`, {}, { token: owner.token })).status).toBe(200);
  const memberships = (await app.http.get(`${O()}/memberships`, { token: user.token })).body.data.memberships;
  const membershipId = memberships.find((m: { node_id: string }) => m.node_id === nodeId).id as string;
  expect((await app.http.post(`${O()}/memberships/${membershipId}/activate`, {}, { token: user.token })).status).toBe(200);
  expect(await authorizedAtController(nodeId)).toBe(true);
  return { nodeId, membershipId };
}

const offboard = (userId: string, body: Record<string, unknown>, as = owner) => app.http.post(`${O()}/members/${userId}/offboard`, body, { token: as.token });

describe("offboarding, end to end", () => {
  it("cuts every way in of a managed account in one step, with one receipt verified by the audit chain", async () => {
    const person = await addManagedMember(app, orgId, owner, "admin");
    const cert = await sign(person);
    const device = await activeDevice(person);
    const cli = await delegatedToken(app, person);
    expect((await app.http.get("/api/v1/auth/me", { token: cli.accessToken })).status).toBe(200);
    const key = await app.http.post(`${O()}/api-keys`, { name: "their script", scopes: ["members:read"] }, { token: person.token });
    expect(key.status, key.text).toBe(201);
    expect((await app.http.get(`${O()}/members`, { token: key.body.data.api_key.key })).status).toBe(200);
    const dept = await app.http.post(`${O()}/departments`, { name: `ops ${seq++}` }, { token: owner.token });
    expect((await app.http.post(`${O()}/departments/${dept.body.data.department.id}/members`, { email: person.email }, { token: owner.token })).status).toBe(201);
    expect(await revokedInKrl(cert.certificate)).toBe(false);

    const res = await offboard(person.id, { mode: "remove", reason: "left the company" });
    expect(res.status, res.text).toBe(201);
    const receipt = res.body.data.receipt;
    expect(receipt).toMatchObject({
      user_id: person.id, mode: "remove", reason: "left the company", role: "admin", managed: true,
      certificates: { count: 1, ids: [cert.id], serials: [cert.serial] },
      devices: { count: 1, ids: [device.membershipId] },
      api_keys: { count: 1, ids: [key.body.data.api_key.id] },
      departments: { count: 1, ids: [dept.body.data.department.id] },
      principals: { count: 1 },
      pending: { devices: [] },
    });
    expect(receipt.sessions.count).toBeGreaterThanOrEqual(1);
    expect(receipt.cli_tokens.count).toBeGreaterThanOrEqual(1);

    // Each effect, on its peer.
    expect((await app.http.get("/api/v1/users/me", { token: person.token })).status).toBe(401);
    expect((await app.http.get("/api/v1/auth/me", { token: cli.accessToken })).status).toBe(401);
    expect(await revokedInKrl(cert.certificate)).toBe(true);
    expect(await authorizedAtController(device.nodeId)).toBe(false);
    expect((await app.http.get(`${O()}/members`, { token: key.body.data.api_key.key })).status).toBe(401);
    const members = (await app.http.get(`${O()}/members`, { token: owner.token })).body.data.members;
    expect(members.map((m: { user_id: string }) => m.user_id)).not.toContain(person.id);

    // The receipt: by its id, by its audit record's id, listed, in the audit log, on GraphQL.
    const byId = await app.http.get(`${O()}/offboardings/${receipt.id}`, { token: owner.token });
    expect(byId.body.data.receipt).toEqual(receipt);
    expect((await app.http.get(`${O()}/offboardings/${receipt.audit_id}`, { token: owner.token })).body.data.receipt.id).toBe(receipt.id);
    const listed = await app.http.get(`${O()}/offboardings?user_id=${person.id}`, { token: owner.token });
    expect(listed.body.data.offboardings.map((r: { id: string }) => r.id)).toEqual([receipt.id]);
    const log = await app.http.get(`${O()}/audit-logs?action=org.member.offboarded`, { token: owner.token });
    expect(log.body.data.audit_logs).toEqual([expect.objectContaining({ id: receipt.audit_id, user_id: person.id, metadata: expect.objectContaining({ certificates: expect.objectContaining({ serials: [cert.serial] }), pending: { devices: [device.membershipId] } }) })]);
    const followUp = await app.http.get(`${O()}/audit-logs?action=org.member.offboarded.devices`, { token: owner.token });
    expect(followUp.body.data.audit_logs).toEqual([expect.objectContaining({ resource_id: receipt.id, metadata: expect.objectContaining({ deauthorized: [device.membershipId], pending: [] }) })]);
    const gql = await app.http.gql("query($o: ID!, $id: ID!) { offboardingReceipt(orgId: $o, id: $id) { id mode certificates { serials } devices { ids } apiKeys { count } } }", { o: orgId, id: receipt.id }, { token: owner.token });
    expect(gql.data?.offboardingReceipt).toEqual({ id: receipt.id, mode: "remove", certificates: { serials: [cert.serial] }, devices: { ids: [device.membershipId] }, apiKeys: { count: 1 } });

    // Chained and verified like every record; a changed receipt breaks the chain.
    await app.services.auditChain.chainAll();
    const [row] = await query<{ seq: string | null }>(app, sql`select seq from audit_logs where id = ${receipt.audit_id}`);
    expect(row!.seq).not.toBeNull();
    expect((await verify(app)).ok).toBe(true);
    await tamper(app, sql`update audit_logs set metadata = jsonb_set(metadata, '{reason}', '"nothing happened"') where id = ${receipt.audit_id}`);
    expect((await verify(app)).ok).toBe(false);
    await tamper(app, sql`update audit_logs set metadata = jsonb_set(metadata, '{reason}', '"left the company"') where id = ${receipt.audit_id}`);
    expect((await verify(app)).ok).toBe(true);
  }, 60_000);

  it("a controller that is down blocks nothing: the receipt lists the device as pending and reconciliation finishes it", async () => {
    const person = await newUser(app);
    await addMember(app, orgId, owner, person, "member");
    const cert = await sign(person);
    const device = await activeDevice(person);
    await zt.stop();
    let receipt: { pending: { devices: string[] }; devices: { ids: string[] }; certificates: { count: number }; managed: boolean; sessions: { count: number } };
    try {
      const res = await offboard(person.id, { mode: "suspend", reason: "investigation" });
      expect(res.status, res.text).toBe(201);
      receipt = res.body.data.receipt;
      expect(await revokedInKrl(cert.certificate)).toBe(true);
    } finally {
      await zt.restart();
    }
    expect(receipt).toMatchObject({ managed: false, certificates: { count: 1 }, devices: { ids: [device.membershipId] }, pending: { devices: [device.membershipId] }, sessions: { count: 0 } });
    // The receipt was written with the cuts (every device pending); the follow-up record, chained
    // like it and linked by its id, says what the controller did after the commit.
    const followUp = await app.http.get(`${O()}/audit-logs?action=org.member.offboarded.devices`, { token: owner.token });
    expect(followUp.body.data.audit_logs.filter((r: { resource_id: string }) => r.resource_id === (receipt as unknown as { id: string }).id)).toEqual([
      expect.objectContaining({ metadata: expect.objectContaining({ deauthorized: [], pending: [device.membershipId] }) }),
    ]);
    // Not a managed account: their own session lives on, without this organization.
    expect((await app.http.get("/api/v1/users/me", { token: person.token })).status).toBe(200);
    expect((await app.http.get(O(), { token: person.token })).status).toBe(404);
    expect(await authorizedAtController(device.nodeId)).toBe(true);
    await app.http.post(`${O()}/networks/reconcile`, {}, { token: owner.token });
    expect(await authorizedAtController(device.nodeId)).toBe(false);
  }, 60_000);
});
