import type { TestApp } from "../helpers/app.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";
import { newUser, PASSWORD, type TestUser } from "./users.js";

let seq = 0;

export async function newOrg(app: TestApp, owner: TestUser, name?: string): Promise<{ id: string; name: string; slug: string }> {
  const res = await app.http.post("/api/v1/organizations", { name: name ?? `Org ${Date.now().toString(36)}${seq++}` }, { token: owner.token });
  if (res.status !== 201) throw new Error(`create org failed: ${res.status} ${res.text}`);
  return res.body.data.organization;
}

/** Adds an existing user to an organization with a role (through the admin API). */
export async function addMember(app: TestApp, orgId: string, admin: TestUser, user: TestUser, role: string) {
  const res = await app.http.post(`/api/v1/organizations/${orgId}/members`, { email: user.email, role }, { token: admin.token });
  if (res.status !== 201) throw new Error(`add member failed: ${res.status} ${res.text}`);
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
