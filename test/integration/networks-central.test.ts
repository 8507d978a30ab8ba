import { createServer } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ControllerError, createControllerClient, type ClientOptions } from "../../src/modules/networks/controller/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startFakeZtCentral, type FakeZtCentral } from "../helpers/fake-zt-central.js";
import { orgWithRoles } from "../factories/orgs.js";
import type { TestUser } from "../factories/users.js";

/**
 * The controller adapter in ZeroTier Central mode (external-apis.md §6), against a local stand-in
 * of Central's documented API: shapes, auth, error mapping, retries through an injected sleep
 * (nothing here waits for a back-off), and the networks module end to end over REST with
 * ZEROTIER_CENTRAL_URL pointing at the stand-in.
 */
const TOKEN = "central-api-token-5f2b9c0d1e";
const LIMITED = "central-limited-token-77aa01";
const NW1 = "8056c2e21c000001";
const NW2 = "8056c2e21c000002";
const NOWHERE = "8056c2e21c0000ff";
const SEEN_AT = Date.UTC(2026, 0, 2, 3, 4, 5);

let central: FakeZtCentral;
let sleeps: number[];

beforeAll(async () => {
  central = await startFakeZtCentral();
  central.addToken(TOKEN);
  central.addToken(LIMITED, [NW1]);
  central.addNetwork(NW1, { name: "ops", description: "operations" });
  central.addNetwork(NW2, { name: "lab" });
  central.addMember(NW1, "aaaaaaaaa1", { name: "alice laptop", authorized: true, lastSeen: SEEN_AT, lastOnline: SEEN_AT, physicalAddress: "198.51.100.7", clientVersion: "1.14.1" });
  central.addMember(NW1, "aaaaaaaaa2", { lastSeen: 0, lastOnline: 0 });
  central.addMember(NW1, "aaaaaaaaa3", { lastSeen: 0, lastOnline: SEEN_AT });
});
afterAll(async () => {
  await central?.close();
});
beforeEach(() => {
  central.reset();
  sleeps = [];
});

const client = (options: ClientOptions = {}, token = TOKEN, baseUrl = central.url) =>
  createControllerClient({ mode: "central", baseUrl, token }, { sleep: async (ms) => void sleeps.push(ms), timeoutMs: 2000, ...options });

async function failure(p: Promise<unknown>): Promise<ControllerError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ControllerError);
  return e as ControllerError;
}
const calls = () => central.requests.map((r) => `${r.method} ${r.path}`);

