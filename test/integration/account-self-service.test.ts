import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { sessionCookie } from "../helpers/http.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";
import { invite, newOrg } from "../factories/orgs.js";
import { login, newUser, uniqueEmail } from "../factories/users.js";

/**
 * What the account console needs beyond the older self-service routes: changing the address
 * (proved by a link to the new one), signing out every other session, and declining an
 * invitation. A person acts on themselves only; the same operations answer alike over GraphQL.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

const changeLink = async (to: string) => {
  await app.flushEmails();
  return tokenFrom(linkIn(app.mail.lastWith(to, "/verify-email?token="), "/verify-email"));
};

describe("email change", () => {
  it("keeps the old address until the link sent to the new one is opened, then tells the old address", async () => {
    const user = await newUser(app, { fullName: "Mover" });
    const next = uniqueEmail("moved");

    const noPassword = await app.http.post("/api/v1/users/me/email", { new_email: next }, { token: user.token });
    expect(noPassword.body.error.type).toBe("PASSWORD_REQUIRED");
    const wrong = await app.http.post("/api/v1/users/me/email", { new_email: next, password: "not my password" }, { token: user.token });
    expect(wrong.body.error.type).toBe("CURRENT_PASSWORD_INCORRECT");
    const same = await app.http.post("/api/v1/users/me/email", { new_email: user.email.toUpperCase(), password: user.password }, { token: user.token });
    expect(same.body.error.type).toBe("VALIDATION_ERROR");

    const asked = await app.http.post("/api/v1/users/me/email", { new_email: next, password: user.password }, { token: user.token });
    expect(asked.status, asked.text).toBe(200);
    expect(asked.body.message).toContain(next);
    const token = await changeLink(next);
    // Nothing changed yet: the old address still signs in, the new one does not.
    expect((await app.http.get("/api/v1/users/me", { token: user.token })).body.data.user.email).toBe(user.email);
    expect((await login(app, next, user.password)).status).toBe(401);

    const opened = await app.http.post("/api/v1/auth/verify-email", { token });
    expect(opened.status, opened.text).toBe(200);
    expect(opened.body.data.user).toMatchObject({ email: next, email_verified: true });
    expect((await app.http.get("/api/v1/users/me", { token: user.token })).body.data.user.email).toBe(next);
    expect((await login(app, next, user.password)).status).toBe(200);
    expect((await login(app, user.email, user.password)).status).toBe(401);
    await app.flushEmails();
    expect(app.mail.lastWith(user.email, next)?.subject).toMatch(/email address was changed/);
    // The link works once.
    expect((await app.http.post("/api/v1/auth/verify-email", { token })).body.error.type).toBe("INVALID_LINK");
  });

  it("answers alike for an address that has an account, and refuses the link if it is still taken", async () => {
    const user = await newUser(app);
    const other = await newUser(app);
    const freeEmail = uniqueEmail("free");
    const free = await app.http.post("/api/v1/users/me/email", { new_email: freeEmail, password: user.password }, { token: user.token });
    const taken = await app.http.post("/api/v1/users/me/email", { new_email: other.email, password: user.password }, { token: user.token });
    expect(taken.status).toBe(free.status);
    expect(taken.body.message.replace(other.email, "X")).toBe(free.body.message.replace(freeEmail, "X"));
    const token = await changeLink(other.email);
    const refused = await app.http.post("/api/v1/auth/verify-email", { token });
    expect(refused.status).toBe(409);
    expect(refused.body.error.type).toBe("EMAIL_TAKEN");
    expect((await app.http.get("/api/v1/users/me", { token: user.token })).body.data.user.email).toBe(user.email);
  });

  it("only the latest request's link works, and GraphQL asks the same way", async () => {
    const user = await newUser(app);
    const first = uniqueEmail("first");
    const second = uniqueEmail("second");
    await app.http.post("/api/v1/users/me/email", { new_email: first, password: user.password }, { token: user.token });
    const firstToken = await changeLink(first);
    const gql = await app.http.gql(`mutation($i: ChangeEmailInput!) { requestEmailChange(input: $i) { message } }`, { i: { newEmail: second, password: user.password } }, { token: user.token });
    expect(gql.errors).toBeUndefined();
    expect(gql.data.requestEmailChange.message).toContain(second);
    expect((await app.http.post("/api/v1/auth/verify-email", { token: firstToken })).body.error.type).toBe("INVALID_LINK");
    expect((await app.http.post("/api/v1/auth/verify-email", { token: await changeLink(second) })).body.data.user.email).toBe(second);
  });
});

describe("signing out the other sessions", () => {
  it("ends every other session of the caller and keeps the one making the call", async () => {
    const user = await newUser(app);
    const laptop = (await login(app, user.email)).body.data.token as string;
    const phone = (await login(app, user.email)).body.data.token as string;
    const stranger = await newUser(app);

    const res = await app.http.delete("/api/v1/auth/sessions", { token: user.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.revoked).toBe(2);
    for (const gone of [laptop, phone]) expect((await app.http.get("/api/v1/auth/me", { token: gone })).status).toBe(401);
    expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(200);
    // Someone else's sessions are out of reach.
    expect((await app.http.get("/api/v1/auth/me", { token: stranger.token })).status).toBe(200);
    const sessions = (await app.http.get("/api/v1/auth/sessions", { token: user.token })).body.data.sessions;
    expect(sessions).toEqual([expect.objectContaining({ current: true })]);

    const again = (await login(app, user.email)).body.data.token as string;
    const gql = await app.http.gql("mutation { revokeOtherSessions }", {}, { token: user.token });
    expect(gql.data.revokeOtherSessions).toBe(1);
    expect((await app.http.get("/api/v1/auth/me", { token: again })).status).toBe(401);
  });
});

describe("declining an invitation", () => {
  it("closes the caller's own invitation only; the organization may invite again", async () => {
    const owner = await newUser(app, { fullName: "Owner" });
    const org = await newOrg(app, owner);
    const invitee = await newUser(app);
    const stranger = await newUser(app);
    await invite(app, org.id, owner, invitee.email);
    const [pending] = (await app.http.get("/api/v1/users/me/invites", { token: invitee.token })).body.data.invites;
    expect(pending.organization.id).toBe(org.id);

    const foreign = await app.http.post(`/api/v1/users/me/invites/${pending.id}/decline`, {}, { token: stranger.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.type).toBe("INVITE_NOT_FOUND");
    expect((await app.http.post("/api/v1/users/me/invites/not-an-id/decline", {}, { token: invitee.token })).status).toBe(404);

    const declined = await app.http.post(`/api/v1/users/me/invites/${pending.id}/decline`, {}, { token: invitee.token });
    expect(declined.status, declined.text).toBe(200);
    expect((await app.http.get("/api/v1/users/me/invites", { token: invitee.token })).body.data.invites).toEqual([]);
    expect((await app.http.post(`/api/v1/users/me/invites/${pending.id}/accept`, {}, { token: invitee.token })).status).toBe(404);
    expect((await app.http.get(`/api/v1/organizations/${org.id}/invites`, { token: owner.token })).body.data.invites).toEqual([]);

    await invite(app, org.id, owner, invitee.email);
    const [fresh] = (await app.http.get("/api/v1/users/me/invites", { token: invitee.token })).body.data.invites;
    const gql = await app.http.gql(`mutation($id: ID!) { declineMyInvite(inviteId: $id) { message } }`, { id: fresh.id }, { token: invitee.token });
    expect(gql.data.declineMyInvite.message).toBe("Invitation declined");
  });
});

describe("the account's addresses", () => {
  it("are the web app's: visitors sign in first; /network-access (in older emails) leads to its screen", async () => {
    const anonymous = await app.http.get("/account");
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/login?next=%2Faccount");
    expect((await app.http.get("/account/security")).headers.get("location")).toBe("/login?next=%2Faccount%2Fsecurity");

    const user = await newUser(app);
    const cookie = sessionCookie((await login(app, user.email)).headers);
    for (const path of ["/account", "/account/security", "/account/sessions", "/account/networks"]) {
      const res = await app.http.get(path, { cookie });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-security-policy"), path).toContain("script-src 'self'");
      expect(res.text, path).toContain(`<div id="root"></div>`);
      // The app's page holds no data: the screens read it through /graphql.
      expect(res.text, path).not.toContain(user.email);
    }
    for (const c of [cookie, undefined]) {
      const old = await app.http.get("/network-access", { cookie: c });
      expect(old.status).toBe(301);
      expect(old.headers.get("location")).toBe("/account/networks");
    }
  });
});
