import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cheapPasswordHasher, startTestApp, type TestApp } from "../helpers/app.js";
import { countRows } from "../helpers/db.js";
import { sql } from "drizzle-orm";
import { resultRows } from "../../src/infra/db.js";
import { addMember, orgWithRoles } from "../factories/orgs.js";
import { screenDocument } from "../helpers/screen-documents.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../factories/ssh.js";
import { login, newUser, type TestUser } from "../factories/users.js";
import { parseCertificate } from "../../src/lib/ssh/index.js";

/**
 * Just-in-time access requests (issue 37): a member asks for a principal for a bounded time, an
 * approver (never the requester) decides, signing includes the grant while it lasts and the
 * certificate never outlives it; every refusal says why.
 */
let app: TestApp;
let counting = false;
let statements = 0;
beforeAll(async () => {
  // Every case signs up an organization of four (and one eight more); nothing here is about the
  // password hash, so it is made at argon2id's cheapest (cheapPasswordHasher).
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" }, { onStatement: () => void (counting && statements++), passwordHasher: cheapPasswordHasher() });
});
afterAll(() => app?.close());
afterEach(() => app.clock.reset());

type World = Awaited<ReturnType<typeof orgWithRoles>> & { base: string; deployId: string };

async function world(policy: Record<string, unknown> | null = { max_duration_minutes: 240 }): Promise<World> {
  const w = await orgWithRoles(app);
  await createCa(app, w.org.id, w.owner);
  const base = `/api/v1/organizations/${w.org.id}`;
  // The member holds "app" for good; "deploy" only through requests.
  await grantPrincipal(app, w.org.id, w.owner, w.member, "app");
  const deployId = (await app.http.post(`${base}/principals`, { name: "deploy" }, { token: w.owner.token })).body.data.principal.id;
  if (policy) {
    const set = await app.http.request("PUT", `${base}/principals/${deployId}/access-policy`, { token: w.admin.token, body: policy });
    expect(set.status, set.text).toBe(200);
  }
  return { ...w, base, deployId };
}

const ask = (w: World, who: TestUser, body: Record<string, unknown>) => app.http.post(`${w.base}/access-requests`, { principal: "deploy", reason: "release 4.2", ...body }, { token: who.token });
const decide = (w: World, who: TestUser, id: string, action: "approve" | "reject" | "cancel", body: Record<string, unknown> = {}) =>
  app.http.post(`${w.base}/access-requests/${id}/${action}`, body, { token: who.token });

