import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { newApiKey } from "../factories/api-keys.js";
import { addMember, orgWithRoles } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";
import { clientFor, newScimUser, patchOf, scimClient, verifyDomain, type ScimClient } from "../helpers/scim.js";

/**
 * Issue 36, "admins see SCIM activity": each SCIM key's last request (the last sync), last
 * successful write and last error, recorded by the /scim/v2 door once it has answered, cheaply
 * (a read at most once a minute per key), and shown only to the organization's admins (GraphQL and
 * REST alike: members, guests, other organizations' admins, outsiders and keys refused).
 */
let app: TestApp;
let c: ScimClient;
let roles: Awaited<ReturnType<typeof orgWithRoles>>;
let counting = false;
let statements: string[] = [];

const QUERY = `query($orgId: ID!) { scimActivity(orgId: $orgId) { organizationId baseUrl lastRequestAt lastWriteAt lastWrite
  lastError { at status scimType detail request }
  keys { apiKeyId name prefix hasScimScope revokedAt lastRequestAt lastRequest lastWriteAt lastWrite lastError { at status scimType detail request } } } }`;

async function activityOf(orgId: string, who: TestUser) {
  const res = await app.http.gql(QUERY, { orgId }, { token: who.token });
  expect(res.errors ?? [], JSON.stringify(res.errors)).toEqual([]);
  return res.data.scimActivity;
}
const keyOf = async (keyId: string) => (await activityOf(c.orgId, c.owner)).keys.find((k: { apiKeyId: string }) => k.apiKeyId === keyId);
/** The door records once it has answered: wait for what the last answer left. */
const eventually = <T>(check: () => Promise<T>) => vi.waitFor(check, { timeout: 5000, interval: 20 });

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" }, { onStatement: (sql) => counting && statements.push(sql) });
  roles = await orgWithRoles(app);
  const domain = `act-${Date.now().toString(36)}.test`;
  await verifyDomain(app, roles.org.id, domain);
  const key = await newApiKey(app, roles.org.id, roles.owner, { name: "okta", scopes: ["scim"] });
  c = clientFor(app, { orgId: roles.org.id, owner: roles.owner, key: key.key, keyId: key.id, domain });
});
afterAll(() => app?.close());

