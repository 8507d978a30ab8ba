import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { login, newSuperadmin, newUser, PASSWORD, type TestUser } from "../factories/users.js";
import { orgWithRoles } from "../factories/orgs.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ SESSION_IDLE_TIMEOUT: "3600000", SESSION_ABSOLUTE_TIMEOUT: "3600000" });
});
afterAll(() => app?.close());

const DAY = 86_400;
const reminders = (to: string) => app.mail.to(to).filter((m) => m.subject.startsWith("Action required: set up multi-factor"));

async function enrollTotp(user: TestUser) {
  const enroll = await app.http.post("/api/v1/auth/totp/enroll", {}, { token: user.token });
  return app.http.post("/api/v1/auth/totp/verify-enrollment", { code: totpCode(enroll.body.data.secret, totpStep(app.clock.now())) }, { token: user.token });
}

describe("organization MFA policy and the compliance job", () => {
  it("reminds once per step, restricts past-due members, and lifts it on enrollment", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await enrollTotp(owner);
    const put = await app.http.request("PUT", `/api/v1/organizations/${org.id}/security-policy`, {
      token: owner.token,
      body: { mfa_policy_mode: "required", mfa_grace_period_days: 10, notify_days_before: 3 },
    });
    expect(put.status).toBe(200);
    expect(put.body.data.security_policy).toMatchObject({ mfa_policy_mode: "required", mfa_grace_period_days: 10, policy_version: 1 });
    const compliance = (await app.http.get(`/api/v1/organizations/${org.id}/mfa-compliance`, { token: owner.token })).body.data.members;
    expect(compliance.find((m: { user_id: string }) => m.user_id === owner.id).status).toBe("compliant");
    expect(compliance.find((m: { user_id: string }) => m.user_id === member.id).status).toBe("in_grace");

    const run = async () => {
      await app.services.mfaPolicy.runCompliance();
      await app.flushEmails();
    };
    await run();
    expect(reminders(member.email)).toHaveLength(0);

    app.clock.advance(7 * DAY + 60); // 3 days before the deadline: the notice
    await run();
    await run();
    expect(reminders(member.email)).toHaveLength(1);
    expect(reminders(member.email)[0]!.html).toContain(org.name);
    expect(reminders(owner.email)).toHaveLength(0);

    app.clock.advance(2 * DAY); // the day before: the final reminder
    await run();
    await run();
    expect(reminders(member.email)).toHaveLength(2);

    expect((await app.http.get(`/api/v1/organizations/${org.id}/members`, { token: member.token })).status).toBe(200);
    app.clock.advance(DAY); // past the deadline
    await run();
    expect(reminders(member.email)).toHaveLength(2);
    const restricted = await app.http.get(`/api/v1/organizations/${org.id}/members`, { token: member.token });
    expect(restricted.status).toBe(403);
    expect(restricted.body.error).toMatchObject({ type: "MFA_COMPLIANCE_REQUIRED", details: { overall_status: "past_due" } });
    const mine = await app.http.get("/api/v1/users/me/mfa-compliance", { token: member.token });
    expect(mine.body.data.organizations.find((o: { organization_id: string }) => o.organization_id === org.id).status).toBe("past_due");

    expect((await enrollTotp(member)).status).toBe(200);
    expect((await app.http.get(`/api/v1/organizations/${org.id}/members`, { token: member.token })).status).toBe(200);
    app.clock.reset();
  });

  it("pages the compliance list as the original API did (?page=&page_size=), and lists everyone without them", async () => {
    const { org, owner, admin, member, guest } = await orgWithRoles(app);
    const other = await orgWithRoles(app);
    const base = `/api/v1/organizations/${org.id}/mfa-compliance`;
    const everyone = await app.http.get(base, { token: owner.token });
    expect(everyone.body.data).toMatchObject({ count: 4 });
    expect(everyone.body.data).not.toHaveProperty("page");
    const byEmail = everyone.body.data.members.map((m: { user_id: string }) => m.user_id);
    expect(new Set(byEmail)).toEqual(new Set([owner.id, admin.id, member.id, guest.id]));

    const pages: string[] = [];
    for (const page of [1, 2, 3]) {
      const res = await app.http.get(`${base}?page=${page}&page_size=3`, { token: admin.token });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ count: 4, page, page_size: 3 });
      pages.push(...res.body.data.members.map((m: { user_id: string }) => m.user_id));
    }
    // Every member once, in the unpaged order; past the end, an empty page.
    expect(pages).toEqual(byEmail);
    expect((await app.http.get(`${base}?page_size=2`, { token: owner.token })).body.data).toMatchObject({ page: 1, page_size: 2, count: 4 });
    expect(Object.keys((await app.http.get(`${base}?page=1`, { token: owner.token })).body.data.members[0]).sort()).toEqual(
      ["compliant_at", "deadline_at", "last_notified_at", "status", "user_email", "user_id", "user_name"],
    );

    for (const query of ["page=0", "page=two", "page_size=0", "page_size=201"]) {
      const res = await app.http.get(`${base}?${query}`, { token: owner.token });
      expect(res.status, query).toBe(400);
      expect(res.body.error.type, query).toBe("VALIDATION_ERROR");
    }
    // Members' standings are for the organization's admins only.
    expect((await app.http.get(`${base}?page=1`, { token: member.token })).status).toBe(403);
    expect([403, 404]).toContain((await app.http.get(`${base}?page=1`, { token: other.owner.token })).status);
    expect((await app.http.get(`${base}?page=1`)).status).toBe(401);
  });

  it("lets an admin send a reminder now, and GraphQL shows the same policy", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    await app.http.request("PUT", `/api/v1/organizations/${org.id}/security-policy`, { token: owner.token, body: { mfa_policy_mode: "required" } });
    const sent = await app.http.post(`/api/v1/organizations/${org.id}/members/${member.id}/send-mfa-reminder`, {}, { token: owner.token });
    expect(sent.body.data.sent).toBe(true);
    await app.flushEmails();
    expect(reminders(member.email)).toHaveLength(1);
    expect((await app.http.post(`/api/v1/organizations/${org.id}/members/${member.id}/send-mfa-reminder`, {}, { token: member.token })).status).toBe(403);
    const gql = await app.http.gql("query($o: ID!) { orgSecurityPolicy(orgId: $o) { mfaPolicyMode mfaGracePeriodDays } }", { o: org.id }, { token: member.token });
    expect(gql.data.orgSecurityPolicy).toEqual({ mfaPolicyMode: "required", mfaGracePeriodDays: 14 });
  });

  it("runs on one instance at a time (advisory lock)", async () => {
    if (app.container.database.kind !== "postgres") {
      // PGlite has one connection: transactions already run one at a time, and the lock is free.
      expect(await app.services.mfaPolicy.runCompliance()).not.toBeNull();
      return;
    }
    // Another instance holds the lock: this one skips the pass.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const other = app.container.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(7420002)`);
      locked();
      await held;
    });
    await isLocked;
    expect(await app.services.mfaPolicy.runCompliance()).toBeNull();
    release();
    await other;
    expect(await app.services.mfaPolicy.runCompliance()).not.toBeNull();
  });
});

