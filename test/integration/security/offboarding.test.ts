import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type postgres from "postgres";
import { connectPostgres } from "../../../src/infra/db.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { holdRows, queuedBehind } from "../../helpers/row-lock.js";
import { addManagedMember, addMember, newOrg } from "../../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal, keysDir } from "../../factories/ssh.js";
import { newSuperadmin, newUser, PASSWORD, type TestUser } from "../../factories/users.js";

/**
 * Offboarding ends SSH access too: removal from or leaving an organization revokes the certificates
 * it issued to the person; suspension and deletion revoke them everywhere; deleting an organization
 * revokes everything it issued. Each time the KRL changes, and ssh-keygen reads the certificate as
 * revoked in it.
 */
let app: TestApp;
let seq = 0;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

interface Signed {
  orgId: string;
  certificate: string;
  id: string;
}

/** An organization with a user CA and a principal, where `user` is a member holding it. */
async function orgFor(owner: TestUser, user: TestUser | null): Promise<{ orgId: string }> {
  const orgId = (await newOrg(app, owner)).id;
  await createCa(app, orgId, owner);
  if (user) await addMember(app, orgId, owner, user, "member");
  return { orgId };
}

async function sign(user: TestUser, orgId: string): Promise<Signed> {
  await grantPrincipal(app, orgId, owners.get(orgId)!, user, "app");
  const key = await addVerifiedKey(app, user);
  const res = await app.http.post("/api/v1/ssh/sign", { key_id: key.id, org_id: orgId }, { token: user.token });
  expect(res.status).toBe(201);
  return { orgId, certificate: res.body.data.certificate, id: res.body.data.id };
}

const krlVersion = async (orgId: string) => Number((await fetch(`${app.url}/api/v1/organizations/${orgId}/ssh/krl`)).headers.get("x-krl-version"));

/** What ssh-keygen says of the certificate against the organization's published KRL. */
async function revokedInKrl(signed: Signed): Promise<boolean> {
  const res = await fetch(`${app.url}/api/v1/organizations/${signed.orgId}/ssh/krl`);
  expect(res.status).toBe(200);
  const krl = join(keysDir, `offboarding-${seq}.krl`);
  const cert = join(keysDir, `offboarding-${seq++}-cert.pub`);
  writeFileSync(krl, Buffer.from(await res.arrayBuffer()));
  writeFileSync(cert, `${signed.certificate}\n`);
  const check = spawnSync("ssh-keygen", ["-Q", "-f", krl, cert], { encoding: "utf8" });
  return check.status !== 0 && /REVOKED/.test(check.stdout);
}

async function certificateState(user: TestUser, signed: Signed) {
  const res = await app.http.get(`/api/v1/organizations/${signed.orgId}/certificates?user_id=${user.id}`, { token: owners.get(signed.orgId)!.token });
  return res.body.data.certificates.find((c: { id: string }) => c.id === signed.id);
}
const owners = new Map<string, TestUser>();

