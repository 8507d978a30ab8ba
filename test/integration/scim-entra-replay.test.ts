import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { login, newUser, PASSWORD } from "../factories/users.js";
import { accountRow, ENTERPRISE_SCHEMA, eqFilter, LIST_SCHEMA, membershipOf, patchOf, scimAudit, scimClient, USER_SCHEMA, type ScimClient } from "../helpers/scim.js";

/**
 * Issue 36: the request sequences Microsoft Entra ID and Okta send a SCIM service provider, as
 * their provisioning documentation shows them, replayed against /scim/v2 with an organization API
 * key holding the scim scope. Each step's effect is checked on the account and its membership.
 */
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
let app: TestApp;
let entra: ScimClient;
let okta: ScimClient;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  [entra, okta] = [await scimClient(app), await scimClient(app)];
});
afterAll(() => app?.close());

const departmentMembers = async (deptId: string) =>
  resultRows<{ user_id: string }>(await app.container.db.execute(sql`select user_id from department_members where department_id = ${deptId} order by user_id`)).map((r) => r.user_id);
const memberIds = (res: { body: { members?: Array<{ value: string }> } }) => (res.body.members ?? []).map((m) => m.value).sort();

describe("Microsoft Entra ID's sequence", () => {
  it("matches by userName, creates, reads, deactivates with a string, updates without a path, reactivates, deletes", async () => {
    const upn = entra.at("Adele.Vance");
    // 1. Entra's first request for a person: is there a user with this userName? (an empty list, 200)
    const first = await entra.get(`/Users${eqFilter("userName", upn)}`);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toMatch(/^application\/scim\+json/);
    expect(first.body).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 0, Resources: [] });

    // 2. POST with the enterprise extension (its department kept: the department is created) and attributes Keyward does not keep (accepted, not stored).
    const created = await entra.post("/Users", {
      schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
      externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
      userName: upn,
      active: true,
      displayName: "Adele Vance",
      title: "Retail Manager",
      emails: [{ primary: true, type: "work", value: upn }],
      meta: { resourceType: "User" },
      name: { formatted: "Adele Vance", familyName: "Vance", givenName: "Adele" },
      [ENTERPRISE_SCHEMA]: { department: "Retail", employeeNumber: "1234" },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.headers.get("location")).toBe(`${app.url}/scim/v2/Users/${id}`);
    expect(created.body).toMatchObject({ userName: upn.toLowerCase(), externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef", active: true, displayName: "Adele Vance", name: { givenName: "Adele", familyName: "Vance", formatted: "Adele Vance" }, meta: { resourceType: "User" } });
    expect(created.body.title).toBeUndefined();
    expect(created.body[ENTERPRISE_SCHEMA]).toEqual({ department: "Retail" });
    expect(await accountRow(app, id)).toMatchObject({ managed_by_organization_id: entra.orgId, status: "active", full_name: "Adele Vance" });
    expect(await membershipOf(app, entra.orgId, id)).toEqual({ role: "member" });

    // 3. GET by id, and the filter finds it now.
    const read = await entra.get(`/Users/${id}`);
    expect([read.status, read.body.id, read.headers.get("etag")]).toEqual([200, id, created.headers.get("etag")]);
    expect((await entra.get(`/Users${eqFilter("userName", upn)}`)).body.totalResults).toBe(1);

    // 4. PATCH "Replace" (capitalised) with the string "False": the account is suspended.
    const off = await entra.patch(`/Users/${id}`, patchOf({ op: "Replace", path: "active", value: "False" }));
    expect([off.status, off.body.active]).toEqual([200, false]);
    expect((await accountRow(app, id))!.status).toBe("suspended");

    // 5. PATCH without a path, carrying an object (and a value path on emails).
    const renamed = await entra.patch(`/Users/${id}`, patchOf(
      { op: "Replace", value: { displayName: "Adele V.", "name.givenName": "Adèle", [`${ENTERPRISE_SCHEMA}:department`]: "Sales" } },
      { op: "Add", path: 'emails[type eq "work"].value', value: upn },
    ));
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ displayName: "Adele V.", name: { givenName: "Adèle", familyName: "Vance" }, active: false, [ENTERPRISE_SCHEMA]: { department: "Sales" } });

    // 6. Reactivate ("True").
    const on = await entra.patch(`/Users/${id}`, patchOf({ op: "Replace", path: "active", value: "True" }));
    expect([on.status, on.body.active]).toEqual([200, true]);
    expect((await accountRow(app, id))!.status).toBe("active");

    // 7. Group provisioning: look the group up by displayName without its members, create it, add
    //    and remove the person by list ("$ref": null as Entra sends it), rename it, delete it.
    const groupName = "Store Managers";
    const noGroup = await entra.get(`/Groups?excludedAttributes=members&filter=${encodeURIComponent(`displayName eq "${groupName}"`)}`);
    expect([noGroup.status, noGroup.body.totalResults]).toEqual([200, 0]);
    const group = await entra.post("/Groups", { schemas: [GROUP_SCHEMA], externalId: "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159", displayName: groupName, meta: { resourceType: "Group" } });
    expect(group.status).toBe(201);
    const groupId = group.body.id as string;
    const joined = await entra.patch(`/Groups/${groupId}`, patchOf({ op: "Add", path: "members", value: [{ $ref: null, value: id }] }));
    expect([joined.status, memberIds(joined)]).toEqual([200, [id]]);
    expect(await departmentMembers(groupId)).toEqual([id]);
    const withoutMembers = await entra.get(`/Groups/${groupId}?excludedAttributes=members`);
    expect([withoutMembers.body.displayName, withoutMembers.body.members]).toEqual([groupName, undefined]);
    const left = await entra.patch(`/Groups/${groupId}`, patchOf({ op: "Remove", path: "members", value: [{ $ref: null, value: id }] }));
    expect([left.status, memberIds(left)]).toEqual([200, []]);
    expect(await departmentMembers(groupId)).toEqual([]);
    const renamedGroup = await entra.patch(`/Groups/${groupId}`, patchOf({ op: "Replace", path: "displayName", value: "Store Leads" }));
    expect([renamedGroup.status, renamedGroup.body.displayName]).toEqual([200, "Store Leads"]);
    expect((await entra.patch(`/Groups/${groupId}`, patchOf({ op: "Add", path: "members", value: [{ $ref: null, value: id }] }))).status).toBe(200);
    expect((await entra.delete(`/Groups/${groupId}`)).status).toBe(204);
    expect((await entra.get(`/Groups/${groupId}`)).status).toBe(404);

    // 8. Delete the person.
    const gone = await entra.delete(`/Users/${id}`);
    expect(gone.status).toBe(204);
    expect((await entra.get(`/Users/${id}`)).status).toBe(404);
    expect((await accountRow(app, id))!.deleted_at).not.toBeNull();
    // Deactivation and deletion were offboardings: a suspension's receipt, then a removal's.
    const offboardings = await app.http.get(`/api/v1/organizations/${entra.orgId}/offboardings?user_id=${id}`, { token: entra.owner.token });
    expect(offboardings.body.data.offboardings.map((r: { mode: string }) => r.mode)).toEqual(["remove", "suspend"]);
    expect(await membershipOf(app, entra.orgId, id)).toBeUndefined();

    // Every write audited, by the key.
    const records = await scimAudit(app, entra.orgId);
    expect(records.map((r) => r.action)).toEqual([
      "scim.group.created", "scim.user.created", "scim.user.deactivated", "scim.group.created", "scim.user.updated", "scim.user.reactivated",
      "scim.group.created", "scim.group.updated", "scim.group.updated", "scim.group.updated", "scim.group.updated", "scim.group.deleted",
      "scim.user.deleted",
    ]);
    expect(records.every((r) => (r.metadata?.actor as { key_id?: string } | undefined)?.key_id === entra.keyId)).toBe(true);

    // The same person can be provisioned again (the externalId is free once they were deleted).
    const again = await entra.post("/Users", { schemas: [USER_SCHEMA], userName: upn, externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef" });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(id);
  });
});

describe("Okta's sequence", () => {
  it("filters, creates, replaces with PUT, pushes a group, deactivates and reactivates with PATCH", async () => {
    const login = okta.at("isaac.brock");
    expect((await okta.get(`/Users${eqFilter("userName", login)}&startIndex=1&count=100`)).body.totalResults).toBe(0);
    const created = await okta.post("/Users", {
      schemas: [USER_SCHEMA],
      userName: login,
      name: { givenName: "Isaac", familyName: "Brock" },
      emails: [{ primary: true, value: login, type: "work" }],
      displayName: "Isaac Brock",
      locale: "en-US",
      externalId: "00ujl29u0le5T6Aj10h7",
      groups: [],
      password: "1mP0rtant!",
      active: true,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    // PUT: the whole user; what is left out is cleared (displayName here), the rest replaced.
    const put = await okta.put(`/Users/${id}`, {
      schemas: [USER_SCHEMA],
      id,
      userName: login,
      name: { givenName: "Ike", familyName: "Brock" },
      emails: [{ primary: true, value: login, type: "work" }],
      externalId: "00ujl29u0le5T6Aj10h7",
      active: true,
      meta: { resourceType: "User" },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: { givenName: "Ike", familyName: "Brock" }, displayName: "Ike Brock", active: true });
    expect((await accountRow(app, id))!.full_name).toBe("Ike Brock");

    // Group push: the group created with its members, renamed by a path-less replace, a member
    // added by list and removed by value filter, then the group deleted when the push is unlinked.
    const group = await okta.post("/Groups", { schemas: [GROUP_SCHEMA], displayName: "Field Engineers", members: [{ value: id, display: login }] });
    expect([group.status, memberIds(group)]).toEqual([201, [id]]);
    const groupId = group.body.id as string;
    expect(await departmentMembers(groupId)).toEqual([id]);
    expect((await okta.get("/Groups?startIndex=1&count=100")).body.Resources.map((g: { id: string }) => g.id)).toContain(groupId);
    const renamed = await okta.patch(`/Groups/${groupId}`, patchOf({ op: "replace", value: { id: groupId, displayName: "Field Engineering" } }));
    expect([renamed.status, renamed.body.displayName]).toEqual([200, "Field Engineering"]);
    const second = (await okta.post("/Users", { schemas: [USER_SCHEMA], userName: okta.at("kim.lee"), name: { givenName: "Kim", familyName: "Lee" }, active: true })).body.id as string;
    const added = await okta.patch(`/Groups/${groupId}`, patchOf({ op: "add", path: "members", value: [{ value: second, display: okta.at("kim.lee") }] }));
    expect(memberIds(added)).toEqual([id, second].sort());
    const removed = await okta.patch(`/Groups/${groupId}`, patchOf({ op: "remove", path: `members[value eq "${id}"]` }));
    expect(memberIds(removed)).toEqual([second]);
    expect(await departmentMembers(groupId)).toEqual([second]);
    expect((await okta.delete(`/Groups/${groupId}`)).status).toBe(204);
    expect(await departmentMembers(groupId)).toEqual([]);

    // Okta's deactivation: a path-less replace of {"active": false}.
    const off = await okta.patch(`/Users/${id}`, patchOf({ op: "replace", value: { active: false } }));
    expect([off.status, off.body.active]).toEqual([200, false]);
    expect((await accountRow(app, id))!.status).toBe("suspended");
    // Okta reads the user back by filter.
    const listed = await okta.get(`/Users${eqFilter("externalId", "00ujl29u0le5T6Aj10h7")}`);
    expect(listed.body.Resources.map((r: { id: string; active: boolean }) => [r.id, r.active])).toEqual([[id, false]]);
    // Reactivated the same way.
    const on = await okta.patch(`/Users/${id}`, patchOf({ op: "replace", value: { active: true } }));
    expect(on.body.active).toBe(true);
    expect((await accountRow(app, id))!.status).toBe("active");
    expect(await membershipOf(app, okta.orgId, id)).toEqual({ role: "member" });
    // Okta deletes no user (unassigning deactivates); every write audited, by the key.
    const records = await scimAudit(app, okta.orgId);
    expect(records.map((r) => r.action)).toEqual([
      "scim.user.created", "scim.user.updated", "scim.group.created", "scim.group.updated", "scim.user.created",
      "scim.group.updated", "scim.group.updated", "scim.group.deleted", "scim.user.deactivated", "scim.user.reactivated",
    ]);
    expect(records.every((r) => (r.metadata?.actor as { key_id?: string } | undefined)?.key_id === okta.keyId)).toBe(true);
  });

  it("answers the discovery endpoints truthfully", async () => {
    const config = await okta.get("/ServiceProviderConfig");
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({ patch: { supported: true }, bulk: { supported: false }, filter: { supported: true, maxResults: 200 }, changePassword: { supported: false }, sort: { supported: false }, etag: { supported: true } });
    expect(config.body.authenticationSchemes[0].type).toBe("oauthbearertoken");
    const types = await okta.get("/ResourceTypes");
    expect(types.body.Resources.map((r: { id: string }) => r.id)).toEqual(["User", "Group"]);
    const schemas = await okta.get("/Schemas");
    expect(schemas.body.Resources[0].id).toBe(USER_SCHEMA);
    expect((await okta.get(`/Schemas/${USER_SCHEMA}`)).status).toBe(200);
    expect((await okta.get("/Bulk")).status).toBe(404);
  });
});

describe("a provisioned person who is also a member of another organization", () => {
  it("is deactivated and deleted in this organization only", async () => {
    const email = entra.at("two.hats");
    const id = (await entra.post("/Users", { schemas: [USER_SCHEMA], userName: email })).body.id as string;
    // The managing organization's owner sets a password; the person joins another organization by invitation.
    expect((await app.http.post(`/api/v1/admin/users/${id}/password`, { password: PASSWORD }, { token: entra.owner.token })).status).toBe(200);
    const person = { id, email, password: PASSWORD, token: (await login(app, email)).body.data.token as string };
    const otherOwner = await newUser(app);
    const other = await newOrg(app, otherOwner);
    await addMember(app, other.id, otherOwner, person, "member");

    expect((await app.http.get("/api/v1/users/me", { token: person.token })).status).toBe(200);
    expect((await entra.patch(`/Users/${id}`, patchOf({ op: "replace", path: "active", value: false }))).status).toBe(200);
    // Deactivated here: the session ended (the account is this organization's), but not its sign-in,
    // which the other organization's membership needs (deprovisioning removes nothing outside).
    expect((await app.http.get("/api/v1/users/me", { token: person.token })).status).toBe(401);
    const again = await login(app, email);
    expect(again.status).toBe(200);
    expect((await app.http.get(`/api/v1/organizations/${other.id}`, { token: again.body.data.token })).status).toBe(200);
    expect((await app.http.get(`/api/v1/organizations/${entra.orgId}`, { token: again.body.data.token })).status).toBe(404);
    expect(await membershipOf(app, other.id, id)).toEqual({ role: "member" });
    expect((await entra.delete(`/Users/${id}`)).status).toBe(204);
    // Released, not deleted: the other organization keeps its member.
    expect(await accountRow(app, id)).toMatchObject({ deleted_at: null, managed_by_organization_id: null, status: "active" });
    expect(await membershipOf(app, entra.orgId, id)).toBeUndefined();
    expect(await membershipOf(app, other.id, id)).toEqual({ role: "member" });
    expect((await entra.get(`/Users/${id}`)).status).toBe(404);
  });
});
