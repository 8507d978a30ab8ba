import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { startZeroTierController, type RealController } from "../../helpers/zerotier.js";
import { addMember, orgWithRoles } from "../../factories/orgs.js";
import type { TestUser } from "../../factories/users.js";

/**
 * Issue 13 attacked: another organization's admin with this organization's ids, malformed input,
 * and a kill switch racing activations. Every answer is a clean 4xx and the controller ends in the
 * state Keyward decided.
 */
let app: TestApp;
let zt: RealController;
let a: Awaited<ReturnType<typeof orgWithRoles>>;
let b: Awaited<ReturnType<typeof orgWithRoles>>;
let ids: { network: string; nwid: string; device: string; membership: string; approval: string; session: string; event: string };

const path = (orgId: string) => `/api/v1/organizations/${orgId}`;
async function connect(orgId: string, owner: TestUser) {
  const res = await app.http.request("PUT", `${path(orgId)}/zerotier-config`, { token: owner.token, body: { zt_api_mode: "controller", zt_api_url: zt.url, zt_api_token: zt.token } });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  zt = await startZeroTierController();
  app = await startTestApp({ ZEROTIER_CONTROLLER_URLS: zt.url, RATE_LIMIT_ENABLED: "false" });
  a = await orgWithRoles(app);
  b = await orgWithRoles(app);
  await connect(a.org.id, a.owner);
  await connect(b.org.id, b.owner);
  const A = path(a.org.id);
  const nwid = await zt.client.createNetwork!("org-a");
  const network = (await app.http.post(`${A}/networks`, { name: "A net", zerotier_network_id: nwid }, { token: a.admin.token })).body.data.network.id;
  const device = (await app.http.post(`${A}/devices`, { node_id: "aa00000001" }, { token: a.member.token })).body.data.device.id;
  const approval = (await app.http.post(`${A}/approvals`, { portal_network_id: network, device_id: device }, { token: a.member.token })).body.data.approval.id;
  await app.http.post(`${A}/approvals/${approval}/approve`, {}, { token: a.admin.token });
  const membership = (await app.http.get(`${A}/memberships`, { token: a.member.token })).body.data.memberships[0].id;
  const session = (await app.http.post(`${A}/memberships/${membership}/activate`, {}, { token: a.member.token })).body.data.session.id;
  const event = (await app.http.post(`${A}/kill-switch`, { target_user_id: a.guest.id, reason: "test" }, { token: a.admin.token })).body.data.event.id;
  ids = { network, nwid, device, membership, approval, session, event };
}, 90_000);
afterAll(async () => {
  await app?.close();
  await zt?.stop();
});

describe("another organization's admin, through their own organization's paths", () => {
  it("finds none of this organization's networks, devices, memberships, approvals, sessions or kill switches", async () => {
    const B = path(b.org.id);
    const t = { token: b.admin.token };
    const attempts = [
      app.http.get(`${B}/networks/${ids.network}`, t),
      app.http.patch(`${B}/networks/${ids.network}`, { name: "mine" }, t),
      app.http.delete(`${B}/networks/${ids.network}`, t),
      app.http.get(`${B}/networks/${ids.network}/members`, t),
      app.http.get(`${B}/devices/${ids.device}`, t),
      app.http.delete(`${B}/devices/${ids.device}`, t),
      app.http.post(`${B}/memberships/${ids.membership}/deactivate`, {}, t),
      app.http.delete(`${B}/admin/memberships/${ids.membership}`, t),
      app.http.post(`${B}/approvals/${ids.approval}/revoke`, {}, t),
      app.http.delete(`${B}/sessions/${ids.session}`, t),
      app.http.post(`${B}/kill-switch/${ids.event}/lift`, {}, t),
      app.http.post(`${B}/kill-switch`, { target_user_id: a.member.id }, t),
      app.http.post(`${B}/approvals/assign`, { target_user_id: a.member.id, portal_network_id: ids.network }, t),
    ];
    const answers = await Promise.all(attempts);
    for (const r of answers) {
      expect(r.status, r.text).toBe(404);
    }
    // And through organization A's paths they are not a member at all.
    expect((await app.http.get(`${path(a.org.id)}/networks/${ids.network}`, t)).body.error.type).toBe("ORG_NOT_FOUND");
    // Nothing changed: the activation still runs and the device is still authorized.
    const m = (await app.http.get(`${path(a.org.id)}/memberships`, { token: a.member.token })).body.data.memberships[0];
    expect(m.active_session).not.toBeNull();
    expect((await zt.client.getMember(ids.nwid, "aa00000001"))?.authorized).toBe(true);
  });
});

