import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controllerUrlAllowed } from "../../src/modules/networks/controller-config.service.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startZeroTierController, type RealController } from "../helpers/zerotier.js";
import { addMember, newOrg, orgWithRoles } from "../factories/orgs.js";
import { newSuperadmin, newUser, type TestUser } from "../factories/users.js";
import { auditRows } from "../helpers/db.js";

/**
 * The rules around the main flow: partial updates leave what was not sent, a kill switch is not
 * side-stepped by import or an open network, only running access is switched off, lifting is as
 * strong as triggering, and a network's managers are people who still belong.
 */
let app: TestApp;
let zt: RealController;
let o: Awaited<ReturnType<typeof orgWithRoles>>;
let O: string;

const tok = (u: TestUser) => ({ token: u.token });

beforeAll(async () => {
  zt = await startZeroTierController();
  app = await startTestApp({ ZEROTIER_CONTROLLER_URLS: zt.url, RATE_LIMIT_ENABLED: "false" });
  o = await orgWithRoles(app);
  O = `/api/v1/organizations/${o.org.id}`;
  const res = await app.http.request("PUT", `${O}/zerotier-config`, { token: o.owner.token, body: { zt_api_mode: "controller", zt_api_url: zt.url, zt_api_token: zt.token } });
  expect(res.status, res.text).toBe(200);
}, 90_000);
afterAll(async () => {
  await app?.close();
  await zt?.stop();
});

async function network(name: string, extra: Record<string, unknown> = {}): Promise<{ id: string; nwid: string }> {
  const nwid = await zt.client.createNetwork!(name);
  const res = await app.http.post(`${O}/networks`, { name, zerotier_network_id: nwid, ...extra }, tok(o.admin));
  expect(res.status, res.text).toBe(201);
  return { id: res.body.data.network.id, nwid };
}

describe("partial updates", () => {
  it("keep the fields a PATCH did not send, and clear those sent as null", async () => {
    const n = await network("patchable", { description: "kept" });
    const renamed = await app.http.patch(`${O}/networks/${n.id}`, { name: "renamed" }, tok(o.admin));
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.data.network).toMatchObject({ name: "renamed", description: "kept" });
    const cleared = await app.http.patch(`${O}/networks/${n.id}`, { description: null }, tok(o.admin));
    expect(cleared.body.data.network).toMatchObject({ name: "renamed", description: null });

    const device = (await app.http.post(`${O}/devices`, { node_id: "c100000001", nickname: "laptop", hostname: "lap.local", asset_tag: "A-1" }, tok(o.member))).body.data.device;
    const patched = await app.http.patch(`${O}/devices/${device.id}`, { hostname: "new.local" }, tok(o.member));
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.device, patched.text).toMatchObject({ device_nickname: "laptop", hostname: "new.local", asset_tag: "A-1" });
  });

  it("reads include_inactive=false as false", async () => {
    const n = await network("to-deactivate");
    await app.http.patch(`${O}/networks/${n.id}`, { is_active: false }, tok(o.admin));
    const ids = async (q: string) => (await app.http.get(`${O}/networks${q}`, tok(o.admin))).body.data.networks.map((x: { id: string }) => x.id);
    expect(await ids("?include_inactive=false")).not.toContain(n.id);
    expect(await ids("")).not.toContain(n.id);
    expect(await ids("?include_inactive=true")).toContain(n.id);
    const bad = await app.http.get(`${O}/networks?include_inactive=maybe`, tok(o.admin));
    expect(bad.status).toBe(400);
  });
});

