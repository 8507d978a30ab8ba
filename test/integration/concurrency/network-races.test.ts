import { sql } from "drizzle-orm";
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectPostgres, resultRows } from "../../../src/infra/db.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { startFakeZtCentral, type FakeZtCentral } from "../../helpers/fake-zt-central.js";
import { holdRows, queuedBehind } from "../../helpers/row-lock.js";
import { orgWithRoles } from "../../factories/orgs.js";
import type { TestUser } from "../../factories/users.js";

/**
 * Network access decisions that race for one person (issue 18 item 0), on both runtimes, against
 * the ZeroTier Central stand-in: devices activating while an admin pulls the kill switch on their
 * owner. No answer ≥ 500; afterwards no activation is open, every membership is suspended, and
 * no device is left authorized at the controller, whichever request got there last.
 */
const TOKEN = "race-central-token-4e5f6a7b8c";
const NW = "8056c2e21c0000d1";
let central: FakeZtCentral;
let app: TestApp;
beforeAll(async () => {
  central = await startFakeZtCentral();
  central.addToken(TOKEN, [NW]);
  central.addNetwork(NW, { name: "race" });
  // The stand-in's own limit would answer 429s to this burst; the race is the subject here.
  central.rateLimit = 10_000;
  app = await startTestApp({ ZEROTIER_CENTRAL_URL: central.url, NETWORK_CONTROLLER_RETRIES: "0", RATE_LIMIT_ENABLED: "false" });
}, 60_000);
afterAll(async () => {
  await app?.close();
  await central?.close();
});

const DEVICES = 6;

/** `user`'s devices on the network, approved by `admin` and ready to activate. */
async function approvedDevices(O: string, user: TestUser, admin: TestUser): Promise<Array<{ nodeId: string; membershipId: string }>> {
  const out = [];
  for (let i = 0; i < DEVICES; i++) {
    const nodeId = `d0d0${(0x100000 + i).toString(16)}`;
    const device = await app.http.post(`${O}/devices`, { node_id: nodeId, nickname: `dev ${i}`, hostname: `dev${i}.local` }, { token: user.token });
    expect(device.status, device.text).toBe(201);
    const network = (await app.http.get(`${O}/networks`, { token: admin.token })).body.data.networks[0] as { id: string };
    if (i === 0) {
      const asked = await app.http.post(`${O}/approvals`, { portal_network_id: network.id, device_id: device.body.data.device.id, justification: "race" }, { token: user.token });
      expect(asked.status, asked.text).toBe(201);
      expect((await app.http.post(`${O}/approvals/${asked.body.data.approval.id}/approve`, {}, { token: admin.token })).status).toBe(200);
    } else {
      await app.http.post(`${O}/devices/${device.body.data.device.id}/join-network/${network.id}`, {}, { token: user.token });
    }
    const memberships = (await app.http.get(`${O}/memberships`, { token: user.token })).body.data.memberships as { id: string; node_id: string; state: string }[];
    const m = memberships.find((x) => x.node_id === nodeId)!;
    expect(m.state).toBe("approved_inactive");
    out.push({ nodeId, membershipId: m.id });
  }
  return out;
}

