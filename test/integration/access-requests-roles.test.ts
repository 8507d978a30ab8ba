import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { addMember, newOrg, orgWithRoles } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal, makeKey } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * Just-in-time organization roles (issue 37, docs/access-requests.md "An organization role for a
 * bounded time"): a member asks for `admin` for a time, an owner approves (never the requester);
 * while the grant is in force every capability check sees the stronger role, less what a temporary
 * role never confers; certificates end with it; at its end or an early revoke the next request is
 * refused.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());
afterEach(() => app.clock.reset());

type World = Awaited<ReturnType<typeof orgWithRoles>> & { base: string };

/** An organization with a user CA, a principal "deploy" the member does not hold, and (by default) `admin` requestable for up to 4h. */
async function world(policy: Record<string, unknown> | null = { max_duration_minutes: 240 }): Promise<World> {
  const w = await orgWithRoles(app);
  await createCa(app, w.org.id, w.owner);
  const base = `/api/v1/organizations/${w.org.id}`;
  await grantPrincipal(app, w.org.id, w.owner, w.member, "app");
  await app.http.post(`${base}/principals`, { name: "deploy" }, { token: w.owner.token });
  if (policy) {
    const set = await app.http.request("PUT", `${base}/roles/admin/access-policy`, { token: w.owner.token, body: policy });
    expect(set.status, set.text).toBe(200);
  }
  return { ...w, base };
}

const askRole = (w: World, who: TestUser, body: Record<string, unknown> = {}) =>
  app.http.post(`${w.base}/access-requests`, { role: "admin", ...("duration_minutes" in body ? {} : { duration: "2h" }), reason: "INC-9 rotate", ...body }, { token: who.token });
const decide = (w: World, who: TestUser, id: string, action: "approve" | "reject" | "cancel" | "revoke", body: Record<string, unknown> = {}) =>
  app.http.post(`${w.base}/access-requests/${id}/${action}`, body, { token: who.token });
/** An admin-only read: 200 while the role is in force, 403 otherwise. */
const adminList = (w: World, who: TestUser) => app.http.get(`${w.base}/access-requests`, { token: who.token });
const myRole = async (w: World, who: TestUser) => (await app.http.get("/api/v1/auth/me", { token: who.token })).body.data.organizations.find((o: { id: string }) => o.id === w.org.id)?.role;

/** The member elevated to admin for `minutes`: the approved request. */
async function elevated(w: World, minutes = 60) {
  const asked = await askRole(w, w.member, { duration_minutes: minutes });
  expect(asked.status, asked.text).toBe(201);
  const approved = await decide(w, w.owner, asked.body.data.access_request.id, "approve");
  expect(approved.status, approved.text).toBe(200);
  return approved.body.data.access_request as { id: string; grant_ends_at: string; role: string; kind: string; active: boolean };
}

async function trail(orgId: string, action: string) {
  const result = await app.container.db.execute(sql`select action, actor_id, metadata from audit_logs where organization_id = ${orgId} and action = ${action} order by created_at`);
  return resultRows<{ action: string; actor_id: string | null; metadata: Record<string, unknown> }>(result);
}