describe("request, approve, sign", () => {
  it("grants the principal for the approved time: signing includes it and caps validity at the grant's end, then it ends by itself", async () => {
    const w = await world();
    const asked = await ask(w, w.member, { duration: "2h" });
    expect(asked.status, asked.text).toBe(201);
    const request = asked.body.data.access_request;
    expect(request).toMatchObject({ principal: "deploy", state: "pending", requested_minutes: 120, reason: "release 4.2", active: false });

    // Approvers are told by email, and see it in their pending list; the requester does not.
    await app.flushEmails();
    expect(app.mail.lastWith(w.admin.email, "asks for the principal deploy")).toBeTruthy();
    expect(app.mail.lastWith(w.owner.email, "asks for the principal deploy")).toBeTruthy();
    const pending = await app.http.get(`${w.base}/access-requests/pending`, { token: w.admin.token });
    expect(pending.body.data.access_requests.map((r: { id: string }) => r.id)).toEqual([request.id]);
    expect(pending.body.data.access_requests[0].user_email).toBe(w.member.email);
    const gqlPending = await app.http.gql("{ pendingApprovals { id principal userEmail organizationName } }", {}, { token: w.owner.token });
    expect(gqlPending.data.pendingApprovals).toEqual([{ id: request.id, principal: "deploy", userEmail: w.member.email, organizationName: w.org.name }]);

    // Before the decision, signing gives only the standing principal.
    const key = await addVerifiedKey(app, w.member);
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: w.member.token })).body.data.principals).toEqual(["app"]);
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: key.id, principals: ["deploy"] }, { token: w.member.token })).body.error.type).toBe("UNAUTHORIZED_PRINCIPALS");

    // Approved for less time than asked.
    const approved = await decide(w, w.admin, request.id, "approve", { duration_minutes: 30, reason: "only the window" });
    expect(approved.status, approved.text).toBe(200);
    const grant = approved.body.data.access_request;
    expect(grant).toMatchObject({ state: "approved", granted_minutes: 30, active: true, decided_by_user_id: w.admin.id, decision_reason: "only the window" });
    const grantEnd = new Date(grant.grant_ends_at).getTime();
    await app.flushEmails();
    expect(app.mail.lastWith(w.member.email, "Your request for the principal deploy")).toBeTruthy();

    const signed = await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: w.member.token });
    expect(signed.status, signed.text).toBe(201);
    expect(signed.body.data.principals).toEqual(["app", "deploy"]);
    const cert = parseCertificate(signed.body.data.certificate);
    expect(cert.principals).toEqual(["app", "deploy"]);
    expect(cert.validBefore.getTime()).toBeLessThanOrEqual(grantEnd);
    expect(cert.validBefore.getTime()).toBeGreaterThan(grantEnd - 2000);
    // Without the granted principal, the certificate keeps its usual lifetime.
    const appOnly = await app.http.post("/api/v1/ssh/sign", { key_id: key.id, principals: ["app"] }, { token: w.member.token });
    expect(new Date(appOnly.body.data.valid_before).getTime()).toBeGreaterThan(grantEnd + 30 * 60_000);

    // Mine, and the admins' list.
    const mine = await app.http.get("/api/v1/access-requests", { token: w.member.token });
    expect(mine.body.data.access_requests.find((r: { id: string }) => r.id === request.id)).toMatchObject({ state: "approved", active: true, organization_name: w.org.name });
    const orgList = await app.http.get(`${w.base}/access-requests?state=approved`, { token: w.admin.token });
    expect(orgList.body.data.access_requests.map((r: { id: string }) => r.id)).toEqual([request.id]);

    // The grant ends by itself.
    app.clock.advance(31 * 60);
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: w.member.token })).body.data.principals).toEqual(["app"]);
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: key.id, principals: ["deploy"] }, { token: w.member.token })).body.error.type).toBe("UNAUTHORIZED_PRINCIPALS");
    const after = await app.http.get("/api/v1/access-requests", { token: w.member.token });
    expect(after.body.data.access_requests.find((r: { id: string }) => r.id === request.id)).toMatchObject({ state: "approved", active: false });

    // Every step is in the organization's audit trail.
    expect((await trail(request.id)).map((r) => r.action)).toEqual(["access.request.approved", "access.request.created"]);
  });

  it("auto-approves under an on-call policy, with the audit saying so", async () => {
    const w = await world({ max_duration_minutes: 60, approval_required: false });
    const asked = await ask(w, w.member, { duration_minutes: 45 });
    expect(asked.status, asked.text).toBe(201);
    expect(asked.body.data.access_request).toMatchObject({ state: "approved", granted_minutes: 45, active: true });
    const key = await addVerifiedKey(app, w.member);
    expect((await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: w.member.token })).body.data.principals).toEqual(["app", "deploy"]);
    const rows = await trail(asked.body.data.access_request.id);
    expect(rows.map((r) => [r.action, r.metadata.automatic ?? false, r.actor_id])).toEqual([
      ["access.request.approved", true, w.member.id],
      ["access.request.created", false, w.member.id],
    ]);
  });
});