describe("activations while the kill switch is pulled on their owner", () => {
  it("never answer 5xx and leave nothing open or authorized once the kill switch has fired", async () => {
    const { org, owner, admin, member } = await orgWithRoles(app);
    const O = `/api/v1/organizations/${org.id}`;
    expect((await app.http.request("PUT", `${O}/zerotier-config`, { token: owner.token, body: { zt_api_mode: "central", zt_api_token: TOKEN } })).status).toBe(200);
    expect((await app.http.post(`${O}/zerotier/import-networks`, { zerotier_network_ids: [NW] }, { token: admin.token })).status).toBe(201);
    const devices = await approvedDevices(O, member, admin);
    // Two already on, so the kill switch has running access to end as well as activations to meet.
    for (const d of devices.slice(0, 2)) expect((await app.http.post(`${O}/memberships/${d.membershipId}/activate`, {}, { token: member.token })).status).toBe(200);

    const after = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const [kill, ...activations] = await Promise.all([
      after(10).then(() => app.http.post(`${O}/kill-switch`, { target_user_id: member.id, reason: "race" }, { token: admin.token })),
      ...devices.flatMap((d, i) => [0, 20, 40, 60, 80].map((ms) => after(ms + i * 2).then(() => app.http.post(`${O}/memberships/${d.membershipId}/activate`, {}, { token: member.token })))),
    ]);
    expect([kill, ...activations].filter((a) => a!.status >= 500).map((a) => a!.text)).toEqual([]);
    expect(kill!.status, kill!.text).toBe(201);
    for (const a of activations) {
      if (a!.status !== 200) expect(a!.body.error.type).toBe("ACCESS_SUSPENDED");
    }

    const db = app.container.db;
    const open = resultRows<{ n: number | string }>(await db.execute(sql`select count(*) as n from activation_sessions where user_id = ${member.id} and ended_at is null`));
    expect(Number(open[0]!.n)).toBe(0);
    const rows = resultRows<{ state: string; currently_authorized: boolean }>(await db.execute(sql`select state, currently_authorized from device_memberships where user_id = ${member.id} and deleted_at is null`));
    expect(rows).toHaveLength(DEVICES);
    expect(rows.every((r) => r.state === "suspended" && !r.currently_authorized)).toBe(true);
    expect(devices.filter((d) => central.member(NW, d.nodeId)?.config.authorized)).toEqual([]);
    // And it holds: activating again is refused until the kill switch is lifted.
    const again = await app.http.post(`${O}/memberships/${devices[0]!.membershipId}/activate`, {}, { token: member.token });
    expect(again.body.error?.type).toBe("ACCESS_SUSPENDED");
  });
});

let networkSeq = 0xe0;
/** An organization on a network of its own (open: anyone who asks is approved), and a device of its member. */
async function openNetworkAndDevice() {
  const nwid = `8056c2e21c0000${(networkSeq++).toString(16)}`;
  const token = `race-central-token-${nwid}`;
  central.addToken(token, [nwid]);
  central.addNetwork(nwid, { name: `race ${nwid}` });
  const { org, owner, admin, member } = await orgWithRoles(app);
  const O = `/api/v1/organizations/${org.id}`;
  expect((await app.http.request("PUT", `${O}/zerotier-config`, { token: owner.token, body: { zt_api_mode: "central", zt_api_token: token } })).status).toBe(200);
  expect((await app.http.post(`${O}/zerotier/import-networks`, { zerotier_network_ids: [nwid] }, { token: admin.token })).status).toBe(201);
  const network = (await app.http.get(`${O}/networks`, { token: admin.token })).body.data.networks[0] as { id: string };
  expect((await app.http.request("PATCH", `${O}/networks/${network.id}`, { token: admin.token, body: { request_mode: "open" } })).status).toBe(200);
  const device = await app.http.post(`${O}/devices`, { node_id: `d1d1${(0x100000 + networkSeq).toString(16)}`, nickname: "laptop", hostname: "laptop.local" }, { token: member.token });
  expect(device.status, device.text).toBe(201);
  return { O, owner, admin, member, network, deviceId: device.body.data.device.id as string };
}

const liveMemberships = async (deviceId: string) =>
  resultRows<{ id: string }>(await app.container.db.execute(sql`select id from device_memberships where device_id = ${deviceId} and deleted_at is null`)).map((r) => r.id);

describe("joining a network", () => {
  it("the same device asked onto the same network several times at once: one membership, every answer names it", async () => {
    const { O, member, network, deviceId } = await openNetworkAndDevice();
    const answers = await Promise.all(Array.from({ length: 6 }, () => app.http.post(`${O}/devices/${deviceId}/join-network/${network.id}`, {}, { token: member.token })));
    expect(answers.filter((a) => a.status !== 201).map((a) => a.text)).toEqual([]);
    const ids = await liveMemberships(deviceId);
    expect(ids).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.data.membership.id))).toEqual(new Set(ids));
  });

  it("joins and access requests of the same person and device at once: one approval, one membership, no 5xx", async () => {
    const { O, member, network, deviceId } = await openNetworkAndDevice();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 2 === 0
          ? app.http.post(`${O}/devices/${deviceId}/join-network/${network.id}`, {}, { token: member.token })
          : app.http.post(`${O}/approvals`, { portal_network_id: network.id, device_id: deviceId, justification: "race" }, { token: member.token }),
      ),
    );
    expect(answers.filter((a) => a.status >= 500).map((a) => a.text)).toEqual([]);
    // A request that comes second finds the approval the first one made.
    for (const a of answers) if (a.status !== 201) expect([a.status, a.body.error.type], a.text).toEqual([409, "APPROVAL_EXISTS"]);
    expect(await liveMemberships(deviceId)).toHaveLength(1);
    const approvals = resultRows<{ id: string }>(await app.container.db.execute(sql`select id from network_approvals where user_id = ${member.id} and portal_network_id = ${network.id} and state = 'approved'`));
    expect(approvals).toHaveLength(1);
  });
});