describe("asking for an organization role", () => {
  it("request → owner approves → the member acts as admin → the role ends by itself at the grant's end", async () => {
    const w = await world();
    expect(await myRole(w, w.member)).toBe("member");
    // Before anything: an admin-only read is refused.
    expect((await adminList(w, w.member)).status).toBe(403);

    const asked = await askRole(w, w.member);
    expect(asked.status, asked.text).toBe(201);
    const request = asked.body.data.access_request;
    expect(request).toMatchObject({ kind: "role", role: "admin", principal: null, department: null, state: "pending", requested_minutes: 120, active: false });

    // Only owners approve an organization role: they are told; admins are not, and do not see it pending.
    await app.flushEmails();
    expect(app.mail.lastWith(w.owner.email, "organization role admin")).toBeTruthy();
    expect(app.mail.lastWith(w.admin.email, "organization role admin")).toBeFalsy();
    const ownerPending = await app.http.get(`${w.base}/access-requests/pending`, { token: w.owner.token });
    expect(ownerPending.body.data.access_requests.map((r: { id: string }) => r.id)).toEqual([request.id]);
    const adminPending = await app.http.get(`${w.base}/access-requests/pending`, { token: w.admin.token });
    expect(adminPending.body.data.access_requests).toEqual([]);
    const byAdmin = await decide(w, w.admin, request.id, "approve");
    expect([byAdmin.status, byAdmin.body.error.type]).toEqual([403, "OWNER_REQUIRED"]);

    // Approved for 1h (less than asked): the role is the stronger one at once, on the next request.
    const approved = await decide(w, w.owner, request.id, "approve", { duration: "1h" });
    expect(approved.status, approved.text).toBe(200);
    const grant = approved.body.data.access_request;
    expect(grant).toMatchObject({ state: "approved", granted_minutes: 60, active: true });
    expect(await myRole(w, w.member)).toBe("admin");
    expect((await adminList(w, w.member)).status).toBe(200);
    // GraphQL reads the same memberships.
    const gql = await app.http.gql(`query($o: ID!) { accessRequests(orgId: $o) { id } }`, { o: w.org.id }, { token: w.member.token });
    expect(gql.errors, JSON.stringify(gql.errors)).toBeUndefined();

    // What an admin may do, the elevated member does; the audit names the stored role and the elevation.
    const made = await app.http.post(`${w.base}/principals`, { name: "ops-temp" }, { token: w.member.token });
    expect(made.status, made.text).toBe(201);
    const [created] = (await trail(w.org.id, "principal.created")).filter((r) => r.actor_id === w.member.id);
    expect(created?.metadata.elevation).toEqual({ role: "admin", stored_role: "member", until: grant.grant_ends_at });
    const [approvedRecord] = await trail(w.org.id, "access.request.approved");
    expect(approvedRecord?.metadata).toMatchObject({ role: "admin", stored_role: "member", minutes: 60 });

    // The members' list still shows the stored role (a role change changes that one).
    const members = await app.http.get(`${w.base}/members`, { token: w.owner.token });
    expect(members.body.data.members.find((m: { user_id: string }) => m.user_id === w.member.id)?.role).toBe("member");

    // The grant's end: the next request is refused, and the cached list of organizations follows.
    app.clock.advance(61 * 60);
    const after = await adminList(w, w.member);
    expect([after.status, after.body.error.type]).toEqual([403, "AUTHORIZATION_ERROR"]);
    expect(await myRole(w, w.member)).toBe("member");
    const mine = await app.http.get("/api/v1/access-requests", { token: w.member.token });
    expect(mine.body.data.access_requests.find((r: { id: string }) => r.id === request.id)).toMatchObject({ state: "approved", active: false });
  });

  it("an early revoke ends the role on the next request", async () => {
    const w = await world();
    const grant = await elevated(w);
    expect((await adminList(w, w.member)).status).toBe(200);
    expect(await myRole(w, w.member)).toBe("admin");
    const revoked = await decide(w, w.owner, grant.id, "revoke", { reason: "done early" });
    expect(revoked.status, revoked.text).toBe(200);
    expect((await adminList(w, w.member)).status).toBe(403);
    expect(await myRole(w, w.member)).toBe("member");
  });

  it("signs with every principal while elevated, the certificate capped at the elevation's end (ssh-keygen -L)", async () => {
    const w = await world();
    const key = await addVerifiedKey(app, w.member);
    const before = await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: w.member.token });
    expect(before.body.data.principals).toEqual(["app"]);
    const grant = await elevated(w, 30);
    const end = new Date(grant.grant_ends_at).getTime();
    const signed = await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: w.member.token });
    expect(signed.status, signed.text).toBe(201);
    expect([...signed.body.data.principals].sort()).toEqual(["app", "deploy"]);
    expect(new Date(signed.body.data.valid_before).getTime()).toBeLessThanOrEqual(end);
    // What OpenSSH reads in the certificate.
    const dir = mkdtempSync(join(tmpdir(), "kw-role-cert-"));
    try {
      writeFileSync(join(dir, "id-cert.pub"), `${signed.body.data.certificate}\n`);
      const listed = execFileSync("ssh-keygen", ["-L", "-f", join(dir, "id-cert.pub")], { encoding: "utf8", env: { ...process.env, TZ: "UTC" } });
      const to = /Valid: from \S+ to (\S+)/.exec(listed)?.[1];
      expect(to, listed).toBeTruthy();
      expect(new Date(`${to}Z`).getTime()).toBeLessThanOrEqual(end);
      expect(new Date(`${to}Z`).getTime()).toBeGreaterThan(end - 5000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // A host certificate signed while elevated ends with the elevation too.
    await createCa(app, w.org.id, w.owner, { ca_type: "host", name: "Hosts" });
    const host = await app.http.post("/api/v1/ssh/sign/host", { org_id: w.org.id, host_public_key: makeKey("ed25519").pub, principals: ["web1.example.com"], validity_hours: 720 }, { token: w.member.token });
    expect(host.status, host.text).toBe(201);
    expect(new Date(host.body.data.valid_before).getTime()).toBeLessThanOrEqual(end);
    // After the elevation, the member signs as a member again.
    app.clock.advance(31 * 60);
    const later = await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: w.member.token });
    expect(later.body.data.principals).toEqual(["app"]);
  });
});

