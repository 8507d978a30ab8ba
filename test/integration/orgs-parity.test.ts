import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { newUser, uniqueEmail } from "../factories/users.js";
import { invite, newOrg, orgWithRoles } from "../factories/orgs.js";

/** The same scenario through REST and GraphQL gives the same result and the same error code. */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ MAX_ORGS_PER_USER: "2" });
});
afterAll(() => app?.close());

const code = (res: { errors?: Array<{ extensions?: { code?: string } }> }) => res.errors?.[0]?.extensions?.code;

describe("REST and GraphQL parity for organizations", () => {
  it("invites: send, duplicate, cancel", async () => {
    const { org, owner } = await orgWithRoles(app);
    const a = uniqueEmail("pa");
    const b = uniqueEmail("pb");
    const rest = await app.http.post(`/api/v1/organizations/${org.id}/invites`, { email: a, role: "guest" }, { token: owner.token });
    const gql = await app.http.gql("mutation($o: ID!, $i: InviteInput!) { sendInvite(orgId: $o, input: $i) { id email role expired } }", { o: org.id, i: { email: b, role: "guest" } }, { token: owner.token });
    expect(rest.body.data.invite).toMatchObject({ email: a, role: "guest", expired: false });
    expect(gql.data.sendInvite).toMatchObject({ email: b, role: "guest", expired: false });
    const restDup = await app.http.post(`/api/v1/organizations/${org.id}/invites`, { email: b }, { token: owner.token });
    const gqlDup = await app.http.gql("mutation($o: ID!, $i: InviteInput!) { sendInvite(orgId: $o, input: $i) { id } }", { o: org.id, i: { email: a } }, { token: owner.token });
    expect(restDup.body.error.type).toBe("INVITE_PENDING");
    expect(code(gqlDup)).toBe("INVITE_PENDING");
    const gqlCancel = await app.http.gql("mutation($o: ID!, $id: ID!) { cancelInvite(orgId: $o, inviteId: $id) { message } }", { o: org.id, id: rest.body.data.invite.id }, { token: owner.token });
    expect(gqlCancel.data.cancelInvite.message).toBe("Invite cancelled");
    const restCancelAgain = await app.http.delete(`/api/v1/organizations/${org.id}/invites/${rest.body.data.invite.id}`, { token: owner.token });
    expect(restCancelAgain.body.error.type).toBe("INVITE_NOT_FOUND");
  });

  it("removal of the last owner", async () => {
    const { org, owner } = await orgWithRoles(app);
    const rest = await app.http.delete(`/api/v1/organizations/${org.id}/members/${owner.id}`, { token: owner.token });
    const gql = await app.http.gql("mutation($o: ID!, $u: ID!) { removeMember(orgId: $o, userId: $u) { message } }", { o: org.id, u: owner.id }, { token: owner.token });
    expect(rest.status).toBe(403);
    expect(rest.body.error.type).toBe("OWNER_REQUIRED");
    expect(code(gql)).toBe("OWNER_REQUIRED");
    expect(gql.errors[0].message).toBe(rest.body.message);
  });

  it("the organization limit", async () => {
    const user = await newUser(app);
    await newOrg(app, user);
    await newOrg(app, user);
    const rest = await app.http.post("/api/v1/organizations", { name: "Third" }, { token: user.token });
    const gql = await app.http.gql("mutation { createOrganization(input: { name: \"Third\" }) { id } }", {}, { token: user.token });
    expect(rest.body.error.type).toBe("ORG_LIMIT_REACHED");
    expect(code(gql)).toBe("ORG_LIMIT_REACHED");
    expect(gql.errors[0].extensions.status).toBe(rest.status);
  });

  it("accepting with another address (EMAIL_MISMATCH)", async () => {
    const { org, owner } = await orgWithRoles(app);
    const token = await invite(app, org.id, owner, uniqueEmail("target"));
    const other = await newUser(app);
    const rest = await app.http.post(`/api/v1/invites/${token}/accept`, {}, { token: other.token });
    const gql = await app.http.gql("mutation($t: String!) { acceptInvite(token: $t) { role } }", { t: token }, { token: other.token });
    expect(rest.body.error.type).toBe("EMAIL_MISMATCH");
    expect(code(gql)).toBe("EMAIL_MISMATCH");
    expect(gql.errors[0].message).toBe(rest.body.message);
  });

  it("reads the same organization, members and memberships", async () => {
    const { org, owner, member } = await orgWithRoles(app);
    const rest = await app.http.get(`/api/v1/organizations/${org.id}/members`, { token: member.token });
    const gql = await app.http.gql("query($o: ID!) { members(orgId: $o) { userId email role } }", { o: org.id }, { token: member.token });
    expect(gql.data.members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual(rest.body.data.members.map((m: { email: string; role: string }) => [m.email, m.role]));
    const simple = await app.http.gql("{ myOrganizationsSimple { id slug role } }", {}, { token: owner.token });
    expect(simple.data.myOrganizationsSimple).toEqual([{ id: org.id, slug: org.slug, role: "owner" }]);
  });
});
