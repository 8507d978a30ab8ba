import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { newUser } from "../factories/users.js";
import { accountRow, eqFilter, membershipOf, newScimUser, patchOf, scimAudit, scimClient, scimError, USER_SCHEMA, type ScimClient } from "../helpers/scim.js";

/**
 * Issue 36: /scim/v2 for one organization's provisioning client: who may call it, filters, paging
 * and projection, PATCH (all or nothing), bad input (SCIM errors with a scimType, never a 500),
 * the cross-organization matrix, accounts that are not the organization's, parallel creates.
 */
let app: TestApp;
let a: ScimClient;
let b: ScimClient;
const ids: Record<string, string> = {};

async function create(c: ScimClient, local: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await c.post("/Users", newScimUser(c.at(local), extra));
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  [a, b] = [await scimClient(app), await scimClient(app)];
  ids.ann = await create(a, "ann.lee", { externalId: "EXT-Ann", displayName: "Ann Lee" });
  ids.bob = await create(a, "bob.stone", { externalId: "ext-bob", displayName: "Bob Stone" });
  ids.cy = await create(a, "cy.ng", { displayName: "Cy Ng", active: false });
  ids.bee = await create(b, "bee.other", { displayName: "Bee Other" });
});
afterAll(() => app?.close());

const names = async (query: string) => {
  const res = await a.get(`/Users?${query}`);
  expect(res.status, res.text).toBe(200);
  return (res.body.Resources as Array<{ userName: string }>).map((r) => r.userName.split("@")[0]).sort();
};
const filter = (f: string) => names(`filter=${encodeURIComponent(f)}`);

describe("who may call /scim/v2", () => {
  it("takes only an organization API key with the scim scope", async () => {
    const none = await app.http.get("/scim/v2/Users");
    expect(scimError(none)).toEqual([401, undefined]);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    // A person's session, as a bearer: not a provisioning client.
    expect(scimError(await app.http.get("/scim/v2/Users", { token: a.owner.token }))).toEqual([401, undefined]);
    expect(scimError(await app.http.get("/scim/v2/Users", { headers: { authorization: "Basic Zm9vOmJhcg==" } }))[0]).toBe(401);
    const readOnly = await scimClient(app, ["members:read"]);
    expect(scimError(await readOnly.get("/Users"))).toEqual([403, undefined]);
    // A revoked key stops at once.
    const revoked = await scimClient(app);
    expect((await revoked.get("/Users")).status).toBe(200);
    expect((await app.http.delete(`/api/v1/organizations/${revoked.orgId}/api-keys/${revoked.keyId}`, { token: revoked.owner.token })).status).toBe(200);
    expect(scimError(await revoked.get("/Users"))[0]).toBe(401);
  });
});

