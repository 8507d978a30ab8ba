import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { linkIn } from "../helpers/smtp-sink.js";
import { startZeroTierController, type RealController } from "../helpers/zerotier.js";
import { addMember, orgWithRoles } from "../factories/orgs.js";
import { newSuperadmin, newUser, type TestUser } from "../factories/users.js";

/**
 * Governed network access against a REAL ZeroTier controller (issue 13): Keyward decides, the
 * controller is brought in line at once, and the reconciliation pass (called here as the job
 * would, under the injected clock) repairs whatever happened behind Keyward's back.
 */
let app: TestApp;
let zt: RealController;
let org: { id: string };
let owner: TestUser;
let admin: TestUser;
let member: TestUser;
let guest: TestUser;
let nodeSeq = 0x10;
const newNode = () => `c0ffee${(nodeSeq++).toString(16).padStart(4, "0")}`;

beforeAll(async () => {
  zt = await startZeroTierController();
  app = await startTestApp({ ZEROTIER_CONTROLLER_URLS: zt.url, NETWORK_CONTROLLER_TIMEOUT_MS: "700", NETWORK_CONTROLLER_RETRIES: "1" });
  ({ org, owner, admin, member, guest } = await orgWithRoles(app));
}, 60_000);
afterAll(async () => {
  await app?.close();
  await zt?.stop();
});

const O = () => `/api/v1/organizations/${org.id}`;
const connect = (token = zt.token, url = zt.url, as: TestUser = owner) =>
  app.http.request("PUT", `${O()}/zerotier-config`, { token: as.token, body: { zt_api_mode: "controller", zt_api_url: url, zt_api_token: token } });

/** What the real controller says about a node on a network. */
async function authorizedAtController(nwid: string, nodeId: string): Promise<boolean> {
  return (await zt.client.getMember(nwid, nodeId))?.authorized ?? false;
}

/** A portal network backed by a fresh controller network, in approval_required mode. */
async function portalNetwork(body: Record<string, unknown> = {}): Promise<{ id: string; nwid: string }> {
  const nwid = await zt.client.createNetwork!(`kw-${Math.random().toString(36).slice(2, 8)}`);
  const res = await app.http.post(`${O()}/networks`, { name: `net ${nwid}`, zerotier_network_id: nwid, ...body }, { token: admin.token });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.data.network.id, nwid };
}

/** A member's device, approved on the network by an admin, ready to activate. */
async function approvedDevice(user: TestUser, network: { id: string }) {
  const nodeId = newNode();
  const device = await app.http.post(`${O()}/devices`, { node_id: nodeId, nickname: `laptop ${nodeId.slice(-4)}`, hostname: "dev.local" }, { token: user.token });
  expect(device.status, device.text).toBe(201);
  const req = await app.http.post(`${O()}/approvals`, { portal_network_id: network.id, device_id: device.body.data.device.id, justification: "on call" }, { token: user.token });
  if (req.status === 201 && req.body.data.approval.state === "pending") {
    expect((await app.http.post(`${O()}/approvals/${req.body.data.approval.id}/approve`, {}, { token: admin.token })).status).toBe(200);
  } else if (req.status !== 201) {
    // Already approved on this network: put the new device on it.
    expect(req.body.error.type).toBe("APPROVAL_EXISTS");
    await app.http.post(`${O()}/devices/${device.body.data.device.id}/join-network/${network.id}`, {}, { token: user.token });
  }
  const memberships = (await app.http.get(`${O()}/memberships`, { token: user.token })).body.data.memberships;
  const membership = memberships.find((m: { node_id: string; portal_network_id: string }) => m.node_id === nodeId && m.portal_network_id === network.id);
  expect(membership.state).toBe("approved_inactive");
  return { nodeId, deviceId: device.body.data.device.id as string, membershipId: membership.id as string };
}

const activate = (user: TestUser, membershipId: string, minutes?: number) =>
  app.http.post(`${O()}/memberships/${membershipId}/activate`, minutes ? { lifetime_minutes: minutes } : {}, { token: user.token });