describe("what an elevated admin may not do (403 ELEVATED_ROLE_FORBIDS)", () => {
  it("refuses role and membership changes, invitations, API keys, OIDC clients, SSO, domains, policies and approvals", async () => {
    const w = await world();
    // Another member's principal request, for the approval attempt.
    const other = await newUser(app);
    await addMember(app, w.org.id, w.owner, other, "member");
    const deployId = (await app.http.get(`${w.base}/principals`, { token: w.owner.token })).body.data.principals.find((p: { name: string }) => p.name === "deploy").id;
    await app.http.request("PUT", `${w.base}/principals/${deployId}/access-policy`, { token: w.owner.token, body: { max_duration_minutes: 60 } });
    const deptId = (await app.http.post(`${w.base}/departments`, { name: "ops" }, { token: w.owner.token })).body.data.department.id;
    await elevated(w);

    const attempts: Array<[string, () => Promise<{ status: number; body: { error?: { type: string } }; text: string }>]> = [
      ["change a role", () => app.http.request("PATCH", `${w.base}/members/${w.guest.id}/role`, { token: w.member.token, body: { role: "admin" } })],
      ["make themselves a lasting admin", () => app.http.request("PATCH", `${w.base}/members/${w.member.id}/role`, { token: w.member.token, body: { role: "admin" } })],
      ["remove a member", () => app.http.request("DELETE", `${w.base}/members/${w.guest.id}`, { token: w.member.token })],
      ["invite", () => app.http.post(`${w.base}/invites`, { email: "someone@example.com", role: "admin" }, { token: w.member.token })],
      ["create an API key", () => app.http.post(`${w.base}/api-keys`, { name: "lasting" }, { token: w.member.token })],
      ["create an OIDC client", () => app.http.post(`${w.base}/clients`, { name: "lasting", redirect_uris: ["https://app.example.com/cb"] }, { token: w.member.token })],
      ["add an SSO connection", () => app.http.post(`${w.base}/sso/connections/oidc`, { name: "idp", issuer: "https://idp.example.com", client_id: "x", client_secret: "y" }, { token: w.member.token })],
      ["add a domain", () => app.http.post(`${w.base}/domains`, { domain: "example.org" }, { token: w.member.token })],
      ["give someone a principal for good", () => app.http.post(`${w.base}/principals/${deployId}/members`, { email: w.member.email }, { token: w.member.token })],
      ["grant a principal to a department", () => app.http.post(`${w.base}/principals/${deployId}/departments/${deptId}`, {}, { token: w.member.token })],
      ["map root on the servers to a principal they hold", () => app.http.request("PUT", `${w.base}/ssh/host-principals`, { token: w.member.token, body: { host_pattern: "*", login: "root", principals: ["app"] } })],
      ["point the organization at another network controller", () => app.http.request("PUT", `${w.base}/zerotier-config`, { token: w.member.token, body: { zt_api_mode: "self_hosted", zt_api_url: "http://127.0.0.1:9", zt_api_token: "x" } })],
      ["make themselves a network's manager", () => app.http.request("PUT", `${w.base}/networks/00000000-0000-4000-8000-000000000000/managers`, { token: w.member.token, body: { user_ids: [w.member.id] } })],
      ["make a host enrollment token", () => app.http.post(`${w.base}/ssh/host-enrollment-tokens`, { names: ["web9.example.com"] }, { token: w.member.token })],
      ["set a request policy", () => app.http.request("PUT", `${w.base}/principals/${deployId}/access-policy`, { token: w.member.token, body: { max_duration_minutes: 600 } })],
    ];
    for (const [what, attempt] of attempts) {
      const res = await attempt();
      expect([what, res.status, res.body.error?.type], res.text).toEqual([what, 403, "ELEVATED_ROLE_FORBIDS"]);
    }
    // Approving someone else's request: refused as a temporary approver.
    const theirs = await app.http.post(`${w.base}/access-requests`, { principal: "deploy", duration: "30m", reason: "deploy" }, { token: other.token });
    expect(theirs.status, theirs.text).toBe(201);
    const approve = await decide(w, w.member, theirs.body.data.access_request.id, "approve");
    expect([approve.status, approve.body.error.type]).toEqual([403, "ELEVATED_ROLE_FORBIDS"]);
    // Their own request: rule 20 answers first (nobody decides their own).
    const own = await app.http.post(`${w.base}/access-requests`, { principal: "deploy", duration: "30m", reason: "mine" }, { token: w.member.token });
    expect(own.status, own.text).toBe(201);
    const ownApproval = await decide(w, w.member, own.body.data.access_request.id, "approve");
    expect([ownApproval.status, ownApproval.body.error.type]).toEqual([403, "OWN_REQUEST"]);
    // Nothing changed: the roles are as they were.
    const members = (await app.http.get(`${w.base}/members`, { token: w.owner.token })).body.data.members as Array<{ user_id: string; role: string }>;
    const roleOf = (u: TestUser) => members.find((m) => m.user_id === u.id)?.role;
    expect([roleOf(w.member), roleOf(w.guest)]).toEqual(["member", "guest"]);
  });
});

