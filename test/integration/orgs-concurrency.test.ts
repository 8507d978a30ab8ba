import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { countRows } from "../helpers/db.js";
import { captureLogger } from "../helpers/log-capture.js";
import { newUser, PASSWORD, uniqueEmail } from "../factories/users.js";
import { addMember, invite, newOrg } from "../factories/orgs.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

/**
 * On PostgreSQL, waits until another session is queued on a row lock (the request under test). The
 * embedded database runs one transaction at a time, so there the request simply waits its turn.
 */
async function untilSomeoneWaitsForALock(): Promise<void> {
  if (app.container.database.kind !== "postgres") return;
  for (let i = 0; i < 500; i++) {
    if ((await countRows(app, "pg_locks", "not granted")) > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("the request never queued on the lock");
}

const activeMemberships = (userId: string) => countRows(app, "active_memberships", `user_id = '${userId}'`);

describe("concurrency", () => {
  it("30 parallel creations by one user never leave more than 10 memberships", async () => {
    const user = await newUser(app);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => app.http.post("/api/v1/organizations", { name: `Race ${i}` }, { token: user.token })),
    );
    const created = results.filter((r) => r.status === 201).length;
    const refused = results.filter((r) => r.status === 403 && r.body.error.type === "ORG_LIMIT_REACHED").length;
    expect(created).toBe(10);
    expect(refused).toBe(20);
    expect(await activeMemberships(user.id)).toBe(10);
  });

  it("20 parallel accepts of one invite create one membership", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const invitee = await newUser(app);
    const token = await invite(app, org.id, owner, invitee.email);
    const results = await Promise.all(Array.from({ length: 20 }, () => app.http.post(`/api/v1/invites/${token}/accept`, {}, { token: invitee.token })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status >= 500)).toHaveLength(0);
    expect(await countRows(app, "org_memberships", `organization_id = '${org.id}' and user_id = '${invitee.id}' and deleted_at is null`)).toBe(1);
  });

  it("20 parallel registrations through one invite create one account", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const email = uniqueEmail("racer");
    const token = await invite(app, org.id, owner, email);
    const results = await Promise.all(Array.from({ length: 20 }, () => app.http.post(`/api/v1/invites/${token}/accept`, { password: PASSWORD })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status >= 500)).toHaveLength(0);
    expect(await countRows(app, "users", `email = '${email}' and deleted_at is null`)).toBe(1);
    expect(await countRows(app, "org_memberships", `organization_id = '${org.id}' and deleted_at is null`)).toBe(2);
  });

  it("parallel removals never leave an organization without an owner", async () => {
    for (let round = 0; round < 5; round++) {
      const a = await newUser(app);
      const b = await newUser(app);
      const org = await newOrg(app, a);
      await addMember(app, org.id, a, b, "owner");
      const [ab, ba, la, lb] = await Promise.all([
        app.http.delete(`/api/v1/organizations/${org.id}/members/${b.id}`, { token: a.token }),
        app.http.delete(`/api/v1/organizations/${org.id}/members/${a.id}`, { token: b.token }),
        app.http.post(`/api/v1/organizations/${org.id}/leave`, {}, { token: a.token }),
        app.http.post(`/api/v1/organizations/${org.id}/leave`, {}, { token: b.token }),
      ]);
      for (const r of [ab, ba, la, lb]) expect(r.status).toBeLessThan(500);
      expect(await countRows(app, "org_memberships", `organization_id = '${org.id}' and role = 'owner' and deleted_at is null`)).toBeGreaterThanOrEqual(1);
    }
  });

  it("re-reads the caller's role under the organization's lock: a demoted owner's racing grant of owner does not commit", async () => {
    const a = await newUser(app);
    const b = await newUser(app);
    const c = await newUser(app);
    const org = await newOrg(app, a);
    await addMember(app, org.id, a, b, "owner");
    await addMember(app, org.id, a, c, "member");
    let grant!: Promise<{ status: number; body: any }>;
    // Hold the lock a demotion holds, start A's grant (it passes the early check and queues), then demote A.
    await app.container.db.transaction(async (tx) => {
      await tx.execute(sql`select id from organizations where id = ${org.id} for update`);
      grant = app.http.patch(`/api/v1/organizations/${org.id}/members/${c.id}/role`, { role: "owner" }, { token: a.token });
      await untilSomeoneWaitsForALock();
      await tx.execute(sql`update org_memberships set role = 'admin' where organization_id = ${org.id} and user_id = ${a.id}`);
    });
    const res = await grant;
    expect(res.status).toBe(403);
    expect(await countRows(app, "org_memberships", `organization_id = '${org.id}' and user_id = '${c.id}' and role = 'member' and deleted_at is null`)).toBe(1);
  });
});

describe("the organization limit's fallback", () => {
  it("lets creation proceed, and logs a warning, when the count fails", async () => {
    const { logger, lines } = captureLogger();
    const broken = await startTestApp({ MAX_ORGS_PER_USER: "1" }, { logger });
    try {
      const user = await newUser(broken);
      await newOrg(broken, user);
      const refused = await broken.http.post("/api/v1/organizations", { name: "Second" }, { token: user.token });
      expect(refused.body.error.type).toBe("ORG_LIMIT_REACHED");
      // Break what the count reads: the query now fails inside the database.
      await broken.container.db.execute(sql`drop view active_memberships`);
      const res = await broken.http.post("/api/v1/organizations", { name: "Second" }, { token: user.token });
      expect(res.status).toBe(201);
      expect(lines.some((l) => l.level === 40 && /organization count failed/.test(l.msg))).toBe(true);
      expect(await countRows(broken, "org_memberships", `user_id = '${user.id}'`)).toBe(2);
    } finally {
      await broken.close();
    }
  });

  it("lets creation proceed when the count times out (PostgreSQL statement timeout)", async () => {
    const { logger, lines } = captureLogger();
    const slow = await startTestApp({ MAX_ORGS_PER_USER: "1", ORG_COUNT_TIMEOUT_MS: "50" }, { logger });
    try {
      const user = await newUser(slow);
      await newOrg(slow, user);
      // The view now takes 300 ms per row. PostgreSQL cancels the count at 50 ms; PGlite runs it through.
      await slow.container.db.execute(sql`create or replace view active_memberships as
        select m.id as membership_id, m.user_id, m.organization_id, m.role, m.joined_at, o.name as organization_name, o.slug as organization_slug
        from org_memberships m join organizations o on o.id = m.organization_id
        cross join lateral (select pg_sleep(0.3)) s
        where m.deleted_at is null and o.deleted_at is null`);
      const res = await slow.http.post("/api/v1/organizations", { name: "Second" }, { token: user.token });
      if (slow.container.database.kind === "postgres") {
        expect(res.status).toBe(201);
        expect(lines.some((l) => l.level === 40 && /organization count failed/.test(l.msg))).toBe(true);
      } else {
        expect(res.body.error.type).toBe("ORG_LIMIT_REACHED");
      }
    } finally {
      await slow.close();
    }
  });
});
