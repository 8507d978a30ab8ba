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
