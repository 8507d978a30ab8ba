import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { newUser } from "../factories/users.js";
import { ENTERPRISE_SCHEMA, accountRow, newScimUser, patchOf, scimAudit, scimClient, scimError, verifyDomain, USER_SCHEMA, type ScimClient } from "../helpers/scim.js";

/**
 * Issue 36: the enterprise extension's department and manager, and userName changes, as Okta and
 * Entra ID send them (their public provisioning documentation and the shapes known from the field:
 * Entra's `…:User:department` / `…:User:manager` paths with a bare id, Okta's extension block with
 * `manager: {value}` on POST and PUT, Entra's `Replace userName`).
 */
const DEPT = `${ENTERPRISE_SCHEMA}:department`;
const MANAGER = `${ENTERPRISE_SCHEMA}:manager`;
let app: TestApp;
let a: ScimClient;
let b: ScimClient;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  [a, b] = [await scimClient(app), await scimClient(app)];
});
afterAll(() => app?.close());

const departmentsOf = async (userId: string) =>
  resultRows<{ name: string }>(
    await app.container.db.execute(sql`select d.name from department_members m join departments d on d.id = m.department_id where m.user_id = ${userId} and d.deleted_at is null order by d.name`),
  ).map((r) => r.name);
const liveDepartments = async (orgId: string) =>
  resultRows<{ name: string }>(await app.container.db.execute(sql`select name from departments where organization_id = ${orgId} and deleted_at is null order by name`)).map((r) => r.name);

async function create(c: ScimClient, local: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await c.post("/Users", newScimUser(c.at(local), extra));
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

describe("enterprise department", () => {
  it("puts the person in the department of that name (created when missing) and moves them on change", async () => {
    const existing = await a.post("/Groups", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "Engineering" });
    expect(existing.status).toBe(201);
    // Okta: the extension block on POST; the name in another case finds the existing department.
    const id = await create(a, "dee", { schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA], [ENTERPRISE_SCHEMA]: { department: "engineering", employeeNumber: "77" } });
    expect((await a.get(`/Users/${id}`)).body[ENTERPRISE_SCHEMA]).toEqual({ department: "Engineering" });
    expect((await a.get(`/Users/${id}`)).body.schemas).toEqual([USER_SCHEMA, ENTERPRISE_SCHEMA]);
    expect(await departmentsOf(id)).toEqual(["Engineering"]);
    // Entra: Replace with the URN path; the department does not exist: it is created, the old membership goes.
    const moved = await a.patch(`/Users/${id}`, patchOf({ op: "Replace", path: DEPT, value: "R&D" }));
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body[ENTERPRISE_SCHEMA]).toEqual({ department: "R&D" });
    expect(await departmentsOf(id)).toEqual(["R&D"]);
    expect(await liveDepartments(a.orgId)).toEqual(["Engineering", "R&D"]);
    // A membership added by hand (a Group) stays when SCIM's department moves on.
    const group = (await a.get(`/Groups?filter=${encodeURIComponent('displayName eq "Engineering"')}`)).body.Resources[0];
    expect((await a.patch(`/Groups/${group.id}`, patchOf({ op: "add", path: "members", value: [{ value: id }] }))).status).toBe(200);
    // Entra: Remove with the path (and a value-less Replace) clears it: the SCIM-given membership ends.
    expect((await a.patch(`/Users/${id}`, patchOf({ op: "Remove", path: DEPT }))).body[ENTERPRISE_SCHEMA]).toBeUndefined();
    expect(await departmentsOf(id)).toEqual(["Engineering"]);
    // Path-less object with the URN key (Entra), then the extension block (Okta PATCH).
    await a.patch(`/Users/${id}`, patchOf({ op: "Replace", value: { [DEPT]: "Sales" } }));
    expect(await departmentsOf(id)).toEqual(["Engineering", "Sales"]);
    await a.patch(`/Users/${id}`, patchOf({ op: "replace", value: { [ENTERPRISE_SCHEMA]: { department: "Support" } } }));
    expect(await departmentsOf(id)).toEqual(["Engineering", "Support"]);
    const audit = await scimAudit(app, a.orgId);
    expect(audit.filter((r) => r.action === "scim.group.created").map((r) => r.metadata?.name)).toEqual(["Engineering", "R&D", "Sales", "Support"]);
    expect(audit.some((r) => r.action === "scim.user.updated" && (r.metadata?.changed as string[]).includes("department") && r.metadata?.department === "Support")).toBe(true);
  });

  it("PUT without the extension clears the department; 20 parallel creates of a new department make one", async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => create(a, `par${i}`, { [ENTERPRISE_SCHEMA]: { department: "Parallel" } })));
    expect((await liveDepartments(a.orgId)).filter((n) => n === "Parallel")).toHaveLength(1);
    for (const id of ids) expect(await departmentsOf(id)).toEqual(["Parallel"]);
    const put = await a.put(`/Users/${ids[0]}`, newScimUser(a.at("par0")));
    expect(put.status, put.text).toBe(200);
    expect(await departmentsOf(ids[0]!)).toEqual([]);
    expect(scimError(await a.patch(`/Users/${ids[1]}`, patchOf({ op: "replace", path: DEPT, value: 5 })))).toEqual([400, "invalidValue"]);
    expect(scimError(await a.patch(`/Users/${ids[1]}`, patchOf({ op: "replace", path: `${ENTERPRISE_SCHEMA}:shoeSize`, value: "44" })))).toEqual([400, "invalidPath"]);
    expect(await departmentsOf(ids[1]!)).toEqual(["Parallel"]);
  });
});

