import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { linkIn } from "../helpers/smtp-sink.js";
import { countRows } from "../helpers/db.js";
import { login, newUser, PASSWORD, uniqueEmail } from "../factories/users.js";
import { newOrg, orgWithRoles } from "../factories/orgs.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ MAX_ORGS_PER_USER: "3" });
});
afterAll(() => app?.close());

describe("organizations", () => {
  it("creates with a derived slug, makes the creator owner, and reads back", async () => {
    const owner = await newUser(app);
    const res = await app.http.post("/api/v1/organizations", { name: "Acme Ünïcode Corp.", description: "Widgets" }, { token: owner.token });
    expect(res.status).toBe(201);
    const org = res.body.data.organization;
    expect(org).toMatchObject({ name: "Acme Ünïcode Corp.", role: "owner", description: "Widgets" });
    expect(org.slug).toMatch(/^acme-unicode-corp(-[0-9a-f]+)?$/);
    const again = await app.http.post("/api/v1/organizations", { name: "Acme Ünïcode Corp." }, { token: owner.token });
    expect(again.body.data.organization.slug).not.toBe(org.slug);
    const taken = await app.http.post("/api/v1/organizations", { name: "X", slug: org.slug }, { token: owner.token });
    expect(taken.status).toBe(409);
    expect(taken.body.error.type).toBe("SLUG_TAKEN");
    const read = await app.http.get(`/api/v1/organizations/${org.id}`, { token: owner.token });
    expect(read.body.data).toMatchObject({ organization: { id: org.id }, member_count: 1 });
  });

  it("refuses creation beyond MAX_ORGS_PER_USER with ORG_LIMIT_REACHED", async () => {
    const user = await newUser(app);
    for (let i = 0; i < 3; i++) await newOrg(app, user);
    const res = await app.http.post("/api/v1/organizations", { name: "One too many" }, { token: user.token });
    expect(res.status).toBe(403);
    expect(res.body.error.type).toBe("ORG_LIMIT_REACHED");
    expect(res.body.message).toContain("3 organizations");
    const simple = await app.http.get("/api/v1/users/me/organizations/simple", { token: user.token });
    expect(simple.body.data.organizations).toHaveLength(3);
    expect(Object.keys(simple.body.data.organizations[0]).sort()).toEqual(["id", "name", "role", "slug"]);
  });

  it("lets admins update, only owners delete, and asks for confirmation with other members", async () => {
    const { org, owner, admin, member } = await orgWithRoles(app);
    expect((await app.http.patch(`/api/v1/organizations/${org.id}`, { description: "by admin" }, { token: admin.token })).status).toBe(200);
    const byMember = await app.http.patch(`/api/v1/organizations/${org.id}`, { description: "by member" }, { token: member.token });
    expect(byMember.status).toBe(403);
    expect((await app.http.request("DELETE", `/api/v1/organizations/${org.id}`, { token: admin.token, body: { confirm: true } })).status).toBe(403);
    const unconfirmed = await app.http.delete(`/api/v1/organizations/${org.id}`, { token: owner.token });
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.body.error).toMatchObject({ type: "CONFIRMATION_REQUIRED", details: { member_count: 4 } });
    expect((await app.http.request("DELETE", `/api/v1/organizations/${org.id}`, { token: owner.token, body: { confirm: true } })).status).toBe(200);
    // Gone for everyone, and from every "which orgs am I in" answer.
    expect((await app.http.get(`/api/v1/organizations/${org.id}`, { token: member.token })).status).toBe(404);
    const mine = await app.http.get("/api/v1/users/me/organizations", { token: member.token });
    expect(mine.body.data.organizations.map((o: { id: string }) => o.id)).not.toContain(org.id);
  });
});

