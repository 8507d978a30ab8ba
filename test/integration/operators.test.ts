import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { auditRows } from "../helpers/db.js";
import { startFakeZtCentral, type FakeZtCentral } from "../helpers/fake-zt-central.js";
import { orgWithRoles, newOrg, addMember } from "../factories/orgs.js";
import { newSuperadmin, newUser, type TestUser } from "../factories/users.js";

/**
 * What only Keyward's operators (superadmins) do, through GraphQL and REST alike: make and unmake
 * operators (never themselves), list every organization with its member count and owners, list
 * deleted accounts to restore them, name accounts and organizations by id, and the global kill
 * switch (one person cut off every network of every organization, until an operator lifts it). A
 * plain user and an organization's owner or admin are refused all of it. The reads behind the
 * operators' screens make the same number of statements for a page of 3 rows and of 30.
 */
const TOKEN = "operators-central-token-0123456789";
const NET_A = "8056c2e21c00a0a1";
const NET_B = "8056c2e21c00b0b1";

let central: FakeZtCentral;
let app: TestApp;
let root: TestUser;
let a: Awaited<ReturnType<typeof orgWithRoles>>;
let counting = false;
let statements: string[] = [];

beforeAll(async () => {
  central = await startFakeZtCentral();
  central.addToken(TOKEN);
  central.addNetwork(NET_A, { name: "Office A" });
  central.addNetwork(NET_B, { name: "Office B" });
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false", MAX_ORGS_PER_USER: "50", ZEROTIER_CENTRAL_URL: central.url, NETWORK_CONTROLLER_RETRIES: "0" }, { onStatement: (sql) => counting && statements.push(sql) });
  root = await newSuperadmin(app);
  a = await orgWithRoles(app);
}, 120_000);
afterAll(async () => {
  await app?.close();
  await central?.close();
});

