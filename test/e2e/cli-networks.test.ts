import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { buildCli, cliUser, loginWithLoopback, runCli, type CliUser } from "../helpers/cli.js";
import { startFakeZtCentral, type FakeZtCentral } from "../helpers/fake-zt-central.js";
import { orgWithRoles } from "../factories/orgs.js";
import type { TestUser } from "../factories/users.js";

/**
 * `keyward networks` against Keyward with a controller (the local stand-in of ZeroTier Central):
 * the member's devices and access with time left, and switching access on and off, by name and
 * with --all (activate-all), through the delegated token's networks:activate scope.
 */
const TOKEN = "cli-central-token-0c1d2e3f4a";
const NW = "8056c2e21c0000c1";
const NODE = "c0ffee0001";
let central: FakeZtCentral;
let app: TestApp;
let org: { id: string; name: string };
let member: TestUser;
let u: CliUser;

beforeAll(async () => {
  buildCli();
  central = await startFakeZtCentral();
  central.addToken(TOKEN, [NW]);
  central.addNetwork(NW, { name: "prod-vpn" });
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false", ZEROTIER_CENTRAL_URL: central.url, NETWORK_CONTROLLER_RETRIES: "0" });
  const roles = await orgWithRoles(app);
  ({ org, member } = roles);
  const O = `/api/v1/organizations/${org.id}`;
  const must = async (p: Promise<{ status: number; text: string; body: any }>) => {
    const r = await p;
    if (r.status >= 300) throw new Error(`${r.status} ${r.text}`);
    return r.body.data;
  };
  await must(app.http.put(`${O}/zerotier-config`, { zt_api_mode: "central", zt_api_token: TOKEN }, { token: roles.owner.token }));
  const [network] = (await must(app.http.post(`${O}/zerotier/import-networks`, { zerotier_network_ids: [NW] }, { token: roles.admin.token }))).networks;
  const { device } = await must(app.http.post(`${O}/devices`, { node_id: NODE, nickname: "work laptop" }, { token: member.token }));
  const { approval } = await must(app.http.post(`${O}/approvals`, { portal_network_id: network.id, device_id: device.id, justification: "on call" }, { token: member.token }));
  await must(app.http.post(`${O}/approvals/${approval.id}/approve`, {}, { token: roles.admin.token }));
  u = cliUser(app.url);
  const login = await loginWithLoopback(app.url, member, u);
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await central?.close();
});

const membership = async () => {
  const out = await runCli(["networks", "--json"], u);
  expect(out.code, out.stderr).toBe(0);
  const mine = JSON.parse(out.stdout).organizations.find((o: { org: { id: string } }) => o.org.id === org.id);
  return { devices: mine.devices, m: mine.memberships[0] };
};

describe("keyward networks", () => {
  it("lists devices and access, switches access on for a bounded time and off again", async () => {
    const before = await membership();
    expect(before.devices).toEqual([expect.objectContaining({ node_id: NODE, display_name: "work laptop" })]);
    expect(before.m).toMatchObject({ network_name: "prod-vpn", approved_for_activation: true, active_session: null });

    const on = await runCli(["networks", "activate", "prod-vpn", "--minutes", "30"], u);
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toContain("prod-vpn on work laptop: active for 30m");
    expect(central.member(NW, NODE)!.config.authorized).toBe(true);
    const listed = await runCli(["networks"], u);
    expect(listed.stdout).toMatch(/prod-vpn on work laptop: active, (30m|29m \d+s) left/);

    const off = await runCli(["networks", "deactivate", "--all", "--json"], u);
    expect(off.code, off.stderr).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ count: 1, deactivations: [{ network: "prod-vpn", deactivated: true }] });
    expect(central.member(NW, NODE)!.config.authorized).toBe(false);
    expect((await membership()).m.active_session).toBeNull();

    const all = await runCli(["networks", "activate", "--all", "--org-id", org.id, "--json"], u);
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ count: 1, activations: [{ network: "prod-vpn", activated: true }] });
    expect((await membership()).m.active_session).not.toBeNull();
  }, 60_000);

  it("says which argument is missing, and what does not exist", async () => {
    const none = await runCli(["networks", "activate"], u);
    expect(none.code).toBe(2);
    expect(none.stderr.trim()).toBe("error: Name a network (or membership id), or pass --all");
    const unknown = await runCli(["networks", "deactivate", "no-such-net"], u);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("No network access matches no-such-net");
  });
});