describe("controller connection", () => {
  it("is saved only after a live test, never returns the token, and refuses hosts the operator did not allow", async () => {
    const wrong = await connect("not-the-token-at-all");
    expect(wrong.status).toBe(502);
    expect(wrong.body.error.type).toBe("CONTROLLER_UNAUTHORIZED");
    expect((await app.http.get(`${O()}/zerotier-config`, { token: owner.token })).body.data.config.configured).toBe(false);

    const elsewhere = await connect(zt.token, "http://10.1.2.3:9993");
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.type).toBe("CONTROLLER_URL_NOT_ALLOWED");

    expect((await connect(zt.token, zt.url, member)).status).toBe(403);

    const ok = await connect();
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data.config).toMatchObject({ configured: true, zt_api_mode: "controller", controller_address: zt.address });
    const read = await app.http.get(`${O()}/zerotier-config`, { token: admin.token });
    expect(read.text).not.toContain(zt.token);
  });

  it("imports the controller's networks and refuses an id the controller does not know", async () => {
    const nwid = await zt.client.createNetwork!("imported-net");
    const available = await app.http.get(`${O()}/zerotier/available-networks`, { token: admin.token });
    expect(available.body.data.networks.map((n: { id: string }) => n.id)).toContain(nwid);
    const imported = await app.http.post(`${O()}/zerotier/import-networks`, { zerotier_network_ids: [nwid] }, { token: admin.token });
    expect(imported.status).toBe(201);
    expect(imported.body.data.networks[0]).toMatchObject({ name: "imported-net", zerotier_network_id: nwid, request_mode: "approval_required", default_activation_lifetime_minutes: 480 });
    const again = await app.http.post(`${O()}/networks`, { name: "dup", zerotier_network_id: nwid }, { token: admin.token });
    expect(again.body.error.type).toBe("NETWORK_ALREADY_IMPORTED");
    const unknown = await app.http.post(`${O()}/networks`, { name: "ghost", zerotier_network_id: `${zt.address}abcdef` }, { token: admin.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.type).toBe("CONTROLLER_NOT_FOUND");
  });
});

describe("request → approve → activate", () => {
  it("authorizes the device at the controller only while the activation runs, and shows names beside node ids", async () => {
    const network = await portalNetwork({ max_activation_lifetime_minutes: 600 });
    app.mail.clear();
    const { nodeId, membershipId } = await approvedDevice(member, network);
    await app.flushEmails();
    expect(app.mail.to(admin.email).some((m) => m.subject.includes("asks for access"))).toBe(true);
    expect(app.mail.to(member.email).some((m) => m.subject.includes("was approved"))).toBe(true);
    expect(await authorizedAtController(network.nwid, nodeId)).toBe(false);

    expect((await activate(member, membershipId, 601)).body.error.type).toBe("LIFETIME_TOO_LONG");
    const on = await activate(member, membershipId, 30);
    expect(on.status, on.text).toBe(200);
    expect(on.body.data).toMatchObject({ controller_synced: true, membership: { state: "active_authorized", currently_authorized: true } });
    expect(on.body.data.session.minutes_left).toBe(30);
    expect(await authorizedAtController(network.nwid, nodeId)).toBe(true);

    const listing = await app.http.get(`${O()}/networks/${network.id}/members`, { token: admin.token });
    expect(listing.body.data.memberships[0]).toMatchObject({ node_id: nodeId, device_nickname: `laptop ${nodeId.slice(-4)}`, owner_email: member.email });
    // A plain member is no manager of the network.
    expect((await app.http.get(`${O()}/networks/${network.id}/members`, { token: member.token })).status).toBe(403);

    const off = await app.http.post(`${O()}/memberships/${membershipId}/deactivate`, {}, { token: member.token });
    expect(off.body.data.membership).toMatchObject({ currently_authorized: false, active_session: null });
    expect(await authorizedAtController(network.nwid, nodeId)).toBe(false);
  });

  it("another member cannot activate, deactivate or see someone else's membership", async () => {
    const network = await portalNetwork();
    const { membershipId } = await approvedDevice(member, network);
    const other = await app.http.post(`${O()}/memberships/${membershipId}/activate`, {}, { token: owner.token });
    expect(other.body.error.type).toBe("MEMBERSHIP_NOT_FOUND");
    expect((await app.http.post(`${O()}/memberships/${membershipId}/activate`, {}, { token: guest.token })).status).toBe(403);
  });

  it("emails the managers a link to the request queue, and the person a link to their networks", async () => {
    const network = await portalNetwork();
    const device = await app.http.post(`${O()}/devices`, { node_id: newNode(), nickname: "mail test" }, { token: member.token });
    const asked = await app.http.post(`${O()}/approvals`, { portal_network_id: network.id, device_id: device.body.data.device.id, justification: "on call" }, { token: member.token });
    expect(asked.status, asked.text).toBe(201);
    await app.flushEmails();
    const slug = (await app.http.get(O(), { token: owner.token })).body.data.organization.slug as string;
    const request = app.mail.last(admin.email)!;
    expect(request.subject).toMatch(/asks for access to/);
    expect(linkIn(request, "/networks/requests")).toBe(`${app.url}/orgs/${slug}/networks/requests`);
    expect((await app.http.post(`${O()}/approvals/${asked.body.data.approval.id}/approve`, {}, { token: admin.token })).status).toBe(200);
    await app.flushEmails();
    expect(linkIn(app.mail.last(member.email), "/account/networks")).toBe(`${app.url}/account/networks`);
  });

  it("invite-only networks take assignments only", async () => {
    const network = await portalNetwork({ request_mode: "invite_only" });
    const asked = await app.http.post(`${O()}/approvals`, { portal_network_id: network.id }, { token: member.token });
    expect(asked.body.error.type).toBe("INVITE_ONLY");
    const assigned = await app.http.post(`${O()}/approvals/assign`, { target_user_id: member.id, portal_network_id: network.id }, { token: admin.token });
    expect(assigned.status, assigned.text).toBe(201);
    expect(assigned.body.data.approval).toMatchObject({ state: "approved", grant_type: "assigned" });
  });
});