describe("the kill switch is not side-stepped", () => {
  it("by joining an open network or by an admin importing the person's controller member", async () => {
    const person = await newUser(app, { fullName: "Cut Off" });
    await addMember(app, o.org.id, o.owner, person, "member");
    const open = await network("open-net", { request_mode: "open" });
    const device = (await app.http.post(`${O}/devices`, { node_id: "c200000001" }, tok(person))).body.data.device;
    const killed = await app.http.post(`${O}/kill-switch`, { target_user_id: person.id, reason: "lost laptop" }, tok(o.admin));
    expect(killed.status, killed.text).toBe(201);

    const join = await app.http.post(`${O}/devices/${device.id}/join-network/${open.id}`, {}, tok(person));
    expect(join.status, join.text).toBe(403);
    const asked = await app.http.post(`${O}/approvals`, { portal_network_id: open.id }, tok(person));
    expect(asked.status, asked.text).toBe(403);

    // The person's other node is already authorized at the controller; the admin imports it.
    await zt.client.setAuthorized(open.nwid, "c200000002", true);
    const imported = await app.http.post(`${O}/devices/import`, { portal_network_id: open.id, assignments: [{ node_id: "c200000002", email: person.email }] }, tok(o.admin));
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.data).toMatchObject({ imported: 0, skipped: [{ node_id: "c200000002", reason: "access suspended by a kill switch" }] });
    const approvals = (await app.http.get(`${O}/approvals`, tok(person))).body.data.approvals;
    expect(approvals.filter((a: { state: string }) => a.state === "approved")).toEqual([]);

    // The stray authorization is the reconciler's to remove.
    const report = await app.http.post(`${O}/networks/reconcile`, {}, tok(o.admin));
    expect(report.status, report.text).toBe(200);
    expect((await zt.client.getMember(open.nwid, "c200000002"))?.authorized).toBe(false);
  });
});

describe("the kill switch and a manager's decision", () => {
  it("a pending request cannot be approved while its person is cut off", async () => {
    const person = await newUser(app, { fullName: "Pending Person" });
    await addMember(app, o.org.id, o.owner, person, "member");
    const n = await network("pending-net");
    const approval = (await app.http.post(`${O}/approvals`, { portal_network_id: n.id }, tok(person))).body.data.approval;
    expect(approval.state).toBe("pending");
    const event = (await app.http.post(`${O}/kill-switch`, { target_user_id: person.id, reason: "incident" }, tok(o.admin))).body.data.event;
    const approve = await app.http.post(`${O}/approvals/${approval.id}/approve`, {}, tok(o.admin));
    expect(approve.status, approve.text).toBe(403);
    expect(approve.body.error.type).toBe("ACCESS_SUSPENDED");
    await app.http.post(`${O}/kill-switch/${event.id}/lift`, {}, tok(o.admin));
    expect((await app.http.post(`${O}/approvals/${approval.id}/approve`, {}, tok(o.admin))).status).toBe(200);
  });

  it("a deactivated open network approves nobody who joins it", async () => {
    const person = await newUser(app, { fullName: "Late Joiner" });
    await addMember(app, o.org.id, o.owner, person, "member");
    const n = await network("closed-open-net", { request_mode: "open" });
    await app.http.patch(`${O}/networks/${n.id}`, { is_active: false }, tok(o.admin));
    const device = (await app.http.post(`${O}/devices`, { node_id: "c400000001" }, tok(person))).body.data.device;
    const join = await app.http.post(`${O}/devices/${device.id}/join-network/${n.id}`, {}, tok(person));
    expect(join.status, join.text).toBe(404);
    expect((await app.http.get(`${O}/approvals`, tok(person))).body.data.approvals).toEqual([]);
  });
});

describe("ending an activation", () => {
  it("that already ended leaves its renewal running", async () => {
    const person = await newUser(app, { fullName: "Renewer" });
    await addMember(app, o.org.id, o.owner, person, "member");
    const n = await network("renew-net", { request_mode: "open" });
    const device = (await app.http.post(`${O}/devices`, { node_id: "c500000001" }, tok(person))).body.data.device;
    const m = (await app.http.post(`${O}/devices/${device.id}/join-network/${n.id}`, {}, tok(person))).body.data.membership;
    const first = (await app.http.post(`${O}/memberships/${m.id}/activate`, {}, tok(person))).body.data.session;
    const renewal = (await app.http.post(`${O}/memberships/${m.id}/activate`, {}, tok(person))).body.data.session;
    expect(renewal.id).not.toBe(first.id);

    const stale = await app.http.delete(`${O}/sessions/${first.id}`, tok(person));
    expect(stale.status, stale.text).toBeLessThan(300);
    const sessions = (await app.http.get(`${O}/sessions`, tok(person))).body.data.sessions.map((x: { id: string }) => x.id);
    expect(sessions).toEqual([renewal.id]);
    expect((await zt.client.getMember(n.nwid, "c500000001"))?.authorized).toBe(true);

    // Ending the running one does end it, and takes the device off the controller.
    expect((await app.http.delete(`${O}/sessions/${renewal.id}`, tok(person))).status).toBeLessThan(300);
    expect((await app.http.get(`${O}/sessions`, tok(person))).body.data.sessions).toEqual([]);
    expect((await zt.client.getMember(n.nwid, "c500000001"))?.authorized).toBe(false);
  });
});

