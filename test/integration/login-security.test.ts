import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { connectPostgres, resultRows } from "../../src/infra/db.js";
import { createPasswordHasher } from "../../src/lib/crypto/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { holdRows } from "../helpers/row-lock.js";
import { auditRows } from "../helpers/db.js";
import { login, newUser, uniqueEmail, PASSWORD } from "../factories/users.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_LOGIN_ACCOUNT_FAILURES: "3", RATE_LIMIT_LOGIN_LOCKOUT_BASE: "1" });
});
afterAll(() => app?.close());

describe("login answers and audit", () => {
  it("says the same for an unknown email and a wrong password", async () => {
    const user = await newUser(app);
    const unknown = await login(app, uniqueEmail("nobody"), "whatever password");
    const wrong = await login(app, user.email, "whatever password");
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(unknown.body.message).toBe(wrong.body.message);
    expect(unknown.body.error.type).toBe(wrong.body.error.type);
  });

  it("records successes and failures with ip address and user agent", async () => {
    const user = await newUser(app);
    await app.http.post("/api/v1/auth/login", { email: user.email, password: "nope nope nope" }, { headers: { "user-agent": "audit-agent/1.0" } });
    await app.http.post("/api/v1/auth/login", { email: user.email, password: PASSWORD }, { headers: { "user-agent": "audit-agent/2.0", "x-request-id": "req-login-42" } });
    const rows = await auditRows(app, user.id);
    const failed = rows.find((r) => r.action === "user.login.failed")!;
    const ok = rows.filter((r) => r.action === "user.login").at(-1)!;
    expect(failed).toMatchObject({ success: false, user_agent: "audit-agent/1.0" });
    expect(failed.ip_address).toMatch(/127\.0\.0\.1|::1/);
    expect(ok).toMatchObject({ success: true, user_agent: "audit-agent/2.0", request_id: "req-login-42" });
    expect(ok.ip_address).toMatch(/127\.0\.0\.1|::1/);
    expect(JSON.stringify(rows)).not.toContain(PASSWORD);
  });

  it("answers with the account's new last sign-in, and records each session it opens, also when sign-ins run at once", async () => {
    const user = await newUser(app);
    const before = Date.now();
    // Three at once: within this app's failure budget, which counts every attempt until it succeeds.
    const signIns = await Promise.all(Array.from({ length: 3 }, () => login(app, user.email, PASSWORD)));
    expect(signIns.map((r) => r.status)).toEqual([200, 200, 200]);
    for (const r of signIns) expect(new Date(r.body.data.user.last_login_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
    const me = await app.http.get("/api/v1/auth/me", { token: signIns[0]!.body.data.token });
    expect(new Date(me.body.data.user.last_login_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
    // Every session opened is listed (its index entry was written with it) and has its record.
    const sessions = (await app.http.get("/api/v1/auth/sessions", { token: user.token })).body.data.sessions.map((x: { id: string }) => x.id);
    expect(sessions).toHaveLength(4);
    const recorded = (await auditRows(app, user.id)).filter((r) => r.action === "user.login").map((r) => r.metadata.session_id);
    expect(recorded.sort()).toEqual([...sessions].sort());
  });

  it("upgrades a hash made with older parameters at sign-in, and the sign-in stands", async () => {
    const user = await newUser(app);
    // A hash of the same password with weaker parameters, as an older release stored it.
    const weak = await createPasswordHasher({ memoryCost: 8192, timeCost: 1, parallelism: 1 }).hash(PASSWORD);
    await app.container.db.execute(sql`update password_credentials set password_hash = ${weak} where user_id = ${user.id}`);
    const res = await login(app, user.email, PASSWORD);
    expect(res.status, res.text).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { token: res.body.data.token })).status).toBe(200);
    const [row] = resultRows<{ h: string }>(await app.container.db.execute(sql`select password_hash as h from password_credentials where user_id = ${user.id}`));
    expect(row!.h).not.toBe(weak);
    expect(row!.h).toMatch(/^\$argon2id\$/);
    expect((await login(app, user.email, PASSWORD)).status).toBe(200);
  });

  it("refuses an address or name with a lone surrogate on both doors (found by the fuzz: a 500 from the audit row)", async () => {
    // PostgreSQL's jsonb refuses a lone surrogate, and the failed sign-in records the address it was given.
    const user = await newUser(app);
    for (const email of ["\ud800", "a\udfff@example.com"]) {
      const rest = await app.http.post("/api/v1/auth/login", { email, password: "whatever password" });
      expect(rest.status).toBe(400);
      expect(rest.body.error.details.errors).toEqual([{ path: "email", message: "must be well-formed Unicode (no lone surrogates)" }]);
      const gql = await app.http.gql("mutation($i: LoginInput!) { login(input: $i) { __typename } }", { i: { email, password: "whatever password" } });
      expect(gql.errors[0].extensions).toMatchObject({ code: "VALIDATION_ERROR", status: 400 });
    }
    // Stored text would be silently changed (U+FFFD): refused the same way. A surrogate pair is fine.
    expect((await app.http.patch("/api/v1/users/me", { full_name: "Ana \udc00" }, { token: user.token })).status).toBe(400);
    const emoji = await app.http.patch("/api/v1/users/me", { full_name: "Ana 😀" }, { token: user.token });
    expect(emoji.body.data.user.full_name).toBe("Ana 😀");
  });

  it("keeps the audit log append-only", async () => {
    await newUser(app);
    await expect(app.container.db.execute(sql`update audit_logs set action = 'tampered'`)).rejects.toThrow();
    await expect(app.container.db.execute(sql`delete from audit_logs`)).rejects.toThrow();
  });
});

describe("login throttling", () => {
  it("locks an account after consecutive failures, answers 429 with Retry-After, and unlocks after the back-off", async () => {
    const user = await newUser(app);
    for (let i = 0; i < 3; i++) expect((await login(app, user.email, "bad password here")).status).toBe(401);
    const locked = await login(app, user.email, PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.body.error.type).toBe("RATE_LIMIT_EXCEEDED");
    const retryAfter = Number(locked.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // The limiter runs on the injected clock: the test moves past the back-off instead of waiting for it.
    app.clock.advance(retryAfter);
    expect((await login(app, user.email, PASSWORD)).status).toBe(200);
  });

  it("resets the failure count after a successful sign-in", async () => {
    const user = await newUser(app);
    for (let i = 0; i < 2; i++) await login(app, user.email, "bad password here");
    expect((await login(app, user.email, PASSWORD)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await login(app, user.email, "bad password here")).status).toBe(401);
    expect((await login(app, user.email, PASSWORD)).status).toBe(200);
  });
});

describe("per-IP limits", () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ RATE_LIMIT_LOGIN_IP: "2/3600", RATE_LIMIT_FORGOT_PASSWORD: "1/3600" });
  });
  afterAll(() => limited?.close());

  it("limits sign-in attempts per client address", async () => {
    await login(limited, uniqueEmail(), "x1234567");
    await login(limited, uniqueEmail(), "x1234567");
    const third = await login(limited, uniqueEmail(), "x1234567");
    expect(third.status).toBe(429);
  });

  it("limits forgot-password per client address", async () => {
    expect((await limited.http.post("/api/v1/auth/forgot-password", { email: uniqueEmail() })).status).toBe(200);
    expect((await limited.http.post("/api/v1/auth/forgot-password", { email: uniqueEmail() })).status).toBe(429);
  });
});

