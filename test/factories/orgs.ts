import type { TestApp } from "../helpers/app.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";
import { login, newUser, PASSWORD, uniqueEmail, type TestUser } from "./users.js";

let seq = 0;

export async function newOrg(app: TestApp, owner: TestUser, name?: string): Promise<{ id: string; name: string; slug: string }> {
  const res = await app.http.post("/api/v1/organizations", { name: name ?? `Org ${Date.now().toString(36)}${seq++}` }, { token: owner.token });
  if (res.status !== 201) throw new Error(`create org failed: ${res.status} ${res.text}`);
  return res.body.data.organization;
}

/**
 * Adds an existing user to an organization with a role: the admin adds them by email, which invites
 * an existing account, and the user accepts the invitation from their own account.
 */
export async function addMember(app: TestApp, orgId: string, admin: TestUser, user: TestUser, role: string) {
  const res = await app.http.post(`/api/v1/organizations/${orgId}/members`, { email: user.email, role }, { token: admin.token });
  if (res.status !== 201) throw new Error(`add member failed: ${res.status} ${res.text}`);
  const mine = await app.http.get("/api/v1/users/me/invites", { token: user.token });
  const invite = (mine.body.data?.invites ?? []).find((i: { organization: { id: string } }) => i.organization.id === orgId);
  if (!invite) throw new Error(`no invitation for ${user.email}: ${mine.status} ${mine.text}`);
  const accepted = await app.http.post(`/api/v1/users/me/invites/${invite.id}/accept`, {}, { token: user.token });
  if (accepted.status !== 200) throw new Error(`accept failed: ${accepted.status} ${accepted.text}`);
}

/**
 * A person an organization provisions: the admin adds an address that has no account, and its
 * owner creates the account from the activation email. The account is managed by that organization.
 */
export async function addManagedMember(app: TestApp, orgId: string, admin: TestUser, role = "member", options: { email?: string; password?: string } = {}): Promise<TestUser> {
  const email = options.email ?? uniqueEmail("managed");
  const password = options.password ?? PASSWORD;
  const res = await app.http.post(`/api/v1/organizations/${orgId}/members`, { email, role, full_name: "Managed Member" }, { token: admin.token });
  if (res.status !== 201) throw new Error(`add member failed: ${res.status} ${res.text}`);
  await app.flushEmails();
  const code = tokenFrom(linkIn(app.mail.lastWith(email, "/activate?code="), "/activate"), "code");
  const activated = await app.http.post("/api/v1/auth/activate", { code, password });
  if (activated.status !== 200) throw new Error(`activate failed: ${activated.status} ${activated.text}`);
  const signedIn = await login(app, email, password);
  if (signedIn.status !== 200) throw new Error(`login failed: ${signedIn.status} ${signedIn.text}`);
  return { id: signedIn.body.data.user.id, email, password, token: signedIn.body.data.token };
}

/** An organization with one user of each role. */
export async function orgWithRoles(app: TestApp) {
  const owner = await newUser(app, { fullName: "Owner" });
  const org = await newOrg(app, owner);
  const admin = await newUser(app, { fullName: "Admin" });
  const member = await newUser(app, { fullName: "Member" });
  const guest = await newUser(app, { fullName: "Guest" });
  await addMember(app, org.id, owner, admin, "admin");
  await addMember(app, org.id, owner, member, "member");
  await addMember(app, org.id, owner, guest, "guest");
  return { org, owner, admin, member, guest };
}

/** Sends an invite and returns the token from the email the invitee received. */
export async function invite(app: TestApp, orgId: string, by: TestUser, email: string, role = "member"): Promise<string> {
  const res = await app.http.post(`/api/v1/organizations/${orgId}/invites`, { email, role }, { token: by.token });
  if (res.status !== 201) throw new Error(`invite failed: ${res.status} ${res.text}`);
  await app.flushEmails();
  return tokenFrom(linkIn(app.mail.lastWith(email, "/invite?token="), "/invite"));
}

export { PASSWORD };
