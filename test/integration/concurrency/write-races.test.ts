import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../../src/infra/db.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { orgWithRoles } from "../../factories/orgs.js";
import { addVerifiedKey, answerChallenge, createCa, grantPrincipal, makeKey } from "../../factories/ssh.js";
import { newSuperadmin, newUser, type TestUser } from "../../factories/users.js";
import { auditRows } from "../../helpers/db.js";

/**
 * Write paths that race for one user, organization or message (issue 18 item 0), on both runtimes:
 * no answer ≥ 500, and the rows agree with what was acknowledged.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(async () => {
  await app?.close();
});

const serverErrors = (statuses: number[]) => statuses.filter((s) => s >= 500);

/** Answers to one request sent several times at once: no 5xx, exactly one 200, every other refused with `refusal`. */
function expectOneWinner(answers: { status: number; body: any }[], refusal: [number, string]) {
  expect(serverErrors(answers.map((a) => a.status))).toEqual([]);
  expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
  for (const a of answers) if (a.status !== 200) expect([a.status, a.body.error.type]).toEqual(refusal);
}

describe("signing while the user's certificates are revoked", () => {
  it("acknowledges every certificate with a distinct serial, and a last revocation leaves none valid", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await createCa(app, org.id, owner);
    await grantPrincipal(app, org.id, owner, member, "app");
    const key = await addVerifiedKey(app, member);
    const revokeAll = () => app.http.post(`/api/v1/organizations/${org.id}/users/${member.id}/certificates/revoke`, { reason: "race" }, { token: owner.token });
    const answers = await Promise.all([
      ...Array.from({ length: 12 }, () => app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: member.token })),
      revokeAll(),
      revokeAll(),
      revokeAll(),
    ]);
    expect(serverErrors(answers.map((a) => a.status))).toEqual([]);
    const signed = answers.slice(0, 12).filter((a) => a.status === 201).map((a) => String(a.body.data.serial));
    expect(signed).toHaveLength(12);
    expect(new Set(signed).size).toBe(12);

    const last = await revokeAll();
    expect(last.status).toBe(200);
    const listed = await app.http.get(`/api/v1/organizations/${org.id}/certificates`, { token: owner.token });
    const certs = (listed.body.data.certificates ?? listed.body.data.items) as { serial: string; revoked_at?: string | null; status?: string }[];
    const mine = certs.filter((c) => signed.includes(String(c.serial)));
    expect(mine).toHaveLength(12);
    expect(mine.every((c) => c.revoked_at || c.status === "revoked")).toBe(true);
  });
});

describe("accepting an invitation while an admin cancels it", () => {
  it("ends in exactly one of the two for each invitation, with a membership only where the acceptance won", async () => {
    const { org, owner } = await orgWithRoles(app);
    const people: TestUser[] = [];
    for (let i = 0; i < 8; i++) people.push(await newUser(app));
    for (const p of people) expect((await app.http.post(`/api/v1/organizations/${org.id}/members`, { email: p.email, role: "member" }, { token: owner.token })).status).toBe(201);
    const mine = await Promise.all(people.map(async (p) => (await app.http.get("/api/v1/users/me/invites", { token: p.token })).body.data.invites[0] as { id: string }));

    const raced = await Promise.all(
      people.map((p, i) =>
        Promise.all([
          app.http.post(`/api/v1/users/me/invites/${mine[i]!.id}/accept`, {}, { token: p.token }),
          app.http.request("DELETE", `/api/v1/organizations/${org.id}/invites/${mine[i]!.id}`, { token: owner.token }),
        ]),
      ),
    );
    expect(serverErrors(raced.flat().map((a) => a.status))).toEqual([]);
    const members = (await app.http.get(`/api/v1/organizations/${org.id}/members`, { token: owner.token })).body.data.members as { email?: string; user?: { email: string } }[];
    const memberEmails = new Set(members.map((m) => m.email ?? m.user?.email));
    raced.forEach(([accept, cancel], i) => {
      expect([accept.status, cancel.status].filter((s) => s === 200), `invitation ${i}`).toHaveLength(1);
      expect(memberEmails.has(people[i]!.email)).toBe(accept.status === 200);
    });
  });
});

