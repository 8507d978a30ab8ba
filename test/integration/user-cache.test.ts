import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectPostgres, resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { newSuperadmin, newUser } from "../factories/users.js";
import { addManagedMember, addMember, newOrg } from "../factories/orgs.js";

/**
 * Account profiles are served from each instance's memory (src/modules/users/user-cache.ts). These
 * tests hold the cache to its promise: whatever changes a profile, however it is written, the next
 * requests see it; while the database's announcements cannot arrive, nothing is served from memory.
 * The TTL is set far beyond the test so that only invalidation can explain a fresh answer.
 */
const LONG_TTL = { CACHE_TTL_MS: String(3_600_000) };
const onPostgres = Boolean(process.env.DATABASE_URL);

/** Polls `read` until `done` holds; on PostgreSQL a notification crosses a connection first. */
async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 2_000): Promise<T> {
  const until = Date.now() + ms;
  let value = await read();
  while (!done(value) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 10));
    value = await read();
  }
  return value;
}

describe("account profiles held in memory", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(LONG_TTL);
  });
  afterAll(() => app.close());

  const me = (token: string) => app.http.get("/api/v1/auth/me", { token });

  it("shows the caller's own change on the very next request, on both doors", async () => {
    const user = await newUser(app);
    expect((await me(user.token)).body.data.user.full_name).toBe("Test User");
    const patched = await app.http.patch("/api/v1/users/me", { full_name: "Renamed Person" }, { token: user.token });
    expect(patched.status).toBe(200);
    expect((await me(user.token)).body.data.user.full_name).toBe("Renamed Person");
    const gql = await app.http.gql("{ me { fullName } }", undefined, { token: user.token });
    expect(gql.data.me.fullName).toBe("Renamed Person");
  });

  it("a promotion to superadmin and a suspension take effect on the next request", async () => {
    const operator = await newSuperadmin(app);
    const user = await newUser(app);
    expect((await app.http.get("/api/v1/superadmin/users", { token: user.token })).status).toBe(403);
    // Promotion is an operator's act (npm run admin), through the admin service.
    await app.services.operators.setSuperadmin({ actor: { kind: "anonymous" }, requestId: "t", ip: null, userAgent: null }, user.email, true);
    expect((await app.http.get("/api/v1/superadmin/users", { token: user.token })).status).toBe(200);

    const suspended = await app.http.post(`/api/v1/admin/users/${user.id}/suspend`, { reason: "test" }, { token: operator.token });
    expect(suspended.status).toBe(200);
    expect((await me(user.token)).status).toBe(401);
  });

  it("a change written straight into the database (an operator's SQL) is seen without waiting for the TTL", async () => {
    const user = await newUser(app);
    await me(user.token);
    await app.container.db.execute(sql`update users set full_name = 'Set By SQL' where id = ${user.id}`);
    const seen = await eventually(() => me(user.token), (r) => r.body.data.user.full_name === "Set By SQL");
    expect(seen.body.data.user.full_name).toBe("Set By SQL");

    // A session the database no longer backs: the account deleted underneath it.
    await app.container.db.execute(sql`update users set deleted_at = now() where id = ${user.id}`);
    const gone = await eventually(() => me(user.token), (r) => r.status === 401);
    expect(gone.status).toBe(401);
  });

  it("a renamed managing organization and a removed password show in the profile", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner, "Before Rename");
    const managed = await addManagedMember(app, org.id, owner);
    expect((await me(managed.token)).body.data.user.managed_by).toEqual({ id: org.id, name: "Before Rename" });
    expect((await app.http.patch(`/api/v1/organizations/${org.id}`, { name: "After Rename" }, { token: owner.token })).status).toBe(200);
    expect((await me(managed.token)).body.data.user.managed_by).toEqual({ id: org.id, name: "After Rename" });

    expect((await me(owner.token)).body.data.user.has_password).toBe(true);
    await app.container.db.execute(sql`delete from password_credentials where user_id = ${owner.id}`);
    const without = await eventually(() => me(owner.token), (r) => r.body.data.user.has_password === false);
    expect(without.body.data.user.has_password).toBe(false);
  });
});