describe("administrators and MFA", () => {
  it("view a user's methods without secrets and remove them; the user is told by email", async () => {
    const admin = await newSuperadmin(app);
    const user = await newUser(app);
    await enrollTotp(user);
    const methods = await app.http.get(`/api/v1/admin/users/${user.id}/mfa`, { token: admin.token });
    expect(methods.body.data).toMatchObject({ totp_enabled: true, backup_codes_remaining: 10, webauthn: [] });
    expect(JSON.stringify(methods.body)).not.toMatch(/secret|sealed|hash/i);
    expect((await app.http.delete(`/api/v1/admin/users/${user.id}/mfa/everything`, { token: admin.token })).status).toBe(400);
    const removed = await app.http.delete(`/api/v1/admin/users/${user.id}/mfa/all`, { token: admin.token });
    expect(removed.status).toBe(200);
    await app.flushEmails();
    expect(app.mail.last(user.email)!.subject).toBe("Multi-factor authentication was removed from your Keyward account");
    expect(app.mail.last(user.email)!.html).toContain(admin.email);
    const plain = await login(app, user.email, PASSWORD);
    expect(plain.body.data.token).toMatch(/^kws_/);
    const stranger = await newUser(app);
    expect((await app.http.get(`/api/v1/admin/users/${user.id}/mfa`, { token: stranger.token })).status).toBe(404);
  });
});