describe("malformed input", () => {
  it("answers 400 in the envelope for bad node ids, network ids, lifetimes and scopes", async () => {
    const A = path(a.org.id);
    const cases: Array<[string, string, unknown]> = [
      ["post", `${A}/devices`, { node_id: "xyz" }],
      ["post", `${A}/devices`, { node_id: "aa000000011" }],
      ["post", `${A}/networks`, { name: "n", zerotier_network_id: "123" }],
      ["post", `${A}/networks`, { name: "", zerotier_network_id: ids.nwid }],
      ["post", `${A}/networks`, { name: "n", zerotier_network_id: ids.nwid, default_activation_lifetime_minutes: 600, max_activation_lifetime_minutes: 60 }],
      ["post", `${A}/memberships/${ids.membership}/activate`, { lifetime_minutes: -5 }],
      ["post", `${A}/memberships/${ids.membership}/activate`, { lifetime_minutes: 1e12 }],
      ["post", `${A}/kill-switch`, { target_user_id: a.member.id, scope: "selected_networks" }],
      ["post", `${A}/kill-switch`, { target_user_id: "not-a-uuid" }],
      ["put", `${A}/zerotier-config`, { zt_api_mode: "controller", zt_api_token: zt.token }],
      ["put", `${A}/zerotier-config`, { zt_api_mode: "carrier-pigeon", zt_api_token: zt.token }],
      ["put", `${A}/zerotier-config`, { zt_api_mode: "controller", zt_api_url: zt.url, zt_api_token: "abcdefgh\r\nX-Injected: 1" }],
    ];
    for (const [method, url, body] of cases) {
      const r = await app.http.request(method.toUpperCase(), url, { token: a.owner.token, body });
      expect(r.status, `${method} ${url} ${JSON.stringify(body)} → ${r.text}`).toBe(400);
      expect(r.body.success).toBe(false);
    }
  });
});

describe("a kill switch racing activations", () => {
  it("leaves no open activation and no authorized device, whatever the interleaving", async () => {
    const A = path(a.org.id);
    const racer = b.member; // a person of org B, invited into org A for this test
    await addMember(app, a.org.id, a.owner, racer, "member");
    const devices = await Promise.all(["bb00000001", "bb00000002", "bb00000003"].map((node_id) => app.http.post(`${A}/devices`, { node_id }, { token: racer.token })));
    const approval = (await app.http.post(`${A}/approvals`, { portal_network_id: ids.network, device_id: devices[0]!.body.data.device.id }, { token: racer.token })).body.data.approval.id;
    await app.http.post(`${A}/approvals/${approval}/approve`, {}, { token: a.admin.token });
    for (const d of devices.slice(1)) await app.http.post(`${A}/devices/${d.body.data.device.id}/join-network/${ids.network}`, {}, { token: racer.token });
    const memberships = (await app.http.get(`${A}/memberships`, { token: racer.token })).body.data.memberships.map((m: { id: string }) => m.id);
    expect(memberships).toHaveLength(3);

    const answers = await Promise.all([
      ...memberships.flatMap((id: string) => [0, 1, 2].map(() => app.http.post(`${A}/memberships/${id}/activate`, {}, { token: racer.token }))),
      app.http.post(`${A}/kill-switch`, { target_user_id: racer.id, reason: "race" }, { token: a.admin.token }),
      ...memberships.map((id: string) => app.http.post(`${A}/memberships/${id}/activate`, {}, { token: racer.token })),
    ]);
    expect(answers.filter((r) => r.status >= 500).map((r) => r.text)).toEqual([]);
    const after = (await app.http.get(`${A}/memberships`, { token: racer.token })).body.data.memberships;
    expect(after.every((m: { active_session: unknown; state: string }) => m.active_session === null && m.state === "suspended")).toBe(true);
    for (const node of ["bb00000001", "bb00000002", "bb00000003"]) expect((await zt.client.getMember(ids.nwid, node))?.authorized ?? false).toBe(false);
  });
});
