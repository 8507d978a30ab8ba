import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { countRows } from "../helpers/db.js";
import { resultRows } from "../../src/infra/db.js";
import { addMember, orgWithRoles } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";
import { parseCertificate } from "../../src/lib/ssh/index.js";

/**
 * Just-in-time access to a department's grants (issue 37): a member asks for a department for a
 * bounded time; approved, `ssh sign` carries the department's principals (and applies its
 * certificate policy, which only narrows) until the grant ends, no later; an approver can end a
 * grant early, and the next certificate leaves it out.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());
afterEach(() => app.clock.reset());

type World = Awaited<ReturnType<typeof orgWithRoles>> & { base: string; opsId: string };

/** An organization whose department "ops" grants the principals ops-root and deploy; the member holds "app". */
async function world(policy: Record<string, unknown> | null = { max_duration_minutes: 240 }): Promise<World> {
  const w = await orgWithRoles(app);
  await createCa(app, w.org.id, w.owner);
  const base = `/api/v1/organizations/${w.org.id}`;
  await grantPrincipal(app, w.org.id, w.owner, w.member, "app");
  const ops = (await app.http.post(`${base}/departments`, { name: "ops" }, { token: w.owner.token })).body.data.department;
  for (const name of ["ops-root", "deploy"]) {
    const p = (await app.http.post(`${base}/principals`, { name }, { token: w.owner.token })).body.data.principal;
    const linked = await app.http.post(`${base}/principals/${p.id}/departments/${ops.id}`, {}, { token: w.owner.token });
    expect(linked.status, linked.text).toBe(201);
  }
  if (policy) {
    const set = await app.http.request("PUT", `${base}/departments/${ops.id}/access-policy`, { token: w.admin.token, body: policy });
    expect(set.status, set.text).toBe(200);
  }
  return { ...w, base, opsId: ops.id };
}

const ask = (w: World, who: TestUser, body: Record<string, unknown>) => app.http.post(`${w.base}/access-requests`, { department: "ops", reason: "INC-7 failover", ...body }, { token: who.token });
const act = (w: World, who: TestUser, id: string, action: "approve" | "reject" | "cancel" | "revoke", body: Record<string, unknown> = {}) =>
  app.http.post(`${w.base}/access-requests/${id}/${action}`, body, { token: who.token });
const sign = (who: TestUser, keyId: string, body: Record<string, unknown> = {}) => app.http.post("/api/v1/ssh/sign", { key_id: keyId, ...body }, { token: who.token });

async function trail(id: string) {
  const result = await app.container.db.execute(sql`select action, actor_id, metadata from audit_logs where resource_id = ${id} order by action`);
  return resultRows<{ action: string; actor_id: string | null; metadata: Record<string, unknown> }>(result);
}

