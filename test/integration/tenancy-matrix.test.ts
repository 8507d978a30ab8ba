import {
  buildClientSchema,
  getIntrospectionQuery,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  getNamedType,
  isObjectType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restRoutes } from "../../rest-shim/index.js";
import { buildGraphqlSchema } from "../../src/graphql/schema.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { newUser, type TestUser } from "../factories/users.js";
import { newOrg, orgWithRoles } from "../factories/orgs.js";
import { type OrgRole, roleAtLeast } from "../../src/modules/access/index.js";

/**
 * The tenancy matrix, generated from the route table and the GraphQL schema so that a new
 * organization-scoped operation cannot be left out: an outsider gets ORG_NOT_FOUND, a role below
 * the operation's minimum gets AUTHORIZATION_ERROR.
 */
let app: TestApp;
let ctx: { orgId: string; owner: TestUser; admin: TestUser; member: TestUser; guest: TestUser; outsider: TestUser };
const RANDOM_ID = "00000000-0000-4000-8000-0000000000aa";

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  const { org, ...people } = await orgWithRoles(app);
  const outsider = await newUser(app);
  await newOrg(app, outsider);
  ctx = { orgId: org.id, ...people, outsider };
});
afterAll(() => app?.close());

const ROLES: OrgRole[] = ["guest", "member", "admin"];