describe("what the door records", () => {
  it("lists a SCIM key that has not called yet, with the base URL to paste into the IdP", async () => {
    const a = await activityOf(c.orgId, c.owner);
    expect(a.baseUrl).toBe(`${app.url}/scim/v2`);
    expect(a.lastRequestAt).toBeNull();
    expect(a.lastError).toBeNull();
    expect(a.keys).toEqual([expect.objectContaining({ apiKeyId: c.keyId, name: "okta", hasScimScope: true, lastRequestAt: null, lastWrite: null, lastError: null })]);
  });

  it("records the last request, each successful write with its target, and the last error", async () => {
    expect((await c.get(`/Users?filter=${encodeURIComponent(`userName eq "${c.at("ann")}"`)}`)).status).toBe(200);
    // The query (a filter names people) is never kept.
    await eventually(async () => expect((await keyOf(c.keyId)).lastRequest).toBe("GET /Users"));

    const created = await c.post("/Users", newScimUser(c.at("ann")));
    expect(created.status).toBe(201);
    await eventually(async () => expect((await keyOf(c.keyId)).lastWrite).toBe(`POST User ${created.body.id}`));

    expect((await c.patch(`/Users/${created.body.id}`, patchOf({ op: "Replace", path: "active", value: "False" }))).status).toBe(200);
    await eventually(async () => expect((await keyOf(c.keyId)).lastWrite).toBe(`PATCH User ${created.body.id}`));

    const bad = await c.get(`/Users?filter=${encodeURIComponent("userName zz 1")}`);
    expect(bad.status).toBe(400);
    const k = await eventually(async () => {
      const k = await keyOf(c.keyId);
      expect(k.lastError).not.toBeNull();
      return k;
    });
    expect(k.lastError).toMatchObject({ status: 400, scimType: "invalidFilter", request: "GET /Users" });
    expect(k.lastError.detail).toBe(bad.body.detail);
    // An error is not a write: the last write stays.
    expect(k.lastWrite).toBe(`PATCH User ${created.body.id}`);

    // A malformed body is the key's error too (the body is read once the key is known).
    const raw = await app.http.request("POST", "/scim/v2/Users", { token: c.key, rawBody: "{not json", headers: { "content-type": "application/scim+json" } });
    expect(raw.status).toBe(400);
    await eventually(async () => expect((await keyOf(c.keyId)).lastError).toMatchObject({ status: 400, scimType: "invalidSyntax", request: "POST /Users" }));

    const summary = await activityOf(c.orgId, c.owner);
    expect(summary.lastWrite).toBe(`PATCH User ${created.body.id}`);
    expect(summary.lastError.request).toBe("POST /Users");
    expect(new Date(summary.lastRequestAt).getTime()).toBeGreaterThanOrEqual(new Date(summary.lastWriteAt).getTime());
  });

  it("stores a read at most once a minute per key; writes and errors always", async () => {
    const u = await c.post("/Users", newScimUser(c.at("throttle")));
    await eventually(async () => expect((await keyOf(c.keyId)).lastWrite).toBe(`POST User ${u.body.id}`));
    statements = [];
    counting = true;
    try {
      const reads = await Promise.all(Array.from({ length: 20 }, () => c.get("/Users?count=1")));
      expect(reads.map((r) => r.status)).toEqual(Array(20).fill(200));
      // Let any recording in flight land before counting.
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      counting = false;
    }
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.filter((s) => /scim_activity/i.test(s))).toEqual([]);
    expect((await keyOf(c.keyId)).lastRequest).toBe("POST /Users");

    app.clock.advance(61);
    expect((await c.get("/Groups")).status).toBe(200);
    await eventually(async () => expect((await keyOf(c.keyId)).lastRequest).toBe("GET /Groups"));
  });

  it("never moves a key's record back in time when answers are recorded out of order", async () => {
    const at = (await keyOf(c.keyId)).lastRequestAt as string;
    // An answer recorded late, stamped before what is stored: dropped, not written over it.
    await app.services.scimActivity.record({ organizationId: c.orgId, apiKeyId: c.keyId, method: "DELETE", path: "/Users/late", status: 204 });
    app.clock.advance(-3600);
    try {
      await app.services.scimActivity.record({ organizationId: c.orgId, apiKeyId: c.keyId, method: "PATCH", path: "/Users/stale", status: 200 });
    } finally {
      app.clock.advance(3600);
    }
    const k = await keyOf(c.keyId);
    expect(k.lastWrite).toBe("DELETE User late");
    expect(new Date(k.lastRequestAt).getTime()).toBeGreaterThanOrEqual(new Date(at).getTime());
  });

  it("lists a key without the scim scope that called SCIM, with its refusal; B's calls stay B's", async () => {
    const readOnly = await newApiKey(app, c.orgId, c.owner, { name: "wrong scopes", scopes: ["members:read"] });
    const wrong = clientFor(app, { ...c, key: readOnly.key, keyId: readOnly.id });
    expect((await wrong.get("/Users")).status).toBe(403);
    const k = await eventually(async () => {
      const k = await keyOf(readOnly.id);
      expect(k?.lastError).toBeTruthy();
      return k;
    });
    expect(k).toMatchObject({ hasScimScope: false, lastError: { status: 403, detail: "This API key lacks the scim scope" } });

    const b = await scimClient(app);
    expect((await b.post("/Users", newScimUser(b.at("bee")))).status).toBe(201);
    await eventually(async () => expect((await activityOf(b.orgId, b.owner)).lastWrite).toMatch(/^POST User /));
    const mine = await activityOf(c.orgId, c.owner);
    expect(mine.keys.map((x: { apiKeyId: string }) => x.apiKeyId)).not.toContain(b.keyId);
    expect(mine.organizationId).toBe(c.orgId);
  });

  it("drops a revoked key that never called SCIM, keeps one that did", async () => {
    const unused = await newApiKey(app, c.orgId, c.owner, { name: "unused", scopes: ["scim"] });
    expect((await keyOf(unused.id))?.name).toBe("unused");
    expect((await app.http.delete(`/api/v1/organizations/${c.orgId}/api-keys/${unused.id}`, { token: c.owner.token })).status).toBe(200);
    expect(await keyOf(unused.id)).toBeUndefined();
    const used = await newApiKey(app, c.orgId, c.owner, { name: "used", scopes: ["scim"] });
    expect((await clientFor(app, { ...c, key: used.key, keyId: used.id }).get("/Users")).status).toBe(200);
    await eventually(async () => expect((await keyOf(used.id))?.lastRequest).toBe("GET /Users"));
    expect((await app.http.delete(`/api/v1/organizations/${c.orgId}/api-keys/${used.id}`, { token: c.owner.token })).status).toBe(200);
    expect((await keyOf(used.id))?.revokedAt).toBeTruthy();
  });
});