describe("offboarding revokes SSH certificates", () => {
  it("leaving or being removed revokes that organization's certificates only", async () => {
    const owner = await newUser(app);
    const person = await newUser(app);
    const one = await orgFor(owner, person);
    const two = await orgFor(owner, person);
    owners.set(one.orgId, owner).set(two.orgId, owner);
    const inOne = await sign(person, one.orgId);
    const inTwo = await sign(person, two.orgId);
    expect(await revokedInKrl(inOne)).toBe(false);
    const v0 = await krlVersion(one.orgId);

    expect((await app.http.post(`/api/v1/organizations/${one.orgId}/leave`, {}, { token: person.token })).status).toBe(200);
    expect(await krlVersion(one.orgId)).toBe(v0 + 1);
    expect(await revokedInKrl(inOne)).toBe(true);
    expect(await revokedInKrl(inTwo)).toBe(false);
    expect(await certificateState(person, inOne)).toMatchObject({ revoked: true, revoke_reason: "Left the organization" });

    expect((await app.http.delete(`/api/v1/organizations/${two.orgId}/members/${person.id}`, { token: owner.token })).status).toBe(200);
    expect(await revokedInKrl(inTwo)).toBe(true);
    const activity = await app.http.get(`/api/v1/organizations/${two.orgId}/audit-logs?action=ssh.cert.revoked`, { token: owner.token });
    expect(activity.body.data.audit_logs).toEqual([expect.objectContaining({ user_id: person.id, metadata: expect.objectContaining({ reason: "Removed from the organization" }) })]);
  });

  it("suspension and deletion revoke everywhere, by a superadmin, the managing organization's admin, or oneself", async () => {
    const owner = await newUser(app);
    const root = await newSuperadmin(app);
    const { orgId } = await orgFor(owner, null);
    const other = await orgFor(owner, null);
    owners.set(orgId, owner).set(other.orgId, owner);

    const suspended = await newUser(app);
    await addMember(app, orgId, owner, suspended, "member");
    await addMember(app, other.orgId, owner, suspended, "member");
    const s1 = await sign(suspended, orgId);
    const s2 = await sign(suspended, other.orgId);
    expect((await app.http.post(`/api/v1/admin/users/${suspended.id}/suspend`, {}, { token: root.token })).status).toBe(200);
    expect([await revokedInKrl(s1), await revokedInKrl(s2)]).toEqual([true, true]);

    const managed = await addManagedMember(app, orgId, owner);
    const m1 = await sign(managed, orgId);
    expect((await app.http.post(`/api/v1/admin/users/${managed.id}/delete`, { confirm: true }, { token: owner.token })).status).toBe(200);
    expect(await revokedInKrl(m1)).toBe(true);

    const leaver = await newUser(app);
    await addMember(app, orgId, owner, leaver, "member");
    const l1 = await sign(leaver, orgId);
    expect((await app.http.request("DELETE", "/api/v1/users/me", { token: leaver.token, body: { password: PASSWORD } })).status).toBe(200);
    expect(await revokedInKrl(l1)).toBe(true);
  });

  it("deleting an organization revokes what it issued, and its last KRL stays published", async () => {
    const owner = await newUser(app);
    const { orgId } = await orgFor(owner, null);
    owners.set(orgId, owner);
    const member = await newUser(app);
    await addMember(app, orgId, owner, member, "member");
    const signed = await sign(member, orgId);
    expect((await app.http.request("DELETE", `/api/v1/organizations/${orgId}`, { token: owner.token, body: { confirm: true } })).status).toBe(200);
    expect(await revokedInKrl(signed)).toBe(true);
  });
});