describe("Central adapter: documented API", () => {
  it("test() checks the token with the documented `token` scheme and says no controller address", async () => {
    expect(await client().test()).toEqual({ address: null, version: "1.0.0-fake" });
    expect(calls()).toEqual(["GET /status", "GET /network"]);
    expect(central.requests.every((r) => r.authorization === `token ${TOKEN}`)).toBe(true);
  });

  it("the stand-in takes `token` and `bearer` in any case, and nothing else", async () => {
    const status = (authorization?: string, extra: Record<string, string> = {}) =>
      fetch(`${central.url}/network`, { headers: { ...(authorization ? { authorization } : {}), ...extra } }).then((r) => r.status);
    expect(await status(`token ${TOKEN}`)).toBe(200);
    expect(await status(`Token ${TOKEN}`)).toBe(200);
    expect(await status(`bearer ${TOKEN}`)).toBe(200);
    expect(await status(`Bearer ${TOKEN}`)).toBe(200);
    expect(await status(`Basic ${TOKEN}`)).toBe(401);
    expect(await status()).toBe(401);
    expect(await status(undefined, { "x-zt1-auth": TOKEN })).toBe(401);
    // /status answers anonymous callers (§6.2 lists 200 only): it cannot prove a token by itself.
    expect((await fetch(`${central.url}/status`)).status).toBe(200);
  });

  it("listNetworks reads the plain array, names from config.name, and only what the token may see", async () => {
    const all = await client().listNetworks();
    expect(all).toEqual([
      { id: NW1, name: "ops", description: "operations" },
      { id: NW2, name: "lab", description: null },
    ]);
    expect(calls()).toEqual(["GET /network"]);
    expect((await client({}, LIMITED).listNetworks()).map((n) => n.id)).toEqual([NW1]);
  });

  it("getNetwork maps one network, lowercases the id, and tells not_found from access denied", async () => {
    expect(await client().getNetwork(NW1.toUpperCase())).toEqual({ id: NW1, name: "ops", description: "operations" });
    expect(calls()).toEqual([`GET /network/${NW1}`]);

    const missing = await failure(client().getNetwork(NOWHERE));
    expect(missing).toMatchObject({ kind: "not_found", status: 404 });
    const denied = await failure(client({}, LIMITED).getNetwork(NW2));
    expect(denied).toMatchObject({ kind: "forbidden", status: 403 });
    // Neither is worth a retry.
    expect(sleeps).toEqual([]);

    const bad = await failure(client().getNetwork("not-a-network"));
    expect(bad.kind).toBe("bad_response");
  });

  it("listMembers maps the member array: node id, authorization, name, addresses, lastSeen (0 is never)", async () => {
    const members = await client().listMembers(NW1);
    expect(calls()).toEqual([`GET /network/${NW1}/member`]);
    const byNode = new Map(members.map((m) => [m.nodeId, m]));
    expect(byNode.get("aaaaaaaaa1")).toEqual({ networkId: NW1, nodeId: "aaaaaaaaa1", authorized: true, name: "alice laptop", ipAssignments: [], lastSeen: new Date(SEEN_AT) });
    expect(byNode.get("aaaaaaaaa2")).toMatchObject({ authorized: false, name: null, lastSeen: null });
    // lastSeen reset to 0 (ephemeral, §6.3) while lastOnline still says when.
    expect(byNode.get("aaaaaaaaa3")!.lastSeen).toEqual(new Date(SEEN_AT));

    expect(await failure(client().listMembers(NOWHERE))).toMatchObject({ kind: "not_found", status: 404 });
  });

  it("getMember maps one member and answers null for a node that never joined", async () => {
    expect(await client().getMember(NW1, "AAAAAAAAA1")).toMatchObject({ networkId: NW1, nodeId: "aaaaaaaaa1", authorized: true });
    expect(calls()).toEqual([`GET /network/${NW1}/member/aaaaaaaaa1`]);
    expect(await client().getMember(NW1, "bbbbbbbbb9")).toBeNull();
  });

  it("setAuthorized posts {config:{authorized}} (the documented body) and the member changes at Central", async () => {
    const node = "ccccccccc1";
    central.addMember(NW2, node);
    const before = { ...central.member(NW2, node)!.config };

    await client().setAuthorized(NW2, node, true);
    expect(central.requests).toHaveLength(1);
    expect(central.requests[0]).toMatchObject({ method: "POST", path: `/network/${NW2}/member/${node}`, authorization: `token ${TOKEN}`, body: { config: { authorized: true } }, status: 200 });
    const on = central.member(NW2, node)!;
    expect(on.config.authorized).toBe(true);
    expect(on.config.revision).toBe(before.revision + 1);
    expect(on.config.lastAuthorizedTime).toBeGreaterThan(0);
    expect((await client().getMember(NW2, node))!.authorized).toBe(true);

    await client().setAuthorized(NW2, node, false);
    expect(central.requests.at(-1)!.body).toEqual({ config: { authorized: false } });
    const off = central.member(NW2, node)!;
    expect(off.config.authorized).toBe(false);
    expect(off.config.lastDeauthorizedTime).toBeGreaterThanOrEqual(off.config.lastAuthorizedTime);
    expect(off.id).toBe(`${NW2}-${node}`);

    // Idempotent.
    await client().setAuthorized(NW2, node, false);
    expect(central.member(NW2, node)!.config.authorized).toBe(false);
  });

  it("setAuthorized of a node that never joined relies on Central creating the member ([UNCONFIRMED] in §6.4)", async () => {
    await client().setAuthorized(NW2, "ddddddddd1", true);
    expect(central.member(NW2, "ddddddddd1")).toMatchObject({ id: `${NW2}-ddddddddd1`, nodeId: "ddddddddd1", config: { authorized: true, id: "ddddddddd1" } });

    // Should Central not upsert, the adapter says so rather than pretending it worked.
    central.upsertMembers = false;
    expect(await failure(client().setAuthorized(NW2, "ddddddddd2", true))).toMatchObject({ kind: "not_found", status: 404 });
    expect(await failure(client().setAuthorized(NOWHERE, "ddddddddd2", true))).toMatchObject({ kind: "not_found" });
    expect(await failure(client({}, LIMITED).setAuthorized(NW2, "ddddddddd1", false))).toMatchObject({ kind: "forbidden", status: 403 });
    expect(central.member(NW2, "ddddddddd1")!.config.authorized).toBe(true);
  });
});