const gql = (user: TestUser, query: string, variables: Record<string, unknown> = {}) => app.http.gql(query, variables, { token: user.token });
async function ok(user: TestUser, query: string, variables: Record<string, unknown> = {}) {
  const res = await gql(user, query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data;
}
async function fails(user: TestUser, query: string, variables: Record<string, unknown> = {}) {
  const res = await gql(user, query, variables);
  expect(res.errors, `${query} succeeded`).toBeDefined();
  return { code: res.errors[0].extensions.code as string, message: res.errors[0].message as string };
}
/** The statements one GraphQL request makes (after a first one has filled the caches). */
async function statementsFor(query: string, variables: Record<string, unknown>): Promise<number> {
  await ok(root, query, variables);
  statements = [];
  counting = true;
  try {
    await ok(root, query, variables);
  } finally {
    counting = false;
  }
  return statements.length;
}

const PROMOTE = "mutation($u: ID!) { promoteUser(userId: $u) { id isSuperadmin } }";
const DEMOTE = "mutation($u: ID!) { demoteUser(userId: $u) { id isSuperadmin } }";

describe("making and unmaking operators", () => {
  it("is for superadmins only: a plain user, an organization's owner and admin are refused", async () => {
    const target = await newUser(app);
    for (const who of [a.member, a.admin, a.owner]) {
      expect(await fails(who, PROMOTE, { u: target.id })).toMatchObject({ code: "AUTHORIZATION_ERROR" });
      expect(await fails(who, DEMOTE, { u: root.id })).toMatchObject({ code: "AUTHORIZATION_ERROR" });
      expect((await app.http.post(`/api/v1/superadmin/users/${target.id}/promote`, {}, { token: who.token })).status).toBe(403);
    }
    expect((await app.http.gql(PROMOTE, { u: target.id })).errors[0].extensions.code).toBe("AUTH_REQUIRED");
    expect((await app.http.get(`/api/v1/admin/users/${target.id}`, { token: root.token })).body.data.user.is_superadmin).toBe(false);
  });

  it("promotes an active, verified account, audited, and its operator power works at once; demotes it again", async () => {
    const target = await newUser(app, { fullName: "New Operator" });
    expect(await fails(target, "{ emailOutbox { count } }")).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    expect((await ok(root, PROMOTE, { u: target.id })).promoteUser).toEqual({ id: target.id, isSuperadmin: true });
    expect((await ok(target, "{ emailOutbox { count } }")).emailOutbox.count).toBeGreaterThanOrEqual(0);
    expect(await fails(root, PROMOTE, { u: target.id })).toMatchObject({ code: "ALREADY_SUPERADMIN" });

    expect((await ok(root, DEMOTE, { u: target.id })).demoteUser).toEqual({ id: target.id, isSuperadmin: false });
    // The demoted session loses operator power with the next request.
    expect(await fails(target, "{ emailOutbox { count } }")).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    expect(await fails(root, DEMOTE, { u: target.id })).toMatchObject({ code: "NOT_SUPERADMIN" });

    const actions = (await auditRows(app, target.id)).filter((r) => r.action.startsWith("user.superadmin"));
    expect(actions.map((r) => [r.action, r.actor_id])).toEqual([
      ["user.superadmin.granted", root.id],
      ["user.superadmin.revoked", root.id],
    ]);
  });

  it("refuses a superadmin's own role, an unverified address, a suspended account and an unknown one", async () => {
    expect(await fails(root, DEMOTE, { u: root.id })).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("another superadmin") });
    expect(await fails(root, PROMOTE, { u: root.id })).toMatchObject({ code: "BAD_REQUEST" });
    const unverified = await newUser(app, { verify: false });
    expect(await fails(root, PROMOTE, { u: unverified.id })).toMatchObject({ code: "EMAIL_UNVERIFIED" });
    const suspended = await newUser(app);
    await ok(root, "mutation($u: ID!) { suspendUser(userId: $u) { status } }", { u: suspended.id });
    expect(await fails(root, PROMOTE, { u: suspended.id })).toMatchObject({ code: "ACCOUNT_NOT_ACTIVE" });
    expect(await fails(root, PROMOTE, { u: "8b0e9a38-0000-4000-8000-000000000000" })).toMatchObject({ code: "USER_NOT_FOUND" });
    expect(await fails(root, PROMOTE, { u: "not-an-id" })).toMatchObject({ code: "USER_NOT_FOUND" });
  });

  it("answers the same through REST", async () => {
    const target = await newUser(app);
    const promoted = await app.http.post(`/api/v1/superadmin/users/${target.id}/promote`, {}, { token: root.token });
    expect(promoted.status, promoted.text).toBe(200);
    expect(promoted.body.data.user).toMatchObject({ id: target.id, is_superadmin: true });
    expect((await app.http.post(`/api/v1/superadmin/users/${target.id}/promote`, {}, { token: root.token })).body.error.type).toBe("ALREADY_SUPERADMIN");
    const self = await app.http.post(`/api/v1/superadmin/users/${root.id}/demote`, {}, { token: root.token });
    expect([self.status, self.body.error.type]).toEqual([400, "BAD_REQUEST"]);
    const demoted = await app.http.post(`/api/v1/superadmin/users/${target.id}/demote`, {}, { token: root.token });
    expect(demoted.body.data.user.is_superadmin).toBe(false);
  });
});