describe("a department's grants", () => {
  it("grants the department's principals for the approved time, capped at the grant's end; an approver ends it early and the next certificate leaves them out", async () => {
    const w = await world();
    const asked = await ask(w, w.member, { duration: "2h" });
    expect(asked.status, asked.text).toBe(201);
    const request = asked.body.data.access_request;
    expect(request).toMatchObject({ kind: "department", department: "ops", department_id: w.opsId, principal: null, principal_id: null, state: "pending", requested_minutes: 120 });
    await app.flushEmails();
    expect(app.mail.lastWith(w.admin.email, "the department ops's principals")).toBeTruthy();
    const gql = await app.http.gql("{ pendingApprovals { id kind department principal } }", {}, { token: w.owner.token });
    expect(gql.data.pendingApprovals).toEqual([{ id: request.id, kind: "department", department: "ops", principal: null }]);

    const key = await addVerifiedKey(app, w.member);
    expect((await sign(w.member, key.id)).body.data.principals).toEqual(["app"]);

    const approved = await act(w, w.admin, request.id, "approve", { duration: "45m" });
    expect(approved.status, approved.text).toBe(200);
    const grantEnd = new Date(approved.body.data.access_request.grant_ends_at).getTime();
    const signed = await sign(w.member, key.id);
    expect(signed.status, signed.text).toBe(201);
    expect([...signed.body.data.principals].sort()).toEqual(["app", "deploy", "ops-root"]);
    const cert = parseCertificate(signed.body.data.certificate);
    expect(cert.validBefore.getTime()).toBeLessThanOrEqual(grantEnd);
    expect(cert.validBefore.getTime()).toBeGreaterThan(grantEnd - 2000);

    // A plain member ends nothing; another organization's admin does not see it.
    expect((await act(w, w.member, request.id, "revoke", { reason: "done" })).body.error.type).toBe("AUTHORIZATION_ERROR");
    const other = await world();
    expect((await app.http.post(`${other.base}/access-requests/${request.id}/revoke`, { reason: "x" }, { token: other.owner.token })).body.error.type).toBe("ACCESS_REQUEST_NOT_FOUND");
    expect((await act(w, w.owner, request.id, "revoke", {})).body.error.type).toBe("VALIDATION_ERROR");

    app.clock.advance(60);
    const revoked = await act(w, w.owner, request.id, "revoke", { reason: "incident closed" });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.data.access_request).toMatchObject({ state: "approved", active: false, revoked_by_user_id: w.owner.id, revoke_reason: "incident closed" });
    expect(new Date(revoked.body.data.access_request.grant_ends_at).getTime()).toBeLessThan(grantEnd);
    expect((await sign(w.member, key.id)).body.data.principals).toEqual(["app"]);
    expect((await sign(w.member, key.id, { principals: ["ops-root"] })).body.error.type).toBe("UNAUTHORIZED_PRINCIPALS");
    const again = await act(w, w.admin, request.id, "revoke", { reason: "twice" });
    expect([again.status, again.body.error.type]).toEqual([409, "GRANT_NOT_ACTIVE"]);
    await app.flushEmails();
    expect(app.mail.lastWith(w.member.email, "ended early")).toBeTruthy();

    expect((await trail(request.id)).map((r) => [r.action, r.actor_id, r.metadata.department])).toEqual([
      ["access.grant.revoked", w.owner.id, "ops"],
      ["access.request.approved", w.admin.id, "ops"],
      ["access.request.created", w.member.id, "ops"],
    ]);
    const mine = await app.http.gql("{ myAccessRequests { id kind department active revokedAt revokeReason } }", {}, { token: w.member.token });
    expect(mine.data.myAccessRequests.find((r: { id: string }) => r.id === request.id)).toMatchObject({ kind: "department", department: "ops", active: false, revokeReason: "incident closed" });
  });

  it("auto-approves under an on-call policy, audited as automatic, through GraphQL too", async () => {
    const w = await world(null);
    const set = await app.http.gql(
      "mutation($o: ID!, $d: ID!) { setDepartmentAccessRequestPolicy(orgId: $o, departmentId: $d, input: { maxDurationMinutes: 60, approvalRequired: false }) { department maxDurationMinutes approvalRequired } }",
      { o: w.org.id, d: w.opsId },
      { token: w.owner.token },
    );
    expect(set.data.setDepartmentAccessRequestPolicy).toEqual({ department: "ops", maxDurationMinutes: 60, approvalRequired: false });
    const listed = await app.http.gql("query($o: ID!) { departmentAccessRequestPolicies(orgId: $o) { departmentId requestable } }", { o: w.org.id }, { token: w.member.token });
    expect(listed.data.departmentAccessRequestPolicies).toEqual([{ departmentId: w.opsId, requestable: true }]);
    const asked = await app.http.gql(
      'mutation($o: ID!) { requestAccess(orgId: $o, input: { department: "ops", duration: "30m", reason: "paged" }) { id kind state active grantedMinutes } }',
      { o: w.org.id },
      { token: w.member.token },
    );
    expect(asked.data.requestAccess).toMatchObject({ kind: "department", state: "approved", active: true, grantedMinutes: 30 });
    const rows = await trail(asked.data.requestAccess.id);
    expect(rows.map((r) => [r.action, r.metadata.automatic ?? false])).toEqual([
      ["access.request.approved", true],
      ["access.request.created", false],
    ]);
    const key = await addVerifiedKey(app, w.member);
    expect([...(await sign(w.member, key.id)).body.data.principals].sort()).toEqual(["app", "deploy", "ops-root"]);
    // The grant ends by itself.
    app.clock.advance(31 * 60);
    expect((await sign(w.member, key.id)).body.data.principals).toEqual(["app"]);
  });

  it("signs as if a member: the granted department's certificate policy applies (a security key required refuses a plain key)", async () => {
    const w = await world({ max_duration_minutes: 60, approval_required: false });
    const strict = await app.http.request("PUT", `${w.base}/departments/${w.opsId}/cert-policy`, { token: w.owner.token, body: { require_hardware_key: true } });
    expect(strict.status, strict.text).toBe(200);
    const key = await addVerifiedKey(app, w.member);
    expect((await sign(w.member, key.id)).status).toBe(201);
    expect((await ask(w, w.member, { duration: "30m" })).body.data.access_request.active).toBe(true);
    const refused = await sign(w.member, key.id);
    expect([refused.status, refused.body.error.type]).toEqual([403, "HARDWARE_KEY_REQUIRED"]);
    expect(refused.body.message).toContain("ops");
  });
});