// Two connections at once: only PostgreSQL (the embedded database belongs to one process).
if (process.env.DATABASE_URL) describe("offboardings of the same certificates at once (PostgreSQL)", () => {
  // A second connection of the test's own, to hold rows while requests wait on them.
  let db: postgres.Sql;
  beforeAll(() => {
    db = connectPostgres(app.container.config.db.url!, { max: 2, onnotice: () => {} });
  });
  afterAll(() => db.end());

  /** Runs `request` into a deadlock with a transaction holding the account, then the organization. */
  async function deadlocked<T>(orgId: string, userId: string, request: () => Promise<T>): Promise<T> {
    const held = await holdRows(db, (tx) => tx`select id from users where id = ${userId} for update`);
    const answer = request();
    if ((await held.waiting(1)) !== 1) throw new Error("the request did not wait on the held account");
    await held.release((tx) => tx`select id from organizations where id = ${orgId} for update`);
    return answer;
  }

  it("a request PostgreSQL rolls back as a deadlock's victim answers 503 SERVICE_UNAVAILABLE with Retry-After through both doors, never 500, and wrote nothing", async () => {
    const root = await newSuperadmin(app);
    const owner = await newUser(app);
    const user = await newUser(app);
    const { orgId } = await orgFor(owner, user);
    // A suspension locks the person's organizations, then the account. The account's row is held;
    // once the suspension waits for it, the holder reaches for the organization the suspension
    // holds: a cycle, and PostgreSQL ends the transaction that has waited longer, the request's.
    const rest = await deadlocked(orgId, user.id, () => app.http.post(`/api/v1/admin/users/${user.id}/suspend`, {}, { token: root.token }));
    expect(rest.status, rest.text).toBe(503);
    expect(rest.body.error.type).toBe("SERVICE_UNAVAILABLE");
    expect(rest.headers.get("retry-after")).toBe("1");
    const gql = await deadlocked(orgId, user.id, () => app.http.gql("mutation($id: ID!) { suspendUser(userId: $id, reason: \"test\") { status } }", { id: user.id }, { token: root.token }));
    expect(gql.errors?.[0]?.extensions).toMatchObject({ code: "SERVICE_UNAVAILABLE", status: 503 });
    // Rolled back: still active; tried again, it goes through.
    const [row] = await db`select status from users where id = ${user.id}`;
    expect(row!.status).toBe("active");
    expect((await app.http.post(`/api/v1/admin/users/${user.id}/suspend`, {}, { token: root.token })).status).toBe(200);
  });

  it("queue instead of deadlocking: an account deleted with its organization while an admin suspends it", async () => {
    const root = await newSuperadmin(app);
    const user = await newUser(app);
    const { orgId } = await orgFor(user, null);
    owners.set(orgId, user);
    const signed = await sign(user, orgId);
    // The account's row is held: the suspension queues for it first, then the deletion, which
    // has deleted the organization it alone was in by then. Released, the suspension goes first
    // and revokes the certificate the deletion is about to revoke with its organization.
    const held = await holdRows(db, (tx) => tx`select id from users where id = ${user.id} for update`);
    const [suspended, deleted] = await queuedBehind(
      held,
      () => app.http.post(`/api/v1/admin/users/${user.id}/suspend`, {}, { token: root.token }),
      () => app.http.request("DELETE", "/api/v1/users/me", { token: user.token, body: { password: PASSWORD } }),
    );
    expect([suspended.status, deleted.status]).toEqual([200, 200]);
    expect(await revokedInKrl(signed)).toBe(true);
    const [row] = await db`select revoke_reason from ssh_certificates where id = ${signed.id}`;
    expect(row!.revoke_reason).toBe("Account suspended");
  });

  it("queue instead of deadlocking: an admin revokes a member's certificates while the owner deletes the organization", async () => {
    const owner = await newUser(app);
    const member = await newUser(app);
    const { orgId } = await orgFor(owner, member);
    owners.set(orgId, owner);
    const signed = await sign(member, orgId);
    // The certificate's row is held: the revocation queues for it first, then the deletion,
    // which holds the organization by then. The revocation is the organization's first, so it
    // also writes the organization's first KRL.
    const held = await holdRows(db, (tx) => tx`select id from ssh_certificates where id = ${signed.id} for update`);
    const [revoked, deleted] = await queuedBehind(
      held,
      () => app.http.post(`/api/v1/organizations/${orgId}/users/${member.id}/certificates/revoke`, {}, { token: owner.token }),
      () => app.http.request("DELETE", `/api/v1/organizations/${orgId}`, { token: owner.token, body: { confirm: true } }),
    );
    expect([revoked.status, deleted.status]).toEqual([200, 200]);
    expect(await revokedInKrl(signed)).toBe(true);
  });

  it("signatures written together where one signer is being removed: the others are stored, the removed one's leaves no row", async () => {
    const owner = await newUser(app);
    const [staying, leaving] = [await newUser(app), await newUser(app)];
    const { orgId } = await orgFor(owner, staying);
    owners.set(orgId, owner);
    await addMember(app, orgId, owner, leaving, "member");
    for (const m of [staying, leaving]) await grantPrincipal(app, orgId, owner, m, "app");
    const [stayingKey, leavingKey] = [await addVerifiedKey(app, staying), await addVerifiedKey(app, leaving)];
    // The leaving member's membership is held as a removal holds it; signatures of both members
    // meet at their write (those written in one statement with the leaving one's wait with it).
    const held = await holdRows(db, (tx) => tx`select 1 from org_memberships where user_id = ${leaving.id} and organization_id = ${orgId} for no key update`);
    const sign = (m: TestUser, keyId: string) => app.http.post("/api/v1/ssh/sign", { key_id: keyId, org_id: orgId }, { token: m.token });
    const answers = Promise.all([sign(staying, stayingKey.id), sign(leaving, leavingKey.id), sign(staying, stayingKey.id), sign(staying, stayingKey.id)]);
    expect(await held.waiting(1)).toBeGreaterThanOrEqual(1);
    await held.release((tx) => tx`update org_memberships set deleted_at = now() where user_id = ${leaving.id} and organization_id = ${orgId}`);
    const [a, left, b, c] = await answers;
    expect([a!.status, b!.status, c!.status]).toEqual([201, 201, 201]);
    expect([left!.status, left!.body.error?.type]).toEqual([404, "ORG_NOT_FOUND"]);
    const count = async (q: Promise<{ n: number }[]>) => (await q)[0]!.n;
    for (const [m, n] of [[staying, 3], [leaving, 0]] as const) {
      expect(await count(db`select count(*)::int as n from ssh_certificates where user_id = ${m.id}`)).toBe(n);
      expect(await count(db`select count(*)::int as n from certificate_audit_logs where user_id = ${m.id} and action = 'issued'`)).toBe(n);
      expect(await count(db`select count(*)::int as n from audit_logs where actor_id = ${m.id} and action = 'ssh.cert.issued'`)).toBe(n);
    }
  });

  it("an only owner deleting their account while an invitation is accepted: decided under the organization's lock, never a member left in a deleted organization", async () => {
    const owner = await newUser(app);
    const invitee = await newUser(app);
    const orgId = (await newOrg(app, owner)).id;
    expect((await app.http.post(`/api/v1/organizations/${orgId}/members`, { email: invitee.email, role: "member" }, { token: owner.token })).status).toBe(201);
    const invite = (await app.http.get("/api/v1/users/me/invites", { token: invitee.token })).body.data.invites[0] as { id: string };
    // The organization's row is held: the deletion queues for it first, then the acceptance.
    const held = await holdRows(db, (tx) => tx`select id from organizations where id = ${orgId} for no key update`);
    const [deleted, accepted] = await queuedBehind(
      held,
      () => app.http.request("DELETE", "/api/v1/users/me", { token: owner.token, body: { password: PASSWORD } }),
      () => app.http.post(`/api/v1/users/me/invites/${invite.id}/accept`, {}, { token: invitee.token }),
    );
    // The owner was alone when the deletion decided: the organization went with the account.
    expect(deleted.status).toBe(200);
    expect([accepted.status, accepted.body.error?.type], accepted.text).toEqual([404, "INVITE_NOT_FOUND"]);
    const [org] = await db`select deleted_at from organizations where id = ${orgId}`;
    expect(org!.deleted_at).not.toBeNull();
    const [row] = await db`select count(*)::int as n from org_memberships where user_id = ${invitee.id} and deleted_at is null`;
    expect(row!.n).toBe(0);
  });

  // Each offboarding updates one row the signature needs: the membership (a removal or a
  // departure), the account (suspension, deletion) or the organization (its deletion). The row is
  // held here as the offboarding holds it (FOR NO KEY UPDATE), and the change commits while the
  // signature waits at its write.
  it.each([
    ["its holder is being removed", "org_memberships", "user_id = $1 and organization_id = $2", "deleted_at = now()"],
    ["its holder is suspended", "users", "id = $1", "status = 'suspended'"],
    ["its holder's account is deleted", "users", "id = $1", "deleted_at = now()"],
    ["its organization is deleted", "organizations", "id = $1", "deleted_at = now()"],
  ] as const)("a certificate signed while %s is refused, not left valid", async (_, table, where, change) => {
    const owner = await newUser(app);
    const member = await newUser(app);
    const { orgId } = await orgFor(owner, member);
    owners.set(orgId, owner);
    await grantPrincipal(app, orgId, owner, member, "app");
    const key = await addVerifiedKey(app, member);
    const ids = table === "organizations" ? [orgId] : table === "users" ? [member.id] : [member.id, orgId];
    const held = await holdRows(db, (tx) => tx.unsafe(`select 1 from ${table} where ${where} for no key update`, ids));
    const signing = app.http.post("/api/v1/ssh/sign", { key_id: key.id, org_id: orgId }, { token: member.token });
    expect(await held.waiting(1)).toBe(1);
    await held.release((tx) => tx.unsafe(`update ${table} set ${change} where ${where}`, ids));
    const res = await signing;
    expect([res.status, res.body.error?.type], res.text).toEqual([404, "ORG_NOT_FOUND"]);
    const [row] = await db`select count(*)::int as n from ssh_certificates where user_id = ${member.id}`;
    expect(row!.n).toBe(0);
  });
});