describe("Central adapter: error mapping", () => {
  it("a wrong token is 'unauthorized' at once, not retried", async () => {
    const e = await failure(client({}, "wrong-token-0000").listNetworks());
    expect(e).toMatchObject({ kind: "unauthorized", status: 401 });
    expect(central.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(await failure(client({}, "wrong-token-0000").test())).toMatchObject({ kind: "unauthorized" });
  });

  it("connection refused is 'unreachable' after the back-off retries", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const e = await failure(client({ maxRetries: 2, backoffMs: 50 }, TOKEN, `http://127.0.0.1:${port}`).listNetworks());
    expect(e).toMatchObject({ kind: "unreachable" });
    expect(e.message).toContain("connection failed");
    expect(sleeps).toEqual([50, 100]);
  });

  it("a connection closed before the answer is retried, then 'unreachable'", async () => {
    central.fail({ kind: "close" });
    expect((await client().listNetworks()).length).toBe(2);
    expect(sleeps).toEqual([200]);

    sleeps = [];
    central.fail({ kind: "close" }, 3);
    expect(await failure(client({ maxRetries: 2 }).listNetworks())).toMatchObject({ kind: "unreachable" });
    expect(sleeps).toEqual([200, 400]);
  });

  it("an answer that hangs past the timeout is 'unreachable' (timed out)", async () => {
    central.fail({ kind: "hang" }, 2);
    const e = await failure(client({ maxRetries: 1, timeoutMs: 150 }).getNetwork(NW1));
    expect(e).toMatchObject({ kind: "unreachable" });
    expect(e.message).toContain("timed out");
    expect(sleeps).toEqual([200]);
    expect(central.requests.filter((r) => r.fault === "hang")).toHaveLength(2);
  });

  it("malformed JSON is 'bad_response' and is not retried", async () => {
    central.fail({ kind: "malformed" });
    const e = await failure(client().getNetwork(NW1));
    expect(e).toMatchObject({ kind: "bad_response", status: 200 });
    expect(central.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it("a body cut off mid-answer is a controller failure (retried), never a raw error", async () => {
    central.fail({ kind: "truncate" });
    expect((await client().listMembers(NW1)).length).toBeGreaterThanOrEqual(3);
    expect(sleeps).toEqual([200]);

    sleeps = [];
    central.fail({ kind: "truncate" }, 2);
    expect(await failure(client({ maxRetries: 1 }).listMembers(NW1))).toMatchObject({ kind: "unreachable" });
  });

  it("a body that stalls past the timeout after the headers is 'unreachable', never a raw error", async () => {
    central.fail({ kind: "stall" }, 2);
    const e = await failure(client({ maxRetries: 1, timeoutMs: 150 }).listMembers(NW1));
    expect(e).toMatchObject({ kind: "unreachable" });
    expect(e.message).toContain("timed out");
    expect(sleeps).toEqual([200]);
  });
});

describe("Central adapter: retries", () => {
  it("429 with Retry-After is honoured through the injected sleep, then succeeds", async () => {
    central.fail({ kind: "rate_limit", retryAfter: 7 }, 2);
    expect((await client().listNetworks()).map((n) => n.id)).toEqual([NW1, NW2]);
    expect(sleeps).toEqual([7000, 7000]);
    expect(central.requests.map((r) => r.status)).toEqual([429, 429, 200]);
  });

  it("Retry-After is capped at a minute", async () => {
    central.fail({ kind: "rate_limit", retryAfter: 3600 });
    await client({ maxWaitMs: 120_000 }).listNetworks();
    expect(sleeps).toEqual([60_000]);
  });

  it("gives up rather than wait beyond the call's budget (20 s by default)", async () => {
    central.fail({ kind: "rate_limit", retryAfter: 30 }, 4);
    expect(await failure(client().listNetworks())).toMatchObject({ kind: "rate_limited", status: 429 });
    expect(sleeps).toEqual([]);
    central.reset();
    central.fail({ kind: "rate_limit", retryAfter: 8 }, 4);
    expect(await failure(client().listNetworks())).toMatchObject({ kind: "rate_limited" });
    expect(sleeps).toEqual([8000, 8000]);
  });

  it("429 without Retry-After waits for the documented X-Ratelimit-Reset (an HTTP date)", async () => {
    central.fail({ kind: "rate_limit", resetInSeconds: 30 });
    await client({ maxWaitMs: 120_000 }).listNetworks();
    expect(sleeps).toHaveLength(1);
    // The reset is a whole-second date 30 s after the current second.
    expect(sleeps[0]).toBeGreaterThan(28_000);
    expect(sleeps[0]).toBeLessThanOrEqual(30_000);
  });

  it("Central's per-second limit: exhausted retries are 'rate_limited' with status 429", async () => {
    central.rateLimit = 0;
    const e = await failure(client({ maxRetries: 2 }).listNetworks());
    expect(e).toMatchObject({ kind: "rate_limited", status: 429 });
    expect(central.requests.map((r) => r.status)).toEqual([429, 429, 429]);
    expect(sleeps).toHaveLength(2);
    for (const ms of sleeps) {
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThanOrEqual(1000);
    }
  });

  it("5xx is retried with exponential back-off, then succeeds", async () => {
    central.fail({ kind: "server_error", status: 502 });
    central.fail({ kind: "server_error", status: 503 });
    expect((await client({ backoffMs: 10 }).getNetwork(NW1)).name).toBe("ops");
    expect(sleeps).toEqual([10, 20]);
    expect(central.requests.map((r) => r.status)).toEqual([502, 503, 200]);
  });

  it("a retried POST lands once and leaves the member as asked", async () => {
    central.addMember(NW2, "eeeeeeeee1");
    central.fail({ kind: "server_error", status: 500 });
    await client().setAuthorized(NW2, "eeeeeeeee1", true);
    expect(central.requests.map((r) => [r.method, r.status])).toEqual([
      ["POST", 500],
      ["POST", 200],
    ]);
    expect(central.member(NW2, "eeeeeeeee1")!.config).toMatchObject({ authorized: true, revision: 2 });
  });

  it("exhausted 5xx retries are 'server_error' with the last status", async () => {
    central.fail({ kind: "server_error", status: 500 }, 4);
    const e = await failure(client().listMembers(NW1));
    expect(e).toMatchObject({ kind: "server_error", status: 500 });
    expect(central.requests).toHaveLength(4);
    expect(sleeps).toEqual([200, 400, 800]);
  });

  it("maxRetries 0 makes exactly one attempt", async () => {
    central.fail({ kind: "rate_limit", retryAfter: 1 });
    expect(await failure(client({ maxRetries: 0 }).listNetworks())).toMatchObject({ kind: "rate_limited" });
    expect(central.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });
});

describe("Central adapter: the token stays secret", () => {
  it("appears in no error's message, stack or serialization, whatever the failure", async () => {
    const errors: ControllerError[] = [];
    errors.push(await failure(client({}, `${TOKEN}-x`).listNetworks()));
    errors.push(await failure(client().getNetwork(NOWHERE)));
    central.fail({ kind: "malformed" });
    errors.push(await failure(client().listNetworks()));
    central.fail({ kind: "server_error" }, 4);
    errors.push(await failure(client().listNetworks()));
    central.fail({ kind: "rate_limit", retryAfter: 1 }, 4);
    errors.push(await failure(client().listNetworks()));
    central.fail({ kind: "hang" });
    errors.push(await failure(client({ maxRetries: 0, timeoutMs: 100 }).listNetworks()));
    errors.push(await failure(client({ maxRetries: 0 }, TOKEN, "http://127.0.0.1:1").listNetworks()));
    expect(errors.map((e) => e.kind)).toEqual(["unauthorized", "not_found", "bad_response", "server_error", "rate_limited", "unreachable", "unreachable"]);
    for (const e of errors) {
      for (const text of [e.message, String(e.stack), JSON.stringify(e), String(e)]) expect(text).not.toContain(TOKEN);
    }
  });
});

// --- the networks module, end to end over REST, in Central mode ---------------------------------

describe("networks module in Central mode (REST, ZEROTIER_CENTRAL_URL → the stand-in)", () => {
  const E2E_TOKEN = "e2e-central-token-9a8b7c6d5e";
  const NW_A = "8056c2e21c0000a1";
  const NW_B = "8056c2e21c0000b2";
  let app: TestApp;
  let org: { id: string };
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  const O = () => `/api/v1/organizations/${org.id}`;

  beforeAll(async () => {
    central.addToken(E2E_TOKEN, [NW_A, NW_B]);
    central.addNetwork(NW_A, { name: "prod-vpn", description: "production access" });
    central.addNetwork(NW_B, { name: "staging-vpn" });
    // Retries off: nothing below should need one, and the app's sleep is a real one.
    app = await startTestApp({ ZEROTIER_CENTRAL_URL: central.url, NETWORK_CONTROLLER_RETRIES: "0" });
    ({ org, owner, admin, member } = await orgWithRoles(app));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  const connect = (token: string, extra: Record<string, unknown> = {}) =>
    app.http.request("PUT", `${O()}/zerotier-config`, { token: owner.token, body: { zt_api_mode: "central", zt_api_token: token, ...extra } });

  it("configures Central only after a live test, at the configured Central URL, and never shows the token", async () => {
    const wrong = await connect("not-the-central-token");
    expect(wrong.status).toBe(502);
    expect(wrong.body.error.type).toBe("CONTROLLER_UNAUTHORIZED");
    expect(wrong.text).not.toContain("not-the-central-token");
    expect((await app.http.get(`${O()}/zerotier-config`, { token: owner.token })).body.data.config.configured).toBe(false);

    central.requests.length = 0;
    // A URL given in Central mode is not followed: Central's address is the operator's setting.
    const ok = await connect(E2E_TOKEN, { zt_api_url: "http://10.1.2.3:9993" });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data.config).toMatchObject({ configured: true, zt_api_mode: "central", zt_api_url: central.url, controller_address: null });
    expect(ok.text).not.toContain(E2E_TOKEN);
    expect(calls()).toEqual(["GET /status", "GET /network"]);
    expect(central.requests.every((r) => r.authorization === `token ${E2E_TOKEN}`)).toBe(true);
    expect((await app.http.get(`${O()}/zerotier-config`, { token: admin.token })).text).not.toContain(E2E_TOKEN);
  });

  it("lists Central's networks and imports them under their Central names", async () => {
    const available = await app.http.get(`${O()}/zerotier/available-networks`, { token: admin.token });
    expect(available.status, available.text).toBe(200);
    expect(available.body.data.networks.map((n: { id: string }) => n.id).sort()).toEqual([NW_A, NW_B]);

    const imported = await app.http.post(`${O()}/zerotier/import-networks`, { zerotier_network_ids: [NW_A] }, { token: admin.token });
    expect(imported.status, imported.text).toBe(201);
    expect(imported.body.data.networks[0]).toMatchObject({ name: "prod-vpn", description: "production access", zerotier_network_id: NW_A });
    const after = await app.http.get(`${O()}/zerotier/available-networks`, { token: admin.token });
    expect(after.body.data.networks.map((n: { id: string }) => n.id)).toEqual([NW_B]);

    // A network the token cannot see at Central is refused (403 there).
    const hidden = await app.http.post(`${O()}/networks`, { name: "not ours", zerotier_network_id: NW1 }, { token: admin.token });
    expect(hidden.status).toBe(502);
    expect(hidden.body.error.type).toBe("CONTROLLER_FORBIDDEN");
  });

  it("activation authorizes the device's member at Central, deactivation and reconciliation take it off", async () => {
    const networks = (await app.http.get(`${O()}/networks`, { token: admin.token })).body.data.networks;
    const network = networks.find((n: { zerotier_network_id: string }) => n.zerotier_network_id === NW_A);
    const nodeId = "f00dfeed01";
    const device = await app.http.post(`${O()}/devices`, { node_id: nodeId, nickname: "work laptop", hostname: "wl.local" }, { token: member.token });
    expect(device.status, device.text).toBe(201);
    const asked = await app.http.post(`${O()}/approvals`, { portal_network_id: network.id, device_id: device.body.data.device.id, justification: "on call" }, { token: member.token });
    expect(asked.status, asked.text).toBe(201);
    // As the original API and the document say: `{requests, count}` (found by the fuzz: documented as approvals).
    const pending = await app.http.get(`${O()}/networks/${network.id}/requests`, { token: admin.token });
    expect(pending.body.data.requests.map((r: { id: string }) => r.id)).toEqual([asked.body.data.approval.id]);
    expect((await app.http.post(`${O()}/approvals/${asked.body.data.approval.id}/approve`, {}, { token: admin.token })).status).toBe(200);
    const membership = (await app.http.get(`${O()}/memberships`, { token: member.token })).body.data.memberships.find((m: { node_id: string }) => m.node_id === nodeId);
    expect(membership.state).toBe("approved_inactive");
    expect(central.member(NW_A, nodeId)?.config.authorized ?? false).toBe(false);

    central.requests.length = 0;
    const on = await app.http.post(`${O()}/memberships/${membership.id}/activate`, { lifetime_minutes: 30 }, { token: member.token });
    expect(on.status, on.text).toBe(200);
    expect(on.body.data).toMatchObject({ controller_synced: true, membership: { state: "active_authorized", currently_authorized: true } });
    expect(central.member(NW_A, nodeId)!.config.authorized).toBe(true);
    expect(central.requests.filter((r) => r.method === "POST")).toEqual([
      expect.objectContaining({ path: `/network/${NW_A}/member/${nodeId}`, body: { config: { authorized: true } }, authorization: `token ${E2E_TOKEN}`, status: 200 }),
    ]);

    const off = await app.http.post(`${O()}/memberships/${membership.id}/deactivate`, {}, { token: member.token });
    expect(off.status, off.text).toBe(200);
    expect(central.member(NW_A, nodeId)!.config.authorized).toBe(false);

    // Authorized at Central behind Keyward's back: the reconciliation pass reads the member array and takes it off.
    central.addMember(NW_A, "f00dfeed99", { authorized: true, lastSeen: SEEN_AT });
    const report = await app.http.post(`${O()}/networks/reconcile`, {}, { token: admin.token });
    expect(report.status, report.text).toBe(200);
    expect(report.body.data.errors).toEqual([]);
    expect(central.member(NW_A, "f00dfeed99")!.config.authorized).toBe(false);
    expect(central.member(NW_A, nodeId)!.config.authorized).toBe(false);
  });
});