describe("accounts for operators", () => {
  const SEARCH = "query($q: String, $show: String, $page: Int, $perPage: Int) { adminUsers(q: $q, show: $show, page: $page, perPage: $perPage) { count items { id email isSuperadmin status organizations { id name role } } } }";

  it("lists deleted accounts to superadmins only, to restore them; filters operators and suspended accounts", async () => {
    const gone = await newUser(app, { fullName: "Gone Person" });
    await ok(root, "mutation($u: ID!) { deleteUser(userId: $u, confirm: true) { message } }", { u: gone.id });
    const deleted = (await ok(root, SEARCH, { q: gone.email, show: "deleted" })).adminUsers;
    expect(deleted).toMatchObject({ count: 1, items: [{ id: gone.id }] });
    expect((await ok(root, SEARCH, { q: gone.email })).adminUsers.count).toBe(0);
    expect(await fails(a.owner, SEARCH, { show: "deleted" })).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    expect(await fails(root, SEARCH, { show: "everyone" })).toMatchObject({ code: "VALIDATION_ERROR" });
    await ok(root, "mutation($u: ID!) { restoreUser(userId: $u) { id } }", { u: gone.id });
    expect((await ok(root, SEARCH, { q: gone.email, show: "deleted" })).adminUsers.count).toBe(0);

    const operators = (await ok(root, SEARCH, { show: "superadmins", perPage: 200 })).adminUsers.items;
    expect(operators.every((u: { isSuperadmin: boolean }) => u.isSuperadmin)).toBe(true);
    expect(operators.map((u: { id: string }) => u.id)).toContain(root.id);
    expect((await ok(root, SEARCH, { show: "suspended", perPage: 200 })).adminUsers.items.every((u: { status: string }) => u.status === "suspended")).toBe(true);
    const rest = await app.http.get("/api/v1/superadmin/users?show=deleted&per_page=5", { token: root.token });
    expect(rest.status, rest.text).toBe(200);
  });

  it("reads a page of accounts with their organizations in the same number of statements for 3 and for 30", async () => {
    const owner = await newUser(app, { fullName: "Busy Owner" });
    const orgs = [await newOrg(app, owner, "Paging One"), await newOrg(app, owner, "Paging Two")];
    // Thirty registrations, one after another (the factory reads each one's email): a minute on a busy machine.
    for (let i = 0; i < 30; i++) {
      const u = await newUser(app, { email: `pagingperson${i}.${Date.now().toString(36)}@example.com` });
      await addMember(app, orgs[i % 2]!.id, owner, u, "member");
    }
    const three = await statementsFor(SEARCH, { q: "pagingperson", perPage: 3 });
    const page = (await ok(root, SEARCH, { q: "pagingperson", perPage: 30 })).adminUsers;
    expect(page.items).toHaveLength(30);
    expect(page.items.every((u: { organizations: unknown[] }) => u.organizations.length === 1)).toBe(true);
    expect(await statementsFor(SEARCH, { q: "pagingperson", perPage: 30 })).toBe(three);
    expect(three).toBeLessThan(8);
  }, 120_000);

  it("names accounts and organizations by id, deleted accounts included, for superadmins only", async () => {
    const gone = await newUser(app, { fullName: "Former Person" });
    await ok(root, "mutation($u: ID!) { deleteUser(userId: $u, confirm: true) { message } }", { u: gone.id });
    const LOOKUP = "query($u: [ID!], $o: [ID!]) { adminLookup(userIds: $u, organizationIds: $o) { users { id email fullName deleted } organizations { id name slug } } }";
    const found = (await ok(root, LOOKUP, { u: [gone.id, a.owner.id, "not-an-id"], o: [a.org.id] })).adminLookup;
    expect(found.users).toEqual(expect.arrayContaining([{ id: gone.id, email: gone.email, fullName: "Former Person", deleted: true }, expect.objectContaining({ id: a.owner.id, deleted: false })]));
    expect(found.organizations).toEqual([{ id: a.org.id, name: a.org.name, slug: a.org.slug }]);
    expect(await fails(a.owner, LOOKUP, { u: [a.member.id] })).toMatchObject({ code: "AUTHORIZATION_ERROR" });
  });
});