describe("refusals", () => {
  it("says why a role cannot be asked for", async () => {
    const w = await world();
    const cases: Array<[TestUser, Record<string, unknown>, number, string]> = [
      [w.member, { role: "owner" }, 403, "NOT_REQUESTABLE"],
      [w.admin, { role: "admin" }, 403, "NOT_REQUESTABLE"],
      [w.member, { role: "member" }, 403, "NOT_REQUESTABLE"],
      [w.member, { role: "root" }, 400, "VALIDATION_ERROR"],
      [w.member, { duration: "5h" }, 400, "DURATION_TOO_LONG"],
      [w.member, { principal: "deploy" }, 400, "VALIDATION_ERROR"],
      [w.guest, {}, 403, "AUTHORIZATION_ERROR"],
    ];
    for (const [who, body, status, type] of cases) {
      const res = await askRole(w, who, body);
      expect([JSON.stringify(body), res.status, res.body.error?.type], res.text).toEqual([JSON.stringify(body), status, type]);
    }
    // No policy: not requestable.
    const bare = await world(null);
    const none = await askRole(bare, bare.member);
    expect([none.status, none.body.error.type]).toEqual([403, "NOT_REQUESTABLE"]);
    // Only owners set a role's policy; never for owner.
    const byAdmin = await app.http.request("PUT", `${w.base}/roles/admin/access-policy`, { token: w.admin.token, body: { max_duration_minutes: 60 } });
    expect([byAdmin.status, byAdmin.body.error.type]).toEqual([403, "AUTHORIZATION_ERROR"]);
    const ownerRole = await app.http.request("PUT", `${w.base}/roles/owner/access-policy`, { token: w.owner.token, body: { max_duration_minutes: 60 } });
    expect(ownerRole.status, ownerRole.text).toBe(400);
    // A second pending role request: 409.
    expect((await askRole(w, w.member)).status).toBe(201);
    const again = await askRole(w, w.member);
    expect([again.status, again.body.error.type]).toEqual([409, "ACCESS_REQUEST_EXISTS"]);
  });

  it("refuses another organization's owner, a plain member and the requester; of 20 approvals at once one grants", async () => {
    const w = await world();
    const asked = await askRole(w, w.member);
    const id = asked.body.data.access_request.id as string;
    const stranger = await newUser(app);
    await newOrg(app, stranger);
    const foreign = await decide(w, stranger, id, "approve");
    expect([foreign.status, foreign.body.error.type]).toEqual([404, "ORG_NOT_FOUND"]);
    const peer = await newUser(app);
    await addMember(app, w.org.id, w.owner, peer, "member");
    const byPeer = await decide(w, peer, id, "approve");
    expect([byPeer.status, byPeer.body.error.type]).toEqual([403, "AUTHORIZATION_ERROR"]);
    const self = await decide(w, w.member, id, "approve");
    expect(self.status).toBe(403);

    const results = await Promise.all(Array.from({ length: 20 }, () => decide(w, w.owner, id, "approve")));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const rows = resultRows<{ n: number }>(
      await app.container.db.execute(sql`select count(*)::int as n from access_requests where user_id = ${w.member.id} and kind = 'role' and state = 'approved'`),
    );
    expect(rows[0]!.n).toBe(1);
    expect((await trail(w.org.id, "access.request.approved")).length).toBe(1);
  });

  it("leaving the organization ends the role; coming back revives none", async () => {
    const w = await world();
    await elevated(w);
    const left = await app.http.post(`${w.base}/leave`, {}, { token: w.member.token });
    expect(left.status, left.text).toBe(200);
    await addMember(app, w.org.id, w.owner, w.member, "member");
    expect(await myRole(w, w.member)).toBe("member");
    expect((await adminList(w, w.member)).status).toBe(403);
  });
});
