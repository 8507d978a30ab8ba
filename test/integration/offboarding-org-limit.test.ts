import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { membershipOf, newScimUser, patchOf, scimClient, scimError } from "../helpers/scim.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { login, newUser, PASSWORD } from "../factories/users.js";

/**
 * Reinstating (an admin's, or SCIM's active=true) gives a membership back: the
 * organizations-per-user limit (MAX_ORGS_PER_USER) holds as it does for adding a member.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false", MAX_ORGS_PER_USER: "2" });
});
afterAll(() => app?.close());

describe("reinstating within the organizations-per-user limit", () => {
  it("refuses a reinstatement over the limit with a clear 403, by REST and by SCIM, and allows it once there is room", async () => {
    const scim = await scimClient(app);
    const created = await scim.post("/Users", newScimUser(scim.at("kim.full")));
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    expect((await app.http.post(`/api/v1/admin/users/${id}/password`, { password: PASSWORD }, { token: scim.owner.token })).status).toBe(200);
    const person = { id, email: scim.at("kim.full"), password: PASSWORD, token: (await login(app, scim.at("kim.full"))).body.data.token as string };
    const otherOwner = await newUser(app);
    const [b, c] = [await newOrg(app, otherOwner), await newOrg(app, otherOwner)];
    await addMember(app, b.id, otherOwner, person, "member");

    // Suspended in the provisioning organization (still a member of B: the account stays active), then joins C.
    expect((await scim.patch(`/Users/${id}`, patchOf({ op: "replace", path: "active", value: false }))).status).toBe(200);
    const token = (await login(app, person.email)).body.data.token as string;
    await addMember(app, c.id, otherOwner, { ...person, token }, "member");

    const R = `/api/v1/organizations/${scim.orgId}/members/${id}/reinstate`;
    const refused = await app.http.post(R, {}, { token: scim.owner.token });
    expect([refused.status, refused.body.error.type], refused.text).toEqual([403, "ORG_LIMIT_REACHED"]);
    expect(refused.body.message).toMatch(/2 organizations.*reinstated/);
    expect(refused.body.error.details).toEqual({ max_organizations: 2 });
    const bySCIM = await scim.patch(`/Users/${id}`, patchOf({ op: "replace", path: "active", value: true }));
    expect(scimError(bySCIM)[0]).toBe(403);
    expect(bySCIM.body.detail).toMatch(/2 organizations/);
    expect(await membershipOf(app, scim.orgId, id)).toBeUndefined();
    expect((await scim.get(`/Users/${id}`)).body.active).toBe(false);

    // Leaving C makes room.
    expect((await app.http.post(`/api/v1/organizations/${c.id}/leave`, {}, { token })).status).toBe(200);
    const back = await scim.patch(`/Users/${id}`, patchOf({ op: "replace", path: "active", value: true }));
    expect([back.status, back.body.active], back.text).toEqual([200, true]);
    expect(await membershipOf(app, scim.orgId, id)).toEqual({ role: "member" });
  });
  it("SCIM POST never adds a membership to an existing account, so it cannot go over the limit: 409, nothing linked", async () => {
    // A new User is a new account (no memberships: under any MAX_ORGS_PER_USER >= 1). An address that
    // already has an account, even one this organization manages and removed, is refused before any
    // membership is written: the limit has no case to check there.
    const scim = await scimClient(app);
    const email = scim.at("lee.full");
    const created = await scim.post("/Users", newScimUser(email));
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    expect((await app.http.post(`/api/v1/admin/users/${id}/password`, { password: PASSWORD }, { token: scim.owner.token })).status).toBe(200);
    const person = { id, email, password: PASSWORD, token: (await login(app, email)).body.data.token as string };
    const otherOwner = await newUser(app);
    const [b, c] = [await newOrg(app, otherOwner), await newOrg(app, otherOwner)];
    await addMember(app, b.id, otherOwner, person, "member");
    // Removed by the admin (offboarding), then a member of B and C: at the limit of 2.
    const removed = await app.http.post(`/api/v1/organizations/${scim.orgId}/members/${id}/offboard`, { mode: "remove", reason: "moved" }, { token: scim.owner.token });
    expect(removed.status, removed.text).toBe(201);
    const token = (await login(app, email)).body.data.token as string;
    await addMember(app, c.id, otherOwner, { ...person, token }, "member");

    const again = await scim.post("/Users", newScimUser(email));
    expect(scimError(again), again.text).toEqual([409, "uniqueness"]);
    expect(await membershipOf(app, scim.orgId, id)).toBeUndefined();
    expect((await app.http.get("/api/v1/organizations", { token })).body.data.organizations.map((o: { id: string }) => o.id).sort()).toEqual([b.id, c.id].sort());
  });
});