describe("members and roles", () => {
  it("never lets the last owner go: removal, leaving and demotion answer 403 with transfer advice", async () => {
    const { org, owner, admin } = await orgWithRoles(app);
    const leave = await app.http.post(`/api/v1/organizations/${org.id}/leave`, {}, { token: owner.token });
    expect(leave.status).toBe(403);
    expect(leave.body.message).toMatch(/transfer ownership/i);
    const demote = await app.http.patch(`/api/v1/organizations/${org.id}/members/${owner.id}/role`, { role: "admin" }, { token: owner.token });
    expect(demote.status).toBe(403);
    expect(demote.body.message).toMatch(/transfer ownership/i);
    // Admins cannot touch owners at all.
    const byAdmin = await app.http.delete(`/api/v1/organizations/${org.id}/members/${owner.id}`, { token: admin.token });
    expect(byAdmin.status).toBe(403);
    const promote = await app.http.patch(`/api/v1/organizations/${org.id}/members/${admin.id}/role`, { role: "owner" }, { token: admin.token });
    expect(promote.status).toBe(403);
  });

  it("treats a deleted account's membership as not found when changing roles, on both doors, and writes nothing (found by the fuzz: a 500)", async () => {
    const { org, owner, guest } = await orgWithRoles(app);
    await app.services.operators.setSuperadmin({ actor: { kind: "anonymous" }, requestId: "t", ip: null, userAgent: null }, owner.email, true);
    expect((await app.http.post(`/api/v1/admin/users/${guest.id}/delete`, { confirm: true }, { token: owner.token })).status).toBe(200);
    const audits = await countRows(app, "audit_logs");
    const rest = await app.http.patch(`/api/v1/organizations/${org.id}/members/${guest.id}/role`, { role: "admin" }, { token: owner.token });
    expect(rest.status).toBe(404);
    const gql = await app.http.gql("mutation($o: ID!, $u: ID!) { changeMemberRole(orgId: $o, role: admin, userId: $u) { role } }", { o: org.id, u: guest.id }, { token: owner.token });
    expect(gql.errors[0].extensions).toMatchObject({ code: rest.body.error.type, status: 404 });
    expect(await countRows(app, "audit_logs")).toBe(audits);
  });

  it("transfers ownership: the old owner becomes admin", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    const res = await app.http.post(`/api/v1/organizations/${org.id}/transfer-ownership`, { new_owner_user_id: member.id }, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ previous_owner: { user_id: owner.id, role: "admin" }, new_owner: { user_id: member.id, role: "owner" } });
    const members = (await app.http.get(`/api/v1/organizations/${org.id}/members`, { token: owner.token })).body.data.members;
    expect(members.find((m: { user_id: string }) => m.user_id === owner.id).role).toBe("admin");
    expect(members.find((m: { user_id: string }) => m.user_id === member.id).role).toBe("owner");
    // Now the old owner may leave.
    expect((await app.http.post(`/api/v1/organizations/${org.id}/leave`, {}, { token: owner.token })).status).toBe(200);
  });

  it("provisions someone without an account: they create it from the email, managed by the organization", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner, "Activation Org");
    const email = uniqueEmail("newbie");
    const res = await app.http.post(`/api/v1/organizations/${org.id}/members`, { email, role: "member", full_name: "New Bie" }, { token: owner.token });
    expect(res.status).toBe(201);
    expect(res.body.data.invite).toMatchObject({ email, role: "member" });
    // Nothing exists until its owner follows the link: nobody can reserve an address.
    expect(await countRows(app, "users", `email = '${email}'`)).toBe(0);
    expect((await login(app, email, PASSWORD)).status).toBe(401);
    await app.flushEmails();
    const mail = app.mail.last(email)!;
    expect(mail.subject).toBe("Activate your Keyward account");
    expect(mail.html).toContain("Activation Org");
    expect(mail.text).toMatch(/managed by Activation Org/);
    const code = new URL(linkIn(mail, "/activate")).searchParams.get("code")!;
    const activated = await app.http.post("/api/v1/auth/activate", { code, password: PASSWORD, full_name: "New Bie" });
    expect(activated.status).toBe(200);
    expect((await app.http.post("/api/v1/auth/activate", { code, password: PASSWORD })).status).toBe(400);
    const signedIn = await login(app, email, PASSWORD);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.user.email_verified).toBe(true);
    const token = signedIn.body.data.token;
    const orgs = await app.http.get("/api/v1/users/me/organizations", { token });
    expect(orgs.body.data.organizations[0]).toMatchObject({ id: org.id, role: "member" });
    const me = await app.http.get("/api/v1/users/me", { token });
    expect(me.body.data.user).toMatchObject({ full_name: "New Bie", managed_by: { id: org.id, name: "Activation Org" } });
    const gql = await app.http.gql("{ me { managedBy { id name } } }", {}, { token });
    expect(gql.data.me.managedBy).toEqual({ id: org.id, name: "Activation Org" });
  });

  it("refuses to delete a sole owner's account while others are in the organization", async () => {
    const { org, owner } = await orgWithRoles(app);
    const res = await app.http.request("DELETE", "/api/v1/users/me", { token: owner.token, body: { password: PASSWORD } });
    expect(res.status).toBe(409);
    expect(res.body.error.type).toBe("USER_IS_SOLE_OWNER");
    expect(res.body.error.details.transfer_ownership).toEqual([org.name]);
    // Alone in an organization: it goes with the account.
    const solo = await newUser(app);
    const soloOrg = await newOrg(app, solo);
    expect((await app.http.request("DELETE", "/api/v1/users/me", { token: solo.token, body: { password: PASSWORD } })).status).toBe(200);
    expect(await countRows(app, "organizations", `id = '${soloOrg.id}' and deleted_at is not null`)).toBe(1);
  });
});