describe("refusals, each with its reason", () => {
  it("refuses what the department's policy does not allow, and keeps organizations apart", async () => {
    const w = await world(null);
    const none = await ask(w, w.member, { duration: "1h" });
    expect([none.status, none.body.error.type]).toEqual([403, "NOT_REQUESTABLE"]);
    expect(none.body.message).toContain("ops");
    const put = (body: object, who: TestUser = w.owner, deptId = w.opsId) => app.http.request("PUT", `${w.base}/departments/${deptId}/access-policy`, { token: who.token, body });
    expect((await put({ requestable: false, max_duration_minutes: 60 })).status).toBe(200);
    expect((await ask(w, w.member, { duration: "1h" })).body.error.type).toBe("NOT_REQUESTABLE");
    expect((await put({ max_duration_minutes: 60 })).body.data.policy).toMatchObject({ requestable: true, approval_required: true, max_duration_minutes: 60, department: "ops" });
    const long = await ask(w, w.member, { duration: "1h30m" });
    expect([long.status, long.body.error.type]).toEqual([400, "DURATION_TOO_LONG"]);
    expect(long.body.message).toContain("department can be requested for at most 60 minutes");
    // Only another department's members may ask.
    const oncall = (await app.http.post(`${w.base}/departments`, { name: "On-call" }, { token: w.owner.token })).body.data.department;
    expect((await put({ max_duration_minutes: 60, requester_department_id: oncall.id })).status).toBe(200);
    const notIn = await ask(w, w.member, { duration: "1h" });
    expect([notIn.status, notIn.body.error.type]).toEqual([403, "NOT_REQUESTABLE"]);
    expect(notIn.body.message).toContain("On-call");
    await app.http.post(`${w.base}/departments/${oncall.id}/members`, { email: w.member.email }, { token: w.owner.token });
    const ok = await ask(w, w.member, { duration: "1h" });
    expect(ok.status, ok.text).toBe(201);
    expect((await ask(w, w.member, { duration: "1h" })).body.error.type).toBe("ACCESS_REQUEST_EXISTS");
    // Unknown department; another organization's department (by id or name) is as unknown.
    expect((await ask(w, w.member, { department: "nope", duration: "1h" })).body.error.type).toBe("DEPARTMENT_NOT_FOUND");
    const other = await world();
    const foreign = await ask(w, w.member, { department: other.opsId, duration: "1h" });
    expect([foreign.status, foreign.body.error.type]).toEqual([404, "DEPARTMENT_NOT_FOUND"]);
    expect((await app.http.post(`${other.base}/access-requests`, { department: "ops", duration: "1h", reason: "x" }, { token: w.member.token })).body.error.type).toBe("ORG_NOT_FOUND");
    expect((await put({ max_duration_minutes: 60 }, w.owner, other.opsId)).body.error.type).toBe("DEPARTMENT_NOT_FOUND");
    expect((await put({ max_duration_minutes: 60 }, other.owner)).status).toBe(404);
    // Another organization's admin cannot decide it.
    expect((await app.http.post(`${other.base}/access-requests/${ok.body.data.access_request.id}/approve`, {}, { token: other.owner.token })).body.error.type).toBe("ACCESS_REQUEST_NOT_FOUND");
    // Members set no policy; guests ask for nothing.
    expect((await put({ max_duration_minutes: 5 }, w.member)).body.error.type).toBe("AUTHORIZATION_ERROR");
    expect((await ask(w, w.guest, { duration: "1h" })).body.error.type).toBe("AUTHORIZATION_ERROR");
  });

  it("lets nobody decide their own request, nothing be decided twice, and ends only grants in force", async () => {
    const w = await world();
    const own = (await ask(w, w.admin, { duration: "1h" })).body.data.access_request;
    const self = await act(w, w.admin, own.id, "approve");
    expect([self.status, self.body.error.type]).toEqual([403, "OWN_REQUEST"]);
    expect((await act(w, w.admin, own.id, "reject", { reason: "no" })).body.error.type).toBe("OWN_REQUEST");
    // A pending request is not a grant to end.
    const pendingRevoke = await act(w, w.owner, own.id, "revoke", { reason: "x" });
    expect([pendingRevoke.status, pendingRevoke.body.error.type]).toEqual([409, "GRANT_NOT_ACTIVE"]);
    expect((await act(w, w.owner, own.id, "approve")).status).toBe(200);
    const twice = await act(w, w.owner, own.id, "reject", { reason: "changed my mind" });
    expect([twice.status, twice.body.error.type]).toEqual([409, "REQUEST_ALREADY_DECIDED"]);
    // Giving up one's own grant decides nothing for oneself: allowed.
    expect((await act(w, w.admin, own.id, "revoke", { reason: "no longer needed" })).status).toBe(200);
    // An ended grant is not ended again.
    const granted = (await ask(w, w.member, { duration: "1h" })).body.data.access_request;
    expect((await act(w, w.admin, granted.id, "approve", { duration: "10m" })).status).toBe(200);
    app.clock.advance(11 * 60);
    expect((await act(w, w.admin, granted.id, "revoke", { reason: "late" })).body.error.type).toBe("GRANT_NOT_ACTIVE");
  });

  it("refuses malformed input with a 400, never a 500", async () => {
    const w = await world();
    for (const body of [{ principal: "deploy" }, { department: "" }, { department: 5 }, { department: "x".repeat(300) }, { department: undefined, principal: undefined }]) {
      const res = await app.http.post(`${w.base}/access-requests`, { reason: "r", duration: "1h", department: "ops", ...body }, { token: w.member.token });
      expect([res.status, res.body.error.type], JSON.stringify(body)).toEqual([400, "VALIDATION_ERROR"]);
    }
    expect((await app.http.request("PUT", `${w.base}/departments/not-a-uuid/access-policy`, { token: w.owner.token, body: { max_duration_minutes: 5 } })).status).toBe(404);
    expect((await app.http.request("PUT", `${w.base}/departments/${w.opsId}/access-policy`, { token: w.owner.token, body: { max_duration_minutes: 0 } })).status).toBe(400);
    expect((await act(w, w.admin, "not-a-uuid", "revoke", { reason: "x" })).status).toBe(404);
  });
});

