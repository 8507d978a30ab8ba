import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { addManagedMember, addMember, newOrg, orgWithRoles } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal, keysDir } from "../factories/ssh.js";
import { login, newSuperadmin, newUser, type TestUser } from "../factories/users.js";

/**
 * Who may offboard whom (the admin-reach rule, rule 16), what stays of a person's other
 * organizations, concurrent offboardings, and lifting a suspension.
 */
let app: TestApp;
let seq = 0;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

const offboard = (orgId: string, userId: string, as: TestUser, body: Record<string, unknown> = { mode: "remove", reason: "test" }) =>
  app.http.post(`/api/v1/organizations/${orgId}/members/${userId}/offboard`, body, { token: as.token });
const memberIds = async (orgId: string, as: TestUser) => (await app.http.get(`/api/v1/organizations/${orgId}/members`, { token: as.token })).body.data.members.map((m: { user_id: string }) => m.user_id);

async function signIn(orgId: string, owner: TestUser, user: TestUser): Promise<string> {
  await grantPrincipal(app, orgId, owner, user, "app");
  const key = await addVerifiedKey(app, user);
  const res = await app.http.post("/api/v1/ssh/sign", { key_id: key.id, org_id: orgId }, { token: user.token });
  expect(res.status, res.text).toBe(201);
  return res.body.data.certificate;
}

async function revokedInKrl(orgId: string, certificate: string): Promise<boolean> {
  const krl = join(keysDir, `offboard-rules-${seq}.krl`);
  const cert = join(keysDir, `offboard-rules-${seq++}-cert.pub`);
  writeFileSync(krl, Buffer.from(await (await fetch(`${app.url}/api/v1/organizations/${orgId}/ssh/krl`)).arrayBuffer()));
  writeFileSync(cert, `${certificate}\n`);
  const check = spawnSync("ssh-keygen", ["-Q", "-f", krl, cert], { encoding: "utf8" });
  return check.status !== 0 && /REVOKED/.test(check.stdout);
}

describe("who may offboard whom", () => {
  it("refuses outsiders, plain members, another organization's admin, oneself, an owner by an admin and the last owner", async () => {
    const { org, owner, admin, member, guest } = await orgWithRoles(app);
    const outsider = await newUser(app);
    const elsewhere = await orgWithRoles(app);
    const root = await newSuperadmin(app);
    const refusals: Array<[TestUser, string, number, string]> = [
      [outsider, member.id, 404, "ORG_NOT_FOUND"],
      [elsewhere.admin, member.id, 404, "ORG_NOT_FOUND"],
      [member, guest.id, 403, "AUTHORIZATION_ERROR"],
      [guest, member.id, 403, "AUTHORIZATION_ERROR"],
      [admin, admin.id, 400, "BAD_REQUEST"],
      [owner, owner.id, 400, "BAD_REQUEST"],
      [admin, owner.id, 403, "AUTHORIZATION_ERROR"],
      [root, owner.id, 403, "OWNER_REQUIRED"],
      [owner, outsider.id, 404, "MEMBER_NOT_FOUND"],
      [owner, "not-a-uuid", 404, "MEMBER_NOT_FOUND"],
    ];
    for (const [as, target, status, type] of refusals) {
      const res = await offboard(org.id, target, as);
      expect([res.status, res.body.error?.type], `${as.email} → ${target}`).toEqual([status, type]);
    }
    for (const body of [{}, { mode: "delete", reason: "x" }, { mode: "remove" }, { mode: "remove", reason: "" }, { mode: "remove", reason: "x".repeat(1001) }]) {
      expect((await offboard(org.id, member.id, owner, body)).status).toBe(400);
    }
    // The GraphQL door answers the same.
    const gql = await app.http.gql("mutation($o: ID!, $u: ID!) { offboardMember(orgId: $o, userId: $u, input: { mode: \"remove\", reason: \"x\" }) { id } }", { o: org.id, u: guest.id }, { token: member.token });
    expect(gql.errors?.[0]?.extensions?.code).toBe("AUTHORIZATION_ERROR");
    expect(await memberIds(org.id, owner)).toEqual(expect.arrayContaining([owner.id, admin.id, member.id, guest.id]));
    // Nobody refused could read receipts either.
    expect((await app.http.get(`/api/v1/organizations/${org.id}/offboardings`, { token: member.token })).status).toBe(403);
    expect((await app.http.get(`/api/v1/organizations/${org.id}/offboardings`, { token: outsider.token })).status).toBe(404);

    // An admin offboards a member; a superadmin who is no member offboards the admin.
    expect((await offboard(org.id, member.id, admin)).status).toBe(201);
    expect((await offboard(org.id, admin.id, root)).status).toBe(201);
    const gqlOk = await app.http.gql("mutation($o: ID!, $u: ID!) { offboardMember(orgId: $o, userId: $u, input: { mode: \"suspend\", reason: \"leave\" }) { mode role } }", { o: org.id, u: guest.id }, { token: owner.token });
    expect(gqlOk.data?.offboardMember).toEqual({ mode: "suspend", role: "guest" });
    expect(await memberIds(org.id, owner)).toEqual([owner.id]);
  });

  it("a managed account is reached by the admin-reach rule: an admin never offboards another admin of it", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const admin = await newUser(app);
    await addMember(app, org.id, owner, admin, "admin");
    const managedAdmin = await addManagedMember(app, org.id, owner, "admin");
    expect((await offboard(org.id, managedAdmin.id, admin)).status).toBe(403);
    expect((await offboard(org.id, managedAdmin.id, owner)).status).toBe(201);
  });
});

