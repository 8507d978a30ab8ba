import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { sha256Hex } from "../../src/lib/crypto/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { auditRows, countRows } from "../helpers/db.js";
import { newUser, PASSWORD, registerUser, login, uniqueEmail } from "../factories/users.js";
import { invite, newOrg, orgWithRoles } from "../factories/orgs.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe("invites", () => {
  it("sends an email, audits ORG_INVITE_SENT with email and role, and lists and cancels", async () => {
    const { org, owner, admin } = await orgWithRoles(app);
    const email = uniqueEmail("invitee");
    const res = await app.http.post(`/api/v1/organizations/${org.id}/invites`, { email: email.toUpperCase(), role: "admin" }, { token: admin.token });
    expect(res.status).toBe(201);
    // The inviter under both names: ours and the original API's (invited_by_id).
    expect(res.body.data.invite).toMatchObject({ email, role: "admin", expired: false, invited_by: admin.id, invited_by_id: admin.id });
    expect(res.body.data.invite).not.toHaveProperty("token");
    await app.flushEmails();
    const mail = app.mail.last(email)!;
    expect(mail.subject).toBe(`You're invited to join ${org.name} on Keyward`);
    expect(mail.html).toContain(admin.email);
    const audit = (await auditRows(app, admin.id)).find((r) => r.action === "ORG_INVITE_SENT")!;
    expect(audit.metadata).toEqual({ email, role: "admin" });

    const dup = await app.http.post(`/api/v1/organizations/${org.id}/invites`, { email, role: "member" }, { token: owner.token });
    expect(dup.status).toBe(409);
    expect(dup.body.error.type).toBe("INVITE_PENDING");
    const list = await app.http.get(`/api/v1/organizations/${org.id}/invites`, { token: owner.token });
    expect(list.body.data.invites.find((i: { email: string }) => i.email === email)).toMatchObject({ invited_by: admin.id, invited_by_id: admin.id });
    const id = res.body.data.invite.id;
    expect((await app.http.delete(`/api/v1/organizations/${org.id}/invites/${id}`, { token: owner.token })).status).toBe(200);
    expect((await app.http.delete(`/api/v1/organizations/${org.id}/invites/${id}`, { token: owner.token })).status).toBe(404);
    const token = new URL(mail.text.match(/https?:\/\/\S+invite\S*/)![0]).searchParams.get("token")!;
    expect((await app.http.get(`/api/v1/invites/${token}`)).status).toBe(400);
  });

  it("refuses to invite an existing member with 409", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    const res = await app.http.post(`/api/v1/organizations/${org.id}/invites`, { email: member.email }, { token: owner.token });
    expect(res.status).toBe(409);
    expect(res.body.error.type).toBe("ALREADY_MEMBER");
  });

  it("registers a new user on acceptance, signs them in, and emails the inviter the details", async () => {
    const owner = await newUser(app, { fullName: "Olga Owner" });
    const org = await newOrg(app, owner, "Invite Org");
    const email = uniqueEmail("fresh");
    const token = await invite(app, org.id, owner, email, "member");
    const preview = await app.http.get(`/api/v1/invites/${token}`);
    expect(preview.body.data).toMatchObject({ email, organization: { id: org.id, name: "Invite Org" }, role: "member", user_exists: false });
    const missing = await app.http.post(`/api/v1/invites/${token}/accept`, { full_name: "Nina New" });
    expect(missing.status).toBe(400);
    const res = await app.http.post(`/api/v1/invites/${token}/accept`, { full_name: "Nina New", password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ organization: { id: org.id }, role: "member", user: { email, email_verified: true } });
    const me = await app.http.get("/api/v1/users/me/organizations/simple", { token: res.body.data.token });
    expect(me.body.data.organizations).toEqual([{ id: org.id, name: "Invite Org", slug: org.slug, role: "member" }]);
    await app.flushEmails();
    const note = app.mail.last(owner.email)!;
    expect(note.subject).toBe("Nina New joined Invite Org");
    for (const fact of ["Nina New", email, "Invite Org", "member"]) expect(note.html).toContain(fact);
    expect((await app.http.post(`/api/v1/invites/${token}/accept`, { password: PASSWORD })).status).toBe(400);
  });

  it("refuses a signed-in user with another address: EMAIL_MISMATCH explains what to do", async () => {
    const { org, owner } = await orgWithRoles(app);
    const invited = uniqueEmail("alice");
    const token = await invite(app, org.id, owner, invited);
    const bob = await newUser(app);
    const res = await app.http.post(`/api/v1/invites/${token}/accept`, {}, { token: bob.token });
    expect(res.status).toBe(403);
    expect(res.body.error.type).toBe("EMAIL_MISMATCH");
    expect(res.body.message).toContain(bob.email);
    expect(res.body.message).not.toContain(invited);
    expect(res.body.message).toMatch(/a\*+\w@example\.com/);
    expect(res.body.message).toMatch(/sign in/i);
    expect(res.body.message).toMatch(/new invitation/i);
    // Nothing was taken: the rightful invitee can still accept.
    const alice = await newUser(app, { email: invited });
    expect((await app.http.post(`/api/v1/invites/${token}/accept`, {}, { token: alice.token })).status).toBe(200);
  });

  it("asks an existing account to sign in instead of registering again", async () => {
    const { org, owner } = await orgWithRoles(app);
    const { email } = await registerUser(app);
    const token = await invite(app, org.id, owner, email);
    const res = await app.http.post(`/api/v1/invites/${token}/accept`, { password: PASSWORD });
    expect(res.status).toBe(409);
    expect(res.body.error.type).toBe("ACCOUNT_EXISTS");
    const signedIn = (await login(app, email)).body.data.token;
    expect((await app.http.post(`/api/v1/invites/${token}/accept`, {}, { token: signedIn })).status).toBe(200);
  });

  it("lets a verified user accept from their invite list, not an unverified one", async () => {
    const { org, owner } = await orgWithRoles(app);
    const verified = await newUser(app);
    await invite(app, org.id, owner, verified.email, "guest");
    const list = await app.http.get("/api/v1/users/me/invites", { token: verified.token });
    expect(list.body.data.invites).toHaveLength(1);
    const id = list.body.data.invites[0].id;
    expect((await app.http.post(`/api/v1/users/me/invites/${id}/accept`, {}, { token: verified.token })).body.data.role).toBe("guest");

    const unverified = await newUser(app, { verify: false });
    await invite(app, org.id, owner, unverified.email);
    expect((await app.http.get("/api/v1/users/me/invites", { token: unverified.token })).body.data.invites).toEqual([]);
  });

  it("expires invites after 7 days and then allows a new one", async () => {
    const { org, owner } = await orgWithRoles(app);
    const email = uniqueEmail("late");
    const token = await invite(app, org.id, owner, email);
    app.clock.advance(7 * 24 * 3600 + 1);
    try {
      expect((await app.http.get(`/api/v1/invites/${token}`)).status).toBe(400);
      expect((await app.http.post(`/api/v1/invites/${token}/accept`, { password: PASSWORD })).status).toBe(400);
      const fresh = (await login(app, owner.email)).body.data.token;
      const again = await app.http.post(`/api/v1/organizations/${org.id}/invites`, { email }, { token: fresh });
      expect(again.status).toBe(201);
    } finally {
      app.clock.reset();
    }
  });

  it("stores the SHA-256 of the emailed link's token, and not the token", async () => {
    const { org, owner } = await orgWithRoles(app);
    const email = uniqueEmail("hash");
    const res = await app.http.post(`/api/v1/organizations/${org.id}/invites`, { email, role: "member" }, { token: owner.token });
    expect(res.status).toBe(201);
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.lastWith(email, "/invite?token="), "/invite"));
    const [row] = resultRows<{ token_hash: string }>(await app.container.db.execute(sql`select token_hash from org_invites where id = ${res.body.data.invite.id}`));
    // The hash every emailed link is stored as (ARCHITECTURE rule 8), so a database read gives no usable link.
    expect(row!.token_hash).toBe(sha256Hex(token));
    expect(row!.token_hash).not.toBe(token);
    expect(await countRows(app, "org_invites", `token_hash = '${token}'`)).toBe(0);
  });
});