describe("filters, paging and projection", () => {
  it("filters with eq, co, sw, ew, pr, and, or, not and parentheses", async () => {
    expect(await filter(`userName eq "${a.at("ANN.LEE")}"`)).toEqual(["ann.lee"]);
    expect(await filter(`userName co "STONE"`)).toEqual(["bob.stone"]);
    expect(await filter(`userName sw "c"`)).toEqual(["cy.ng"]);
    expect(await filter(`displayName ew "Lee"`)).toEqual(["ann.lee"]);
    expect(await filter(`externalId pr`)).toEqual(["ann.lee", "bob.stone"]);
    // externalId is case-exact; userName is not.
    expect(await filter(`externalId eq "ext-ann"`)).toEqual([]);
    expect(await filter(`externalId eq "EXT-Ann"`)).toEqual(["ann.lee"]);
    expect(await filter(`active eq false`)).toEqual(["cy.ng"]);
    expect(await filter(`emails.value eq "${a.at("bob.stone")}"`)).toEqual(["bob.stone"]);
    expect(await filter(`emails eq "${a.at("cy.ng")}"`)).toEqual(["cy.ng"]);
    expect(await filter(`emails[type eq "work" and value sw "ann"]`)).toEqual(["ann.lee"]);
    expect(await filter(`(userName sw "ann" or userName sw "bob") and active eq true`)).toEqual(["ann.lee", "bob.stone"]);
    expect(await filter(`not (userName sw "ann") and ${USER_SCHEMA}:active eq true`)).toEqual(["bob.stone"]);
  });

  it("refuses filters that do not parse or name nothing: 400 invalidFilter", async () => {
    for (const f of ['userName eq', 'nickname eq "x"', 'userName xx "a"', 'userName eq "unterminated', "(userName pr", 'userName eq "a" junk', "userName pr ]", `${"(".repeat(40)}userName pr${")".repeat(40)}`, `userName eq "${"a".repeat(3000)}"`, "urn:x:y pr", "@"]) {
      expect(scimError(await a.get(`/Users?filter=${encodeURIComponent(f)}`)), f).toEqual([400, "invalidFilter"]);
    }
  });

  it("pages with startIndex and count, caps count, and projects attributes", async () => {
    const page = await a.get("/Users?startIndex=2&count=1");
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 });
    expect((await a.get("/Users?count=0")).body).toMatchObject({ totalResults: 3, itemsPerPage: 0, Resources: [] });
    expect((await a.get("/Users?count=100000000")).body.itemsPerPage).toBe(3);
    expect((await a.get("/Users?startIndex=-5")).body.startIndex).toBe(1);
    expect(scimError(await a.get("/Users?count=lots"))).toEqual([400, "invalidValue"]);
    const only = await a.get(`/Users/${ids.ann}?attributes=userName,name.givenName`);
    expect(only.body).toEqual({ schemas: [USER_SCHEMA], id: ids.ann, userName: a.at("ann.lee"), name: { givenName: "Given" } });
    const without = await a.get(`/Users/${ids.ann}?excludedAttributes=emails,meta,name.familyName`);
    expect(without.body.emails).toBeUndefined();
    expect(without.body.meta).toBeUndefined();
    expect(without.body.name).toEqual({ givenName: "Given", formatted: "Given Family" });
  });
});

describe("PATCH", () => {
  it("applies every operation or none", async () => {
    const before = (await a.get(`/Users/${ids.bob}`)).body;
    const bad = await a.patch(`/Users/${ids.bob}`, patchOf({ op: "replace", path: "displayName", value: "Changed" }, { op: "replace", path: "active", value: "maybe" }));
    expect(scimError(bad)).toEqual([400, "invalidValue"]);
    expect((await a.get(`/Users/${ids.bob}`)).body).toEqual(before);
    const ok = await a.patch(`/Users/${ids.bob}`, patchOf({ op: "REPLACE", path: "name", value: { familyName: "Stoner" } }, { op: "remove", path: "externalId" }, { op: "add", path: "displayName", value: "Bobby" }));
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ name: { givenName: "Given", familyName: "Stoner" }, displayName: "Bobby" });
    expect(ok.body.externalId).toBeUndefined();
  });

  it("answers bad patches with the scimType RFC 7644 defines", async () => {
    const cases: Array<[unknown, string]> = [
      [patchOf({ op: "replace", path: "favourite[colour", value: 1 }), "invalidPath"],
      [patchOf({ op: "replace", path: "favouriteColour", value: "red" }), "invalidPath"],
      [patchOf({ op: "replace", path: "urn:example:custom:age", value: 3 }), "invalidPath"],
      [patchOf({ op: "replace", path: "id", value: "x" }), "mutability"],
      // A new userName outside the organization's verified domains (B's is not A's).
      [patchOf({ op: "replace", path: "userName", value: b.at("someone.else") }), "invalidValue"],
      [patchOf({ op: "remove", path: 'emails[type eq "home"]' }), "noTarget"],
      [patchOf({ op: "replace", path: 'emails[type eq "home"].value', value: "x@y.test" }), "noTarget"],
      [patchOf({ op: "remove" }), "noTarget"],
      [patchOf({ op: "move", path: "displayName", value: "x" }), "invalidSyntax"],
      [patchOf({ op: "replace", path: 'emails[type eq].value', value: "x" }), "invalidFilter"],
      [patchOf({ op: "replace", value: "not an object" }), "invalidValue"],
      [patchOf({ op: "replace", path: "displayName", value: "x".repeat(300) }), "invalidValue"],
      [patchOf(), "invalidSyntax"],
      [{ schemas: [USER_SCHEMA], Operations: [{ op: "replace", path: "displayName", value: "x" }] }, "invalidSyntax"],
      [[1, 2], "invalidSyntax"],
    ];
    for (const [body, type] of cases) expect(scimError(await a.patch(`/Users/${ids.ann}`, body)), JSON.stringify(body)).toEqual([400, type]);
    expect((await a.get(`/Users/${ids.ann}`)).body.displayName).toBe("Ann Lee");
  });

  it("honours If-Match with the weak ETag", async () => {
    const etag = (await a.get(`/Users/${ids.ann}`)).headers.get("etag")!;
    expect(etag).toMatch(/^W\/"/);
    const stale = await a.request("PATCH", `/Users/${ids.ann}`, patchOf({ op: "replace", path: "displayName", value: "A" }), { "if-match": 'W/"0-stale"' });
    expect(scimError(stale)[0]).toBe(412);
    const fresh = await a.request("PATCH", `/Users/${ids.ann}`, patchOf({ op: "replace", path: "displayName", value: "Ann L." }), { "if-match": etag });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("etag")).not.toBe(etag);
  });
});