describe("enterprise manager", () => {
  it("stores the manager's id and answers it with its displayName; refuses unknown ids and other organizations' people", async () => {
    const boss = await create(a, "boss", { displayName: "The Boss" });
    const report = await create(a, "report");
    const foreign = await create(b, "foreign");
    // Entra: Add with the URN path and the bare id.
    const set = await a.patch(`/Users/${report}`, patchOf({ op: "Add", path: MANAGER, value: boss }));
    expect(set.status, set.text).toBe(200);
    expect(set.body[ENTERPRISE_SCHEMA]).toEqual({ manager: { value: boss, $ref: `${app.url}/scim/v2/Users/${boss}`, displayName: "The Boss" } });
    // Okta: PUT with the block, manager as {value, displayName} (displayName is ours, not the client's).
    const put = await a.put(`/Users/${report}`, newScimUser(a.at("report"), { schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA], [ENTERPRISE_SCHEMA]: { manager: { value: boss, displayName: "Whatever" }, department: "Ops" } }));
    expect(put.body[ENTERPRISE_SCHEMA]).toEqual({ department: "Ops", manager: { value: boss, $ref: `${app.url}/scim/v2/Users/${boss}`, displayName: "The Boss" } });
    // manager.value path; an unknown id, a non-id, oneself, and B's person: 400, nothing changed.
    for (const value of ["00000000-0000-4000-8000-000000000000", "not-an-id", report, foreign, { value: 5 }]) {
      const res = await a.patch(`/Users/${report}`, patchOf({ op: "replace", path: `${MANAGER}.value`, value: typeof value === "object" ? 5 : value }, { op: "replace", path: "displayName", value: "Changed" }));
      expect(scimError(res), JSON.stringify(value)).toEqual([400, "invalidValue"]);
    }
    expect(scimError(await a.patch(`/Users/${report}`, patchOf({ op: "replace", path: MANAGER, value: { value: foreign } })))).toEqual([400, "invalidValue"]);
    const after = (await a.get(`/Users/${report}`)).body;
    expect(after.displayName).not.toBe("Changed");
    expect(after[ENTERPRISE_SCHEMA].manager.value).toBe(boss);
    // B never sees A's manager through its own people, nor can B point at A's.
    expect(scimError(await b.patch(`/Users/${foreign}`, patchOf({ op: "Add", path: MANAGER, value: boss })))).toEqual([400, "invalidValue"]);
    // The manager deleted: no longer answered. Then Remove clears it.
    expect((await a.delete(`/Users/${boss}`)).status).toBe(204);
    expect((await a.get(`/Users/${report}`)).body[ENTERPRISE_SCHEMA]).toEqual({ department: "Ops" });
    const boss2 = await create(a, "boss2");
    expect((await a.patch(`/Users/${report}`, patchOf({ op: "replace", path: MANAGER, value: { value: boss2 } }))).body[ENTERPRISE_SCHEMA].manager.value).toBe(boss2);
    expect((await a.patch(`/Users/${report}`, patchOf({ op: "Remove", path: MANAGER }))).body[ENTERPRISE_SCHEMA]).toEqual({ department: "Ops" });
    expect((await a.patch(`/Users/${report}`, patchOf({ op: "Replace", path: MANAGER, value: "" }))).status).toBe(200);
  });

  it("is advertised in ResourceTypes and Schemas", async () => {
    const types = await a.get("/ResourceTypes/User");
    expect(types.body.schemaExtensions).toEqual([{ schema: ENTERPRISE_SCHEMA, required: false }]);
    const schema = await a.get(`/Schemas/${ENTERPRISE_SCHEMA}`);
    expect(schema.status).toBe(200);
    expect(schema.body.attributes.map((x: { name: string }) => x.name)).toEqual(["department", "manager"]);
  });
});