describe("departments, principals and certificate policy", () => {
  it("grants principals directly and through departments, visible in /users/me endpoints", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    const base = `/api/v1/organizations/${org.id}`;
    const dept = (await app.http.post(`${base}/departments`, { name: "SRE", can_sudo: true }, { token: owner.token })).body.data.department;
    expect(dept).toMatchObject({ name: "SRE", can_sudo: true });
    expect((await app.http.post(`${base}/departments`, { name: "SRE" }, { token: owner.token })).status).toBe(409);
    const root = (await app.http.post(`${base}/principals`, { name: "root" }, { token: owner.token })).body.data.principal;
    const deploy = (await app.http.post(`${base}/principals`, { name: "deploy" }, { token: owner.token })).body.data.principal;
    expect((await app.http.post(`${base}/principals`, { name: "bad name!" }, { token: owner.token })).status).toBe(400);
    expect((await app.http.post(`${base}/departments/${dept.id}/members`, { email: member.email }, { token: owner.token })).status).toBe(201);
    expect((await app.http.post(`${base}/departments/${dept.id}/members`, { email: member.email }, { token: owner.token })).status).toBe(409);
    expect((await app.http.post(`${base}/principals/${root.id}/departments/${dept.id}`, {}, { token: owner.token })).status).toBe(201);
    expect((await app.http.post(`${base}/principals/${deploy.id}/members`, { email: member.email }, { token: owner.token })).status).toBe(201);
    const stranger = await newUser(app);
    expect((await app.http.post(`${base}/principals/${deploy.id}/members`, { email: stranger.email }, { token: owner.token })).status).toBe(404);

    const memberships = (await app.http.get("/api/v1/users/me/memberships", { token: member.token })).body.data.orgs;
    const mine = memberships.find((o: { org_id: string }) => o.org_id === org.id);
    expect(mine.departments.map((d: { name: string }) => d.name)).toEqual(["SRE"]);
    expect(mine.principals).toEqual([
      { id: deploy.id, name: "deploy", description: null, via_department: null },
      { id: root.id, name: "root", description: null, via_department: dept.id },
    ]);
    const principals = (await app.http.get("/api/v1/users/me/principals", { token: member.token })).body.data.orgs.find((o: { org_id: string }) => o.org_id === org.id);
    expect(principals).toMatchObject({ is_admin: false, all_principals: [] });
    expect(principals.my_principals.map((p: { name: string; direct: boolean }) => [p.name, p.direct])).toEqual([["deploy", true], ["root", false]]);
    const ownerView = (await app.http.get("/api/v1/users/me/principals", { token: owner.token })).body.data.orgs.find((o: { org_id: string }) => o.org_id === org.id);
    expect(ownerView.is_admin).toBe(true);
    expect(ownerView.all_principals.map((p: { name: string }) => p.name)).toEqual(["deploy", "root"]);

    // Removing the member from the organization takes their grants with them.
    expect((await app.http.delete(`${base}/members/${member.id}`, { token: owner.token })).status).toBe(200);
    expect((await app.http.get(`${base}/departments/${dept.id}/members`, { token: owner.token })).body.data.members).toEqual([]);
  });

  it("validates and stores the department certificate policy", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    const base = `/api/v1/organizations/${org.id}`;
    const dept = (await app.http.post(`${base}/departments`, { name: "Ops" }, { token: owner.token })).body.data.department;
    const initial = await app.http.get(`${base}/departments/${dept.id}/cert-policy`, { token: owner.token });
    expect(initial.body.data.cert_policy).toMatchObject({ allow_user_expiry: false, default_expiry_hours: 1, max_expiry_hours: 24, custom_extensions: [], is_default: true });
    expect(initial.body.data.cert_policy.allowed_extensions).toHaveLength(5);
    const put = await app.http.request("PUT", `${base}/departments/${dept.id}/cert-policy`, {
      token: owner.token,
      body: { allow_user_expiry: true, default_expiry_hours: 8, max_expiry_hours: 72, allowed_extensions: ["permit-pty"], custom_extensions: ["login@example.com"] },
    });
    expect(put.status).toBe(200);
    expect(put.body.data.cert_policy).toMatchObject({ default_expiry_hours: 8, max_expiry_hours: 72, all_extensions: ["permit-pty", "login@example.com"] });
    const bad = [
      { default_expiry_hours: 100 },
      { allowed_extensions: ["permit-everything"] },
      { max_expiry_hours: 0 },
      { custom_extensions: ["has space"] },
      {},
    ];
    for (const body of bad) {
      const res = await app.http.request("PUT", `${base}/departments/${dept.id}/cert-policy`, { token: owner.token, body });
      expect(res.status).toBe(400);
      expect(res.body.error.type).toBe("VALIDATION_ERROR");
    }
    expect((await app.http.get(`${base}/departments/${dept.id}/cert-policy`, { token: member.token })).status).toBe(403);
  });
});