describe("switching off", () => {
  it("changes only running access; a suspended membership stays suspended", async () => {
    const person = await newUser(app, { fullName: "Deactivator" });
    await addMember(app, o.org.id, o.owner, person, "member");
    const n = await network("deact-net");
    const device = (await app.http.post(`${O}/devices`, { node_id: "c300000001" }, tok(person))).body.data.device;
    const approval = (await app.http.post(`${O}/approvals`, { portal_network_id: n.id, device_id: device.id }, tok(person))).body.data.approval;
    await app.http.post(`${O}/approvals/${approval.id}/approve`, {}, tok(o.admin));
    const membership = (await app.http.get(`${O}/memberships`, tok(person))).body.data.memberships[0];
    expect(membership.state).toBe("approved_inactive");

    // Deactivating what is not running changes nothing.
    const idle = await app.http.post(`${O}/memberships/${membership.id}/deactivate`, {}, tok(person));
    expect(idle.status, idle.text).toBe(200);
    expect(idle.body.data.membership.state).toBe("approved_inactive");

    await app.http.post(`${O}/kill-switch`, { target_user_id: person.id, reason: "check" }, tok(o.admin));
    const after = await app.http.post(`${O}/memberships/${membership.id}/deactivate`, {}, tok(person));
    expect(after.body.data.membership.state).toBe("suspended");
    const again = await app.http.post(`${O}/memberships/${membership.id}/activate`, {}, tok(person));
    expect(again.status).toBe(403);
  });
});

describe("lifting a kill switch", () => {
  it("needs the rank to trigger it, and a superadmin's needs a superadmin", async () => {
    const superadmin = await newSuperadmin(app);
    await addMember(app, o.org.id, o.owner, superadmin, "admin");
    const peer = await newUser(app, { fullName: "Peer Admin" });
    await addMember(app, o.org.id, o.owner, peer, "admin");

    // The owner cuts off an admin; another admin may not undo it.
    const onPeer = (await app.http.post(`${O}/kill-switch`, { target_user_id: peer.id, reason: "owner's call" }, tok(o.owner))).body.data.event;
    const byAdmin = await app.http.post(`${O}/kill-switch/${onPeer.id}/lift`, {}, tok(o.admin));
    expect(byAdmin.status, byAdmin.text).toBe(403);
    expect((await app.http.post(`${O}/kill-switch/${onPeer.id}/lift`, {}, tok(o.owner))).status).toBe(200);

    // A superadmin cuts off a plain member; the organization's admins may not undo it.
    const onMember = (await app.http.post(`${O}/kill-switch`, { target_user_id: o.member.id, reason: "security team" }, tok(superadmin))).body.data.event;
    expect((await app.http.post(`${O}/kill-switch/${onMember.id}/lift`, {}, tok(o.admin))).status).toBe(403);
    expect((await app.http.post(`${O}/kill-switch/${onMember.id}/lift`, {}, tok(o.owner))).status).toBe(403);
    const lifted = await app.http.post(`${O}/kill-switch/${onMember.id}/lift`, {}, tok(superadmin));
    expect(lifted.status, lifted.text).toBe(200);
    expect(lifted.body.data.event.lifted_at).not.toBeNull();
  });
});

