import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restRoutes } from "../../rest-shim/index.js";
import { API_KEY_SCOPE_NAMES } from "../../src/lib/api-key-scopes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { newApiKey } from "../factories/api-keys.js";
import { orgWithRoles } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../factories/ssh.js";
import type { TestUser } from "../factories/users.js";

/**
 * Issue 34, rule 17: an organization API key is a caller of its own kind (`Bearer kwk_…`). It
 * reaches only the REST routes that declare keys, with the declared scope, inside its own
 * organization; GraphQL and everything that needs a person refuse it; what it does is recorded as
 * done by the key.
 */
let app: TestApp;
let orgId: string;
let owner: TestUser;
let member: TestUser;
let otherOrgId: string;
/** A key holding every scope, and one holding members:read only. */
let all: { id: string; key: string; prefix: string };
let membersOnly: { id: string; key: string };

const RANDOM_ID = "00000000-0000-4000-8000-0000000000aa";
const get = (path: string, key: string) => app.http.get(`/api/v1${path}`, { token: key });

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  const org = await orgWithRoles(app);
  ({ owner, member } = org);
  orgId = org.org.id;
  otherOrgId = (await orgWithRoles(app)).org.id;
  await grantPrincipal(app, orgId, owner, member, "deploy");
  all = await newApiKey(app, orgId, owner, { name: "everything", scopes: [...API_KEY_SCOPE_NAMES] });
  membersOnly = await newApiKey(app, orgId, owner, { name: "directory sync", scopes: ["members:read"] });
});
afterAll(() => app?.close());

describe("scopes on keys", () => {
  it("creates a key with the sudo check alone unless told otherwise, and takes known scopes only", async () => {
    const plain = await newApiKey(app, orgId, owner);
    expect(plain.scopes).toEqual(["ssh:sudo"]);
    // Duplicates fold, the order is the vocabulary's.
    const two = await newApiKey(app, orgId, owner, { scopes: ["audit:read", "members:read", "audit:read"] });
    expect(two.scopes).toEqual(["members:read", "audit:read"]);

    for (const scopes of [["ssh:everything"], [], "members:read"]) {
      const res = await app.http.post(`/api/v1/organizations/${orgId}/api-keys`, { name: "bad", scopes }, { token: owner.token });
      expect([res.status, res.body.error.type]).toEqual([400, "VALIDATION_ERROR"]);
    }
    const patched = await app.http.patch(`/api/v1/organizations/${orgId}/api-keys/${plain.id}`, { scopes: ["principals:read"] }, { token: owner.token });
    expect(patched.status).toBe(200);
    expect(patched.body.data.api_key.scopes).toEqual(["principals:read"]);
    const unknown = await app.http.patch(`/api/v1/organizations/${orgId}/api-keys/${plain.id}`, { scopes: ["root"] }, { token: owner.token });
    expect([unknown.status, unknown.body.error.type]).toEqual([400, "VALIDATION_ERROR"]);
    // The new scopes hold at once.
    expect((await get(`/organizations/${orgId}/principals`, plain.key)).status).toBe(200);
    expect((await get(`/organizations/${orgId}/members`, plain.key)).status).toBe(403);
  });

  it("takes scopes through GraphQL too, with the same validation", async () => {
    const create = `mutation($orgId: ID!, $input: ApiKeyInput!) { createApiKey(orgId: $orgId, input: $input) { id scopes } }`;
    const ok = await app.http.gql(create, { orgId, input: { name: "gql", scopes: ["audit:read"] } }, { token: owner.token });
    expect(ok.errors).toBeUndefined();
    expect(ok.data.createApiKey.scopes).toEqual(["audit:read"]);
    const bad = await app.http.gql(create, { orgId, input: { name: "gql", scopes: ["audit:write"] } }, { token: owner.token });
    expect(bad.errors[0].extensions.code).toBe("VALIDATION_ERROR");
    const update = `mutation($orgId: ID!, $keyId: ID!) { updateApiKey(orgId: $orgId, keyId: $keyId, input: { scopes: ["members:read", "ssh:sudo"] }) { scopes } }`;
    const updated = await app.http.gql(update, { orgId, keyId: ok.data.createApiKey.id }, { token: owner.token });
    expect(updated.data.updateApiKey.scopes).toEqual(["ssh:sudo", "members:read"]);
  });
});