describe("API keys", () => {
  it("shows the secret once, lists without it, renames, revokes, and stores only a hash", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    const base = `/api/v1/organizations/${org.id}/api-keys`;
    const created = await app.http.post(base, { name: "bastion" }, { token: owner.token });
    expect(created.status).toBe(201);
    const key = created.body.data.api_key.key as string;
    expect(key).toMatch(/^kwk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(key.startsWith(created.body.data.api_key.prefix)).toBe(true);
    const listed = await app.http.get(base, { token: owner.token });
    expect(listed.body.data.api_keys[0]).not.toHaveProperty("key");
    expect(JSON.stringify(listed.body)).not.toContain(key);
    expect(await countRows(app, "api_keys", `key_hash = '${key}'`)).toBe(0);
    const id = created.body.data.api_key.id;
    expect((await app.http.patch(`${base}/${id}`, { name: "bastion-eu" }, { token: owner.token })).body.data.api_key.name).toBe("bastion-eu");
    const authed = await app.services.apiKeys.authenticate(key);
    expect(authed?.organizationId).toBe(org.id);
    expect((await app.http.post(`${base}/${id}/revoke`, { reason: "rotated" }, { token: owner.token })).status).toBe(200);
    expect(await app.services.apiKeys.authenticate(key)).toBeNull();
    expect((await app.http.post(`${base}/${id}/revoke`, {}, { token: owner.token })).status).toBe(409);
    expect((await app.http.get(base, { token: member.token })).status).toBe(403);
  });
});