describe("userName changes", () => {
  it("renames within the organization's verified domains (Entra's Replace userName), keeps the address verified, audits", async () => {
    const id = await create(a, "old.name");
    const other = `x${Date.now().toString(36)}.test`;
    await verifyDomain(app, a.orgId, other);
    const renamed = await a.patch(`/Users/${id}`, patchOf({ op: "Replace", path: "userName", value: `New.Name@${other.toUpperCase()}` }));
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ userName: `new.name@${other}`, emails: [{ value: `new.name@${other}`, primary: true }] });
    expect((await accountRow(app, id))!.email).toBe(`new.name@${other}`);
    const [flags] = resultRows<{ email_verified_at: Date | null; email_verified_via: string | null }>(await app.container.db.execute(sql`select email_verified_at, email_verified_via from users where id = ${id}`));
    expect(flags!.email_verified_at).not.toBeNull();
    expect(flags!.email_verified_via).toBe("provider");
    const audit = (await scimAudit(app, a.orgId)).filter((r) => r.action === "scim.user.updated" && (r.metadata?.changed as string[]).includes("userName"));
    expect(audit.at(-1)!.metadata).toMatchObject({ previousUserName: a.at("old.name"), userName: `new.name@${other}` });
    // Found by the new name only; the old address is free again.
    expect((await a.get(`/Users?filter=${encodeURIComponent(`userName eq "new.name@${other}"`)}`)).body.totalResults).toBe(1);
    expect((await a.get(`/Users?filter=${encodeURIComponent(`userName eq "${a.at("old.name")}"`)}`)).body.totalResults).toBe(0);
    // Okta: PUT with the new userName.
    const put = await a.put(`/Users/${id}`, newScimUser(a.at("put.name")));
    expect([put.status, put.body.userName]).toEqual([200, a.at("put.name")]);
  });

  it("refuses another domain (400 invalidValue), a taken address (409 uniqueness), and changes nothing", async () => {
    const id = await create(a, "stays");
    const taken = await create(a, "taken");
    const outsider = await newUser(app, { email: a.at("independent") });
    for (const [value, expected] of [
      [b.at("stays"), [400, "invalidValue"]],
      ["someone@example.com", [400, "invalidValue"]],
      [a.at("TAKEN"), [409, "uniqueness"]],
      [outsider.email, [409, "uniqueness"]],
      ["not an address", [400, "invalidValue"]],
    ] as const) {
      const res = await a.patch(`/Users/${id}`, patchOf({ op: "replace", path: "displayName", value: "Half" }, { op: "Replace", path: "userName", value }));
      expect(scimError(res), value).toEqual(expected);
    }
    expect((await accountRow(app, id))!.email).toBe(a.at("stays"));
    expect((await a.get(`/Users/${id}`)).body.displayName).not.toBe("Half");
    expect((await accountRow(app, taken))!.email).toBe(a.at("taken"));
    expect((await accountRow(app, outsider.id))!.managed_by_organization_id).toBeNull();
    // 20 parallel renames of two people to one free address: one wins, the rest 409.
    const free = a.at("contested");
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => a.patch(`/Users/${i % 2 ? id : taken}`, patchOf({ op: "replace", path: "userName", value: free }))));
    const winners = answers.filter((r) => r.status === 200);
    expect(new Set(winners.map((r) => r.body.id)).size).toBe(1);
    for (const r of answers.filter((x) => x.status !== 200)) expect(scimError(r)).toEqual([409, "uniqueness"]);
  });
});

describe("what PostgreSQL cannot store", () => {
  it("refuses a NUL or a lone surrogate anywhere in a body with 400 invalidValue, never a 500", async () => {
    const id = await create(a, "nul.target");
    const cases: Array<[string, string, unknown]> = [
      ["PATCH", `/Users/${id}`, patchOf({ op: "replace", path: DEPT, value: "a\u0000b" })],
      ["PATCH", `/Users/${id}`, patchOf({ op: "replace", path: "displayName", value: "a\u0000b" })],
      ["PATCH", `/Users/${id}`, patchOf({ op: "replace", path: "userName", value: a.at("q\u0000r") })],
      ["PATCH", `/Users/${id}`, patchOf({ op: "replace", path: MANAGER, value: "\ud800" })],
      ["POST", "/Users", newScimUser(a.at("x\u0000y"))],
      ["POST", "/Groups", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "G\u0000" }],
    ];
    for (const [method, path, body] of cases) expect(scimError(await a.request(method, path, body)), JSON.stringify(body)).toEqual([400, "invalidValue"]);
    for (const f of ['userName eq "a\u0000b"', 'displayName co "\u0000"']) expect(scimError(await a.get(`/Users?filter=${encodeURIComponent(f)}`))[0]).toBe(400);
    expect((await a.get(`/Users/${id}`)).body.displayName).toBe("Given Family");
  });
});