describe("accepting an invitation while an admin removes the person", () => {
  it("ends with a membership exactly where the removal found none to remove, and each removal audited", async () => {
    const { org, owner } = await orgWithRoles(app);
    const people: TestUser[] = [];
    for (let i = 0; i < 8; i++) people.push(await newUser(app));
    for (const p of people) expect((await app.http.post(`/api/v1/organizations/${org.id}/members`, { email: p.email, role: "member" }, { token: owner.token })).status).toBe(201);
    const mine = await Promise.all(people.map(async (p) => (await app.http.get("/api/v1/users/me/invites", { token: p.token })).body.data.invites[0] as { id: string }));

    // Staggered both ways, so some removals meet the fresh membership and some come too early.
    const after = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
    const raced = await Promise.all(
      people.map((p, i) =>
        Promise.all([
          after((4 - i) * 6).then(() => app.http.post(`/api/v1/users/me/invites/${mine[i]!.id}/accept`, {}, { token: p.token })),
          after((i - 4) * 6).then(() => app.http.request("DELETE", `/api/v1/organizations/${org.id}/members/${p.id}`, { token: owner.token })),
        ]),
      ),
    );
    expect(serverErrors(raced.flat().map((a) => a.status))).toEqual([]);
    const members = (await app.http.get(`/api/v1/organizations/${org.id}/members`, { token: owner.token })).body.data.members as { email?: string; user?: { email: string } }[];
    const memberEmails = new Set(members.map((m) => m.email ?? m.user?.email));
    const audited = resultRows<{ user_id: string }>(await app.container.db.execute(sql`select user_id from audit_logs where action = 'org.member.remove' and organization_id = ${org.id}`));
    raced.forEach(([accept, removal], i) => {
      // The invitation is the person's own to take: a removal does not cancel it.
      expect(accept.status, `acceptance ${i}`).toBe(200);
      expect([200, 404], `removal ${i}`).toContain(removal.status);
      expect(memberEmails.has(people[i]!.email), `membership ${i}`).toBe(removal.status === 404);
      expect(audited.filter((a) => a.user_id === people[i]!.id)).toHaveLength(removal.status === 200 ? 1 : 0);
    });
  });
});

describe("restoring a deleted account several times at once", () => {
  it("restores it once: one 200, the others 409 NOT_DELETED, one audit record", async () => {
    const root = await newSuperadmin(app);
    const user = await newUser(app);
    expect((await app.http.post(`/api/v1/admin/users/${user.id}/delete`, { confirm: true }, { token: root.token })).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 6 }, () => app.http.post(`/api/v1/admin/users/${user.id}/restore`, {}, { token: root.token })));
    expectOneWinner(answers, [409, "NOT_DELETED"]);
    expect((await auditRows(app, user.id)).filter((r) => r.action === "user.restore")).toHaveLength(1);
  });
});

describe("answering an SSH key's challenge several times at once", () => {
  it("spends the challenge once: one 200, the others VERIFICATION_FAILED, one audit record", async () => {
    const user = await newUser(app);
    const key = makeKey();
    const added = await app.http.post("/api/v1/ssh/keys", { key: key.pub, description: "race" }, { token: user.token });
    const id = added.body.data.id as string;
    const signature = await answerChallenge(app, user, id, key);
    const answers = await Promise.all(Array.from({ length: 6 }, () => app.http.post(`/api/v1/ssh/keys/${id}/verify`, { signature }, { token: user.token })));
    expectOneWinner(answers, [400, "VERIFICATION_FAILED"]);
    expect((await auditRows(app, user.id)).filter((r) => r.action === "ssh.key.verified")).toHaveLength(1);
  });
});

describe("several outbox workers draining at once", () => {
  it("send each queued email exactly once", async () => {
    const recipients = Array.from({ length: 24 }, (_, i) => `drain.${i}.${Date.now()}@example.com`);
    await app.container.db.transaction(async (tx) => {
      for (const to of recipients) await app.services.email.enqueue(tx, "reset-password", to, { name: "x", resetUrl: "https://x.test/r", expiresInHours: 2 });
    });
    await Promise.all([app.flushEmails(), app.flushEmails(), app.flushEmails(), app.flushEmails()]);
    await app.flushEmails();
    expect(recipients.map((r) => app.mail.to(r).length)).toEqual(recipients.map(() => 1));
  });
});

describe("rotating one CA's key several times at once", () => {
  it("rotates it that many times, one after another: every answer 200, one active key, each retired key the one before it", async () => {
    const { org, owner } = await orgWithRoles(app);
    const ca = await createCa(app, org.id, owner);
    const rotate = () => app.http.post(`/api/v1/organizations/${org.id}/cas/${ca.id}/rotate`, { reason: "race" }, { token: owner.token });
    const answers = await Promise.all(Array.from({ length: 4 }, rotate));
    expect(serverErrors(answers.map((a) => a.status))).toEqual([]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const keys = resultRows<{ is_active: boolean; fingerprint: string }>(
      await app.container.db.execute(sql`select is_active, fingerprint from ca_keys where ca_id = ${ca.id} order by created_at`),
    );
    expect(keys).toHaveLength(5);
    expect(keys.filter((k) => k.is_active)).toHaveLength(1);
    // Each rotation retired the key the previous one made: the old fingerprints answered are all distinct.
    expect(new Set(answers.map((a) => a.body.data.old_fingerprint)).size).toBe(4);
  });
});
