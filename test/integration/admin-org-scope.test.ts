import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { auditRows } from "../helpers/db.js";
import { login, newSuperadmin, newUser, PASSWORD } from "../factories/users.js";
import { orgWithRoles } from "../factories/orgs.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe("organization admins over their members", () => {
  it("search only the accounts of organizations they administer", async () => {
    const { org, admin, member, guest } = await orgWithRoles(app);
    const stranger = await newUser(app);
    const res = await app.http.get("/api/v1/admin/users?per_page=200", { token: admin.token });
    expect(res.status).toBe(200);
    const emails = res.body.data.users.map((u: { email: string }) => u.email);
    expect(emails).toEqual(expect.arrayContaining([member.email, guest.email]));
    expect(emails).not.toContain(stranger.email);
    const found = await app.http.get(`/api/v1/admin/users?q=${encodeURIComponent(member.email.slice(0, 12))}`, { token: admin.token });
    expect(found.body.data.users[0].organizations).toEqual([{ id: org.id, name: org.name, role: "member" }]);
    expect((await app.http.get("/api/v1/admin/users", { token: member.token })).status).toBe(403);
    expect((await app.http.get(`/api/v1/admin/users/${stranger.id}`, { token: admin.token })).status).toBe(404);
  });

  it("suspend a member with a notice email and revoked sessions; owners are protected", async () => {
    const { owner, admin, member } = await orgWithRoles(app);
    const res = await app.http.post(`/api/v1/admin/users/${member.id}/suspend`, { reason: "left the company" }, { token: admin.token });
    expect(res.status).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { token: member.token })).status).toBe(401);
    await app.flushEmails();
    const notice = app.mail.last(member.email)!;
    expect(notice.subject).toBe("Your Keyward account was suspended");
    expect(notice.html).toContain("left the company");
    const onOwner = await app.http.post(`/api/v1/admin/users/${owner.id}/suspend`, {}, { token: admin.token });
    expect(onOwner.status).toBe(403);
    expect(onOwner.body.error.type).toBe("OWNER_PROTECTION");
    expect((await app.http.post(`/api/v1/admin/users/${member.id}/unsuspend`, {}, { token: admin.token })).status).toBe(200);
  });

  it("verify email, set a password, delete and restore", async () => {
    const { admin, member } = await orgWithRoles(app);
    const other = await login(app, member.email);
    expect((await app.http.post(`/api/v1/admin/users/${member.id}/verify-email`, {}, { token: admin.token })).body.data.user.email_verified).toBe(true);
    expect((await app.http.post(`/api/v1/admin/users/${member.id}/password`, { password: "short" }, { token: admin.token })).status).toBe(400);
    expect((await app.http.post(`/api/v1/admin/users/${member.id}/password`, { password: "set by an administrator" }, { token: admin.token })).status).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { token: other.body.data.token })).status).toBe(401);
    expect((await login(app, member.email, PASSWORD)).status).toBe(401);
    expect((await login(app, member.email, "set by an administrator")).status).toBe(200);
    expect((await app.http.post(`/api/v1/admin/users/${member.id}/delete`, {}, { token: admin.token })).status).toBe(400);
    expect((await app.http.post(`/api/v1/admin/users/${member.id}/delete`, { confirm: true }, { token: admin.token })).status).toBe(200);
    expect((await login(app, member.email, "set by an administrator")).status).toBe(401);
    const restored = await app.http.post(`/api/v1/admin/users/${member.id}/restore`, {}, { token: admin.token });
    expect(restored.status).toBe(200);
    expect((await login(app, member.email, "set by an administrator")).status).toBe(200);
    const actions = (await auditRows(app, member.id)).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(["admin.email.verify", "admin.password.set", "user.delete", "user.restore"]));
  });
});

describe("superadmins", () => {
  it("see every account and any account's audit trail; others do not", async () => {
    const root = await newSuperadmin(app);
    const lone = await newUser(app);
    const all = await app.http.get(`/api/v1/superadmin/users?q=${encodeURIComponent(lone.email)}`, { token: root.token });
    expect(all.body.data.users.map((u: { email: string }) => u.email)).toEqual([lone.email]);
    const audit = await app.http.get(`/api/v1/superadmin/users/${lone.id}/audit`, { token: root.token });
    expect(audit.status).toBe(200);
    expect(audit.body.data.audit_logs.map((r: { action: string }) => r.action)).toEqual(expect.arrayContaining(["user.register", "user.login"]));
    const denied = await app.http.get(`/api/v1/superadmin/users/${lone.id}/audit`, { token: lone.token });
    expect(denied.status).toBe(403);
    // An organization admin is not a superadmin: no global list for them.
    const { admin } = await orgWithRoles(app);
    expect((await app.http.get("/api/v1/superadmin/users", { token: admin.token })).status).toBe(403);
    const gql = await app.http.gql("query($u: ID!) { superadminUserAudit(userId: $u) { count items { action } } }", { u: lone.id }, { token: root.token });
    expect(gql.data.superadminUserAudit.count).toBe(audit.body.data.count);
    const gqlDenied = await app.http.gql("query($u: ID!) { superadminUserAudit(userId: $u) { count } }", { u: lone.id }, { token: lone.token });
    expect(gqlDenied.errors[0].extensions.code).toBe("AUTHORIZATION_ERROR");
  });
});