describe("every organization, for operators", () => {
  const ORGS = "query($q: String, $page: Int, $perPage: Int) { adminOrganizations(q: $q, page: $page, perPage: $perPage) { count pages items { id name slug memberCount owners { id email } } } }";

  it("lists organizations with their member counts and owners, searchable and paged; refused to anyone else", async () => {
    const found = (await ok(root, ORGS, { q: a.org.slug })).adminOrganizations;
    expect(found).toMatchObject({ count: 1, items: [{ id: a.org.id, name: a.org.name, memberCount: 4, owners: [{ id: a.owner.id, email: a.owner.email }] }] });
    for (const who of [a.owner, a.admin, a.member]) expect(await fails(who, ORGS)).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    const rest = await app.http.get(`/api/v1/superadmin/organizations?q=${a.org.slug}`, { token: root.token });
    expect(rest.body.data).toMatchObject({ count: 1, organizations: [{ id: a.org.id, member_count: 4 }] });
    expect((await app.http.get("/api/v1/superadmin/organizations", { token: a.owner.token })).status).toBe(403);
  });

  it("reads a page of 3 and of 30 organizations in the same number of statements", async () => {
    const owner = await newUser(app);
    for (let i = 0; i < 30; i++) {
      const o = await newOrg(app, owner, `Many Orgs ${String(i).padStart(2, "0")}`);
      if (i % 3 === 0) await addMember(app, o.id, owner, await newUser(app), "admin");
    }
    const three = await statementsFor(ORGS, { q: "Many Orgs", perPage: 3 });
    const page = (await ok(root, ORGS, { q: "Many Orgs", perPage: 30 })).adminOrganizations;
    expect(page.items).toHaveLength(30);
    expect(page.items[0]).toMatchObject({ name: "Many Orgs 00", memberCount: 2 });
    expect(page.items[1]).toMatchObject({ name: "Many Orgs 01", memberCount: 1 });
    expect(await statementsFor(ORGS, { q: "Many Orgs", perPage: 30 })).toBe(three);
    expect(three).toBeLessThan(6);
  });
});