describe("leaving", () => {
  it("ends the grants of whoever leaves the organization, and coming back revives none", async () => {
    const w = await world({ max_duration_minutes: 120, approval_required: false });
    expect((await ask(w, w.member, { duration: "2h" })).body.data.access_request.active).toBe(true);
    const removed = await app.http.request("DELETE", `${w.base}/members/${w.member.id}`, { token: w.owner.token });
    expect(removed.status, removed.text).toBeLessThan(300);
    await addMember(app, w.org.id, w.owner, w.member, "member");
    await grantPrincipal(app, w.org.id, w.owner, w.member, "app");
    const key = await addVerifiedKey(app, w.member);
    const signed = await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: w.member.token });
    expect(signed.status, signed.text).toBe(201);
    expect(signed.body.data.principals).toEqual(["app"]);
  });
});

describe("refusals, each with its reason", () => {
  it("refuses what the policy does not allow", async () => {
    const w = await world(null);
    // No policy: not requestable.
    const none = await ask(w, w.member, { duration: "1h" });
    expect([none.status, none.body.error.type]).toEqual([403, "NOT_REQUESTABLE"]);
    expect(none.body.message).toContain("deploy");
    const put = (body: object) => app.http.request("PUT", `${w.base}/principals/${w.deployId}/access-policy`, { token: w.owner.token, body });
    expect((await put({ requestable: false, max_duration_minutes: 60 })).status).toBe(200);
    expect((await ask(w, w.member, { duration: "1h" })).body.error.type).toBe("NOT_REQUESTABLE");
    expect((await put({ max_duration_minutes: 60 })).body.data.policy).toMatchObject({ requestable: true, approval_required: true, max_duration_minutes: 60, principal: "deploy" });
    // Longer than allowed.
    const long = await ask(w, w.member, { duration: "1h30m" });
    expect([long.status, long.body.error.type]).toEqual([400, "DURATION_TOO_LONG"]);
    expect(long.body.message).toContain("60 minutes");
    // Only a department's members.
    const dept = (await app.http.post(`${w.base}/departments`, { name: "On-call" }, { token: w.owner.token })).body.data.department;
    expect((await put({ max_duration_minutes: 60, requester_department_id: dept.id })).status).toBe(200);
    const notIn = await ask(w, w.member, { duration: "1h" });
    expect([notIn.status, notIn.body.error.type]).toEqual([403, "NOT_REQUESTABLE"]);
    expect(notIn.body.message).toContain("On-call");
    await app.http.post(`${w.base}/departments/${dept.id}/members`, { email: w.member.email }, { token: w.owner.token });
    expect((await ask(w, w.member, { duration: "1h" })).status).toBe(201);
    // A second pending request for the same principal.
    expect((await ask(w, w.member, { duration: "1h" })).body.error.type).toBe("ACCESS_REQUEST_EXISTS");
    // A department of another organization is unknown here.
    const other = await world();
    const foreignDept = (await app.http.post(`${other.base}/departments`, { name: "X" }, { token: other.owner.token })).body.data.department;
    expect((await put({ max_duration_minutes: 60, requester_department_id: foreignDept.id })).body.error.type).toBe("DEPARTMENT_NOT_FOUND");
    // Guests ask for nothing.
    expect((await ask(w, w.guest, { duration: "1h" })).body.error.type).toBe("AUTHORIZATION_ERROR");
    // Members set no policy.
    expect((await app.http.request("PUT", `${w.base}/principals/${w.deployId}/access-policy`, { token: w.member.token, body: { max_duration_minutes: 5 } })).body.error.type).toBe("AUTHORIZATION_ERROR");
  });

  it("keeps organizations apart: another organization's principal, request or admin is unknown", async () => {
    const a = await world();
    const b = await world();
    // A member of B asking in A: the organization does not exist for them.
    expect((await ask(a, b.member, { duration: "1h" })).body.error.type).toBe("ORG_NOT_FOUND");
    // B's principal named by id in A.
    const foreign = await ask(a, a.member, { principal: b.deployId, duration: "1h" });
    expect([foreign.status, foreign.body.error.type]).toEqual([404, "PRINCIPAL_NOT_FOUND"]);
    const mine = (await ask(a, a.member, { duration: "1h" })).body.data.access_request;
    // B's admin deciding A's request, through B's path or A's.
    expect((await decide(b, b.admin, mine.id, "approve")).body.error.type).toBe("ACCESS_REQUEST_NOT_FOUND");
    expect((await decide(a, b.admin, mine.id, "approve")).body.error.type).toBe("ORG_NOT_FOUND");
    expect((await app.http.get(`${a.base}/access-requests`, { token: b.admin.token })).body.error.type).toBe("ORG_NOT_FOUND");
    // B's approvers do not see it pending.
    expect((await app.http.gql("{ pendingApprovals { id } }", {}, { token: b.admin.token })).data.pendingApprovals).toEqual([]);
    // A's member approving: not an approver; another member cancelling: unknown.
    expect((await decide(a, a.member, mine.id, "approve")).body.error.type).toBe("AUTHORIZATION_ERROR");
    const peer = await newUser(app);
    await addMember(app, a.org.id, a.owner, peer, "member");
    expect((await decide(a, peer, mine.id, "cancel")).body.error.type).toBe("ACCESS_REQUEST_NOT_FOUND");
    expect((await decide(a, a.admin, mine.id, "cancel")).body.error.type).toBe("AUTHORIZATION_ERROR");
  });

  it("lets nobody decide their own request, and nothing be decided twice", async () => {
    const w = await world();
    // An admin asks; they cannot approve it, the owner can.
    const own = (await ask(w, w.admin, { duration: "1h" })).body.data.access_request;
    const self = await decide(w, w.admin, own.id, "approve");
    expect([self.status, self.body.error.type]).toEqual([403, "OWN_REQUEST"]);
    expect((await decide(w, w.admin, own.id, "reject", { reason: "no" })).body.error.type).toBe("OWN_REQUEST");
    expect((await app.http.get(`${w.base}/access-requests/pending`, { token: w.admin.token })).body.data.access_requests).toEqual([]);
    // Longer than asked is refused; then approved.
    expect((await decide(w, w.owner, own.id, "approve", { duration: "2h" })).body.error.type).toBe("DURATION_TOO_LONG");
    expect((await decide(w, w.owner, own.id, "approve")).status).toBe(200);
    const again = await decide(w, w.owner, own.id, "reject", { reason: "changed my mind" });
    expect([again.status, again.body.error.type]).toEqual([409, "REQUEST_ALREADY_DECIDED"]);
    expect((await decide(w, w.admin, own.id, "cancel")).body.error.type).toBe("REQUEST_ALREADY_DECIDED");
    // Rejecting needs a reason; a rejected request grants nothing.
    const asked = (await ask(w, w.member, { duration: "1h" })).body.data.access_request;
    expect((await decide(w, w.admin, asked.id, "reject", {})).body.error.type).toBe("VALIDATION_ERROR");
    const rejected = await decide(w, w.admin, asked.id, "reject", { reason: "use the release pipeline" });
    expect(rejected.body.data.access_request).toMatchObject({ state: "rejected", decision_reason: "use the release pipeline", grant_ends_at: null, active: false });
    // The requester cancels; a cancelled request cannot be approved.
    const third = (await ask(w, w.member, { duration: "1h" })).body.data.access_request;
    expect((await decide(w, w.member, third.id, "cancel")).body.data.access_request.state).toBe("cancelled");
    expect((await decide(w, w.admin, third.id, "approve")).body.error.type).toBe("REQUEST_ALREADY_DECIDED");
  });

  it("lets a pending request lapse after a day, audited", async () => {
    const w = await world();
    const asked = (await ask(w, w.member, { duration: "1h" })).body.data.access_request;
    app.clock.advance(24 * 3600 + 60);
    // Sessions end after a day too: sign in again.
    for (const u of [w.admin, w.member]) u.token = (await login(app, u.email, u.password)).body.data.token;
    const approve = await decide(w, w.admin, asked.id, "approve");
    expect([approve.status, approve.body.error.type]).toEqual([409, "REQUEST_EXPIRED"]);
    expect((await app.http.get(`${w.base}/access-requests/pending`, { token: w.admin.token })).body.data.access_requests).toEqual([]);
    const listed = await app.http.get(`${w.base}/access-requests`, { token: w.admin.token });
    expect(listed.body.data.access_requests.find((r: { id: string }) => r.id === asked.id).state).toBe("expired");
    expect(await countRows(app, "audit_logs", `resource_id = '${asked.id}' and action = 'access.request.expired'`)).toBe(1);
    // The person can ask again.
    expect((await ask(w, w.member, { duration: "1h" })).status).toBe(201);
  });

  it("refuses malformed input with a 400, never a 500", async () => {
    const w = await world();
    for (const body of [{ duration: "abc" }, { duration: "0m" }, { duration_minutes: 0 }, { duration_minutes: 1.5 }, { duration: "1h", duration_minutes: 60 }, {}, { duration: "1h", reason: "" }, { duration: "999d" }, { duration: 5 }]) {
      const res = await ask(w, w.member, body);
      expect([res.status, res.body.error.type], JSON.stringify(body)).toEqual([400, "VALIDATION_ERROR"]);
    }
    expect((await decide(w, w.admin, "not-a-uuid", "approve")).status).toBe(404);
    expect((await app.http.request("PUT", `${w.base}/principals/${w.deployId}/access-policy`, { token: w.owner.token, body: { max_duration_minutes: -1 } })).status).toBe(400);
  });
});

