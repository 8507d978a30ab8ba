import { isObjectType } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGraphqlSchema } from "../../src/graphql/schema.js";
import { ControllerMode, DeviceStatus, KillSwitchScope, NetworkEnvironment, NetworkRequestMode } from "../../src/graphql/networks/networks.enums.js";
import { controllerConfigSchema, environments, killSwitchSchema, requestModes, updateDeviceSchema } from "../../src/modules/networks/networks.schemas.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startZeroTierController, type RealController } from "../helpers/zerotier.js";
import { addMember, newOrg, orgWithRoles } from "../factories/orgs.js";
import { newSuperadmin, newUser, type TestUser } from "../factories/users.js";

/**
 * Governed network access through GraphQL against a REAL ZeroTier controller: the same services
 * as REST (test/integration/networks.test.ts), so the same outcomes and the same codes; roles and
 * tenancy hold; malformed input is a coded 4xx, never an internal error.
 */
let app: TestApp;
let zt: RealController;
let a: Awaited<ReturnType<typeof orgWithRoles>>;
let b: Awaited<ReturnType<typeof orgWithRoles>>;
let manager: TestUser;
let outsider: TestUser;
let nodeSeq = 0x10;
const newNode = () => `d00d00${(nodeSeq++).toString(16).padStart(4, "0")}`;

beforeAll(async () => {
  zt = await startZeroTierController();
  app = await startTestApp({ ZEROTIER_CONTROLLER_URLS: zt.url, RATE_LIMIT_ENABLED: "false" });
  a = await orgWithRoles(app);
  b = await orgWithRoles(app);
  manager = await newUser(app, { fullName: "Named Manager" });
  await addMember(app, a.org.id, a.owner, manager, "member");
  outsider = await newUser(app);
  await newOrg(app, outsider);
}, 90_000);
afterAll(async () => {
  await app?.close();
  await zt?.stop();
});