describe("resending an invitation", () => {
  const linkOf = (text: string) => new URL(text.match(/https?:\/\/\S+invite\S*/)![0]).searchParams.get("token")!;
  const inviteOf = async (orgId: string, admin: { token: string }, email: string) => {
    const res = await app.http.post(`/api/v1/organizations/${orgId}/invites`, { email, role: "member" }, { token: admin.token });
    expect(res.status).toBe(201);
    return res.body.data.invite.id as string;
  };

  it("emails a new link, renews the expiry, stops the old link, and audits ORG_INVITE_RESENT", async () => {
    const { org, owner, admin } = await orgWithRoles(app);
    const email = uniqueEmail("resend");
    const id = await inviteOf(org.id, admin, email);
    const sent = (await app.http.get(`/api/v1/organizations/${org.id}/invites`, { token: owner.token })).body.data.invites.find((i: { id: string }) => i.id === id);
    await app.flushEmails();
    const first = linkOf(app.mail.last(email)!.text);
    app.clock.advance(3600);

    const res = await app.http.post(`/api/v1/organizations/${org.id}/invites/${id}/resend`, {}, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data.invite).toMatchObject({ id, email, role: "member", expired: false, invited_by_id: admin.id });
    expect(new Date(res.body.data.invite.expires_at).getTime() - new Date(sent.expires_at).getTime()).toBeGreaterThanOrEqual(3_600_000);
    await app.flushEmails();
    const second = linkOf(app.mail.last(email)!.text);
    expect(second).not.toBe(first);
    expect((await app.http.get(`/api/v1/invites/${first}`)).status).toBe(400);
    expect((await app.http.get(`/api/v1/invites/${second}`)).status).toBe(200);
    expect((await auditRows(app, owner.id)).find((r) => r.action === "ORG_INVITE_RESENT")?.metadata).toEqual({ email, role: "member" });

    // GraphQL: the same operation, for an expired invitation too (signed in again: eight days on).
    app.clock.advance(8 * 86_400);
    const fresh = (await login(app, owner.email)).body.data.token;
    const gql = await app.http.gql("mutation($o: ID!, $i: ID!) { resendInvite(orgId: $o, inviteId: $i) { id expired } }", { o: org.id, i: id }, { token: fresh });
    expect(gql.data.resendInvite).toEqual({ id, expired: false });
  });

  it("is refused to members, to another organization's admins (not found), and for an accepted or cancelled invitation", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    const other = await orgWithRoles(app);
    const id = await inviteOf(org.id, owner, uniqueEmail("resend.refused"));
    expect((await app.http.post(`/api/v1/organizations/${org.id}/invites/${id}/resend`, {}, { token: member.token })).status).toBe(403);
    expect((await app.http.post(`/api/v1/organizations/${other.org.id}/invites/${id}/resend`, {}, { token: other.owner.token })).status).toBe(404);
    expect((await app.http.post(`/api/v1/organizations/${org.id}/invites/not-a-uuid/resend`, {}, { token: owner.token })).status).toBe(404);
    expect((await app.http.delete(`/api/v1/organizations/${org.id}/invites/${id}`, { token: owner.token })).status).toBe(200);
    expect((await app.http.post(`/api/v1/organizations/${org.id}/invites/${id}/resend`, {}, { token: owner.token })).status).toBe(404);
  });

  it("twenty resends at once leave exactly one working link", async () => {
    const { org, owner } = await orgWithRoles(app);
    const email = uniqueEmail("resend.race");
    const id = await inviteOf(org.id, owner, email);
    const answers = await Promise.all(Array.from({ length: 20 }, () => app.http.post(`/api/v1/organizations/${org.id}/invites/${id}/resend`, {}, { token: owner.token })));
    expect(answers.every((a) => a.status === 200 || a.status === 503)).toBe(true);
    await app.flushEmails();
    const links = app.mail.to(email).map((m) => linkOf(m.text));
    const working = (await Promise.all(links.map(async (t) => (await app.http.get(`/api/v1/invites/${t}`)).status))).filter((s) => s === 200);
    expect(working).toHaveLength(1);
  });
});