describe("own audit log", () => {
  it("lists the caller's records, newest first, filtered and paginated, in REST and GraphQL", async () => {
    const user = await newUser(app);
    await login(app, user.email, "bad password here");
    await login(app, user.email, PASSWORD);
    const res = await app.http.get("/api/v1/auth/audit-logs?per_page=2", { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ page: 1, per_page: 2 });
    expect(res.body.data.count).toBeGreaterThanOrEqual(4);
    expect(res.body.data.audit_logs).toHaveLength(2);
    expect(res.body.data.audit_logs[0].action).toBe("user.login");
    const failed = await app.http.get("/api/v1/auth/audit-logs?action=user.login.failed", { token: user.token });
    expect(failed.body.data.audit_logs.map((r: { action: string }) => r.action)).toEqual(["user.login.failed"]);
    expect(failed.body.data.audit_logs[0].metadata).toMatchObject({ reason: "invalid_credentials" });
    const gql = await app.http.gql("{ myAuditLog(action: \"user.login.failed\") { count items { action success } } }", {}, { token: user.token });
    expect(gql.data.myAuditLog).toEqual({ count: 1, items: [{ action: "user.login.failed", success: false }] });
    const bad = await app.http.get("/api/v1/auth/audit-logs?per_page=1000", { token: user.token });
    expect(bad.status).toBe(400);
  });
});

// Two connections at once: only PostgreSQL (the embedded database belongs to one process).
if (process.env.DATABASE_URL) describe("an account that changes while it signs in (PostgreSQL)", () => {
  it("is not signed in, and nothing records a sign-in, when it was deleted or suspended after its password was checked", async () => {
    const db = connectPostgres(app.container.config.db.url!, { max: 2, onnotice: () => {} });
    try {
      // (A password changed meanwhile is mfa.test.ts's case: a row of another table, which a
      // statement that waited for the account's row still reads as of its start.)
      for (const kind of ["deleted", "suspended"] as const) {
        const user = await newUser(app);
        const recorded = async () => (await auditRows(app, user.id)).filter((r) => r.action === "user.login").length;
        const before = await recorded();
        // Another transaction holds the account's row: the sign-in checks the password, then waits
        // at its last write; the account changes and that transaction commits.
        const held = await holdRows(db, (tx) => tx`select id from users where id = ${user.id} for update`);
        const signIn = login(app, user.email, PASSWORD);
        // The sign-in got past its password check and waits at its last write.
        expect(await held.waiting(1), kind).toBe(1);
        await held.release((tx) =>
          kind === "deleted" ? tx`update users set deleted_at = now() where id = ${user.id}` : tx`update users set status = 'suspended', suspended_at = now() where id = ${user.id}`,
        );
        const res = await signIn;
        expect(res.status, kind).toBe(401);
        expect(await recorded(), kind).toBe(before);
        const failed = (await auditRows(app, user.id)).filter((r) => r.action === "user.login.failed");
        expect(failed.map((r) => r.metadata), kind).toEqual([{ method: "password", reason: "account_unavailable" }]);
        if (kind === "suspended") {
          // Active again: the session the refused sign-in opened was revoked, only the earlier one is left.
          await db`update users set status = 'active', suspended_at = null where id = ${user.id}`;
          let sessions = await app.http.get("/api/v1/auth/sessions", { token: user.token });
          for (let i = 0; i < 100 && sessions.status !== 200; i++) {
            await new Promise((r) => setTimeout(r, 20));
            sessions = await app.http.get("/api/v1/auth/sessions", { token: user.token });
          }
          expect(sessions.body.data.sessions).toHaveLength(1);
        }
      }
    } finally {
      await db.end();
    }
  });
});