describe("bad input on create", () => {
  it("refuses malformed JSON, wrong schemas, missing or foreign userNames, duplicates", async () => {
    const raw = await app.http.request("POST", "/scim/v2/Users", { token: a.key, rawBody: '{"schemas": [', headers: { "content-type": "application/scim+json" } });
    expect(scimError(raw)).toEqual([400, "invalidSyntax"]);
    expect(scimError(await a.post("/Users", { schemas: ["urn:example:Thing"], userName: a.at("x") }))).toEqual([400, "invalidSyntax"]);
    expect(scimError(await a.post("/Users", { userName: a.at("x") }))).toEqual([400, "invalidSyntax"]);
    expect(scimError(await a.post("/Users", { schemas: [USER_SCHEMA] }))).toEqual([400, "invalidValue"]);
    expect(scimError(await a.post("/Users", { schemas: [USER_SCHEMA], userName: "not an address" }))).toEqual([400, "invalidValue"]);
    expect(scimError(await a.post("/Users", { schemas: [USER_SCHEMA], userName: a.at("x"), active: "sometimes" }))).toEqual([400, "invalidValue"]);
    expect(scimError(await a.post("/Users", { schemas: [USER_SCHEMA], userName: a.at("x"), shoeSize: 44 }))).toEqual([400, "invalidPath"]);
    // Only addresses of the organization's own verified domains (B's is not A's).
    expect(scimError(await a.post("/Users", newScimUser(b.at("intruder"))))).toEqual([400, "invalidValue"]);
    expect(scimError(await a.post("/Users", newScimUser(a.at("ann.lee"))))).toEqual([409, "uniqueness"]);
    expect(scimError(await a.post("/Users", newScimUser(a.at("new.one"), { externalId: "EXT-Ann" })))).toEqual([409, "uniqueness"]);
    expect(scimError(await a.request("POST", "/Users", { schemas: [USER_SCHEMA], userName: a.at("big"), displayName: "x".repeat(200_000) }))[0]).toBe(413);
    expect(scimError(await a.get("/Users/not-a-uuid"))).toEqual([404, undefined]);
    expect(scimError(await a.request("PUT", "/Users"))[0]).toBe(405);
  });

  it("answers odd input with a SCIM 4xx, never a 500", async () => {
    let deep: unknown = "x";
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const bodies: Array<[string, string, unknown]> = [
      ["POST", "/Users", { schemas: [USER_SCHEMA], userName: a.at("odd"), name: "a string" }],
      ["POST", "/Users", { schemas: [USER_SCHEMA], userName: a.at("odd"), name: { givenName: 5 } }],
      ["POST", "/Users", { schemas: [USER_SCHEMA], userName: ["a@b.test"] }],
      ["POST", "/Users", { schemas: [USER_SCHEMA], userName: a.at("odd"), emails: [null] }],
      ["POST", "/Users", { schemas: [USER_SCHEMA], userName: a.at("odd"), deep }],
      ["PATCH", `/Users/${ids.ann}`, patchOf({ op: "add", path: "name.givenName", value: { a: 1 } })],
      ["PATCH", `/Users/${ids.ann}`, patchOf({ op: "add", path: 'emails[value eq "x"].nonsense', value: "y" })],
      ["PATCH", `/Users/${ids.ann}`, patchOf({ op: "add", path: "emails[", value: "y" })],
      ["PATCH", `/Users/${ids.ann}`, patchOf({ op: "replace", path: 5, value: "y" })],
      ["PATCH", `/Users/${ids.ann}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: { op: "add" } }],
      ["PATCH", `/Users/${ids.ann}`, patchOf(null, 3)],
      ["PUT", `/Users/${ids.ann}`, newScimUser(b.at("renamed"))],
      ["GET", `/Users?filter=${encodeURIComponent("active gt true")}`, undefined],
      ["GET", "/Users?filter=a&filter=b", undefined],
      ["GET", "/Users?count=1e3", undefined],
      ["GET", `/Users/${ids.ann}?attributes=${"a,".repeat(2000)}`, undefined],
    ];
    for (const [method, path, body] of bodies) {
      const res = await a.request(method, path, body);
      expect(res.status, `${method} ${path} ${JSON.stringify(body)?.slice(0, 80)}`).toBeGreaterThanOrEqual(400);
      expect(scimError(res)[0]).toBeLessThan(500);
    }
    expect((await a.get(`/Users?filter=${encodeURIComponent("userName gt 5")}`)).status).toBe(200);
  });

  it("never takes over an account the organization does not manage (409, nothing changed)", async () => {
    const own = await newUser(app, { email: a.at("independent") });
    const res = await a.post("/Users", newScimUser(own.email));
    expect(scimError(res)).toEqual([409, "uniqueness"]);
    expect(res.body.detail).toMatch(/consent|invitation/i);
    expect(await accountRow(app, own.id)).toMatchObject({ managed_by_organization_id: null, status: "active" });
    expect(await membershipOf(app, a.orgId, own.id)).toBeUndefined();
    expect((await scimAudit(app, a.orgId)).some((r) => r.action === "scim.user.conflict" && r.success === false)).toBe(true);
  });

  it("creates one user from 20 parallel POSTs of the same userName", async () => {
    const body = newScimUser(a.at("racer"));
    const answers = await Promise.all(Array.from({ length: 20 }, () => a.post("/Users", body)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 201)) expect(scimError(r)).toEqual([409, "uniqueness"]);
    expect((await a.get(`/Users${eqFilter("userName", a.at("racer"))}`)).body.totalResults).toBe(1);
  });
});

describe("one organization's key never reaches another's people", () => {
  it("answers 404 for B's users to A's key, on every method, and changes nothing", async () => {
    const path = `/Users/${ids.bee}`;
    expect(scimError(await a.get(path))).toEqual([404, undefined]);
    expect(scimError(await a.put(path, newScimUser(b.at("bee.other"), { displayName: "Taken" })))).toEqual([404, undefined]);
    expect(scimError(await a.patch(path, patchOf({ op: "replace", path: "active", value: false })))).toEqual([404, undefined]);
    expect(scimError(await a.delete(path))).toEqual([404, undefined]);
    expect(await filter(`userName eq "${b.at("bee.other")}"`)).toEqual([]);
    const seen = await b.get(path);
    expect([seen.status, seen.body.displayName, seen.body.active]).toEqual([200, "Bee Other", true]);
    expect((await a.get("/Users?count=200")).body.Resources.some((r: { id: string }) => r.id === ids.bee)).toBe(false);
  });
});