describe("named managers", () => {
  it("are live members only, and a manager who leaves loses the network", async () => {
    const n = await network("managed-net");
    const manager = await newUser(app, { fullName: "Net Manager" });
    await addMember(app, o.org.id, o.owner, manager, "member");
    const set = await app.http.put(`${O}/networks/${n.id}/managers`, { user_ids: [manager.id] }, tok(o.admin));
    expect(set.status, set.text).toBe(200);
    expect(set.body.data.managers.map((m: { email: string }) => m.email)).toEqual([manager.email]);
    expect((await app.http.get(`${O}/approvals/pending`, tok(manager))).status).toBe(200);

    const removed = await app.http.delete(`${O}/members/${manager.id}`, tok(o.admin));
    expect(removed.status, removed.text).toBeLessThan(300);
    expect((await app.http.get(`${O}/networks/${n.id}/managers`, tok(o.admin))).body.data.managers).toEqual([]);

    // Back in the organization, they are a plain member again, not a manager.
    await addMember(app, o.org.id, o.owner, manager, "member");
    expect((await app.http.get(`${O}/networks/${n.id}/requests`, tok(manager))).status).toBe(403);
  });
});

describe("the controller URL allowlist", () => {
  it("matches scheme, host and port exactly and paths on a segment boundary", () => {
    const allowed = ["http://10.0.0.5:9993", "https://zt.example.com/ctl/"];
    expect(controllerUrlAllowed("http://10.0.0.5:9993", allowed)).toBe(true);
    expect(controllerUrlAllowed("http://10.0.0.5:9993/", allowed)).toBe(true);
    expect(controllerUrlAllowed("https://zt.example.com/ctl/v1", allowed)).toBe(true);
    for (const evil of [
      "http://10.0.0.5:99931",
      "http://10.0.0.5:9993.evil.example",
      "http://10.0.0.5:9993@evil.example",
      "http://user:pw@10.0.0.5:9993",
      "https://10.0.0.5:9993",
      "https://zt.example.com/ctl-other",
      "https://zt.example.com.evil.example/ctl",
      "https://zt.example.com/",
      "not a url",
    ]) {
      expect(controllerUrlAllowed(evil, allowed), evil).toBe(false);
    }
  });

  it("refuses at configuration a controller whose port only begins like an allowed one", async () => {
    // Allowed: the controller's host with its port's first digits (`:3456` for a controller on :34567).
    const strict = await startTestApp({ ZEROTIER_CONTROLLER_URLS: zt.url.slice(0, -1), RATE_LIMIT_ENABLED: "false" });
    try {
      const owner = await newUser(strict, { fullName: "Strict" });
      const org = await newOrg(strict, owner);
      const res = await strict.http.request("PUT", `/api/v1/organizations/${org.id}/zerotier-config`, {
        token: owner.token,
        body: { zt_api_mode: "controller", zt_api_url: zt.url, zt_api_token: zt.token },
      });
      expect(res.status, res.text).toBe(403);
      expect(res.body.error.type).toBe("CONTROLLER_URL_NOT_ALLOWED");
    } finally {
      await strict.close();
    }
  });
});