describe("REST tenancy matrix", () => {
  // Public routes (the KRL servers fetch) answer everyone by design.
  const routes = () => restRoutes({} as never, {} as never).filter((r) => r.path.includes(":orgId") && r.auth !== "none");

  it("declares a minimum role on every organization-scoped route", () => {
    const undeclared = routes().filter((r) => !r.org).map((r) => `${r.method} ${r.path}`);
    expect(undeclared).toEqual([]);
    expect(routes().length).toBeGreaterThan(30);
  });

  it("answers outsiders ORG_NOT_FOUND and lower roles AUTHORIZATION_ERROR on every route", async () => {
    const failures: string[] = [];
    for (const r of routes()) {
      const path = `/api/v1${r.path.replace(":orgId", ctx.orgId).replace(/:(\w+)/g, RANDOM_ID)}`;
      const call = (user: TestUser) => app.http.request(r.method.toUpperCase(), path, { token: user.token, ...(r.method === "get" ? {} : { body: {} }) });
      const outsider = await call(ctx.outsider);
      if (outsider.body?.error?.type !== "ORG_NOT_FOUND") failures.push(`${r.method} ${r.path} outsider → ${outsider.status} ${outsider.body?.error?.type}`);
      for (const role of ROLES) {
        if (roleAtLeast(role, r.org!)) continue;
        const res = await call(ctx[role as "guest" | "member" | "admin"]);
        if (res.status !== 403 || res.body.error.type !== "AUTHORIZATION_ERROR") failures.push(`${r.method} ${r.path} ${role} → ${res.status} ${res.body?.error?.type}`);
      }
      // Reads by the lowest allowed role get past the tenancy checks.
      if (r.method === "get") {
        const allowed = await call(ctx[r.org === "owner" ? "owner" : (r.org as "guest" | "member" | "admin")]);
        if (["ORG_NOT_FOUND", "AUTHORIZATION_ERROR"].includes(allowed.body?.error?.type)) failures.push(`${r.method} ${r.path} ${r.org} refused`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it("answers anonymous callers 401 on every route (leave answered 404 before sign-in was checked)", async () => {
    const failures: string[] = [];
    for (const r of routes()) {
      const path = `/api/v1${r.path.replace(":orgId", ctx.orgId).replace(/:(\w+)/g, RANDOM_ID)}`;
      const res = await app.http.request(r.method.toUpperCase(), path, r.method === "get" ? {} : { body: {} });
      if (res.status !== 401) failures.push(`${r.method} ${r.path} anonymous → ${res.status} ${res.body?.error?.type}`);
    }
    expect(failures).toEqual([]);
    const leave = await app.http.post(`/api/v1/organizations/${ctx.orgId}/leave`);
    expect([leave.status, leave.body.error.type]).toEqual([401, "AUTH_REQUIRED"]);
  }, 120_000);
});

describe("GraphQL tenancy matrix", () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await buildGraphqlSchema({} as never);
  });

  const orgFields = () =>
    [...Object.values(schema.getQueryType()!.getFields()).map((f) => ["query", f] as const), ...Object.values(schema.getMutationType()!.getFields()).map((f) => ["mutation", f] as const)].filter(
      ([, f]) => f.args.some((a) => a.name === "orgId"),
    );

  it("declares a minimum role on every operation that takes an orgId", () => {
    const undeclared = orgFields().filter(([, f]) => !f.extensions?.org).map(([, f]) => f.name);
    expect(undeclared).toEqual([]);
    expect(orgFields().length).toBeGreaterThan(30);
  });

  /** A value GraphQL accepts for an input type (required fields only). */
  function sample(type: GraphQLInputType, name: string): unknown {
    if (type instanceof GraphQLNonNull) return sample(type.ofType, name);
    if (type instanceof GraphQLList) return [sample(type.ofType, name)];
    if (type instanceof GraphQLEnumType) return type.getValues()[0]!.value;
    if (type instanceof GraphQLInputObjectType) {
      return Object.fromEntries(Object.values(type.getFields()).filter((f) => f.type instanceof GraphQLNonNull).map((f) => [f.name, sample(f.type, f.name)]));
    }
    if (type instanceof GraphQLScalarType) {
      if (type.name === "ID") return name === "orgId" ? ctx.orgId : RANDOM_ID;
      if (type.name === "Int") return 1;
      if (type.name === "Boolean") return true;
      return name.toLowerCase().includes("email") ? "someone@example.com" : "sample";
    }
    return null;
  }

  function operation(kind: "query" | "mutation", field: GraphQLField<unknown, unknown>) {
    const required = field.args.filter((a) => a.type instanceof GraphQLNonNull || a.name === "orgId");
    const vars = required.map((a) => `$${a.name}: ${a.type.toString()}`).join(", ");
    const args = required.map((a) => `${a.name}: $${a.name}`).join(", ");
    const named = getNamedType(field.type);
    const selection = isObjectType(named) ? " { __typename }" : "";
    return {
      query: `${kind}${vars ? `(${vars})` : ""} { ${field.name}${args ? `(${args})` : ""}${selection} }`,
      variables: Object.fromEntries(required.map((a) => [a.name, sample(a.type, a.name)])),
    };
  }

  it("answers outsiders ORG_NOT_FOUND and lower roles AUTHORIZATION_ERROR on every operation", async () => {
    const failures: string[] = [];
    for (const [kind, field] of orgFields()) {
      const minimum = field.extensions!.org as OrgRole;
      const { query, variables } = operation(kind, field);
      const code = async (user: TestUser) => (await app.http.gql(query, variables, { token: user.token })).errors?.[0]?.extensions?.code;
      const outsider = await code(ctx.outsider);
      if (outsider !== "ORG_NOT_FOUND") failures.push(`${field.name} outsider → ${outsider}`);
      for (const role of ROLES) {
        if (roleAtLeast(role, minimum)) continue;
        const got = await code(ctx[role as "guest" | "member" | "admin"]);
        if (got !== "AUTHORIZATION_ERROR") failures.push(`${field.name} ${role} → ${got}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it("lets the lowest allowed role past the tenancy checks on every query", async () => {
    const refused: string[] = [];
    for (const [kind, field] of orgFields()) {
      if (kind !== "query") continue;
      const minimum = field.extensions!.org as OrgRole;
      const { query, variables } = operation(kind, field);
      const res = await app.http.gql(query, variables, { token: ctx[minimum === "owner" ? "owner" : (minimum as "guest" | "member" | "admin")].token });
      const code = res.errors?.[0]?.extensions?.code;
      if (["ORG_NOT_FOUND", "AUTHORIZATION_ERROR"].includes(code)) refused.push(`${field.name} ${minimum} → ${code}`);
    }
    expect(refused).toEqual([]);
  }, 120_000);

  it("declares the same minimum role as the REST route for every networks operation", () => {
    // Each networks route and its GraphQL twin: a route without one, or a role that differs, fails.
    const TWINS: Record<string, string> = {
      "get /organizations/:orgId/zerotier-config": "networkControllerConfig",
      "put /organizations/:orgId/zerotier-config": "configureNetworkController",
      "delete /organizations/:orgId/zerotier-config": "removeNetworkController",
      "get /organizations/:orgId/zerotier/available-networks": "availableControllerNetworks",
      "post /organizations/:orgId/zerotier/import-networks": "importControllerNetworks",
      "get /organizations/:orgId/networks": "portalNetworks",
      "post /organizations/:orgId/networks": "createPortalNetwork",
      "post /organizations/:orgId/networks/reconcile": "reconcileNetworks",
      "get /organizations/:orgId/networks/:networkId": "portalNetwork",
      "patch /organizations/:orgId/networks/:networkId": "updatePortalNetwork",
      "delete /organizations/:orgId/networks/:networkId": "deletePortalNetwork",
      "get /organizations/:orgId/networks/:networkId/members": "portalNetworkMembers",
      "get /organizations/:orgId/networks/:networkId/requests": "portalNetworkRequests",
      "get /organizations/:orgId/networks/:networkId/managers": "portalNetworkManagers",
      "put /organizations/:orgId/networks/:networkId/managers": "setPortalNetworkManagers",
      "get /organizations/:orgId/devices": "myDevices",
      "post /organizations/:orgId/devices": "registerDevice",
      "post /organizations/:orgId/devices/import": "importNetworkMembers",
      "get /organizations/:orgId/devices/:deviceId": "device",
      "patch /organizations/:orgId/devices/:deviceId": "updateDevice",
      "delete /organizations/:orgId/devices/:deviceId": "deleteDevice",
      "post /organizations/:orgId/devices/:deviceId/join-network/:networkId": "joinNetwork",
      "post /organizations/:orgId/approvals": "requestNetworkAccess",
      "get /organizations/:orgId/approvals": "myNetworkApprovals",
      "get /organizations/:orgId/approvals/pending": "pendingNetworkApprovals",
      "post /organizations/:orgId/approvals/assign": "assignNetworkAccess",
      "post /organizations/:orgId/approvals/:approvalId/approve": "approveNetworkAccess",
      "post /organizations/:orgId/approvals/:approvalId/reject": "rejectNetworkAccess",
      "post /organizations/:orgId/approvals/:approvalId/revoke": "revokeNetworkAccess",
      "get /organizations/:orgId/memberships": "myNetworkMemberships",
      "post /organizations/:orgId/memberships/activate-all": "activateAllNetworkMemberships",
      "post /organizations/:orgId/memberships/:membershipId/activate": "activateNetworkMembership",
      "post /organizations/:orgId/memberships/:membershipId/deactivate": "deactivateNetworkMembership",
      "delete /organizations/:orgId/memberships/:membershipId": "leaveNetwork",
      "get /organizations/:orgId/admin/memberships": "organizationNetworkMemberships",
      "delete /organizations/:orgId/admin/memberships/:membershipId": "removeNetworkMembership",
      "get /organizations/:orgId/sessions": "networkSessions",
      "delete /organizations/:orgId/sessions/:sessionId": "endNetworkSession",
      "post /organizations/:orgId/kill-switch": "triggerKillSwitch",
      "get /organizations/:orgId/kill-switch": "killSwitchEvents",
      "post /organizations/:orgId/kill-switch/:eventId/lift": "liftKillSwitch",
      "post /admin/zerotier/reconcile": "reconcileAllNetworks",
    };
    const fields = { ...schema.getQueryType()!.getFields(), ...schema.getMutationType()!.getFields() };
    const mismatches: string[] = [];
    for (const r of restRoutes({} as never, {} as never).filter((route) => route.tag === "networks")) {
      const key = `${r.method} ${r.path}`;
      const field = fields[TWINS[key] ?? ""];
      if (!field) mismatches.push(`${key} has no GraphQL operation`);
      else if ((field.extensions?.org ?? null) !== (r.org ?? null)) mismatches.push(`${key} is ${r.org}, ${field.name} is ${field.extensions?.org}`);
    }
    expect(mismatches).toEqual([]);
    expect(Object.keys(TWINS).length).toBe(restRoutes({} as never, {} as never).filter((route) => route.tag === "networks").length);
  });

  it("uses the schema the server serves", async () => {
    const admin = await newUser(app);
    await app.services.operators.setSuperadmin({ actor: { kind: "anonymous" }, requestId: "t", ip: null, userAgent: null }, admin.email, true);
    const served = buildClientSchema((await app.http.gql(getIntrospectionQuery(), {}, { token: admin.token })).data);
    expect(Object.keys(served.getMutationType()!.getFields()).sort()).toEqual(Object.keys(schema.getMutationType()!.getFields()).sort());
    expect(Object.keys(served.getQueryType()!.getFields()).sort()).toEqual(Object.keys(schema.getQueryType()!.getFields()).sort());
  });
});