describe("the caller's organizations in /auth/me, held in memory", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(LONG_TTL);
  });
  afterAll(() => app.close());

  const orgsOf = async (token: string) => (await app.http.get("/api/v1/auth/me", { token })).body.data.organizations as Array<{ id: string; name: string; slug: string; role: string }>;

  it("lists id, name, slug and role, and every change through the API shows on the very next request", async () => {
    const owner = await newUser(app);
    const member = await newUser(app);
    expect(await orgsOf(owner.token)).toEqual([]);
    const org = await newOrg(app, owner, "Cache Works");
    expect(await orgsOf(owner.token)).toEqual([{ id: org.id, name: "Cache Works", slug: org.slug, role: "owner" }]);

    expect(await orgsOf(member.token)).toEqual([]);
    await addMember(app, org.id, owner, member, "member");
    expect(await orgsOf(member.token)).toEqual([{ id: org.id, name: "Cache Works", slug: org.slug, role: "member" }]);
    expect((await app.http.patch(`/api/v1/organizations/${org.id}/members/${member.id}/role`, { role: "admin" }, { token: owner.token })).status).toBe(200);
    expect((await orgsOf(member.token))[0]!.role).toBe("admin");
    expect((await app.http.patch(`/api/v1/organizations/${org.id}`, { name: "Cache Renamed" }, { token: owner.token })).status).toBe(200);
    expect((await orgsOf(member.token))[0]!.name).toBe("Cache Renamed");
    expect((await app.http.delete(`/api/v1/organizations/${org.id}/members/${member.id}`, { token: owner.token })).status).toBe(200);
    expect(await orgsOf(member.token)).toEqual([]);

    const second = await newOrg(app, owner, "Second Org");
    expect((await orgsOf(owner.token)).map((o) => o.id).sort()).toEqual([org.id, second.id].sort());
    expect((await app.http.request("DELETE", `/api/v1/organizations/${second.id}`, { token: owner.token, body: { confirm: true } })).status).toBe(200);
    expect((await orgsOf(owner.token)).map((o) => o.id)).toEqual([org.id]);
  });

  it("a change written straight into the database (an operator's SQL) is seen without waiting for the TTL", async () => {
    const owner = await newUser(app);
    const member = await newUser(app);
    const org = await newOrg(app, owner);
    await addMember(app, org.id, owner, member, "member");
    expect((await orgsOf(member.token))[0]!.role).toBe("member");
    await app.container.db.execute(sql`update org_memberships set role = 'guest' where organization_id = ${org.id} and user_id = ${member.id}`);
    expect((await eventually(() => orgsOf(member.token), (o) => o[0]?.role === "guest"))[0]!.role).toBe("guest");
    await app.container.db.execute(sql`update organizations set slug = 'set-by-sql-${sql.raw(String(Date.now()))}' where id = ${org.id}`);
    expect((await eventually(() => orgsOf(member.token), (o) => o[0]?.slug.startsWith("set-by-sql-") ?? false))[0]!.slug).toMatch(/^set-by-sql-/);
    await app.container.db.execute(sql`update organizations set deleted_at = now() where id = ${org.id}`);
    expect(await eventually(() => orgsOf(member.token), (o) => o.length === 0)).toEqual([]);
  });
});