describe("nobody decides their own request (ARCHITECTURE rule 20)", () => {
  it("refuses a manager approving or rejecting their own request, or assigning themselves; another manager decides; giving up one's own access is allowed", async () => {
    const n = await network("own-request");
    // The admin (a manager of every network of the organization) asks for access, as anyone may.
    const asked = await app.http.post(`${O}/approvals`, { portal_network_id: n.id, justification: "need it" }, tok(o.admin));
    expect(asked.status, asked.text).toBe(201);
    const id = asked.body.data.approval.id;
    for (const decision of ["approve", "reject"]) {
      const own = await app.http.post(`${O}/approvals/${id}/${decision}`, { reason: "mine" }, tok(o.admin));
      expect([decision, own.status, own.body.error?.type]).toEqual([decision, 403, "OWN_REQUEST"]);
    }
    const gql = await app.http.gql("mutation($o: ID!, $a: ID!) { approveNetworkAccess(orgId: $o, approvalId: $a) { state } }", { o: o.org.id, a: id }, tok(o.admin));
    expect(gql.errors?.[0]?.extensions?.code).toBe("OWN_REQUEST");
    expect((await app.http.get(`${O}/approvals/pending`, tok(o.owner))).body.data.approvals.find((a: { id: string }) => a.id === id)?.state).toBe("pending");
    // The owner, another manager, decides; the trail names two people.
    const approved = await app.http.post(`${O}/approvals/${id}/approve`, {}, tok(o.owner));
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body.data.approval).toMatchObject({ state: "approved" });
    // Giving up one's own access decides nothing for oneself.
    expect((await app.http.post(`${O}/approvals/${id}/revoke`, { reason: "done" }, tok(o.admin))).status).toBe(200);

    // Granting oneself access directly is refused the same way, the owner included.
    const self = await app.http.post(`${O}/approvals/assign`, { target_user_id: o.owner.id, portal_network_id: n.id }, tok(o.owner));
    expect([self.status, self.body.error?.type]).toEqual([403, "OWN_REQUEST"]);
  });

  it("refuses a network's named manager (a plain member otherwise) deciding or granting their own access, on both doors", async () => {
    const n = await network("managed-by-a-member");
    const manager = await newUser(app, { fullName: "Named Manager" });
    await addMember(app, o.org.id, o.owner, manager, "member");
    expect((await app.http.request("PUT", `${O}/networks/${n.id}/managers`, { token: o.admin.token, body: { user_ids: [manager.id] } })).status).toBe(200);
    const asked = await app.http.post(`${O}/approvals`, { portal_network_id: n.id, justification: "mine" }, tok(manager));
    expect(asked.status, asked.text).toBe(201);
    const id = asked.body.data.approval.id;
    // They do manage the network: another member's request is theirs to decide.
    const other = await app.http.post(`${O}/approvals`, { portal_network_id: n.id }, tok(o.member));
    expect((await app.http.post(`${O}/approvals/${other.body.data.approval.id}/reject`, { reason: "no" }, tok(manager))).status).toBe(200);
    for (const decision of ["approve", "reject"]) {
      const own = await app.http.post(`${O}/approvals/${id}/${decision}`, {}, tok(manager));
      expect([decision, own.status, own.body.error?.type]).toEqual([decision, 403, "OWN_REQUEST"]);
    }
    const gql = await app.http.gql("mutation($o: ID!, $a: ID!) { rejectNetworkAccess(orgId: $o, approvalId: $a) { state } }", { o: o.org.id, a: id }, tok(manager));
    expect(gql.errors?.[0]?.extensions?.code).toBe("OWN_REQUEST");
    const self = await app.http.post(`${O}/approvals/assign`, { target_user_id: manager.id, portal_network_id: n.id }, tok(manager));
    expect([self.status, self.body.error?.type]).toEqual([403, "OWN_REQUEST"]);
    expect((await app.http.get(`${O}/approvals/pending`, tok(o.admin))).body.data.approvals.find((a: { id: string }) => a.id === id)?.state).toBe("pending");
  });

  it("lets a superadmin decide or grant their own access, and the audit record says it was their own, as a superadmin", async () => {
    const root = await newSuperadmin(app);
    await addMember(app, o.org.id, o.owner, root, "admin");
    const n = await network("operator-own");
    const asked = await app.http.post(`${O}/approvals`, { portal_network_id: n.id, justification: "break-glass" }, tok(root));
    expect(asked.status, asked.text).toBe(201);
    const approved = await app.http.post(`${O}/approvals/${asked.body.data.approval.id}/approve`, { reason: "operator" }, tok(root));
    expect(approved.status, approved.text).toBe(200);
    const m = await network("operator-assigned");
    const assigned = await app.http.post(`${O}/approvals/assign`, { target_user_id: root.id, portal_network_id: m.id }, tok(root));
    expect(assigned.status, assigned.text).toBe(201);
    const rows = await auditRows(app, root.id);
    const decided = rows.find((r) => r.action === "network.approval.approved" && (r.metadata as { network_id?: string }).network_id === n.id)!;
    expect(decided).toMatchObject({ actor_id: root.id, metadata: expect.objectContaining({ own_request: true, decided_as: "superadmin" }) });
    const granted = rows.find((r) => r.action === "network.approval.assigned")!;
    expect(granted).toMatchObject({ actor_id: root.id, metadata: expect.objectContaining({ own_request: true, decided_as: "superadmin" }) });
    // A decision on someone else's request carries no such mark (the owner approved the admin's, above).
    const byOthers = (await auditRows(app, o.admin.id)).filter((r) => r.action === "network.approval.approved");
    expect(byOthers.length).toBeGreaterThan(0);
    expect(byOthers.every((r) => !("own_request" in r.metadata))).toBe(true);
  });
});