describe("the declared routes", () => {
  it("answer a key holding the route's scope", async () => {
    const members = await get(`/organizations/${orgId}/members`, all.key);
    expect(members.status).toBe(200);
    expect(members.body.data.members.map((m: { email: string }) => m.email)).toContain(member.email);
    const principals = await get(`/organizations/${orgId}/principals`, all.key);
    expect(principals.status).toBe(200);
    expect(principals.body.data.principals.map((p: { name: string }) => p.name)).toEqual(["deploy"]);
    const audit = await get(`/organizations/${orgId}/audit-logs?action=api_key.created`, all.key);
    expect(audit.status).toBe(200);
    // Who gave a key what is on the record.
    const created = audit.body.data.audit_logs.find((e: { resource_id: string }) => e.resource_id === membersOnly.id);
    expect(created).toMatchObject({ actor_id: owner.id, metadata: { scopes: ["members:read"] } });
    const paged = await get(`/organizations/${orgId}/audit-logs?page=1&per_page=5`, all.key);
    expect(paged.status).toBe(200);
  });

  it("refuse the same key without the scope: 403 INSUFFICIENT_SCOPE naming it", async () => {
    for (const [path, scope] of [
      [`/organizations/${orgId}/principals`, "principals:read"],
      [`/organizations/${orgId}/audit-logs`, "audit:read"],
    ] as const) {
      const res = await get(path, membersOnly.key);
      expect([res.status, res.body.error.type, res.body.error.details.required_scope]).toEqual([403, "INSUFFICIENT_SCOPE", scope]);
      expect(res.headers.get("www-authenticate")).toContain(`error="insufficient_scope", scope="${scope}"`);
    }
    expect((await get(`/organizations/${orgId}/members`, membersOnly.key)).status).toBe(200);
  });

  it("answer another organization's id exactly as to an outsider: ORG_NOT_FOUND", async () => {
    for (const id of [otherOrgId, RANDOM_ID, "not-a-uuid"]) {
      for (const path of [`/organizations/${id}/members`, `/organizations/${id}/principals`, `/organizations/${id}/audit-logs`]) {
        const res = await get(path, all.key);
        expect([res.status, res.body.error.type]).toEqual([404, "ORG_NOT_FOUND"]);
      }
    }
  });

  it("do not show a key the admins' view of members (who signed in when)", async () => {
    const asKey = (await get(`/organizations/${orgId}/members`, all.key)).body.data.members;
    const asOwner = (await app.http.get(`/api/v1/organizations/${orgId}/members`, { token: owner.token })).body.data.members;
    const asMember = (await app.http.get(`/api/v1/organizations/${orgId}/members`, { token: member.token })).body.data.members;
    expect(Object.keys(asKey[0]).sort()).toEqual(Object.keys(asMember[0]).sort());
    expect(Object.keys(asOwner[0]).length).toBeGreaterThanOrEqual(Object.keys(asKey[0]).length);
  });

  it("answer twenty parallel calls of one key", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => get(`/organizations/${orgId}/${i % 2 ? "members" : "principals"}`, all.key)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
  });
});

describe("everything else refuses keys", () => {
  it("refuses a key (with every scope) on every REST route that does not declare keys: 403 INSUFFICIENT_SCOPE", async () => {
    const undeclared = restRoutes({} as never, {} as never).filter((r) => !r.apiKey);
    expect(undeclared.length).toBeGreaterThan(100);
    const failures: string[] = [];
    for (const r of undeclared) {
      const path = `/api/v1${r.path.replace(":orgId", orgId).replace(/:(\w+)/g, RANDOM_ID)}`;
      const res = await app.http.request(r.method.toUpperCase(), path, { token: all.key, ...(r.method === "get" ? {} : { body: {} }) });
      if (res.status !== 403 || res.body?.error?.type !== "INSUFFICIENT_SCOPE") failures.push(`${r.method} ${r.path} → ${res.status} ${res.body?.error?.type}`);
    }
    expect(failures).toEqual([]);
    // Nothing was changed on the way: the key is the same, the organization too.
    expect((await get(`/organizations/${orgId}/members`, all.key)).status).toBe(200);
  }, 120_000);

  it("refuses keys on GraphQL, queries and mutations alike", async () => {
    for (const query of [`query($orgId: ID!) { members(orgId: $orgId) { __typename } }`, `mutation($orgId: ID!) { createApiKey(orgId: $orgId, input: { name: "x" }) { id } }`, `{ __typename }`]) {
      const res = await app.http.gql(query, { orgId }, { token: all.key });
      expect(res.status).toBe(403);
      expect(res.errors[0].extensions.code).toBe("INSUFFICIENT_SCOPE");
    }
  });

  it("refuses a key wherever a service needs a person, behind the route table too", async () => {
    const ctx = { requestId: "test", ip: null, userAgent: null, actor: { kind: "apiKey" as const, keyId: all.id, organizationId: orgId, prefix: all.prefix, scopes: new Set(API_KEY_SCOPE_NAMES) } };
    await expect(app.services.orgs.get(ctx, orgId)).rejects.toMatchObject({ code: "INSUFFICIENT_SCOPE" });
    await expect(app.services.apiKeys.list(ctx, orgId)).rejects.toMatchObject({ code: "INSUFFICIENT_SCOPE" });
    await expect(app.services.principals.get(ctx, orgId, RANDOM_ID)).rejects.toMatchObject({ code: "INSUFFICIENT_SCOPE" });
    await expect(app.services.departments.list(ctx, orgId)).rejects.toMatchObject({ code: "INSUFFICIENT_SCOPE" });
    // Its own organization only, at the service too.
    await expect(app.services.members.list(ctx, otherOrgId)).rejects.toMatchObject({ code: "ORG_NOT_FOUND" });
  });
});