describe("the global kill switch", () => {
  const PREVIEW = "query($u: ID!) { globalKillSwitchPreview(userId: $u) { person { id email } inForceEventId memberships { organizationName networkName deviceName state activeUntil } } }";
  const TRIGGER = "mutation($i: GlobalKillSwitchInput!) { triggerGlobalKillSwitch(input: $i) { controllerSynced event { id reason sessionsEnded target { id email } triggeredBy { id } liftedAt } } }";
  const LIST = "query($f: Boolean) { globalKillSwitches(inForce: $f) { count items { id target { id } reason liftedAt liftedBy { id } triggeredBy { id email } } } }";
  const LIFT = "mutation($e: ID!) { liftGlobalKillSwitch(eventId: $e) { id liftedAt liftedBy { id } } }";
  let person: TestUser;
  let orgs: Array<{ id: string; admin: TestUser }>;
  const nodes = ["aaaa000001", "aaaa000002"];

  const rest = async (method: string, path: string, user: TestUser, body: Record<string, unknown> = {}) => {
    const res = await app.http.request(method, `/api/v1${path}`, { token: user.token, ...(method === "GET" ? {} : { body }) });
    expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
    return res.body.data;
  };
  const authorized = (net: string, node: string) => central.member(net, node)?.config.authorized ?? false;

  beforeAll(async () => {
    // One person with a running activation in each of two organizations.
    person = await newUser(app, { fullName: "Cut Person" });
    orgs = [];
    for (const [i, net] of [NET_A, NET_B].entries()) {
      const owner = await newUser(app);
      const org = await newOrg(app, owner, `Kill Org ${i}`);
      await addMember(app, org.id, owner, person, "member");
      const O = `/organizations/${org.id}`;
      await rest("PUT", `${O}/zerotier-config`, owner, { zt_api_mode: "central", zt_api_token: TOKEN });
      const network = (await rest("POST", `${O}/networks`, owner, { name: `Net ${i}`, zerotier_network_id: net })).network;
      const device = (await rest("POST", `${O}/devices`, person, { node_id: nodes[i], nickname: `laptop ${i}` })).device;
      const approval = (await rest("POST", `${O}/approvals`, person, { portal_network_id: network.id, device_id: device.id, justification: "work" })).approval;
      await rest("POST", `${O}/approvals/${approval.id}/approve`, owner, {});
      const membership = (await rest("GET", `${O}/memberships`, person)).memberships.find((m: { node_id: string }) => m.node_id === nodes[i]);
      await rest("POST", `${O}/memberships/${membership.id}/activate`, person, { lifetime_minutes: 60 });
      orgs.push({ id: org.id, admin: owner });
    }
    expect(authorized(NET_A, nodes[0]!) && authorized(NET_B, nodes[1]!)).toBe(true);
  });

  it("is refused to anyone but a superadmin, and to a superadmin on themselves", async () => {
    for (const who of [a.member, a.owner, orgs[0]!.admin]) {
      expect(await fails(who, TRIGGER, { i: { targetUserId: person.id } })).toMatchObject({ code: "AUTHORIZATION_ERROR" });
      expect(await fails(who, PREVIEW, { u: person.id })).toMatchObject({ code: "AUTHORIZATION_ERROR" });
      expect(await fails(who, LIST)).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    }
    expect((await app.http.post("/api/v1/superadmin/kill-switch", { target_user_id: person.id }, { token: orgs[0]!.admin.token })).status).toBe(403);
    expect(await fails(root, TRIGGER, { i: { targetUserId: root.id } })).toMatchObject({ code: "BAD_REQUEST" });
    expect(await fails(root, TRIGGER, { i: { targetUserId: "8b0e9a38-0000-4000-8000-000000000000" } })).toMatchObject({ code: "NOT_FOUND" });
    expect(await fails(root, TRIGGER, { i: { targetUserId: "nope" } })).toMatchObject({ code: "VALIDATION_ERROR" });
    expect(authorized(NET_A, nodes[0]!)).toBe(true);
  });

  it("names what it will cut, cuts the person off every organization's networks, and holds until lifted", async () => {
    const preview = (await ok(root, PREVIEW, { u: person.id })).globalKillSwitchPreview;
    expect(preview).toMatchObject({ person: { id: person.id }, inForceEventId: null });
    expect(preview.memberships).toEqual([
      expect.objectContaining({ organizationName: "Kill Org 0", networkName: "Net 0", deviceName: "laptop 0", state: "active_authorized", activeUntil: expect.any(String) }),
      expect.objectContaining({ organizationName: "Kill Org 1", networkName: "Net 1", deviceName: "laptop 1", state: "active_authorized" }),
    ]);

    const fired = (await ok(root, TRIGGER, { i: { targetUserId: person.id, reason: "stolen laptop" } })).triggerGlobalKillSwitch;
    expect(fired).toMatchObject({ controllerSynced: true, event: { reason: "stolen laptop", sessionsEnded: 2, target: { id: person.id, email: person.email }, triggeredBy: { id: root.id }, liftedAt: null } });
    expect(authorized(NET_A, nodes[0]!)).toBe(false);
    expect(authorized(NET_B, nodes[1]!)).toBe(false);
    expect(await fails(root, TRIGGER, { i: { targetUserId: person.id } })).toMatchObject({ code: "KILL_SWITCH_IN_FORCE" });
    expect((await ok(root, PREVIEW, { u: person.id })).globalKillSwitchPreview.inForceEventId).toBe(fired.event.id);

    // The person cannot switch anything back on, in either organization; each organization's admins see it in their history.
    for (const [i, o] of orgs.entries()) {
      const O = `/api/v1/organizations/${o.id}`;
      const membership = (await app.http.get(`${O}/memberships`, { token: person.token })).body.data.memberships.find((m: { node_id: string }) => m.node_id === nodes[i]);
      expect(membership.state).toBe("suspended");
      const again = await app.http.post(`${O}/memberships/${membership.id}/activate`, {}, { token: person.token });
      expect(again.body.error.type).toBe("ACCESS_SUSPENDED");
      const history = (await app.http.get(`${O}/kill-switch`, { token: o.admin.token })).body.data.events;
      expect(history).toContainEqual(expect.objectContaining({ id: fired.event.id, scope: "global", organization_id: null }));
      // An organization's admins do not lift what an operator switched off.
      expect((await app.http.post(`${O}/kill-switch/${fired.event.id}/lift`, {}, { token: o.admin.token })).status).toBe(404);
      expect(await fails(o.admin, LIFT, { e: fired.event.id })).toMatchObject({ code: "AUTHORIZATION_ERROR" });
    }

    const inForce = (await ok(root, LIST, { f: true })).globalKillSwitches;
    expect(inForce.items).toContainEqual(expect.objectContaining({ id: fired.event.id, target: { id: person.id }, triggeredBy: { id: root.id, email: root.email }, liftedAt: null, liftedBy: null }));
    const restList = await app.http.get("/api/v1/superadmin/kill-switch?in_force=true", { token: root.token });
    expect(restList.body.data.events).toContainEqual(expect.objectContaining({ id: fired.event.id, reason: "stolen laptop" }));
    const audit = (await auditRows(app, person.id)).filter((r) => r.action === "network.kill_switch.triggered");
    expect(audit).toEqual([expect.objectContaining({ actor_id: root.id, metadata: expect.objectContaining({ scope: "global", sessions_ended: 2 }) })]);

    const lifted = (await ok(root, LIFT, { e: fired.event.id })).liftGlobalKillSwitch;
    expect(lifted).toMatchObject({ id: fired.event.id, liftedAt: expect.any(String), liftedBy: { id: root.id } });
    expect((await ok(root, LIST, { f: true })).globalKillSwitches.items.map((e: { id: string }) => e.id)).not.toContain(fired.event.id);
    expect((await ok(root, LIST, { f: false })).globalKillSwitches.items.map((e: { id: string }) => e.id)).toContain(fired.event.id);
    // Access comes back as approved; devices stay off until the person switches them on.
    const O = `/api/v1/organizations/${orgs[0]!.id}`;
    const membership = (await app.http.get(`${O}/memberships`, { token: person.token })).body.data.memberships.find((m: { node_id: string }) => m.node_id === nodes[0]);
    expect(membership.state).toBe("approved_inactive");
    expect(authorized(NET_A, nodes[0]!)).toBe(false);
    expect((await app.http.post(`${O}/memberships/${membership.id}/activate`, {}, { token: person.token })).status).toBe(200);
    expect(authorized(NET_A, nodes[0]!)).toBe(true);
    expect((await auditRows(app, person.id)).map((r) => r.action)).toContain("network.kill_switch.lifted");
  });

  it("keeps networks suspended by an organization's own kill switch when the global one is lifted", async () => {
    const orgKill = await app.http.post(`/api/v1/organizations/${orgs[1]!.id}/kill-switch`, { target_user_id: person.id, reason: "org incident" }, { token: orgs[1]!.admin.token });
    expect(orgKill.status, orgKill.text).toBe(201);
    const global = (await ok(root, TRIGGER, { i: { targetUserId: person.id } })).triggerGlobalKillSwitch.event;
    const lift = await app.http.post(`/api/v1/superadmin/kill-switch/${global.id}/lift`, {}, { token: root.token });
    expect(lift.status, lift.text).toBe(200);
    expect(lift.body.data.event.lifted_by.id).toBe(root.id);
    const stateIn = async (i: number) =>
      (await app.http.get(`/api/v1/organizations/${orgs[i]!.id}/memberships`, { token: person.token })).body.data.memberships.find((m: { node_id: string }) => m.node_id === nodes[i]).state;
    expect(await stateIn(0)).not.toBe("suspended");
    expect(await stateIn(1)).toBe("suspended");
    // Lifting again changes nothing; an organization's event is not an operator's to lift here.
    expect((await ok(root, LIFT, { e: global.id })).liftGlobalKillSwitch.id).toBe(global.id);
    expect(await fails(root, LIFT, { e: orgKill.body.data.event.id })).toMatchObject({ code: "KILL_SWITCH_NOT_FOUND" });
  });

  it("reads a page of 3 and of 30 kill switches in the same number of statements", async () => {
    const three = await statementsFor(LIST, {});
    for (let i = 0; i < 30; i++) await ok(root, TRIGGER, { i: { targetUserId: (await newUser(app, { verify: false })).id } });
    expect((await ok(root, LIST, {})).globalKillSwitches.items.length).toBeGreaterThanOrEqual(30);
    expect(await statementsFor(LIST, {})).toBe(three);
  });
});
