import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobFromKeyObject } from "../../src/lib/ssh/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { auditRows } from "../helpers/db.js";
import { login, newSuperadmin, newUser, PASSWORD } from "../factories/users.js";
import { addManagedMember, orgWithRoles } from "../factories/orgs.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe("organization admins over the accounts their organization manages", () => {
  it("search only managed accounts: members who joined with their own account are not theirs to administer", async () => {
    const { org, owner, admin, member } = await orgWithRoles(app);
    const managed = await addManagedMember(app, org.id, owner);
    const stranger = await newUser(app);
    const res = await app.http.get("/api/v1/admin/users?per_page=200", { token: admin.token });
    expect(res.status).toBe(200);
    const emails = res.body.data.users.map((u: { email: string }) => u.email);
    expect(emails).toEqual([managed.email]);
    expect(res.body.data.users[0]).toMatchObject({ managed_by: { id: org.id, name: org.name }, organizations: [{ id: org.id, name: org.name, role: "member" }] });
    expect((await app.http.get("/api/v1/admin/users", { token: member.token })).status).toBe(403);
    // Sharing an organization is not administering: the account does not exist for them here.
    expect((await app.http.get(`/api/v1/admin/users/${member.id}`, { token: admin.token })).status).toBe(404);
    expect((await app.http.get(`/api/v1/admin/users/${stranger.id}`, { token: admin.token })).status).toBe(404);
  });

  it("shows a managed account with its SSH public keys, to those who administer it only", async () => {
    const { org, owner, admin, member } = await orgWithRoles(app);
    const other = await orgWithRoles(app);
    const managed = await addManagedMember(app, org.id, owner);
    const key = `ssh-ed25519 ${blobFromKeyObject(generateKeyPairSync("ed25519").publicKey).toString("base64")} laptop`;
    const added = await app.http.post("/api/v1/ssh/keys", { key }, { token: managed.token });
    expect(added.status).toBe(201);

    const seen = await app.http.get(`/api/v1/admin/users/${managed.id}`, { token: admin.token });
    expect(seen.status).toBe(200);
    expect(seen.body.data.user).toMatchObject({ id: managed.id, email: managed.email });
    expect(seen.body.data.ssh_keys).toEqual([expect.objectContaining({ id: added.body.data.id, fingerprint: added.body.data.fingerprint })]);
    // The answer carries nothing of the account's credentials.
    expect(JSON.stringify(seen.body)).not.toMatch(/password_hash|argon2|totp_secret/i);
    // The same reach as the account itself: a plain member, another organization's admin, an outsider.
    expect((await app.http.get(`/api/v1/admin/users/${managed.id}`, { token: member.token })).status).toBe(404);
    const foreign = await app.http.get(`/api/v1/admin/users/${managed.id}`, { token: other.admin.token });
    expect(foreign.status).toBe(404);
    expect(JSON.stringify(foreign.body)).not.toContain(added.body.data.fingerprint);
    expect((await app.http.get(`/api/v1/admin/users/${managed.id}`)).status).toBe(401);
    // The GraphQL twin, the same reach.
    const keysQuery = "query($id: ID!) { userSshKeys(userId: $id) { id fingerprint } }";
    expect((await app.http.gql(keysQuery, { id: managed.id }, { token: admin.token })).data.userSshKeys).toEqual([{ id: added.body.data.id, fingerprint: added.body.data.fingerprint }]);
    for (const token of [member.token, other.admin.token]) expect((await app.http.gql(keysQuery, { id: managed.id }, { token })).errors[0].extensions.code).toBe("USER_NOT_FOUND");
    // The account's own owner may look at it here too, keys included.
    const self = await app.http.get(`/api/v1/admin/users/${managed.id}`, { token: managed.token });
    expect(self.status).toBe(200);
    expect(self.body.data.ssh_keys).toHaveLength(1);
  });

  it("suspend a managed member with a notice email and revoked sessions; a managed owner is protected", async () => {
    const { org, owner, admin } = await orgWithRoles(app);
    const managed = await addManagedMember(app, org.id, owner);
    const res = await app.http.post(`/api/v1/admin/users/${managed.id}/suspend`, { reason: "left the company" }, { token: admin.token });
    expect(res.status).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { token: managed.token })).status).toBe(401);
    await app.flushEmails();
    const notice = app.mail.last(managed.email)!;
    expect(notice.subject).toBe("Your Keyward account was suspended");
    expect(notice.html).toContain("left the company");
    expect((await app.http.post(`/api/v1/admin/users/${managed.id}/unsuspend`, {}, { token: admin.token })).status).toBe(200);

    const managedOwner = await addManagedMember(app, org.id, owner, "owner");
    const onOwner = await app.http.post(`/api/v1/admin/users/${managedOwner.id}/suspend`, {}, { token: admin.token });
    expect(onOwner.status).toBe(403);
    expect(onOwner.body.error.type).toBe("OWNER_PROTECTION");
  });

  it("set a password, delete and restore a managed account; marking an address verified is for superadmins", async () => {
    const { org, owner, admin } = await orgWithRoles(app);
    const managed = await addManagedMember(app, org.id, owner);
    const other = await login(app, managed.email);
    const verify = await app.http.post(`/api/v1/admin/users/${managed.id}/verify-email`, {}, { token: admin.token });
    expect(verify.status).toBe(403);
    expect(verify.body.error.type).toBe("AUTHORIZATION_ERROR");
    expect((await app.http.post(`/api/v1/admin/users/${managed.id}/password`, { password: "short" }, { token: admin.token })).status).toBe(400);
    expect((await app.http.post(`/api/v1/admin/users/${managed.id}/password`, { password: "set by an administrator" }, { token: admin.token })).status).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { token: other.body.data.token })).status).toBe(401);
    expect((await login(app, managed.email, PASSWORD)).status).toBe(401);
    expect((await login(app, managed.email, "set by an administrator")).status).toBe(200);
    expect((await app.http.post(`/api/v1/admin/users/${managed.id}/delete`, {}, { token: admin.token })).status).toBe(400);
    expect((await app.http.post(`/api/v1/admin/users/${managed.id}/delete`, { confirm: true }, { token: admin.token })).status).toBe(200);
    expect((await login(app, managed.email, "set by an administrator")).status).toBe(401);
    const restored = await app.http.post(`/api/v1/admin/users/${managed.id}/restore`, {}, { token: admin.token });
    expect(restored.status).toBe(200);
    expect((await login(app, managed.email, "set by an administrator")).status).toBe(200);
    const actions = (await auditRows(app, managed.id)).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(["admin.password.set", "user.delete", "user.restore"]));
    expect(actions).not.toContain("admin.email.verify");
  });

  it("ends with the membership: a managed member who leaves is theirs alone again", async () => {
    const { org, owner, admin } = await orgWithRoles(app);
    const managed = await addManagedMember(app, org.id, owner);
    expect((await app.http.get(`/api/v1/admin/users/${managed.id}`, { token: admin.token })).status).toBe(200);
    // The account (GraphQL's me, which the web app's profile screen shows) says who can act on it.
    const managedBy = async () => (await app.http.gql("{ me { managedBy { id name } } }", {}, { token: managed.token })).data.me.managedBy;
    expect(await managedBy()).toEqual({ id: org.id, name: org.name });
    expect((await app.http.post(`/api/v1/organizations/${org.id}/leave`, {}, { token: managed.token })).status).toBe(200);
    const me = await app.http.get("/api/v1/users/me", { token: managed.token });
    expect(me.body.data.user.managed_by).toBeNull();
    expect(await managedBy()).toBeNull();
    expect((await app.http.get(`/api/v1/admin/users/${managed.id}`, { token: admin.token })).status).toBe(404);
    // Re-joining by invitation does not bring management back.
    const again = await app.http.post(`/api/v1/organizations/${org.id}/members`, { email: managed.email, role: "member" }, { token: owner.token });
    expect(again.status).toBe(201);
    const invites = (await app.http.get("/api/v1/users/me/invites", { token: managed.token })).body.data.invites;
    expect((await app.http.post(`/api/v1/users/me/invites/${invites[0].id}/accept`, {}, { token: managed.token })).status).toBe(200);
    const suspend = await app.http.post(`/api/v1/admin/users/${managed.id}/suspend`, {}, { token: admin.token });
    expect(suspend.status).toBe(404);
    expect((await app.http.get("/api/v1/users/me", { token: managed.token })).body.data.user.managed_by).toBeNull();
  });

  it("superadmins mark an address verified, audited as theirs", async () => {
    const root = await newSuperadmin(app);
    const lone = await newUser(app, { verify: false });
    const res = await app.http.post(`/api/v1/admin/users/${lone.id}/verify-email`, {}, { token: root.token });
    expect(res.status).toBe(200);
    expect(res.body.data.user.email_verified).toBe(true);
    const row = (await auditRows(app, lone.id)).find((r) => r.action === "admin.email.verify")!;
    expect(row).toMatchObject({ actor_id: root.id, success: true, metadata: { via: "superadmin" } });
  });
});