describe("refused credentials", () => {
  it("answers a revoked key, an unknown key and a malformed bearer 401 with a Bearer challenge", async () => {
    const revoked = await newApiKey(app, orgId, owner, { scopes: ["members:read"] });
    expect((await get(`/organizations/${orgId}/members`, revoked.key)).status).toBe(200);
    expect((await app.http.post(`/api/v1/organizations/${orgId}/api-keys/${revoked.id}/revoke`, {}, { token: owner.token })).status).toBe(200);
    const unknown = `${revoked.key.slice(0, -4)}AAAA`;
    for (const key of [revoked.key, unknown, "kwk_", "kwk_nonsense", `kwk_${"x".repeat(300)}`]) {
      const res = await get(`/organizations/${orgId}/members`, key);
      expect([res.status, res.body.error.type]).toEqual([401, "INVALID_TOKEN"]);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
    }
    const twoParts = await app.http.get(`/api/v1/organizations/${orgId}/members`, { headers: { authorization: `Bearer ${all.key} extra` } });
    expect([twoParts.status, twoParts.body.error.type]).toEqual([401, "INVALID_AUTH_FORMAT"]);
    expect(twoParts.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_request"/);
  });
});

describe("the sudo check with a bearer key", () => {
  it("answers the bearer form and the body form alike, refuses both at once and keys without ssh:sudo, and records the key", async () => {
    await createCa(app, orgId, owner);
    const key = await addVerifiedKey(app, member);
    const cert = (await app.http.post("/api/v1/ssh/sign", { key_id: key.id }, { token: member.token })).body.data;
    const sudo = await newApiKey(app, orgId, owner, { name: "bastion" });

    const bearer = await app.http.post("/api/v1/sudo/check", { certificate_serial: cert.serial }, { token: sudo.key });
    expect(bearer.status).toBe(200);
    expect(bearer.body.data).toMatchObject({ user_id: member.id, certificate_serial: cert.serial });
    const body = await app.http.post("/api/v1/sudo/check", { api_key: sudo.key, certificate_serial: cert.serial });
    expect(body.body.data).toEqual(bearer.body.data);

    const both = await app.http.post("/api/v1/sudo/check", { api_key: sudo.key, certificate_serial: cert.serial }, { token: sudo.key });
    expect([both.status, both.body.error.type]).toEqual([400, "BAD_REQUEST"]);
    const none = await app.http.post("/api/v1/sudo/check", { certificate_serial: cert.serial });
    expect([none.status, none.body.error.type]).toEqual([401, "AUTH_REQUIRED"]);
    for (const call of [
      app.http.post("/api/v1/sudo/check", { certificate_serial: cert.serial }, { token: membersOnly.key }),
      app.http.post("/api/v1/sudo/check", { api_key: membersOnly.key, certificate_serial: cert.serial }),
    ]) {
      const res = await call;
      expect([res.status, res.body.error.type, res.body.error.details.required_scope]).toEqual([403, "INSUFFICIENT_SCOPE", "ssh:sudo"]);
    }

    // The organization's log shows the key as the one who asked, both ways.
    const log = await get(`/organizations/${orgId}/audit-logs?action=sudo.check`, all.key);
    const entries = log.body.data.audit_logs as Array<{ actor_id: string | null; user_id: string; metadata: Record<string, unknown> }>;
    expect(entries).toHaveLength(2);
    for (const e of entries) {
      expect(e.actor_id).toBeNull();
      expect(e.user_id).toBe(member.id);
      expect(e.metadata.actor).toEqual({ kind: "api_key", key_id: sudo.id, prefix: sudo.prefix });
    }
  });
});
