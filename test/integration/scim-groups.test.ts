import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { eqFilter, newScimUser, patchOf, scimAudit, scimClient, scimError, type ScimClient } from "../helpers/scim.js";

/**
 * Issue 36: SCIM Groups are the organization's departments (so its SSH principals and certificate
 * policy follow): Okta's group push and Entra ID's group provisioning, member changes by value
 * filter and by list, and another organization's key refused.
 */
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
let app: TestApp;
let a: ScimClient;
let b: ScimClient;
let ann: string;
let bob: string;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  [a, b] = [await scimClient(app), await scimClient(app)];
  ann = (await a.post("/Users", newScimUser(a.at("ann")))).body.id;
  bob = (await a.post("/Users", newScimUser(a.at("bob")))).body.id;
});
afterAll(() => app?.close());

const departmentMembers = async (deptId: string) =>
  resultRows<{ user_id: string }>(await app.container.db.execute(sql`select user_id from department_members where department_id = ${deptId} order by user_id`)).map((r) => r.user_id);
const values = (res: { body: { members?: Array<{ value: string }> } }) => (res.body.members ?? []).map((m) => m.value).sort();

describe("Groups as departments", () => {
  it("creates, finds by displayName, changes members and name, and deletes", async () => {
    expect((await a.get(`/Groups${eqFilter("displayName", "Engineering")}&excludedAttributes=members`)).body.totalResults).toBe(0);
    const created = await a.post("/Groups", { schemas: [GROUP], displayName: "Engineering", externalId: "grp-1", members: [{ value: ann }] });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    expect(values(created)).toEqual([ann]);
    expect(await departmentMembers(id)).toEqual([ann]);
    const listed = await a.get(`/Groups${eqFilter("displayName", "engineering")}`);
    expect(listed.body.Resources.map((g: { id: string }) => g.id)).toEqual([id]);

    // Entra ID: add members by list, "Replace" the name; Okta: remove by value filter.
    const added = await a.patch(`/Groups/${id}`, patchOf({ op: "Add", path: "members", value: [{ value: bob }] }, { op: "Replace", path: "displayName", value: "Platform" }));
    expect([added.status, added.body.displayName, values(added)]).toEqual([200, "Platform", [ann, bob].sort()]);
    const removed = await a.patch(`/Groups/${id}`, patchOf({ op: "remove", path: `members[value eq "${ann}"]` }));
    expect(values(removed)).toEqual([bob]);
    const listRemoved = await a.patch(`/Groups/${id}`, patchOf({ op: "Remove", path: "members", value: [{ value: bob }] }));
    expect(values(listRemoved)).toEqual([]);
    // Okta's group push: a path-less replace with the name, then PUT with the members.
    expect((await a.patch(`/Groups/${id}`, patchOf({ op: "replace", value: { id, displayName: "Platform Team" } }))).body.displayName).toBe("Platform Team");
    const put = await a.put(`/Groups/${id}`, { schemas: [GROUP], id, displayName: "Platform Team", members: [{ value: ann }, { value: bob }] });
    expect(values(put)).toEqual([ann, bob].sort());
    expect(await departmentMembers(id)).toEqual([ann, bob].sort());

    // Deleting a User takes them out of the group.
    expect((await a.delete(`/Users/${bob}`)).status).toBe(204);
    expect(values(await a.get(`/Groups/${id}`))).toEqual([ann]);

    expect((await a.delete(`/Groups/${id}`)).status).toBe(204);
    expect(scimError(await a.get(`/Groups/${id}`))).toEqual([404, undefined]);
    expect((await scimAudit(app, a.orgId)).filter((r) => r.action.startsWith("scim.group")).map((r) => r.action)).toEqual([
      "scim.group.created", "scim.group.updated", "scim.group.updated", "scim.group.updated", "scim.group.updated", "scim.group.updated", "scim.group.deleted",
    ]);
  });

  it("refuses bad groups and other organizations' people", async () => {
    const id = (await a.post("/Groups", { schemas: [GROUP], displayName: "Ops" })).body.id as string;
    const other = (await b.post("/Users", newScimUser(b.at("zed")))).body.id as string;
    expect(scimError(await a.post("/Groups", { schemas: [GROUP], displayName: "Ops" }))).toEqual([409, "uniqueness"]);
    expect(scimError(await a.post("/Groups", { displayName: "X" }))).toEqual([400, "invalidSyntax"]);
    expect(scimError(await a.post("/Groups", { schemas: [GROUP] }))).toEqual([400, "invalidValue"]);
    // B's person is not a User of A: refused, and nothing half-done.
    expect(scimError(await a.patch(`/Groups/${id}`, patchOf({ op: "replace", path: "displayName", value: "Ops 2" }, { op: "add", path: "members", value: [{ value: other }] })))).toEqual([400, "invalidValue"]);
    expect((await a.get(`/Groups/${id}`)).body.displayName).toBe("Ops");
    expect(scimError(await a.patch(`/Groups/${id}`, patchOf({ op: "add", path: "owners", value: [] })))).toEqual([400, "invalidPath"]);
    expect(scimError(await a.patch(`/Groups/${id}`, patchOf({ op: "remove", path: "members[value eq]" })))).toEqual([400, "invalidFilter"]);
    // B's key sees nothing of A's group.
    for (const res of [await b.get(`/Groups/${id}`), await b.patch(`/Groups/${id}`, patchOf({ op: "remove", path: "members" })), await b.delete(`/Groups/${id}`)]) {
      expect(scimError(res)).toEqual([404, undefined]);
    }
    expect((await b.get("/Groups")).body.Resources.some((g: { id: string }) => g.id === id)).toBe(false);
  });
});