describe("scope", () => {
  it("a person in two organizations keeps everything of the other", async () => {
    const owner = await newUser(app);
    const one = await newOrg(app, owner);
    const two = await newOrg(app, owner);
    const person = await newUser(app);
    for (const o of [one, two]) {
      await createCa(app, o.id, owner);
      await addMember(app, o.id, owner, person, "member");
    }
    const certOne = await signIn(one.id, owner, person);
    const certTwo = await signIn(two.id, owner, person);
    const res = await offboard(one.id, person.id, owner);
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.receipt).toMatchObject({ managed: false, sessions: { count: 0 }, cli_tokens: { count: 0 }, certificates: { count: 1 } });
    expect(await revokedInKrl(one.id, certOne)).toBe(true);
    expect(await revokedInKrl(two.id, certTwo)).toBe(false);
    expect(await memberIds(two.id, owner)).toContain(person.id);
    expect((await app.http.get(`/api/v1/organizations/${two.id}/principals`, { token: person.token })).status).toBe(200);
    expect((await app.http.get(`/api/v1/organizations/${one.id}`, { token: person.token })).status).toBe(404);
  });

  it("20 parallel offboardings of one person: one receipt, the rest 404, no 500", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    const answers = await Promise.all(Array.from({ length: 20 }, () => offboard(org.id, member.id, owner)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 404)).toBe(true);
    const listed = await app.http.get(`/api/v1/organizations/${org.id}/offboardings?user_id=${member.id}`, { token: owner.token });
    expect(listed.body.data.count).toBe(1);
  });
});

describe("reinstate", () => {
  it("lifts a suspension: the membership comes back with its role and departments, revoked credentials stay revoked", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    await createCa(app, org.id, owner);
    const person = await addManagedMember(app, org.id, owner, "admin");
    const cert = await signIn(org.id, owner, person);
    const dept = await app.http.post(`/api/v1/organizations/${org.id}/departments`, { name: "ops" }, { token: owner.token });
    await app.http.post(`/api/v1/organizations/${org.id}/departments/${dept.body.data.department.id}/members`, { email: person.email }, { token: owner.token });
    const R = `/api/v1/organizations/${org.id}/members/${person.id}/reinstate`;
    expect((await app.http.post(R, {}, { token: owner.token })).body.error.type).toBe("NOT_SUSPENDED");

    const res = await offboard(org.id, person.id, owner, { mode: "suspend", reason: "on leave" });
    expect(res.body.data.receipt).toMatchObject({ mode: "suspend", managed: true, account_suspended: true, departments: { count: 1 } });
    expect((await login(app, person.email, person.password)).status).not.toBe(200);
    expect((await app.http.post(R, {}, { token: person.token })).status).toBe(401);

    const back = await app.http.post(R, {}, { token: owner.token });
    expect(back.status, back.text).toBe(200);
    expect(back.body.data.reinstatement).toMatchObject({ role: "admin", receipt_id: res.body.data.receipt.id, account_reactivated: true });
    expect((await app.http.post(R, {}, { token: owner.token })).body.error.type).toBe("NOT_SUSPENDED");
    const signedIn = await login(app, person.email, person.password);
    expect(signedIn.status).toBe(200);
    const members = (await app.http.get(`/api/v1/organizations/${org.id}/members`, { token: owner.token })).body.data.members;
    expect(members.find((m: { user_id: string }) => m.user_id === person.id)).toMatchObject({ role: "admin", managed: true });
    const inDept = await app.http.get(`/api/v1/organizations/${org.id}/departments/${dept.body.data.department.id}/members`, { token: owner.token });
    expect(JSON.stringify(inDept.body.data)).toContain(person.id);
    expect(await revokedInKrl(org.id, cert)).toBe(true);

    // A removal is not reversible.
    expect((await offboard(org.id, person.id, owner, { mode: "remove", reason: "gone" })).status).toBe(201);
    expect((await app.http.post(R, {}, { token: owner.token })).body.error.type).toBe("NOT_SUSPENDED");
  });
});