describe("who may read it", () => {
  it("answers the same over REST as over GraphQL", async () => {
    const rest = await app.http.get(`/api/v1/organizations/${c.orgId}/scim/activity`, { token: roles.admin.token });
    expect(rest.status, rest.text).toBe(200);
    const gql = await activityOf(c.orgId, roles.admin);
    expect(rest.body.data.scim.base_url).toBe(gql.baseUrl);
    expect(rest.body.data.scim.keys.map((k: { api_key_id: string }) => k.api_key_id)).toEqual(gql.keys.map((k: { apiKeyId: string }) => k.apiKeyId));
    expect(rest.body.data.scim.last_write).toBe(gql.lastWrite);
  });

  it("refuses members, guests, other organizations' admins, outsiders, keys and bad ids", async () => {
    const other = await orgWithRoles(app);
    const outsider = await newUser(app);
    const cases: Array<[string, TestUser | null, number, string]> = [
      ["member", roles.member, 403, "AUTHORIZATION_ERROR"],
      ["guest", roles.guest, 403, "AUTHORIZATION_ERROR"],
      ["other org's owner", other.owner, 404, "ORG_NOT_FOUND"],
      ["other org's admin", other.admin, 404, "ORG_NOT_FOUND"],
      ["outsider", outsider, 404, "ORG_NOT_FOUND"],
      ["anonymous", null, 401, "AUTH_REQUIRED"],
    ];
    for (const [who, user, status, code] of cases) {
      const opts = user ? { token: user.token } : {};
      const rest = await app.http.get(`/api/v1/organizations/${c.orgId}/scim/activity`, opts);
      expect([who, rest.status, rest.body?.error?.type]).toEqual([who, status, code]);
      const gql = await app.http.gql(QUERY, { orgId: c.orgId }, opts);
      expect([who, gql.errors?.[0]?.extensions?.code]).toEqual([who, code]);
    }
    // A key (even the SCIM key itself, or one that reads the audit log) is not an admin.
    const auditKey = await newApiKey(app, c.orgId, c.owner, { name: "audit", scopes: ["audit:read", "scim"] });
    for (const key of [c.key, auditKey.key]) {
      const rest = await app.http.get(`/api/v1/organizations/${c.orgId}/scim/activity`, { token: key });
      expect(rest.status).toBe(403);
      expect((await app.http.gql(QUERY, { orgId: c.orgId }, { token: key })).errors?.[0]).toBeTruthy();
    }
    // Other organizations' admins reading their own: only their own keys.
    expect((await activityOf(other.org.id, other.admin)).keys).toEqual([]);
    for (const bad of ["not-a-uuid", "00000000-0000-0000-0000-000000000000"]) {
      expect((await app.http.get(`/api/v1/organizations/${bad}/scim/activity`, { token: roles.owner.token })).status).toBe(404);
    }
    // A newly added admin reads it.
    const later = await newUser(app);
    await addMember(app, c.orgId, c.owner, later, "admin");
    expect((await activityOf(c.orgId, later)).organizationId).toBe(c.orgId);
  });
});