const gql = (user: TestUser, query: string, variables: Record<string, unknown> = {}) => app.http.gql(query, { o: a.org.id, ...variables }, { token: user.token });
/** The data of a call that must succeed. */
async function ok(user: TestUser, query: string, variables: Record<string, unknown> = {}) {
  const res = await gql(user, query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data;
}
/** The code and status of a call that must fail. */
async function fails(user: TestUser, query: string, variables: Record<string, unknown> = {}) {
  const res = await gql(user, query, variables);
  expect(res.errors, `${query} succeeded`).toBeDefined();
  const { code, status } = res.errors[0].extensions;
  return { code, status, message: res.errors[0].message as string, data: res.data };
}

const MEMBERSHIP = "id state nodeId deviceNickname deviceDisplayName ownerName ownerEmail networkName currentlyAuthorized portalNetworkId activeSession { id minutesLeft expiresAt }";
const CONFIGURE = "mutation($o: ID!, $i: NetworkControllerInput!) { configureNetworkController(orgId: $o, input: $i) { configured ztApiMode ztApiUrl controllerAddress } }";
const CREATE = "mutation($o: ID!, $i: CreatePortalNetworkInput!) { createPortalNetwork(orgId: $o, input: $i) { id name zerotierNetworkId requestMode defaultActivationLifetimeMinutes maxActivationLifetimeMinutes } }";
const REGISTER = "mutation($o: ID!, $i: RegisterDeviceInput!) { registerDevice(orgId: $o, input: $i) { device { id nodeId displayName } membershipsCreated } }";
const REQUEST = "mutation($o: ID!, $i: RequestNetworkAccessInput!) { requestNetworkAccess(orgId: $o, input: $i) { id state } }";
const APPROVE = "mutation($o: ID!, $id: ID!, $r: String) { approveNetworkAccess(orgId: $o, approvalId: $id, reason: $r) { id state decisionReason } }";
const MEMBERSHIPS = `query($o: ID!) { myNetworkMemberships(orgId: $o) { ${MEMBERSHIP} } }`;
const ACTIVATE = `mutation($o: ID!, $m: ID!, $min: Int) { activateNetworkMembership(orgId: $o, membershipId: $m, lifetimeMinutes: $min) { controllerSynced session { id minutesLeft isActive } membership { ${MEMBERSHIP} } } }`;
const DEACTIVATE = `mutation($o: ID!, $m: ID!) { deactivateNetworkMembership(orgId: $o, membershipId: $m) { ${MEMBERSHIP} } }`;
const KILL = "mutation($o: ID!, $i: KillSwitchInput!) { triggerKillSwitch(orgId: $o, input: $i) { controllerSynced event { id scope reason sessionsEnded } } }";
const RECONCILE = "mutation($o: ID!) { reconcileNetworks(orgId: $o) { networksProcessed changes expired controllerCalls errors { networkId zerotierNetworkId error } } }";

const authorizedAtController = async (nwid: string, nodeId: string) => (await zt.client.getMember(nwid, nodeId))?.authorized ?? false;

/** A portal network (approval_required unless said) on a fresh controller network, created through GraphQL. */
async function portalNetwork(input: Record<string, unknown> = {}) {
  const nwid = await zt.client.createNetwork!(`kw-gql-${Math.random().toString(36).slice(2, 8)}`);
  const { createPortalNetwork } = await ok(a.admin, CREATE, { i: { name: `net ${nwid}`, zerotierNetworkId: nwid, ...input } });
  return { id: createPortalNetwork.id as string, nwid };
}

/** A device of `user`, requested, approved by an admin and ready to activate. */
async function approvedDevice(user: TestUser, network: { id: string }) {
  const nodeId = newNode();
  const { registerDevice } = await ok(user, REGISTER, { i: { nodeId, nickname: `laptop ${nodeId.slice(-4)}`, hostname: "dev.local" } });
  const { requestNetworkAccess } = await ok(user, REQUEST, { i: { portalNetworkId: network.id, deviceId: registerDevice.device.id, justification: "on call" } });
  expect(requestNetworkAccess.state).toBe("pending");
  await ok(a.admin, APPROVE, { id: requestNetworkAccess.id });
  const membership = (await ok(user, MEMBERSHIPS)).myNetworkMemberships.find((m: { nodeId: string; portalNetworkId: string }) => m.nodeId === nodeId && m.portalNetworkId === network.id);
  expect(membership.state).toBe("approved_inactive");
  return { nodeId, deviceId: registerDevice.device.id as string, membershipId: membership.id as string, approvalId: requestNetworkAccess.id as string };
}

describe("the schema", () => {
  it("returns no controller token from any type, and its enums are the services' sets", async () => {
    const schema = await buildGraphqlSchema({} as never);
    const leaky = Object.values(schema.getTypeMap())
      .filter(isObjectType)
      .flatMap((t) => Object.keys(t.getFields()).filter((f) => /token|secret/i.test(f) && /Network|Controller|Device|KillSwitch|Activation|Reconcile/.test(t.name)).map((f) => `${t.name}.${f}`));
    expect(leaky).toEqual([]);
    expect(Object.values(ControllerMode).sort()).toEqual([...controllerConfigSchema.shape.ztApiMode.options].sort());
    expect(Object.values(NetworkEnvironment).sort()).toEqual([...environments].sort());
    expect(Object.values(NetworkRequestMode).sort()).toEqual([...requestModes].sort());
    expect(Object.values(DeviceStatus).sort()).toEqual([...updateDeviceSchema.shape.status.unwrap().options].sort());
    expect(Object.values(KillSwitchScope).sort()).toEqual([...killSwitchSchema.shape.scope.unwrap().options].sort());
  });
});

describe("controller connection", () => {
  it("is saved only after a live test, never returns the token, and refuses hosts the operator did not allow", async () => {
    const wrong = await fails(a.owner, CONFIGURE, { i: { ztApiMode: "controller", ztApiUrl: zt.url, ztApiToken: "not-the-token-at-all" } });
    expect(wrong).toMatchObject({ code: "CONTROLLER_UNAUTHORIZED", status: 502 });
    const elsewhere = await fails(a.owner, CONFIGURE, { i: { ztApiMode: "controller", ztApiUrl: "http://10.1.2.3:9993", ztApiToken: zt.token } });
    expect(elsewhere).toMatchObject({ code: "CONTROLLER_URL_NOT_ALLOWED", status: 403 });
    expect(await fails(a.member, CONFIGURE, { i: { ztApiMode: "controller", ztApiUrl: zt.url, ztApiToken: zt.token } })).toMatchObject({ code: "AUTHORIZATION_ERROR", status: 403 });

    const saved = await gql(a.owner, CONFIGURE, { i: { ztApiMode: "controller", ztApiUrl: zt.url, ztApiToken: zt.token } });
    expect(saved.data.configureNetworkController).toMatchObject({ configured: true, ztApiMode: "controller", controllerAddress: zt.address });
    expect(JSON.stringify(saved)).not.toContain(zt.token);
    const read = await gql(a.admin, "query($o: ID!) { networkControllerConfig(orgId: $o) { configured ztApiMode ztApiUrl controllerAddress lastCheckedAt updatedAt } }");
    expect(read.data.networkControllerConfig).toMatchObject({ configured: true, ztApiUrl: zt.url });
    expect(JSON.stringify(read)).not.toContain(zt.token);
  });

  it("is removed by an admin of its own organization only", async () => {
    const B = { o: b.org.id };
    await ok(b.owner, CONFIGURE, { ...B, i: { ztApiMode: "controller", ztApiUrl: zt.url, ztApiToken: zt.token } });
    const REMOVE = "mutation($o: ID!) { removeNetworkController(orgId: $o) { message } }";
    expect(await fails(b.member, REMOVE, B)).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    expect(await fails(a.admin, REMOVE, B)).toMatchObject({ code: "ORG_NOT_FOUND", status: 404 });
    expect((await ok(b.admin, REMOVE, B)).removeNetworkController.message).toBe("Controller disconnected");
    expect((await ok(b.admin, "query($o: ID!) { networkControllerConfig(orgId: $o) { configured } }", B)).networkControllerConfig.configured).toBe(false);
    expect(await fails(b.admin, REMOVE, B)).toMatchObject({ code: "CONTROLLER_NOT_CONFIGURED", status: 409 });
  });

  it("imports the controller's networks and refuses an id the controller does not know or one already imported", async () => {
    const nwid = await zt.client.createNetwork!("imported-by-gql");
    const { availableControllerNetworks } = await ok(a.admin, "query($o: ID!) { availableControllerNetworks(orgId: $o) { id name description } }");
    expect(availableControllerNetworks).toContainEqual({ id: nwid, name: "imported-by-gql", description: null });
    const { importControllerNetworks } = await ok(a.admin, "mutation($o: ID!, $ids: [String!]!) { importControllerNetworks(orgId: $o, zerotierNetworkIds: $ids) { name zerotierNetworkId requestMode environment defaultActivationLifetimeMinutes } }", { ids: [nwid] });
    expect(importControllerNetworks).toEqual([{ name: "imported-by-gql", zerotierNetworkId: nwid, requestMode: "approval_required", environment: "production", defaultActivationLifetimeMinutes: 480 }]);
    expect(await fails(a.admin, CREATE, { i: { name: "dup", zerotierNetworkId: nwid } })).toMatchObject({ code: "NETWORK_ALREADY_IMPORTED", status: 409 });
    expect(await fails(a.admin, CREATE, { i: { name: "ghost", zerotierNetworkId: `${zt.address}abcdef` } })).toMatchObject({ code: "CONTROLLER_NOT_FOUND", status: 404 });
  });
});

describe("request → approve → activate", () => {
  it("authorizes the device only while the activation runs, with names and time left everywhere it is listed", async () => {
    const network = await portalNetwork({ maxActivationLifetimeMinutes: 600 });
    const { nodeId, deviceId, membershipId } = await approvedDevice(a.member, network);
    expect(await authorizedAtController(network.nwid, nodeId)).toBe(false);

    expect(await fails(a.member, ACTIVATE, { m: membershipId, min: 601 })).toMatchObject({ code: "LIFETIME_TOO_LONG", status: 400 });
    const on = (await ok(a.member, ACTIVATE, { m: membershipId, min: 30 })).activateNetworkMembership;
    expect(on).toMatchObject({ controllerSynced: true, session: { minutesLeft: 30, isActive: true }, membership: { state: "active_authorized", currentlyAuthorized: true } });
    expect(await authorizedAtController(network.nwid, nodeId)).toBe(true);

    // Ten minutes later: the time left has gone down in every listing.
    app.clock.advance(10 * 60);
    const mine = (await ok(a.member, MEMBERSHIPS)).myNetworkMemberships.find((m: { id: string }) => m.id === membershipId);
    expect(mine).toMatchObject({ deviceNickname: `laptop ${nodeId.slice(-4)}`, deviceDisplayName: `laptop ${nodeId.slice(-4)}`, networkName: `net ${network.nwid}`, activeSession: { minutesLeft: 20 } });
    const { myDevices } = await ok(a.member, "query($o: ID!) { myDevices(orgId: $o) { id displayName activeMembershipCount } }");
    expect(myDevices.find((d: { id: string }) => d.id === deviceId)).toMatchObject({ displayName: `laptop ${nodeId.slice(-4)}`, activeMembershipCount: 1 });
    const { device } = await ok(a.member, `query($o: ID!, $d: ID!) { device(orgId: $o, deviceId: $d) { nodeId hostname memberships { ${MEMBERSHIP} } } }`, { d: deviceId });
    expect(device).toMatchObject({ nodeId, hostname: "dev.local", memberships: [{ id: membershipId, activeSession: { minutesLeft: 20 } }] });

    const named = { nodeId, ownerEmail: a.member.email, ownerName: "Member", deviceNickname: `laptop ${nodeId.slice(-4)}`, activeSession: expect.objectContaining({ minutesLeft: 20 }) };
    expect((await ok(a.admin, `query($o: ID!, $n: ID!) { portalNetworkMembers(orgId: $o, networkId: $n) { ${MEMBERSHIP} } }`, { n: network.id })).portalNetworkMembers).toEqual([expect.objectContaining(named)]);
    expect((await ok(a.admin, `query($o: ID!) { organizationNetworkMemberships(orgId: $o) { ${MEMBERSHIP} } }`)).organizationNetworkMemberships).toContainEqual(expect.objectContaining(named));
    const SESSIONS = "query($o: ID!) { networkSessions(orgId: $o) { id userId nodeId ownerEmail networkName minutesLeft } }";
    expect((await ok(a.admin, SESSIONS)).networkSessions).toContainEqual(expect.objectContaining({ id: on.session.id, ownerEmail: a.member.email, networkName: `net ${network.nwid}`, minutesLeft: 20 }));
    expect((await ok(manager, SESSIONS)).networkSessions).toEqual([]);

    const off = (await ok(a.member, DEACTIVATE, { m: membershipId })).deactivateNetworkMembership;
    expect(off).toMatchObject({ currentlyAuthorized: false, activeSession: null });
    expect(await authorizedAtController(network.nwid, nodeId)).toBe(false);
  });

  it("lets named managers decide, admins assign on invite-only networks, and people leave, end and revoke", async () => {
    const network = await portalNetwork({ requestMode: "invite_only" });
    expect(await fails(a.member, REQUEST, { i: { portalNetworkId: network.id } })).toMatchObject({ code: "INVITE_ONLY", status: 403 });
    const ASSIGN = "mutation($o: ID!, $i: AssignNetworkAccessInput!) { assignNetworkAccess(orgId: $o, input: $i) { id state grantType } }";
    expect(await fails(manager, ASSIGN, { i: { targetUserId: a.member.id, portalNetworkId: network.id } })).toMatchObject({ code: "AUTHORIZATION_ERROR" });

    const MANAGERS = "mutation($o: ID!, $n: ID!, $u: [ID!]!) { setPortalNetworkManagers(orgId: $o, networkId: $n, userIds: $u) { userId email fullName } }";
    expect(await fails(a.member, MANAGERS, { n: network.id, u: [manager.id] })).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    expect((await ok(a.admin, MANAGERS, { n: network.id, u: [manager.id] })).setPortalNetworkManagers).toEqual([{ userId: manager.id, email: manager.email, fullName: "Named Manager" }]);
    expect((await ok(a.member, "query($o: ID!, $n: ID!) { portalNetworkManagers(orgId: $o, networkId: $n) { userId } }", { n: network.id })).portalNetworkManagers).toEqual([{ userId: manager.id }]);
    const assigned = (await ok(manager, ASSIGN, { i: { targetUserId: a.member.id, portalNetworkId: network.id, justification: "project" } })).assignNetworkAccess;
    expect(assigned).toMatchObject({ state: "approved", grantType: "assigned" });

    // A device put on the network starts approved; activate-all switches it on.
    const { registerDevice } = await ok(a.member, REGISTER, { i: { nodeId: newNode() } });
    const joined = (await ok(a.member, `mutation($o: ID!, $d: ID!, $n: ID!) { joinNetwork(orgId: $o, deviceId: $d, networkId: $n) { ${MEMBERSHIP} } }`, { d: registerDevice.device.id, n: network.id })).joinNetwork;
    expect(joined).toMatchObject({ state: "approved_inactive", deviceDisplayName: registerDevice.device.nodeId });
    const all = (await ok(a.member, "mutation($o: ID!) { activateAllNetworkMemberships(orgId: $o, lifetimeMinutes: 15) { controllerSynced sessions { id deviceNetworkMembershipId minutesLeft } } }")).activateAllNetworkMemberships;
    const session = all.sessions.find((s: { deviceNetworkMembershipId: string }) => s.deviceNetworkMembershipId === joined.id);
    expect(session.minutesLeft).toBe(15);
    expect(await authorizedAtController(network.nwid, registerDevice.device.nodeId)).toBe(true);
    expect((await ok(a.member, "mutation($o: ID!, $s: ID!) { endNetworkSession(orgId: $o, sessionId: $s) { message } }", { s: session.id })).endNetworkSession.message).toBe("Activation ended");
    expect(await authorizedAtController(network.nwid, registerDevice.device.nodeId)).toBe(false);

    // The named manager sees the network's members; revoking takes the person off it.
    expect((await ok(manager, `query($o: ID!, $n: ID!) { portalNetworkMembers(orgId: $o, networkId: $n) { id } }`, { n: network.id })).portalNetworkMembers).toEqual([{ id: joined.id }]);
    const REVOKE = "mutation($o: ID!, $id: ID!, $r: String) { revokeNetworkAccess(orgId: $o, approvalId: $id, reason: $r) { state decisionReason } }";
    expect((await ok(manager, REVOKE, { id: assigned.id, r: "project over" })).revokeNetworkAccess).toEqual({ state: "revoked", decisionReason: "project over" });
    expect((await ok(a.member, "query($o: ID!) { myNetworkApprovals(orgId: $o) { id state } }")).myNetworkApprovals).toContainEqual({ id: assigned.id, state: "revoked" });
    expect(await fails(manager, REVOKE, { id: assigned.id })).toMatchObject({ code: "INVALID_STATE", status: 409 });

    // Rejection, leaving, an admin's removal, a device's deletion.
    const open = await portalNetwork();
    const asked = (await ok(manager, REQUEST, { i: { portalNetworkId: open.id, justification: "curious" } })).requestNetworkAccess;
    const { pendingNetworkApprovals } = await ok(a.admin, "query($o: ID!, $n: ID) { pendingNetworkApprovals(orgId: $o, networkId: $n) { id userEmail userName networkName justification } }", { n: open.id });
    expect(pendingNetworkApprovals).toEqual([{ id: asked.id, userEmail: manager.email, userName: "Named Manager", networkName: `net ${open.nwid}`, justification: "curious" }]);
    expect((await ok(a.admin, "query($o: ID!, $n: ID!) { portalNetworkRequests(orgId: $o, networkId: $n) { id } }", { n: open.id })).portalNetworkRequests).toEqual([{ id: asked.id }]);
    expect((await ok(a.admin, "mutation($o: ID!, $id: ID!) { rejectNetworkAccess(orgId: $o, approvalId: $id, reason: \"no\") { state } }", { id: asked.id })).rejectNetworkAccess.state).toBe("rejected");
    const d = await approvedDevice(a.member, open);
    expect((await ok(a.member, "mutation($o: ID!, $m: ID!) { leaveNetwork(orgId: $o, membershipId: $m) { message } }", { m: d.membershipId })).leaveNetwork.message).toBe("Membership removed");
    const { joinNetwork } = await ok(a.member, "mutation($o: ID!, $d: ID!, $n: ID!) { joinNetwork(orgId: $o, deviceId: $d, networkId: $n) { id } }", { d: d.deviceId, n: open.id });
    expect(await fails(a.member, "mutation($o: ID!, $m: ID!) { removeNetworkMembership(orgId: $o, membershipId: $m) { message } }", { m: joinNetwork.id })).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    await ok(a.admin, "mutation($o: ID!, $m: ID!) { removeNetworkMembership(orgId: $o, membershipId: $m) { message } }", { m: joinNetwork.id });
    const renamed = (await ok(a.member, "mutation($o: ID!, $d: ID!, $i: UpdateDeviceInput!) { updateDevice(orgId: $o, deviceId: $d, input: $i) { deviceNickname displayName status } }", { d: d.deviceId, i: { nickname: "work phone" } })).updateDevice;
    expect(renamed).toMatchObject({ deviceNickname: "work phone", displayName: "work phone", status: "active" });
    await ok(a.member, "mutation($o: ID!, $d: ID!) { deleteDevice(orgId: $o, deviceId: $d) { message } }", { d: d.deviceId });
    expect(await fails(a.member, "query($o: ID!, $d: ID!) { device(orgId: $o, deviceId: $d) { id } }", { d: d.deviceId })).toMatchObject({ code: "DEVICE_NOT_FOUND", status: 404 });
  });

  it("changes, lists and deletes portal networks, and imports a network's controller members as people's devices", async () => {
    const network = await portalNetwork();
    const imported = newNode();
    await zt.client.setAuthorized(network.nwid, imported, true);
    const IMPORT = "mutation($o: ID!, $i: ImportNetworkMembersInput!) { importNetworkMembers(orgId: $o, input: $i) { imported skipped { nodeId reason } } }";
    const unknown = newNode();
    const result = (await ok(a.admin, IMPORT, { i: { portalNetworkId: network.id, assignments: [{ nodeId: imported, email: a.member.email, nickname: "imported box" }, { nodeId: unknown, email: a.member.email }] } })).importNetworkMembers;
    expect(result).toEqual({ imported: 1, skipped: [{ nodeId: unknown, reason: "not a member at the controller" }] });
    // Authorized at the controller today: it keeps access for one default lifetime.
    const row = (await ok(a.member, MEMBERSHIPS)).myNetworkMemberships.find((m: { nodeId: string }) => m.nodeId === imported);
    expect(row).toMatchObject({ state: "active_authorized", deviceNickname: "imported box", activeSession: { minutesLeft: 480 } });

    const UPDATE = "mutation($o: ID!, $n: ID!, $i: UpdatePortalNetworkInput!) { updatePortalNetwork(orgId: $o, networkId: $n, input: $i) { name environment requestMode maxActivationLifetimeMinutes isActive } }";
    expect((await ok(a.admin, UPDATE, { n: network.id, i: { name: "renamed", environment: "lab", requestMode: "open", maxActivationLifetimeMinutes: 900 } })).updatePortalNetwork).toEqual({ name: "renamed", environment: "lab", requestMode: "open", maxActivationLifetimeMinutes: 900, isActive: true });
    expect((await ok(a.admin, UPDATE, { n: network.id, i: { isActive: false } })).updatePortalNetwork.isActive).toBe(false);
    const LIST = "query($o: ID!, $all: Boolean) { portalNetworks(orgId: $o, includeInactive: $all) { id } }";
    expect((await ok(a.member, LIST)).portalNetworks).not.toContainEqual({ id: network.id });
    expect((await ok(a.member, LIST, { all: false })).portalNetworks).not.toContainEqual({ id: network.id });
    expect((await ok(a.member, LIST, { all: true })).portalNetworks).toContainEqual({ id: network.id });
    expect((await ok(a.member, "query($o: ID!, $n: ID!) { portalNetwork(orgId: $o, networkId: $n) { name isActive } }", { n: network.id })).portalNetwork).toEqual({ name: "renamed", isActive: false });
    expect(await authorizedAtController(network.nwid, imported)).toBe(false);

    expect((await ok(a.admin, "mutation($o: ID!, $n: ID!) { deletePortalNetwork(orgId: $o, networkId: $n) { message } }", { n: network.id })).deletePortalNetwork.message).toBe("Network deleted");
    expect(await fails(a.member, "query($o: ID!, $n: ID!) { portalNetwork(orgId: $o, networkId: $n) { id } }", { n: network.id })).toMatchObject({ code: "NETWORK_NOT_FOUND", status: 404 });
  });
});

describe("kill switch and reconciliation", () => {
  it("cuts a person off on every network in scope, blocks re-activation until lifted, and only below the caller's role", async () => {
    const one = await portalNetwork();
    const two = await portalNetwork();
    const d1 = await approvedDevice(a.member, one);
    const d2 = await approvedDevice(a.member, two);
    await ok(a.member, ACTIVATE, { m: d1.membershipId });
    await ok(a.member, ACTIVATE, { m: d2.membershipId });

    expect(await fails(a.member, KILL, { i: { targetUserId: manager.id } })).toMatchObject({ code: "AUTHORIZATION_ERROR", status: 403 });
    expect(await fails(a.admin, KILL, { i: { targetUserId: a.owner.id } })).toMatchObject({ code: "AUTHORIZATION_ERROR", status: 403 });
    expect(await fails(a.admin, KILL, { i: { targetUserId: a.member.id, scope: "global" } })).toMatchObject({ code: "AUTHORIZATION_ERROR", status: 403 });

    const fired = (await ok(a.admin, KILL, { i: { targetUserId: a.member.id, reason: "laptop stolen" } })).triggerKillSwitch;
    expect(fired).toMatchObject({ controllerSynced: true, event: { scope: "organization", reason: "laptop stolen" } });
    expect(fired.event.sessionsEnded).toBeGreaterThanOrEqual(2);
    expect(await authorizedAtController(one.nwid, d1.nodeId)).toBe(false);
    expect(await authorizedAtController(two.nwid, d2.nodeId)).toBe(false);
    expect(await fails(a.member, ACTIVATE, { m: d1.membershipId })).toMatchObject({ code: "ACCESS_SUSPENDED", status: 403 });

    const EVENTS = "query($o: ID!) { killSwitchEvents(orgId: $o) { id targetUserId targetEmail targetName liftedAt } }";
    expect(await fails(a.member, EVENTS)).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    expect((await ok(a.admin, EVENTS)).killSwitchEvents[0]).toMatchObject({ id: fired.event.id, targetEmail: a.member.email, targetName: "Member", liftedAt: null });
    const LIFT = "mutation($o: ID!, $e: ID!) { liftKillSwitch(orgId: $o, eventId: $e) { id liftedAt liftedByUserId } }";
    expect(await fails(a.member, LIFT, { e: fired.event.id })).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    expect((await ok(a.admin, LIFT, { e: fired.event.id })).liftKillSwitch).toMatchObject({ id: fired.event.id, liftedByUserId: a.admin.id, liftedAt: expect.any(String) });
    expect((await ok(a.member, ACTIVATE, { m: d1.membershipId })).activateNetworkMembership.controllerSynced).toBe(true);
    expect(await authorizedAtController(one.nwid, d1.nodeId)).toBe(true);
  });

  it("reconciles on demand: strays come off, missing authorizations come back, superadmins reconcile everything", async () => {
    const network = await portalNetwork();
    const { nodeId, membershipId } = await approvedDevice(a.member, network);
    await ok(a.member, ACTIVATE, { m: membershipId, min: 60 });
    const stray = newNode();
    await zt.client.setAuthorized(network.nwid, stray, true);
    await zt.client.setAuthorized(network.nwid, nodeId, false);

    expect(await fails(a.member, RECONCILE)).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    const report = (await ok(a.admin, RECONCILE)).reconcileNetworks;
    expect(report.errors).toEqual([]);
    expect(report.changes).toBeGreaterThanOrEqual(2);
    expect(report.networksProcessed).toBeGreaterThanOrEqual(1);
    expect(await authorizedAtController(network.nwid, stray)).toBe(false);
    expect(await authorizedAtController(network.nwid, nodeId)).toBe(true);

    const ALL = "mutation { reconcileAllNetworks { networksProcessed changes errors { error } } }";
    expect(await fails(a.owner, ALL)).toMatchObject({ code: "AUTHORIZATION_ERROR", status: 403 });
    await zt.client.setAuthorized(network.nwid, stray, true);
    const everything = (await ok(await newSuperadmin(app), ALL)).reconcileAllNetworks;
    expect(everything.changes).toBeGreaterThanOrEqual(1);
    expect(await authorizedAtController(network.nwid, stray)).toBe(false);
  });
});

describe("roles and tenancy", () => {
  let ids: { network: string; nwid: string; nodeId: string; device: string; membership: string; approval: string; session: string; event: string };
  beforeAll(async () => {
    const network = await portalNetwork();
    const d = await approvedDevice(a.member, network);
    const session = (await ok(a.member, ACTIVATE, { m: d.membershipId })).activateNetworkMembership.session.id;
    const event = (await ok(a.admin, KILL, { i: { targetUserId: a.guest.id, reason: "tenancy" } })).triggerKillSwitch.event.id;
    ids = { network: network.id, nwid: network.nwid, nodeId: d.nodeId, device: d.deviceId, membership: d.membershipId, approval: d.approvalId, session, event };
  }, 60_000);

  /** Every networks operation that takes an id, called with this organization's ids. */
  const byId = () => [
    ["query($o: ID!, $x: ID!) { portalNetwork(orgId: $o, networkId: $x) { name } }", ids.network],
    ["mutation($o: ID!, $x: ID!) { updatePortalNetwork(orgId: $o, networkId: $x, input: { name: \"mine\" }) { name } }", ids.network],
    ["mutation($o: ID!, $x: ID!) { deletePortalNetwork(orgId: $o, networkId: $x) { message } }", ids.network],
    ["query($o: ID!, $x: ID!) { portalNetworkMembers(orgId: $o, networkId: $x) { ownerEmail } }", ids.network],
    ["query($o: ID!, $x: ID!) { portalNetworkRequests(orgId: $o, networkId: $x) { userEmail } }", ids.network],
    ["query($o: ID!, $x: ID!) { portalNetworkManagers(orgId: $o, networkId: $x) { email } }", ids.network],
    ["mutation($o: ID!, $x: ID!) { setPortalNetworkManagers(orgId: $o, networkId: $x, userIds: []) { email } }", ids.network],
    ["query($o: ID!, $x: ID) { pendingNetworkApprovals(orgId: $o, networkId: $x) { userEmail } }", ids.network],
    ["mutation($o: ID!, $x: ID!) { requestNetworkAccess(orgId: $o, input: { portalNetworkId: $x }) { id } }", ids.network],
    ["mutation($o: ID!, $x: ID!) { importNetworkMembers(orgId: $o, input: { portalNetworkId: $x, assignments: [{ nodeId: \"d00d00ffff\", email: \"x@example.com\" }] }) { imported } }", ids.network],
    ["query($o: ID!, $x: ID!) { device(orgId: $o, deviceId: $x) { nodeId } }", ids.device],
    ["mutation($o: ID!, $x: ID!) { updateDevice(orgId: $o, deviceId: $x, input: { status: inactive }) { id } }", ids.device],
    ["mutation($o: ID!, $x: ID!) { deleteDevice(orgId: $o, deviceId: $x) { message } }", ids.device],
    [`mutation($o: ID!, $x: ID!) { joinNetwork(orgId: $o, deviceId: $x, networkId: "${ids.network}") { id } }`, ids.device],
    ["mutation($o: ID!, $x: ID!) { activateNetworkMembership(orgId: $o, membershipId: $x) { controllerSynced } }", ids.membership],
    ["mutation($o: ID!, $x: ID!) { deactivateNetworkMembership(orgId: $o, membershipId: $x) { id } }", ids.membership],
    ["mutation($o: ID!, $x: ID!) { leaveNetwork(orgId: $o, membershipId: $x) { message } }", ids.membership],
    ["mutation($o: ID!, $x: ID!) { removeNetworkMembership(orgId: $o, membershipId: $x) { message } }", ids.membership],
    ["mutation($o: ID!, $x: ID!) { approveNetworkAccess(orgId: $o, approvalId: $x) { state } }", ids.approval],
    ["mutation($o: ID!, $x: ID!) { rejectNetworkAccess(orgId: $o, approvalId: $x) { state } }", ids.approval],
    ["mutation($o: ID!, $x: ID!) { revokeNetworkAccess(orgId: $o, approvalId: $x) { state } }", ids.approval],
    ["mutation($o: ID!, $x: ID!) { endNetworkSession(orgId: $o, sessionId: $x) { message } }", ids.session],
    ["mutation($o: ID!, $x: ID!) { liftKillSwitch(orgId: $o, eventId: $x) { liftedAt } }", ids.event],
    [`mutation($o: ID!, $x: ID!) { assignNetworkAccess(orgId: $o, input: { targetUserId: "${a.member.id}", portalNetworkId: $x }) { id } }`, ids.network],
    ["mutation($o: ID!, $x: ID!) { triggerKillSwitch(orgId: $o, input: { targetUserId: $x }) { event { id } } }", a.member.id],
  ] as const;

  /** Nothing the calls above could have changed did change. */
  async function untouched() {
    const mine = (await ok(a.member, MEMBERSHIPS)).myNetworkMemberships.find((m: { id: string }) => m.id === ids.membership);
    expect(mine).toMatchObject({ state: "active_authorized", activeSession: { id: ids.session } });
    expect(await authorizedAtController(ids.nwid, ids.nodeId)).toBe(true);
    expect((await ok(a.member, "query($o: ID!, $x: ID!) { portalNetwork(orgId: $o, networkId: $x) { name } }", { x: ids.network })).portalNetwork.name).toBe(`net ${ids.nwid}`);
    expect((await ok(a.admin, "query($o: ID!) { killSwitchEvents(orgId: $o) { id liftedAt } }")).killSwitchEvents).toContainEqual({ id: ids.event, liftedAt: null });
  }

  it("another organization's admin finds none of these ids through their own organization, and is no member of this one", async () => {
    const leaks: string[] = [];
    for (const [query, x] of byId()) {
      const res = await gql(b.admin, query, { o: b.org.id, x });
      const e = res.errors?.[0];
      if (!e || e.extensions.status !== 404 || res.data?.[Object.keys(res.data ?? {})[0] ?? ""]) leaks.push(`${query.slice(0, 60)} → ${JSON.stringify(res).slice(0, 200)}`);
      if (JSON.stringify(res).includes(a.member.email) || JSON.stringify(res).includes(ids.nwid)) leaks.push(`${query.slice(0, 60)} names org A's data`);
      const direct = await gql(b.admin, query, { x });
      if (direct.errors?.[0]?.extensions.code !== "ORG_NOT_FOUND") leaks.push(`${query.slice(0, 60)} through org A → ${direct.errors?.[0]?.extensions.code}`);
    }
    expect(leaks).toEqual([]);
    // Their own listings hold nothing of this organization either.
    const B = { o: b.org.id };
    const lists = await Promise.all([
      ok(b.admin, "query($o: ID!) { portalNetworks(orgId: $o, includeInactive: true) { id } }", B),
      ok(b.admin, `query($o: ID!) { organizationNetworkMemberships(orgId: $o) { id } }`, B),
      ok(b.admin, "query($o: ID!) { networkSessions(orgId: $o) { id } }", B),
      ok(b.admin, "query($o: ID!) { pendingNetworkApprovals(orgId: $o) { id } }", B),
      ok(b.admin, "query($o: ID!) { killSwitchEvents(orgId: $o) { id } }", B),
    ]);
    for (const list of lists) expect(Object.values(list)[0]).toEqual([]);
    await untouched();
  });

  it("refuses outsiders and guests everything, plain members the admin operations, and keeps people's things their own", async () => {
    const refused: string[] = [];
    for (const [query, x] of byId()) {
      const outsiderCode = (await gql(outsider, query, { x })).errors?.[0]?.extensions.code;
      if (outsiderCode !== "ORG_NOT_FOUND") refused.push(`outsider ${query.slice(0, 60)} → ${outsiderCode}`);
      const guestCode = (await gql(a.guest, query, { x })).errors?.[0]?.extensions.code;
      if (guestCode !== "AUTHORIZATION_ERROR") refused.push(`guest ${query.slice(0, 60)} → ${guestCode}`);
    }
    expect(refused).toEqual([]);

    const notForPlainMembers = [
      "query($o: ID!) { networkControllerConfig(orgId: $o) { configured } }",
      "query($o: ID!) { availableControllerNetworks(orgId: $o) { id } }",
      "mutation($o: ID!) { importControllerNetworks(orgId: $o, zerotierNetworkIds: [\"0000000000000000\"]) { id } }",
      "mutation($o: ID!) { removeNetworkController(orgId: $o) { message } }",
      "mutation($o: ID!) { createPortalNetwork(orgId: $o, input: { name: \"n\", zerotierNetworkId: \"0000000000000000\" }) { id } }",
      `mutation($o: ID!) { updatePortalNetwork(orgId: $o, networkId: "${ids.network}", input: { isActive: false }) { id } }`,
      `mutation($o: ID!) { deletePortalNetwork(orgId: $o, networkId: "${ids.network}") { message } }`,
      `mutation($o: ID!) { setPortalNetworkManagers(orgId: $o, networkId: "${ids.network}", userIds: ["${a.member.id}"]) { userId } }`,
      `mutation($o: ID!) { importNetworkMembers(orgId: $o, input: { portalNetworkId: "${ids.network}", assignments: [{ nodeId: "${ids.nodeId}", email: "${a.member.email}" }] }) { imported } }`,
      "query($o: ID!) { organizationNetworkMemberships(orgId: $o) { id } }",
      `mutation($o: ID!) { removeNetworkMembership(orgId: $o, membershipId: "${ids.membership}") { message } }`,
      "mutation($o: ID!) { reconcileNetworks(orgId: $o) { changes } }",
      `mutation($o: ID!) { triggerKillSwitch(orgId: $o, input: { targetUserId: "${a.guest.id}" }) { event { id } } }`,
      "query($o: ID!) { killSwitchEvents(orgId: $o) { id } }",
      `mutation($o: ID!) { liftKillSwitch(orgId: $o, eventId: "${ids.event}") { id } }`,
      `query($o: ID!) { portalNetworkMembers(orgId: $o, networkId: "${ids.network}") { id } }`,
      `query($o: ID!) { portalNetworkRequests(orgId: $o, networkId: "${ids.network}") { id } }`,
      `mutation($o: ID!) { assignNetworkAccess(orgId: $o, input: { targetUserId: "${manager.id}", portalNetworkId: "${ids.network}" }) { id } }`,
    ];
    for (const query of notForPlainMembers) expect(await fails(manager, query), query).toMatchObject({ code: "AUTHORIZATION_ERROR", status: 403 });

    // Another member's device, membership and activation do not exist for a plain member; their own request is not theirs to decide.
    expect(await fails(manager, "query($o: ID!, $x: ID!) { device(orgId: $o, deviceId: $x) { id } }", { x: ids.device })).toMatchObject({ code: "DEVICE_NOT_FOUND", status: 404 });
    expect(await fails(manager, ACTIVATE, { m: ids.membership })).toMatchObject({ code: "MEMBERSHIP_NOT_FOUND", status: 404 });
    expect(await fails(manager, DEACTIVATE, { m: ids.membership })).toMatchObject({ code: "MEMBERSHIP_NOT_FOUND", status: 404 });
    expect(await fails(manager, "mutation($o: ID!, $x: ID!) { endNetworkSession(orgId: $o, sessionId: $x) { message } }", { x: ids.session })).toMatchObject({ code: "SESSION_NOT_FOUND", status: 404 });
    expect(await fails(manager, APPROVE, { id: ids.approval })).toMatchObject({ code: "APPROVAL_NOT_FOUND", status: 404 });
    const network = await portalNetwork();
    const own = (await ok(manager, REQUEST, { i: { portalNetworkId: network.id } })).requestNetworkAccess;
    expect(await fails(manager, APPROVE, { id: own.id })).toMatchObject({ code: "AUTHORIZATION_ERROR", status: 403 });
    await untouched();
  });
});

describe("malformed input", () => {
  it("answers bad hex ids, lifetimes, huge strings and bad ids with coded 4xx errors, the same as REST", async () => {
    const network = await portalNetwork();
    const d = await approvedDevice(a.member, network);
    const huge = "x".repeat(10_000);
    const cases: Array<[TestUser, string, Record<string, unknown>, string]> = [
      [a.member, REGISTER, { i: { nodeId: "xyz" } }, "VALIDATION_ERROR"],
      [a.member, REGISTER, { i: { nodeId: "d00d0000011" } }, "VALIDATION_ERROR"],
      [a.member, REGISTER, { i: { nodeId: "g00d000001" } }, "VALIDATION_ERROR"],
      [a.member, REGISTER, { i: { nodeId: huge } }, "VALIDATION_ERROR"],
      [a.member, REGISTER, { i: { nodeId: newNode(), nickname: huge } }, "VALIDATION_ERROR"],
      [a.member, REGISTER, { i: { nodeId: newNode(), hostname: "nul\u0000byte" } }, "VALIDATION_ERROR"],
      [a.admin, CREATE, { i: { name: "n", zerotierNetworkId: "123" } }, "VALIDATION_ERROR"],
      [a.admin, CREATE, { i: { name: "n", zerotierNetworkId: `${network.nwid}0` } }, "VALIDATION_ERROR"],
      [a.admin, CREATE, { i: { name: "", zerotierNetworkId: network.nwid } }, "VALIDATION_ERROR"],
      [a.admin, CREATE, { i: { name: huge, zerotierNetworkId: network.nwid } }, "VALIDATION_ERROR"],
      [a.admin, CREATE, { i: { name: "n", zerotierNetworkId: network.nwid, description: huge } }, "VALIDATION_ERROR"],
      [a.admin, CREATE, { i: { name: "n", zerotierNetworkId: network.nwid, defaultActivationLifetimeMinutes: 600, maxActivationLifetimeMinutes: 60 } }, "VALIDATION_ERROR"],
      [a.admin, CREATE, { i: { name: "n", zerotierNetworkId: network.nwid, defaultActivationLifetimeMinutes: -1 } }, "VALIDATION_ERROR"],
      [a.admin, CREATE, { i: { name: "n", zerotierNetworkId: network.nwid, requestMode: "whenever" } }, "BAD_USER_INPUT"],
      [a.member, ACTIVATE, { m: d.membershipId, min: -5 }, "VALIDATION_ERROR"],
      [a.member, ACTIVATE, { m: d.membershipId, min: 0 }, "VALIDATION_ERROR"],
      [a.member, ACTIVATE, { m: d.membershipId, min: 2_000_000 }, "VALIDATION_ERROR"],
      [a.member, ACTIVATE, { m: d.membershipId, min: 1e12 }, "BAD_USER_INPUT"],
      [a.member, ACTIVATE, { m: d.membershipId, min: 1.5 }, "BAD_USER_INPUT"],
      [a.member, "mutation($o: ID!) { activateAllNetworkMemberships(orgId: $o, lifetimeMinutes: -1) { controllerSynced } }", {}, "VALIDATION_ERROR"],
      [a.member, ACTIVATE, { m: "not-a-uuid" }, "MEMBERSHIP_NOT_FOUND"],
      [a.member, ACTIVATE, { m: huge }, "MEMBERSHIP_NOT_FOUND"],
      [a.member, "query($o: ID!, $x: ID!) { device(orgId: $o, deviceId: $x) { id } }", { x: "../../etc" }, "DEVICE_NOT_FOUND"],
      [a.member, "query($o: ID!, $x: ID!) { portalNetwork(orgId: $o, networkId: $x) { id } }", { x: "1 or 1=1" }, "NETWORK_NOT_FOUND"],
      [a.member, "query($o: ID!, $x: ID) { pendingNetworkApprovals(orgId: $o, networkId: $x) { id } }", { x: "nope" }, "VALIDATION_ERROR"],
      [a.member, REQUEST, { i: { portalNetworkId: network.id, justification: huge } }, "VALIDATION_ERROR"],
      [a.member, REQUEST, { i: { portalNetworkId: "not-a-uuid" } }, "VALIDATION_ERROR"],
      [a.admin, APPROVE, { id: d.approvalId, r: huge }, "VALIDATION_ERROR"],
      [a.admin, KILL, { i: { targetUserId: a.member.id, scope: "selected_networks" } }, "VALIDATION_ERROR"],
      [a.admin, KILL, { i: { targetUserId: "not-a-uuid" } }, "VALIDATION_ERROR"],
      [a.admin, KILL, { i: { targetUserId: a.member.id, reason: huge } }, "VALIDATION_ERROR"],
      [a.admin, KILL, { i: { targetUserId: a.member.id, scope: "everyone" } }, "BAD_USER_INPUT"],
      [a.admin, "mutation($o: ID!, $ids: [String!]!) { importControllerNetworks(orgId: $o, zerotierNetworkIds: $ids) { id } }", { ids: ["zz"] }, "VALIDATION_ERROR"],
      [a.admin, "mutation($o: ID!, $ids: [String!]!) { importControllerNetworks(orgId: $o, zerotierNetworkIds: $ids) { id } }", { ids: [] }, "VALIDATION_ERROR"],
      [a.admin, "mutation($o: ID!, $ids: [String!]!) { importControllerNetworks(orgId: $o, zerotierNetworkIds: $ids) { id } }", { ids: Array.from({ length: 101 }, () => network.nwid) }, "VALIDATION_ERROR"],
      [a.admin, "mutation($o: ID!, $n: ID!, $u: [ID!]!) { setPortalNetworkManagers(orgId: $o, networkId: $n, userIds: $u) { userId } }", { n: network.id, u: ["not-a-uuid"] }, "VALIDATION_ERROR"],
      [a.admin, "mutation($o: ID!, $n: ID!, $u: [ID!]!) { setPortalNetworkManagers(orgId: $o, networkId: $n, userIds: $u) { userId } }", { n: network.id, u: [outsider.id] }, "BAD_REQUEST"],
      [a.admin, "mutation($o: ID!, $n: ID!, $i: UpdatePortalNetworkInput!) { updatePortalNetwork(orgId: $o, networkId: $n, input: $i) { id } }", { n: network.id, i: { defaultActivationLifetimeMinutes: 900, maxActivationLifetimeMinutes: 60 } }, "BAD_REQUEST"],
      [a.admin, "mutation($o: ID!, $n: ID!, $i: UpdatePortalNetworkInput!) { updatePortalNetwork(orgId: $o, networkId: $n, input: $i) { id } }", { n: network.id, i: { name: null } }, "VALIDATION_ERROR"],
      [a.admin, "mutation($o: ID!, $i: ImportNetworkMembersInput!) { importNetworkMembers(orgId: $o, input: $i) { imported } }", { i: { portalNetworkId: network.id, assignments: [{ nodeId: "xyz", email: "not an email" }] } }, "VALIDATION_ERROR"],
      [a.admin, "mutation($o: ID!, $i: ImportNetworkMembersInput!) { importNetworkMembers(orgId: $o, input: $i) { imported } }", { i: { portalNetworkId: network.id, assignments: [] } }, "VALIDATION_ERROR"],
      [a.owner, CONFIGURE, { i: { ztApiMode: "controller", ztApiToken: zt.token } }, "VALIDATION_ERROR"],
      [a.owner, CONFIGURE, { i: { ztApiMode: "controller", ztApiToken: zt.token, ztApiUrl: "file:///etc/passwd" } }, "VALIDATION_ERROR"],
      [a.owner, CONFIGURE, { i: { ztApiMode: "controller", ztApiToken: "short", ztApiUrl: zt.url } }, "VALIDATION_ERROR"],
      [a.owner, CONFIGURE, { i: { ztApiMode: "carrier_pigeon", ztApiToken: zt.token } }, "BAD_USER_INPUT"],
    ];
    const wrong: string[] = [];
    for (const [user, query, variables, expected] of cases) {
      const res = await gql(user, query, variables);
      const ext = res.errors?.[0]?.extensions;
      if (ext?.code !== expected || !(ext.status >= 400 && ext.status < 500)) wrong.push(`${query.slice(9, 60)} ${JSON.stringify(variables).slice(0, 80)} → ${JSON.stringify(ext)}`);
    }
    expect(wrong).toEqual([]);
    // Nothing was half-done by the refusals: the membership is as it was.
    expect((await ok(a.member, MEMBERSHIPS)).myNetworkMemberships.find((m: { id: string }) => m.id === d.membershipId)).toMatchObject({ state: "approved_inactive", activeSession: null });

    // The same mistakes through REST answer the same code and status.
    const O = `/api/v1/organizations/${a.org.id}`;
    const pairs: Array<[TestUser, string, string, unknown, string, Record<string, unknown>]> = [
      [a.member, "POST", `${O}/devices`, { node_id: "xyz" }, REGISTER, { i: { nodeId: "xyz" } }],
      [a.member, "POST", `${O}/memberships/${d.membershipId}/activate`, { lifetime_minutes: -5 }, ACTIVATE, { m: d.membershipId, min: -5 }],
      [a.admin, "POST", `${O}/kill-switch`, { target_user_id: a.member.id, scope: "selected_networks" }, KILL, { i: { targetUserId: a.member.id, scope: "selected_networks" } }],
      [a.admin, "POST", `${O}/networks`, { name: "n", zerotier_network_id: "123" }, CREATE, { i: { name: "n", zerotierNetworkId: "123" } }],
      [a.member, "POST", `${O}/memberships/not-a-uuid/activate`, {}, ACTIVATE, { m: "not-a-uuid" }],
      [a.owner, "PUT", `${O}/zerotier-config`, { zt_api_mode: "controller", zt_api_token: zt.token }, CONFIGURE, { i: { ztApiMode: "controller", ztApiToken: zt.token } }],
    ];
    for (const [user, method, path, body, query, variables] of pairs) {
      const rest = await app.http.request(method, path, { token: user.token, body });
      const viaGql = (await gql(user, query, variables)).errors[0].extensions;
      expect({ code: viaGql.code, status: viaGql.status }, path).toEqual({ code: rest.body.error.type, status: rest.status });
    }
  });
});