describe("the provisioning port (what SCIM calls)", () => {
  it("deactivate, reactivate, then DELETE after deactivate removes in one step with a receipt; a non-member is not found", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    const ctx = { actor: { kind: "user" as const, userId: owner.id, email: owner.email, isSuperadmin: false, sessionId: null }, requestId: "port-test", ip: null, userAgent: null };
    const port = app.services.offboardingPort;
    const db = app.container.db;
    // Inside the caller's transaction; the receipt once it has committed.
    const cut = async (mode: "deactivate" | "remove", reason?: string) => {
      const done = await db.transaction((tx) => port[mode](tx, ctx, org.id, member.id, reason));
      await done.afterCommit();
      return app.services.offboarding.receipt(ctx, org.id, done.receiptId);
    };
    expect((await cut("deactivate")).mode).toBe("suspend");
    await db.transaction((tx) => port.reactivate(tx, ctx, org.id, member.id));
    expect(await memberIds(org.id, owner)).toContain(member.id);
    const suspended = await cut("deactivate", "left");
    expect(await db.transaction((tx) => port.isSuspended(tx, org.id, member.id))).toBe(true);
    const removed = await cut("remove");
    expect(removed).toMatchObject({ mode: "remove", userId: member.id, role: suspended.role });
    expect(removed.id).not.toBe(suspended.id);
    expect(await memberIds(org.id, owner)).not.toContain(member.id);
    expect(await db.transaction((tx) => port.isSuspended(tx, org.id, member.id))).toBe(false);
    await expect(cut("remove")).rejects.toMatchObject({ code: "MEMBER_NOT_FOUND" });
    await expect(db.transaction((tx) => port.reactivate(tx, ctx, org.id, member.id))).rejects.toMatchObject({ code: "NOT_SUSPENDED" });
    // Only a reinstatement lifted a suspension: the removal left nothing to reinstate.
    const reinstated = await app.http.post(`/api/v1/organizations/${org.id}/members/${member.id}/reinstate`, {}, { token: owner.token });
    expect(reinstated.body.error.type).toBe("NOT_SUSPENDED");
  });
});

describe("the receipt is part of the cutting transaction", () => {
  it("rolls back with the cuts, and is there when the process dies right after the commit", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const person = await addManagedMember(app, org.id, owner, "member");
    const ctx = { actor: { kind: "user" as const, userId: owner.id, email: owner.email, isSuperadmin: false, sessionId: null }, requestId: "crash-test", ip: null, userAgent: null };
    const service = app.services.offboarding;
    const db = app.container.db;
    const listed = async () => (await app.http.get(`/api/v1/organizations/${org.id}/offboardings?user_id=${person.id}`, { token: owner.token })).body.data.offboardings;

    // A transaction that fails after the cut: no receipt and no cut; only the sessions, ended
    // before the commit, stay ended (revoking more than commits is the safe direction).
    const crash = db.transaction(async (tx) => {
      await service.cutInTransaction(tx, ctx, org.id, person.id, "suspend", "rolled back");
      throw new Error("crash before the commit");
    });
    await expect(crash).rejects.toThrow("crash before the commit");
    expect(await listed()).toEqual([]);
    expect(await memberIds(org.id, owner)).toContain(person.id);
    expect((await app.http.get("/api/v1/users/me", { token: person.token })).status).toBe(401);

    // Committed, and the process dies before its after-commit step: the cuts have their receipt.
    const again = await login(app, person.email, person.password);
    expect(again.status).toBe(200);
    const cut = await db.transaction((tx) => service.cutInTransaction(tx, ctx, org.id, person.id, "remove", "left"));
    const [receipt] = await listed();
    expect(receipt).toMatchObject({ id: cut.receiptId, mode: "remove", reason: "left", managed: true, sessions: { count: 1 }, pending: { devices: [] } });
    expect(await memberIds(org.id, owner)).not.toContain(person.id);
    expect((await app.http.get("/api/v1/users/me", { token: again.body.data.token })).status).toBe(401);
  });
});