describe("reconciliation", () => {
  it("expiry under the injected clock deauthorizes within one tick", async () => {
    const network = await portalNetwork();
    const { nodeId, membershipId } = await approvedDevice(member, network);
    expect((await activate(member, membershipId, 5)).status).toBe(200);
    expect(await authorizedAtController(network.nwid, nodeId)).toBe(true);
    app.clock.advance(6 * 60);
    const report = await app.services.networkReconcile.tick();
    expect(report).not.toBeNull();
    expect(report!.expired).toBeGreaterThanOrEqual(1);
    expect(await authorizedAtController(network.nwid, nodeId)).toBe(false);
    const m = (await app.http.get(`${O()}/memberships`, { token: member.token })).body.data.memberships.find((x: { id: string }) => x.id === membershipId);
    expect(m).toMatchObject({ state: "activation_expired", currently_authorized: false, active_session: null });
  });

  it("deauthorizes a member authorized behind Keyward's back and re-authorizes an active one deauthorized behind its back", async () => {
    const network = await portalNetwork();
    const { nodeId, membershipId } = await approvedDevice(member, network);
    expect((await activate(member, membershipId, 60)).status).toBe(200);
    const stray = newNode();
    await zt.client.setAuthorized(network.nwid, stray, true);
    await zt.client.setAuthorized(network.nwid, nodeId, false);

    const report = await app.http.post(`${O()}/networks/reconcile`, {}, { token: admin.token });
    expect(report.status).toBe(200);
    expect(report.body.data.errors).toEqual([]);
    expect(report.body.data.changes).toBeGreaterThanOrEqual(2);
    expect(await authorizedAtController(network.nwid, stray)).toBe(false);
    expect(await authorizedAtController(network.nwid, nodeId)).toBe(true);
    // Every correction is audited.
    const audit = await app.http.get(`${O()}/audit-logs?action=network.reconcile.correction`, { token: admin.token });
    const nodes = audit.body.data.audit_logs.map((e: { metadata: { node_id: string } }) => e.metadata.node_id);
    expect(nodes).toEqual(expect.arrayContaining([stray, nodeId]));
  });

  it("runs once per tick when two instances share the database", async () => {
    const { ReconcileService } = await import("../../src/modules/networks/reconcile.service.js");
    const second = new ReconcileService(app.container.db, app.clock, app.services.audit, app.services.networkController, app.container.logger, { intervalMs: 60_000 });
    app.clock.advance(120);
    const results = await Promise.all([app.services.networkReconcile.tick(), second.tick()]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    // Within the same tick neither runs again.
    expect(await Promise.all([app.services.networkReconcile.tick(), second.tick()])).toEqual([null, null]);
  });
});

describe("kill switch", () => {
  it("leaves no authorized device of the person on any network in scope, blocks re-activation until lifted", async () => {
    const a = await portalNetwork();
    const b = await portalNetwork();
    const d1 = await approvedDevice(member, a);
    const d2 = await approvedDevice(member, b);
    expect((await activate(member, d1.membershipId)).status).toBe(200);
    expect((await activate(member, d2.membershipId)).status).toBe(200);

    // A member cannot pull it, an admin cannot pull it on the owner.
    expect((await app.http.post(`${O()}/kill-switch`, { target_user_id: member.id }, { token: member.token })).status).toBe(403);
    expect((await app.http.post(`${O()}/kill-switch`, { target_user_id: owner.id }, { token: admin.token })).status).toBe(403);

    const fired = await app.http.post(`${O()}/kill-switch`, { target_user_id: member.id, reason: "laptop stolen" }, { token: admin.token });
    expect(fired.status, fired.text).toBe(201);
    expect(fired.body.data).toMatchObject({ controller_synced: true, event: { scope: "organization", reason: "laptop stolen" } });
    expect(fired.body.data.event.sessions_ended).toBeGreaterThanOrEqual(2);
    expect(await authorizedAtController(a.nwid, d1.nodeId)).toBe(false);
    expect(await authorizedAtController(b.nwid, d2.nodeId)).toBe(false);
    expect((await activate(member, d1.membershipId)).body.error.type).toBe("ACCESS_SUSPENDED");

    const history = await app.http.get(`${O()}/kill-switch`, { token: admin.token });
    expect(history.body.data.events[0]).toMatchObject({ id: fired.body.data.event.id, target_email: member.email });
    const lifted = await app.http.post(`${O()}/kill-switch/${fired.body.data.event.id}/lift`, {}, { token: admin.token });
    expect(lifted.body.data.event.lifted_at).toBeTruthy();
    expect((await activate(member, d1.membershipId)).status).toBe(200);
    expect(await authorizedAtController(a.nwid, d1.nodeId)).toBe(true);
  });
});

describe("controller outage", () => {
  it("loses no intent while the controller is frozen or restarted, and converges when it returns", async () => {
    const network = await portalNetwork();
    const one = await approvedDevice(member, network);
    const two = await approvedDevice(member, network);
    expect((await activate(member, two.membershipId, 60)).status).toBe(200);

    zt.pause();
    try {
      const on = await activate(member, one.membershipId, 60);
      expect(on.status).toBe(200);
      expect(on.body.data.controller_synced).toBe(false);
      const off = await app.http.post(`${O()}/memberships/${two.membershipId}/deactivate`, {}, { token: member.token });
      expect(off.status).toBe(200);
      const report = await app.http.post(`${O()}/networks/reconcile`, {}, { token: admin.token });
      expect(report.body.data.errors.some((e: { zerotier_network_id: string }) => e.zerotier_network_id === network.nwid)).toBe(true);
    } finally {
      zt.resume();
    }
    await app.http.post(`${O()}/networks/reconcile`, {}, { token: admin.token });
    expect(await authorizedAtController(network.nwid, one.nodeId)).toBe(true);
    expect(await authorizedAtController(network.nwid, two.nodeId)).toBe(false);

    // Killed and restarted on the same home and port: the deauthorization is not forgotten either.
    await zt.stop();
    const off = await app.http.post(`${O()}/memberships/${one.membershipId}/deactivate`, {}, { token: member.token });
    expect(off.status).toBe(200);
    await zt.restart();
    expect(await authorizedAtController(network.nwid, one.nodeId)).toBe(true);
    await app.http.post(`${O()}/networks/reconcile`, {}, { token: admin.token });
    expect(await authorizedAtController(network.nwid, one.nodeId)).toBe(false);
  }, 60_000);
});

describe("offboarding", () => {
  it("removal from the organization and suspension take the person's devices off the controller at once", async () => {
    const network = await portalNetwork();
    const leaver = await newUser(app, { fullName: "Leaver" });
    const suspended = await newUser(app, { fullName: "Suspended" });
    await addMember(app, org.id, owner, leaver, "member");
    await addMember(app, org.id, owner, suspended, "member");
    const a = await approvedDevice(leaver, network);
    const b = await approvedDevice(suspended, network);
    expect((await activate(leaver, a.membershipId)).status).toBe(200);
    expect((await activate(suspended, b.membershipId)).status).toBe(200);
    expect(await authorizedAtController(network.nwid, a.nodeId)).toBe(true);

    expect((await app.http.delete(`${O()}/members/${leaver.id}`, { token: admin.token })).status).toBe(200);
    expect(await authorizedAtController(network.nwid, a.nodeId)).toBe(false);

    const root = await newSuperadmin(app);
    expect((await app.http.post(`/api/v1/admin/users/${suspended.id}/suspend`, { reason: "investigation" }, { token: root.token })).status).toBe(200);
    expect(await authorizedAtController(network.nwid, b.nodeId)).toBe(false);

    // Nothing left for reconciliation to re-authorize.
    await app.http.post(`${O()}/networks/reconcile`, {}, { token: admin.token });
    expect(await authorizedAtController(network.nwid, a.nodeId)).toBe(false);
    expect(await authorizedAtController(network.nwid, b.nodeId)).toBe(false);
  });
});