describe("organization activity", () => {
  it("lists the org's audit records newest first, filtered by user and action, with keyset pages", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    const base = `/api/v1/organizations/${org.id}`;
    for (const name of ["a", "b", "c"]) await app.http.post(`${base}/principals`, { name }, { token: owner.token });
    const all = await app.http.get(`${base}/audit-logs?limit=2`, { token: owner.token });
    expect(all.status).toBe(200);
    expect(all.body.data.audit_logs).toHaveLength(2);
    expect(all.body.data.audit_logs[0].action).toBe("principal.created");
    const next = await app.http.get(`${base}/audit-logs?limit=2&cursor=${all.body.data.next_cursor}`, { token: owner.token });
    expect(next.body.data.audit_logs[0].id).not.toBe(all.body.data.audit_logs[1].id);
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: any = await app.http.get(`${base}/audit-logs?limit=3${cursor ? `&cursor=${cursor}` : ""}`, { token: owner.token });
      for (const e of page.body.data.audit_logs) {
        expect(seen.has(e.id)).toBe(false);
        seen.add(e.id);
      }
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(seen.size).toBeGreaterThanOrEqual(7);
    const byAction = await app.http.get(`${base}/audit-logs?action=org.member.add`, { token: owner.token });
    expect(byAction.body.data.audit_logs.map((e: { action: string }) => e.action)).toEqual(["org.member.add", "org.member.add", "org.member.add"]);
    const byUser = await app.http.get(`${base}/audit-logs?user_id=${member.id}`, { token: owner.token });
    expect(byUser.body.data.audit_logs.every((e: { user_id: string }) => e.user_id === member.id)).toBe(true);
    expect((await app.http.get(`${base}/audit-logs?cursor=garbage`, { token: owner.token })).status).toBe(400);
    expect((await app.http.get(`${base}/audit-logs`, { token: member.token })).status).toBe(403);
  });

  it("also answers the original API's numbered pages (?page=&per_page=) over the same records, for its scripts", async () => {
    const { org, owner, admin, member } = await orgWithRoles(app);
    const other = await orgWithRoles(app);
    const base = `/api/v1/organizations/${org.id}`;
    for (const name of ["a", "b", "c", "d"]) await app.http.post(`${base}/principals`, { name }, { token: owner.token });
    const everything: any = await app.http.get(`${base}/audit-logs?limit=200`, { token: owner.token });
    const ids = everything.body.data.audit_logs.map((e: { id: string }) => e.id);
    expect(ids.length).toBeGreaterThanOrEqual(7);

    // Walked page by page until `pages`: every record once, in the cursor's order.
    const walked: string[] = [];
    const first: any = await app.http.get(`${base}/audit-logs?page=1&per_page=3`, { token: admin.token });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ count: ids.length, page: 1, per_page: 3, pages: Math.ceil(ids.length / 3) });
    expect(first.body.data).not.toHaveProperty("next_cursor");
    for (let page = 1; page <= first.body.data.pages; page++) {
      const res: any = await app.http.get(`${base}/audit-logs?page=${page}&per_page=3`, { token: admin.token });
      walked.push(...res.body.data.audit_logs.map((e: { id: string }) => e.id));
    }
    expect(walked).toEqual(ids);
    const past: any = await app.http.get(`${base}/audit-logs?page=${first.body.data.pages + 1}&per_page=3`, { token: owner.token });
    expect(past.body.data.audit_logs).toEqual([]);
    // per_page alone starts at page 1; the filters apply to the count too.
    const byAction: any = await app.http.get(`${base}/audit-logs?per_page=2&action=principal.created`, { token: owner.token });
    expect(byAction.body.data).toMatchObject({ count: 4, page: 1, per_page: 2, pages: 2 });
    expect(byAction.body.data.audit_logs.map((e: { action: string }) => e.action)).toEqual(["principal.created", "principal.created"]);

    // Bad input is a 400 naming the field; the two ways of paging do not mix.
    for (const query of ["page=0", "page=x", "per_page=201", "page=1&cursor=abc", "per_page=2&limit=2", "page=1&user_id=nope"]) {
      const res = await app.http.get(`${base}/audit-logs?${query}`, { token: owner.token });
      expect(res.status, query).toBe(400);
      expect(res.body.error.type, query).toBe("VALIDATION_ERROR");
    }
    // The same access as the cursor: a plain member, another organization's admin and an outsider get nothing.
    expect((await app.http.get(`${base}/audit-logs?page=1`, { token: member.token })).status).toBe(403);
    const foreign = await app.http.get(`${base}/audit-logs?page=1`, { token: other.owner.token });
    expect([403, 404]).toContain(foreign.status);
    expect(JSON.stringify(foreign.body)).not.toContain(ids[0]);
    expect((await app.http.get(`${base}/audit-logs?page=1`)).status).toBe(401);
  });
});