describe("removing a member is offboarding", () => {
  it("gives a removal its receipt and the rules of Offboard; leaving stays the person's own", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const admin = await newUser(app);
    await addMember(app, org.id, owner, admin, "admin");
    const managed = await addManagedMember(app, org.id, owner, "member");
    const managedAdmin = await addManagedMember(app, org.id, owner, "admin");
    const O = `/api/v1/organizations/${org.id}`;
    const receiptsOf = async (userId: string) => (await app.http.get(`${O}/offboardings?user_id=${userId}`, { token: owner.token })).body.data.offboardings;

    // The admin-reach rule: an admin never removes another admin of an account the organization manages.
    const refused = await app.http.delete(`${O}/members/${managedAdmin.id}`, { token: admin.token });
    expect([refused.status, refused.body.error.type]).toEqual([403, "AUTHORIZATION_ERROR"]);
    expect(await memberIds(org.id, owner)).toContain(managedAdmin.id);
    expect(await receiptsOf(managedAdmin.id)).toEqual([]);

    // Removed by an admin: the managed account's session ends, and the removal has its receipt.
    const removed = await app.http.delete(`${O}/members/${managed.id}`, { token: admin.token });
    expect(removed.status, removed.text).toBe(200);
    const [receipt, ...none] = await receiptsOf(managed.id);
    expect(none).toEqual([]);
    // The answer names the receipt (REST and GraphQL alike), for the caller to show it.
    expect(removed.body.data).toEqual({ receipt_id: receipt.id });
    expect(receipt).toMatchObject({ mode: "remove", reason: "Removed from the organization", role: "member", managed: true, sessions: { count: 1 } });
    expect((await app.http.get("/api/v1/users/me", { token: managed.token })).status).toBe(401);
    const removal = await app.http.get(`${O}/audit-logs?action=org.member.remove`, { token: owner.token });
    expect(removal.body.data.audit_logs).toEqual([expect.objectContaining({ user_id: managed.id, metadata: expect.objectContaining({ role: "member", receiptId: receipt.id }) })]);
    expect((await app.http.delete(`${O}/members/${managed.id}`, { token: admin.token })).status).toBe(404);

    // Someone suspended here is removed for good, in one step, with a receipt of its own.
    expect((await offboard(org.id, managedAdmin.id, owner, { mode: "suspend", reason: "leave" })).status).toBe(201);
    const byGql = await app.http.gql("mutation($o: ID!, $u: ID!) { removeMember(orgId: $o, userId: $u) { message receiptId } }", { o: org.id, u: managedAdmin.id }, { token: owner.token });
    expect(byGql.errors).toBeUndefined();
    const modes = await receiptsOf(managedAdmin.id);
    expect(modes.map((r: { mode: string }) => r.mode)).toEqual(["remove", "suspend"]);
    expect(byGql.data?.removeMember).toEqual({ message: "Member removed", receiptId: modes[0].id });

    // Leaving is not offboarding: no receipt, the person's own session lives on.
    const left = await app.http.delete(`${O}/members/${admin.id}`, { token: admin.token });
    expect([left.status, left.body.data]).toEqual([200, { receipt_id: null }]);
    expect(await receiptsOf(admin.id)).toEqual([]);
    expect((await app.http.get("/api/v1/users/me", { token: admin.token })).status).toBe(200);
    expect(await memberIds(org.id, owner)).toEqual([owner.id]);
  });
});