// Two connections at once: only PostgreSQL (the embedded database belongs to one process).
if (process.env.DATABASE_URL) describe("joining a network while something it needs is removed (PostgreSQL)", () => {
  // A second connection of the test's own, to hold rows while requests wait on them.
  let db: postgres.Sql;
  beforeAll(() => {
    db = connectPostgres(app.container.config.db.url!, { max: 2, onnotice: () => {} });
  });
  afterAll(() => db.end());

  it("a join that meets the network's removal finds it gone and leaves no membership (PostgreSQL)", async () => {
    const { O, member, network, deviceId } = await openNetworkAndDevice();
    // The network's row is held as a removal holds it; the removal commits while the join waits.
    const held = await holdRows(db, (tx) => tx`select id from portal_networks where id = ${network.id} for update`);
    const join = app.http.post(`${O}/devices/${deviceId}/join-network/${network.id}`, {}, { token: member.token });
    expect(await held.waiting(1)).toBe(1);
    await held.release((tx) => tx`update portal_networks set deleted_at = now(), is_active = false where id = ${network.id}`);
    const res = await join;
    expect(res.status, res.text).toBe(404);
    expect(res.body.error.type).toBe("NETWORK_NOT_FOUND");
    expect(await liveMemberships(deviceId)).toEqual([]);
  });

  it("a network removal that arrives while a join holds the network waits for it: the join is answered as it committed, then the removal revokes it (PostgreSQL)", async () => {
    const { O, admin, member, network, deviceId } = await openNetworkAndDevice();
    // The member's row is held: the join waits for it, holding the network's key share, and the
    // removal queues behind the join. Released, the join commits first.
    const held = await holdRows(db, (tx) => tx`select id from users where id = ${member.id} for update`);
    const [joined, removed] = await queuedBehind(
      held,
      () => app.http.post(`${O}/devices/${deviceId}/join-network/${network.id}`, {}, { token: member.token }),
      () => app.http.request("DELETE", `${O}/networks/${network.id}`, { token: admin.token }),
    );
    expect(removed.status, removed.text).toBe(200);
    // Its answer was read before its commit, not after the removal's.
    expect(joined.status, joined.text).toBe(201);
    expect(joined.body.data.membership).toMatchObject({ portal_network_id: network.id, state: "approved_inactive" });
    const states = resultRows<{ state: string }>(await app.container.db.execute(sql`select state from device_memberships where device_id = ${deviceId} and deleted_at is null`));
    expect(states).toEqual([{ state: "revoked" }]);
  });

  it("a join that meets its owner's removal from the organization queues behind it instead of deadlocking, and finds the device gone (PostgreSQL)", async () => {
    const { O, admin, member, network, deviceId } = await openNetworkAndDevice();
    // The member's row is held: the removal queues for it first (it then takes the member's
    // devices off), then the join. Released, the removal goes first.
    const held = await holdRows(db, (tx) => tx`select id from users where id = ${member.id} for update`);
    const removal = app.http.request("DELETE", `${O}/members/${member.id}`, { token: admin.token });
    expect(await held.waiting(1)).toBe(1);
    const join = app.http.post(`${O}/devices/${deviceId}/join-network/${network.id}`, {}, { token: member.token });
    expect(await held.waiting(2)).toBe(2);
    await held.release();
    const [removed, joined] = await Promise.all([removal, join]);
    expect(removed.status, removed.text).toBe(200);
    expect(joined.status, joined.text).toBe(404);
    expect(joined.body.error.type).toBe("DEVICE_NOT_FOUND");
    expect(await liveMemberships(deviceId)).toEqual([]);
  });

  it("an activation that holds its owner while the owner is removed from the organization does not deadlock, and the removal ends it (PostgreSQL)", async () => {
    const { O, admin, member, network, deviceId } = await openNetworkAndDevice();
    const joined = await app.http.post(`${O}/devices/${deviceId}/join-network/${network.id}`, {}, { token: member.token });
    expect(joined.status, joined.text).toBe(201);
    const membershipId = joined.body.data.membership.id as string;
    // The member's row is held: the activation queues for it first, then the removal, which
    // holds the organization by then. Released, the activation goes first and inserts rows
    // that reference the organization.
    const held = await holdRows(db, (tx) => tx`select id from users where id = ${member.id} for update`);
    const activation = app.http.post(`${O}/memberships/${membershipId}/activate`, {}, { token: member.token });
    expect(await held.waiting(1)).toBe(1);
    const removal = app.http.request("DELETE", `${O}/members/${member.id}`, { token: admin.token });
    expect(await held.waiting(2)).toBe(2);
    await held.release();
    const [activated, removed] = await Promise.all([activation, removal]);
    expect(removed.status, removed.text).toBe(200);
    // The activation committed first; its answer, read after, may already find the membership
    // gone with the removal.
    if (activated.status !== 200) expect([activated.status, activated.body.error.type], activated.text).toEqual([404, "MEMBERSHIP_NOT_FOUND"]);
    const open = resultRows<{ n: number | string }>(await app.container.db.execute(sql`select count(*) as n from activation_sessions where user_id = ${member.id} and ended_at is null`));
    expect(Number(open[0]!.n)).toBe(0);
    expect(await liveMemberships(deviceId)).toEqual([]);
  });

  it("a join racing the organization's deletion leaves no standing membership on the deleted network (PostgreSQL)", async () => {
    const { O, owner, member, network, deviceId } = await openNetworkAndDevice();
    // The member's row is held: the join waits for it, holding the network's key share; the
    // deletion then locks the organization's networks and waits for the join to end.
    const held = await holdRows(db, (tx) => tx`select id from users where id = ${member.id} for update`);
    const join = app.http.post(`${O}/devices/${deviceId}/join-network/${network.id}`, {}, { token: member.token });
    expect(await held.waiting(1)).toBe(1);
    const deletion = app.http.request("DELETE", O, { token: owner.token, body: { confirm: true } });
    await Promise.race([deletion, held.waiting(2)]);
    await held.release();
    const [joined, deleted] = await Promise.all([join, deletion]);
    expect(deleted.status, deleted.text).toBe(200);
    // The join committed first, and was answered as it committed.
    expect(joined.status, joined.text).toBe(201);
    const standing = resultRows<{ state: string }>(await app.container.db.execute(sql`select state from device_memberships where device_id = ${deviceId} and deleted_at is null and state <> 'revoked'`));
    expect(standing).toEqual([]);
  });

  it("a renewal of a running activation while the network is removed: no deadlock, nothing left running (PostgreSQL)", async () => {
    const { O, admin, member, network, deviceId } = await openNetworkAndDevice();
    const joined = await app.http.post(`${O}/devices/${deviceId}/join-network/${network.id}`, {}, { token: member.token });
    const membershipId = joined.body.data.membership.id as string;
    const first = await app.http.post(`${O}/memberships/${membershipId}/activate`, {}, { token: member.token });
    expect(first.status, first.text).toBe(200);
    // The running activation's row is held: the removal queues for it first, then the renewal.
    // Released, the removal goes first; the renewal must not end up waiting on it in turn.
    const held = await holdRows(db, (tx) => tx`select id from activation_sessions where membership_id = ${membershipId} and ended_at is null for update`);
    const removal = app.http.request("DELETE", `${O}/networks/${network.id}`, { token: admin.token });
    expect(await held.waiting(1)).toBe(1);
    const renewal = app.http.post(`${O}/memberships/${membershipId}/activate`, {}, { token: member.token });
    expect(await held.waiting(2)).toBe(2);
    await held.release();
    const [removed, renewed] = await Promise.all([removal, renewal]);
    expect(removed.status, removed.text).toBe(200);
    expect([renewed.status, renewed.body.error?.type], renewed.text).toEqual([404, "NETWORK_NOT_FOUND"]);
    const open = resultRows<{ n: number | string }>(await app.container.db.execute(sql`select count(*) as n from activation_sessions where membership_id = ${membershipId} and ended_at is null`));
    expect(Number(open[0]!.n)).toBe(0);
  });
});