// Several instances share one database only on PostgreSQL (the embedded database belongs to one process).
if (onPostgres) describe("account profiles across instances (PostgreSQL)", () => {
  let a: TestApp;
  let b: TestApp;
  let dbUrl: string;
  beforeAll(async () => {
    a = await startTestApp(LONG_TTL);
    // A second instance on the same database and Redis, as behind a load balancer.
    dbUrl = a.container.config.db.url!;
    b = await startTestApp({ ...LONG_TTL, DATABASE_URL: dbUrl, REDIS_URL: a.container.config.redis.url!, REDIS_KEY_PREFIX: a.container.config.redis.keyPrefix });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it("a suspension through one instance stops the session on the other", async () => {
    const operator = await newSuperadmin(a);
    const user = await newUser(a);
    expect((await b.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(200);
    await b.http.get("/api/v1/auth/me", { token: user.token });
    expect((await a.http.post(`/api/v1/admin/users/${user.id}/suspend`, { reason: "test" }, { token: operator.token })).status).toBe(200);
    const after = await eventually(() => b.http.get("/api/v1/auth/me", { token: user.token }), (r) => r.status === 401);
    expect(after.status).toBe(401);
  });

  it("a role change through one instance shows in the other's /auth/me without waiting for the TTL", async () => {
    const owner = await newUser(a);
    const member = await newUser(a);
    const org = await newOrg(a, owner);
    await addMember(a, org.id, owner, member, "member");
    const orgsOnB = async () => (await b.http.get("/api/v1/auth/me", { token: member.token })).body.data.organizations as Array<{ role: string }>;
    expect((await orgsOnB())[0]!.role).toBe("member");
    expect((await a.http.patch(`/api/v1/organizations/${org.id}/members/${member.id}/role`, { role: "admin" }, { token: owner.token })).status).toBe(200);
    expect((await eventually(orgsOnB, (o) => o[0]?.role === "admin"))[0]!.role).toBe("admin");
  });

  it("a rename through one instance shows on the other without waiting for the TTL", async () => {
    const user = await newUser(a);
    expect((await b.http.get("/api/v1/auth/me", { token: user.token })).body.data.user.full_name).toBe("Test User");
    await a.http.patch("/api/v1/users/me", { full_name: "Renamed On A" }, { token: user.token });
    const seen = await eventually(() => b.http.get("/api/v1/auth/me", { token: user.token }), (r) => r.body.data.user.full_name === "Renamed On A");
    expect(seen.body.data.user.full_name).toBe("Renamed On A");
  });

  it("serves nothing from memory while the triggers that announce changes are missing (a database not yet migrated)", async () => {
    const user = await newUser(b);
    const listeners = async () =>
      resultRows<{ n: number }>(await a.container.db.execute(sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'keyward listener'`))[0]!.n;
    await a.container.db.execute(sql`drop trigger users_notify_changed on users`);
    try {
      // Re-subscribing is when an instance looks for its triggers.
      const admin = connectPostgres(dbUrl, { max: 1, onnotice: () => {} });
      try {
        await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = 'keyward listener'`;
      } finally {
        await admin.end();
      }
      expect(await eventually(listeners, (n) => n === 2, 5_000)).toBe(2);
      await b.http.get("/api/v1/auth/me", { token: user.token });
      // Nothing announces this change; only reading the database every time can show it.
      await a.container.db.execute(sql`update users set full_name = 'Unannounced' where id = ${user.id}`);
      expect((await b.http.get("/api/v1/auth/me", { token: user.token })).body.data.user.full_name).toBe("Unannounced");
    } finally {
      await a.container.db.execute(sql`create trigger users_notify_changed after update or delete on users for each row execute function keyward_notify_user_changed()`);
    }
  });

  it("after its subscription drops, an instance re-subscribes and forgets what it held (announcements were missed)", async () => {
    const user = await newUser(b);
    await b.http.get("/api/v1/auth/me", { token: user.token });
    const listeners = async () =>
      resultRows<{ n: number }>(await a.container.db.execute(sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'keyward listener'`))[0]!.n;
    expect(await listeners()).toBe(2);
    // Cut B's LISTEN connection, as a database restart or a network cut would.
    const admin = connectPostgres(dbUrl, { max: 1, onnotice: () => {} });
    try {
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = 'keyward listener'`;
    } finally {
      await admin.end();
    }
    // Written while B cannot hear: only re-subscribing (and forgetting) can show it.
    await a.container.db.execute(sql`update users set full_name = 'Changed While Down' where id = ${user.id}`);
    expect(await eventually(listeners, (n) => n === 2, 5_000)).toBe(2);
    const seen = await eventually(() => b.http.get("/api/v1/auth/me", { token: user.token }), (r) => r.body.data.user.full_name === "Changed While Down", 5_000);
    expect(seen.body.data.user.full_name).toBe("Changed While Down");
    // And announcements reach it again.
    await a.container.db.execute(sql`update users set full_name = 'Changed After' where id = ${user.id}`);
    const again = await eventually(() => b.http.get("/api/v1/auth/me", { token: user.token }), (r) => r.body.data.user.full_name === "Changed After");
    expect(again.body.data.user.full_name).toBe("Changed After");
  });
});