describe("concurrency", () => {
  it("of 20 parallel approvals by two approvers, one decides: one grant, one audit record", async () => {
    const w = await world();
    const asked = (await ask(w, w.member, { duration: "1h" })).body.data.access_request;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => decide(w, i % 2 ? w.admin : w.owner, asked.id, "approve", { duration_minutes: 10 + i })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.error.type === "REQUEST_ALREADY_DECIDED")).toBe(true);
    expect(await countRows(app, "audit_logs", `resource_id = '${asked.id}' and action = 'access.request.approved'`)).toBe(1);
    expect(await countRows(app, "access_requests", `id = '${asked.id}' and state = 'approved'`)).toBe(1);
  });

  it("of 20 parallel requests for one principal, one is pending and the others are told why", async () => {
    const w = await world();
    const results = await Promise.all(Array.from({ length: 20 }, () => ask(w, w.member, { duration: "1h" })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.error.type === "ACCESS_REQUEST_EXISTS")).toHaveLength(19);
  });
});

describe("the web app's home", () => {
  it("reads requests with the same number of statements for 1 pending request as for 8", async () => {
    const w = await world();
    const query = screenDocument("routes/access-requests.tsx", "AccessRequestsHome");
    const count = async () => {
      const read = () => app.http.gql(query, {}, { token: w.owner.token });
      await read();
      statements = 0;
      counting = true;
      try {
        const res = await read();
        expect(res.errors ?? []).toEqual([]);
        return { n: statements, pending: res.data.pendingApprovals.length as number };
      } finally {
        counting = false;
      }
    };
    expect((await ask(w, w.member, { duration: "1h" })).status).toBe(201);
    const one = await count();
    for (let i = 0; i < 7; i++) {
      const person = await newUser(app);
      await addMember(app, w.org.id, w.owner, person, "member");
      expect((await ask(w, person, { duration: "1h" })).status).toBe(201);
    }
    const eight = await count();
    expect([one.pending, eight.pending]).toEqual([1, 8]);
    expect(eight.n).toBe(one.n);
    expect(one.n).toBeLessThan(15);
  }, 120_000);
});

/** The audit records of one request, by action name. */
async function trail(id: string) {
  const result = await app.container.db.execute(sql`select action, actor_id, metadata from audit_logs where resource_id = ${id} order by action`);
  return resultRows<{ action: string; actor_id: string | null; metadata: { automatic?: boolean } }>(result);
}
