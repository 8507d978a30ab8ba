import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { sessionCookie } from "../helpers/http.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";
import { login, newSuperadmin, newUser, uniqueEmail, PASSWORD } from "../factories/users.js";
import { auditRows } from "../helpers/db.js";

let app: TestApp;
const bootstrapEmail = uniqueEmail("root");
beforeAll(async () => {
  app = await startTestApp({ SUPERADMIN_EMAILS: bootstrapEmail });
});
afterAll(() => app?.close());

describe("suspension", () => {
  it("revokes live sessions at once and refuses sign-in with ACCOUNT_SUSPENDED", async () => {
    const admin = await newSuperadmin(app);
    const user = await newUser(app);
    const cookieLogin = await login(app, user.email);
    const cookie = sessionCookie(cookieLogin.headers);

    const res = await app.http.post(`/api/v1/admin/users/${user.id}/suspend`, { reason: "laptop stolen" }, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body.data.user.status).toBe("suspended");

    expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(401);
    expect((await app.http.get("/api/v1/auth/me", { cookie })).status).toBe(401);
    const denied = await login(app, user.email);
    expect(denied.status).toBe(403);
    expect(denied.body.error.type).toBe("ACCOUNT_SUSPENDED");
    // A wrong password still gets the generic answer: suspension is not revealed to a guesser.
    expect((await login(app, user.email, "wrong password entirely")).body.error.type).toBe("AUTHENTICATION_ERROR");

    const again = await app.http.post(`/api/v1/admin/users/${user.id}/suspend`, {}, { token: admin.token });
    expect(again.status).toBe(409);

    const actions = (await auditRows(app, user.id)).map((r) => r.action);
    expect(actions).toContain("user.suspend");

    const lifted = await app.http.post(`/api/v1/admin/users/${user.id}/unsuspend`, {}, { token: admin.token });
    expect(lifted.status).toBe(200);
    expect((await login(app, user.email)).status).toBe(200);
  });

  it("is refused to users who administer no organization of the target, and to a superadmin on themselves", async () => {
    const user = await newUser(app);
    const victim = await newUser(app);
    const res = await app.http.post(`/api/v1/admin/users/${victim.id}/suspend`, {}, { token: user.token });
    // Accounts outside your administered organizations do not exist for you.
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe("USER_NOT_FOUND");
    const admin = await newSuperadmin(app);
    const self = await app.http.post(`/api/v1/admin/users/${admin.id}/suspend`, {}, { token: admin.token });
    expect(self.status).toBe(400);
    const missing = await app.http.post(`/api/v1/admin/users/not-a-uuid/suspend`, {}, { token: admin.token });
    expect(missing.status).toBe(404);
    expect(missing.body.error.type).toBe("USER_NOT_FOUND");
  });

  it("works the same through GraphQL", async () => {
    const admin = await newSuperadmin(app);
    const user = await newUser(app);
    const res = await app.http.gql("mutation($id: ID!) { suspendUser(userId: $id, reason: \"test\") { status } }", { id: user.id }, { token: admin.token });
    expect(res.data.suspendUser.status).toBe("suspended");
    // The suspended user's own token stopped working at once.
    const stale = await app.http.gql("{ me { id } }", {}, { token: user.token });
    expect(stale.errors?.[0]?.extensions?.code).toBe("INVALID_TOKEN");
    const anonymous = await app.http.gql("mutation($id: ID!) { unsuspendUser(userId: $id) { status } }", { id: user.id });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe("AUTH_REQUIRED");
    const other = await newUser(app);
    const forbidden = await app.http.gql("mutation($id: ID!) { unsuspendUser(userId: $id) { status } }", { id: user.id }, { token: other.token });
    expect(forbidden.errors?.[0]?.extensions?.code).toBe("USER_NOT_FOUND");
  });
});

describe("superadmin bootstrap from SUPERADMIN_EMAILS", () => {
  it("promotes the listed address only once it is verified", async () => {
    await app.http.post("/api/v1/auth/register", { email: bootstrapEmail, password: PASSWORD });
    const before = await login(app, bootstrapEmail);
    expect(before.body.data.user.is_superadmin).toBe(false);
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.last(bootstrapEmail), "/verify-email"));
    const verified = await app.http.post("/api/v1/auth/verify-email", { token });
    expect(verified.body.data.user.is_superadmin).toBe(true);
  });
});