describe("concurrency", () => {
  it("of 20 parallel approvals by two approvers, one decides: one grant, one audit record", async () => {
    const w = await world();
    const asked = (await ask(w, w.member, { duration: "1h" })).body.data.access_request;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => act(w, i % 2 ? w.admin : w.owner, asked.id, "approve", { duration_minutes: 10 + i })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 200).map((r) => r.body.error.type)).toEqual(Array(19).fill("REQUEST_ALREADY_DECIDED"));
    expect(await countRows(app, "audit_logs", `resource_id = '${asked.id}' and action = 'access.request.approved'`)).toBe(1);
    expect(await countRows(app, "access_requests", `id = '${asked.id}' and state = 'approved'`)).toBe(1);
  });

  it("of 20 parallel revocations, one ends the grant: one audit record", async () => {
    const w = await world({ max_duration_minutes: 60, approval_required: false });
    const granted = (await ask(w, w.member, { duration: "1h" })).body.data.access_request;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => act(w, i % 2 ? w.admin : w.owner, granted.id, "revoke", { reason: `stop ${i}` })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 200).map((r) => r.body.error.type)).toEqual(Array(19).fill("GRANT_NOT_ACTIVE"));
    expect(await countRows(app, "audit_logs", `resource_id = '${granted.id}' and action = 'access.grant.revoked'`)).toBe(1);
  });

  it("of 20 parallel requests for one department, one is pending and the others are told why", async () => {
    const w = await world();
    const peer = await newUser(app);
    await addMember(app, w.org.id, w.owner, peer, "member");
    const results = await Promise.all(Array.from({ length: 20 }, () => ask(w, peer, { duration: "1h" })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 201).map((r) => r.body.error.type)).toEqual(Array(19).fill("ACCESS_REQUEST_EXISTS"));
  });
});