describe("the system audit log (GET /audit-logs)", () => {
  it("shows a superadmin every record, filtered, on numbered pages; anyone else their own only", async () => {
    const root = await newSuperadmin(app);
    const alice = await newUser(app);
    const bob = await newUser(app);
    expect((await login(app, bob.email, "not the password")).status).toBe(401);
    const log = (query: string, token = root.token) => app.http.get(`/api/v1/audit-logs${query}`, { token });

    const all = await log("?per_page=5");
    expect(all.status).toBe(200);
    expect(all.body.data).toMatchObject({ page: 1, per_page: 5 });
    expect(all.body.data.count).toBeGreaterThan(5);
    expect(all.body.data.pages).toBe(Math.ceil(all.body.data.count / 5));
    expect(new Set(all.body.data.audit_logs.map((e: { user_id: string }) => e.user_id)).size).toBeGreaterThan(1);

    const bobs = await log(`?user_id=${bob.id}&per_page=200`);
    expect(bobs.body.data.audit_logs.length).toBeGreaterThan(0);
    expect(bobs.body.data.audit_logs.every((e: { user_id: string }) => e.user_id === bob.id)).toBe(true);
    const failed = await log(`?user_id=${bob.id}&success=false`);
    expect(failed.body.data.audit_logs.map((e: { action: string; success: boolean }) => [e.action, e.success])).toEqual([["user.login.failed", false]]);
    expect((await log(`?user_id=${bob.id}&success=true`)).body.data.audit_logs.every((e: { success: boolean }) => e.success)).toBe(true);
    expect((await log(`?user_id=${bob.id}&action=user.login.failed`)).body.data.count).toBe(1);
    // q is a case-insensitive substring; LIKE's wildcards in it are taken literally.
    const byText = await log(`?user_id=${bob.id}&q=LOGIN.FAIL`);
    expect(byText.body.data.audit_logs.map((e: { action: string }) => e.action)).toEqual(["user.login.failed"]);
    expect((await log(`?q=${encodeURIComponent("%")}`)).body.data.count).toBe(0);
    expect((await log(`?q=${encodeURIComponent("user_login")}`)).body.data.count).toBe(0);
    const byResource = await log("?resource_type=user&per_page=200");
    expect(byResource.body.data.audit_logs.length).toBeGreaterThan(0);
    expect(byResource.body.data.audit_logs.every((e: { resource_type: string }) => e.resource_type === "user")).toBe(true);

    // Anyone else: their own records, whichever user they name.
    const own = await log(`?user_id=${bob.id}&per_page=200`, alice.token);
    expect(own.status).toBe(200);
    expect(own.body.data.audit_logs.length).toBeGreaterThan(0);
    expect(own.body.data.audit_logs.every((e: { user_id: string }) => e.user_id === alice.id)).toBe(true);
    expect(JSON.stringify(own.body)).not.toContain(bob.id);
    // Twenty at once, naming someone else: each answer is the caller's own records, and nothing else.
    const parallel = await Promise.all(Array.from({ length: 20 }, () => log(`?user_id=${bob.id}`, alice.token)));
    for (const res of parallel) {
      expect(res.status).toBe(200);
      expect(res.body.data.count).toBe(own.body.data.count);
      expect(res.body.data.audit_logs.every((e: { user_id: string }) => e.user_id === alice.id)).toBe(true);
    }

    for (const query of ["?success=maybe", "?user_id=nope", "?per_page=201", "?page=0", `?q=${"x".repeat(201)}`]) {
      const res = await log(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.type, query).toBe("VALIDATION_ERROR");
    }
    expect((await app.http.get("/api/v1/audit-logs")).status).toBe(401);

    // The same log through GraphQL, the same rules.
    const query = "query($userId: ID, $success: Boolean, $q: String) { systemAuditLog(userId: $userId, success: $success, q: $q) { count items { action userId success } } }";
    const gql = await app.http.gql(query, { userId: bob.id, success: false }, { token: root.token });
    expect(gql.data.systemAuditLog).toEqual({ count: 1, items: [{ action: "user.login.failed", userId: bob.id, success: false }] });
    const gqlOwn = await app.http.gql(query, { userId: bob.id }, { token: alice.token });
    expect(gqlOwn.data.systemAuditLog.items.every((e: { userId: string }) => e.userId === alice.id)).toBe(true);
    expect((await app.http.gql(query, { q: "x".repeat(201) }, { token: root.token })).errors[0].extensions.code).toBe("VALIDATION_ERROR");
    expect((await app.http.gql(query, {})).errors[0].extensions.code).toBe("AUTH_REQUIRED");
  });
});
