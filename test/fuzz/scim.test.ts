import { sql } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import type { TestApp } from "../helpers/app.js";
import { ENTERPRISE_SCHEMA, ERROR_SCHEMA, newScimUser, PATCH_SCHEMA, scimClient, USER_SCHEMA, type ScimClient } from "../helpers/scim.js";
import { fuzzRequests, fuzzTimeout, startFuzzApp } from "./config.js";
import type { FakeZtCentral } from "../helpers/fake-zt-central.js";
import { truncate } from "./request.js";
import { anyJson, brokenJsonText, hostileSegment, hostileString, encodeSegment } from "./values.js";

/**
 * A seeded fuzz of /scim/v2 (issue 36), beside the REST and GraphQL ones: malformed bodies,
 * filters, paths, query parameters and PATCH operations, sent one after another with organization
 * A's key. Every answer is below 500; every 4xx is in the SCIM error schema (with an RFC scimType
 * when there is one); a refused write changed nothing (A's people, departments, memberships and
 * SCIM rows fingerprinted before and after); organization B's never change at all. Its size is a
 * tenth of FUZZ_REQUESTS (500 by default, 5,000 under `npm run fuzz`) unless FUZZ_SCIM_REQUESTS says
 * (`.ci/run` keeps it at 500 while it halves the REST and GraphQL runs); FUZZ_SEED replays a run.
 */
const REQUESTS = Number(process.env.FUZZ_SCIM_REQUESTS ?? Math.max(50, Math.round(fuzzRequests() / 10)));
const SEED = Number(process.env.FUZZ_SEED ?? 36);
const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
const SCIM_TYPES = new Set(["invalidFilter", "tooMany", "uniqueness", "mutability", "invalidSyntax", "invalidPath", "noTarget", "invalidValue", "invalidVers", "sensitive"]);

let app: TestApp;
let central: FakeZtCentral;
let a: ScimClient;
let b: ScimClient;
const aIds: string[] = [];
const bIds: string[] = [];

beforeAll(async () => {
  ({ app, central } = await startFuzzApp());
  [a, b] = [await scimClient(app), await scimClient(app)];
  for (const [c, ids] of [[a, aIds], [b, bIds]] as const) {
    for (const local of ["ann", "bob", "cy"]) {
      const res = await c.post("/Users", newScimUser(c.at(local), { externalId: `ext-${local}`, [ENTERPRISE_SCHEMA]: { department: "Core" } }));
      if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
      ids.push(res.body.id);
    }
    const g = await c.post("/Groups", { schemas: [GROUP_SCHEMA], displayName: "Fuzzers", members: [{ value: ids[0] }] });
    if (g.status !== 201) throw new Error(`${g.status} ${g.text}`);
    ids.push(g.body.id);
  }
}, 120_000);
afterAll(async () => {
  await app?.close();
  await central?.close();
});

/** Everything SCIM may write for one organization, as one digest. */
async function fingerprint(orgId: string): Promise<string> {
  const [row] = resultRows<{ f: string }>(
    await app.container.db.execute(sql`select md5(concat(
      (select string_agg(concat_ws('|', u.id, u.email, u.full_name, u.status, u.deleted_at, u.email_verified_via, u.updated_at), ',' order by u.id) from users u where u.managed_by_organization_id = ${orgId}),
      (select string_agg(concat_ws('|', s.user_id, s.external_id, s.given_name, s.family_name, s.display_name, s.version, s.department_id, s.manager_id), ',' order by s.user_id) from scim_users s where s.organization_id = ${orgId}),
      (select string_agg(concat_ws('|', d.id, d.name, d.deleted_at, d.updated_at), ',' order by d.id) from departments d where d.organization_id = ${orgId}),
      (select string_agg(concat_ws('|', m.department_id, m.user_id), ',' order by m.department_id, m.user_id) from department_members m join departments d on d.id = m.department_id where d.organization_id = ${orgId}),
      (select string_agg(concat_ws('|', om.user_id, om.role, om.deleted_at), ',' order by om.user_id) from org_memberships om where om.organization_id = ${orgId})
    )) as f`),
  );
  return row!.f;
}

interface ScimRequest {
  method: string;
  path: string;
  body?: unknown;
  rawBody?: string;
}

function requests(): fc.Arbitrary<ScimRequest> {
  const id = fc.oneof({ arbitrary: fc.constantFrom(...aIds), weight: 4 }, { arbitrary: fc.constantFrom(...bIds), weight: 1 }, fc.uuid(), hostileSegment.map(encodeSegment), fc.constant(aIds[0]!.toUpperCase()));
  const attr = fc.constantFrom("userName", "emails.value", "emails", "displayName", "externalId", "active", "id", "meta.created", "meta.lastModified", "name.givenName", "name", "emails.type", "emails.primary", "members", "members.value", "members.display", `${USER_SCHEMA}:userName`, "urn:x:y", "title", "");
  const literal = fc.oneof(hostileString.map((s) => JSON.stringify(s)), fc.constantFrom("true", "false", "null", "5", "-1e400", '"', '"\\', `"${a.at("ann")}"`, `"${b.at("ann")}"`, `"${aIds[0]}"`));
  const term = fc.oneof(
    fc.tuple(attr, fc.constantFrom("eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le", "xx", "EQ"), literal).map((t) => t.join(" ")),
    attr.map((x) => `${x} pr`),
    fc.tuple(fc.constantFrom("emails", "members", "name"), attr, literal).map(([p, x, v]) => `${p}[${x} eq ${v}]`),
  );
  const filter = fc.oneof(
    fc.array(fc.oneof(term, fc.constantFrom("and", "or", "not", "(", ")", "[", "]", "not (")), { minLength: 1, maxLength: 7 }).map((xs) => xs.join(" ")),
    hostileString,
    fc.constant(`${"(".repeat(30)}userName pr${")".repeat(30)}`),
  );
  const param = fc.oneof(fc.integer({ min: -5, max: 300 }).map(String), hostileString, fc.constantFrom("1e3", "0x10", "", "99999999999999"));
  const query = fc
    .record({ filter, startIndex: param, count: param, attributes: fc.oneof(attr, hostileString), excludedAttributes: fc.oneof(attr, hostileString) }, { requiredKeys: [] })
    .map((q) => {
      const parts = Object.entries(q).map(([k, v]) => `${k}=${encodeSegment(v)}`);
      return parts.length ? `?${parts.join("&")}` : "";
    });
  const rawQuery = fc.constantFrom("?filter=%zz", "?filter=a&filter=b", "?count[]=1", "?startIndex=1&startIndex=2", "?%00=%00");
  const collection = fc.constantFrom("/Users", "/Groups");
  const path = fc.oneof(
    { arbitrary: fc.tuple(collection, fc.oneof(query, rawQuery)).map(([c, q]) => `${c}${q}`), weight: 4 },
    { arbitrary: fc.tuple(collection, id, fc.oneof(fc.constant(""), query)).map(([c, i, q]) => `${c}/${i}${q}`), weight: 6 },
    fc.constantFrom("/ServiceProviderConfig", "/ResourceTypes", "/ResourceTypes/User", "/Schemas", `/Schemas/${ENTERPRISE_SCHEMA}`, "/Bulk", "/.search", "/Users/.search", "/Me"),
    hostileSegment.map((s) => `/${encodeSegment(s)}`),
    fc.tuple(collection, id, hostileSegment).map(([c, i, s]) => `${c}/${i}/${encodeSegment(s)}`),
  );
  const userName = fc.oneof(fc.constantFrom(a.at("ann"), a.at("new.person"), a.at("Bob"), b.at("ann"), "x@example.com", "not an address"), hostileString, anyJson, hostileString.map((s) => a.at(s)));
  const memberRef = fc.oneof(id.map((value) => ({ value })), id, anyJson);
  const manager = fc.oneof(id, memberRef, fc.constant(""), anyJson);
  const value = fc.oneof(anyJson, hostileString, userName, memberRef, fc.array(memberRef, { maxLength: 3 }), fc.constantFrom("True", "False", true, false, null), fc.record({ givenName: hostileString, familyName: anyJson }, { requiredKeys: [] }));
  const schemas = fc.oneof({ arbitrary: fc.constant([USER_SCHEMA]), weight: 3 }, fc.constant([USER_SCHEMA, ENTERPRISE_SCHEMA]), fc.constant([GROUP_SCHEMA]), fc.constant([PATCH_SCHEMA]), anyJson);
  const userBody = fc.record(
    {
      schemas,
      userName,
      externalId: fc.oneof(hostileString, anyJson, fc.constant("ext-bob")),
      displayName: fc.oneof(hostileString, anyJson),
      active: fc.oneof(fc.boolean(), fc.constantFrom("True", "False", "maybe"), anyJson),
      name: fc.oneof(fc.record({ givenName: hostileString, familyName: hostileString, formatted: anyJson }, { requiredKeys: [] }), anyJson),
      emails: fc.oneof(fc.array(fc.record({ value: userName, type: hostileString, primary: anyJson }, { requiredKeys: [] }), { maxLength: 3 }), anyJson),
      [ENTERPRISE_SCHEMA]: fc.oneof(fc.record({ department: fc.oneof(hostileString, anyJson), manager, employeeNumber: anyJson, shoeSize: anyJson }, { requiredKeys: [] }), anyJson),
      groups: anyJson,
      meta: anyJson,
      shoeSize: anyJson,
    },
    { requiredKeys: [] },
  );
  const groupBody = fc.record({ schemas, displayName: fc.oneof(hostileString, anyJson, fc.constant("Fuzzers")), members: fc.oneof(fc.array(memberRef, { maxLength: 4 }), anyJson), externalId: anyJson }, { requiredKeys: [] });
  const patchPath = fc.oneof(
    fc.constantFrom("active", "userName", "displayName", "name", "name.givenName", "externalId", "emails", 'emails[type eq "work"].value', 'emails[type eq "home"]', "members", `members[value eq "${aIds[1]}"]`, "members[value eq]", `${ENTERPRISE_SCHEMA}:department`, `${ENTERPRISE_SCHEMA}:manager`, `${ENTERPRISE_SCHEMA}:manager.value`, `${ENTERPRISE_SCHEMA}:nope`, `${USER_SCHEMA}:displayName`, "id", "meta", "schemas", "emails[", "a]b", ""),
    hostileString,
    anyJson,
  );
  const operation = fc.oneof(
    fc.record({ op: fc.oneof(fc.constantFrom("add", "Add", "replace", "Replace", "remove", "Remove", "move", "copy", ""), anyJson), path: patchPath, value }, { requiredKeys: [] }),
    anyJson,
  );
  const patchBody = fc.oneof(
    { arbitrary: fc.record({ schemas: fc.oneof({ arbitrary: fc.constant([PATCH_SCHEMA]), weight: 4 }, schemas), Operations: fc.oneof({ arbitrary: fc.array(operation, { minLength: 1, maxLength: 4 }), weight: 4 }, anyJson) }, { requiredKeys: [] }), weight: 5 },
    fc.record({ schemas: fc.constant([PATCH_SCHEMA]), operations: fc.array(operation, { maxLength: 2 }) }),
    anyJson,
  );
  const body = (method: string, p: string) =>
    method === "PATCH" ? patchBody : p.startsWith("/Groups") ? fc.oneof(groupBody, userBody, anyJson) : fc.oneof({ arbitrary: userBody, weight: 4 }, groupBody, anyJson);
  return fc.tuple(fc.constantFrom("GET", "GET", "POST", "PUT", "PATCH", "PATCH", "DELETE", "HEAD", "OPTIONS"), path).chain(([method, p]): fc.Arbitrary<ScimRequest> => {
    if (method === "GET" || method === "DELETE" || method === "HEAD" || method === "OPTIONS") return fc.constant<ScimRequest>({ method, path: p });
    return fc.oneof({ arbitrary: body(method, p).map((x): ScimRequest => ({ method, path: p, body: x })), weight: 6 }, brokenJsonText.map((rawBody): ScimRequest => ({ method, path: p, rawBody })));
  });
}

describe("SCIM fuzz", () => {
  it(`${REQUESTS} requests: never a 5xx, every 4xx a SCIM error, nothing half-written, B untouched`, async () => {
    const bBefore = await fingerprint(b.orgId);
    const stats = { requests: 0, byStatus: new Map<number, number>(), refusedWrites: 0 };
    let aState = await fingerprint(a.orgId);
    await fc.assert(
      fc.asyncProperty(requests(), async (r) => {
        const res = await app.http.request(r.method, `/scim/v2${r.path}`, {
          token: a.key,
          headers: { "content-type": "application/scim+json" },
          ...(r.rawBody !== undefined ? { rawBody: r.rawBody } : r.body !== undefined ? { body: r.body } : {}),
        });
        stats.requests++;
        stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
        const what = `${r.method} ${truncate(r.path, 300)} ${truncate(r.rawBody ?? JSON.stringify(r.body) ?? "", 400)} → ${res.status} ${truncate(res.text, 300)}`;
        if (res.status >= 500) throw new Error(`server error: ${what}`);
        // 414/431: Node's HTTP server refuses the request line before any route (no body to shape);
        // a path of dot segments ("/..") that the client resolves outside /scim/v2 is not SCIM's.
        const inside = new URL(`http://x/scim/v2${r.path}`).pathname.startsWith("/scim/v2");
        if (res.status >= 400 && inside && r.method !== "HEAD" && res.status !== 414 && res.status !== 431) {
          const e = res.body;
          if (!e || !Array.isArray(e.schemas) || e.schemas[0] !== ERROR_SCHEMA || e.status !== String(res.status) || typeof e.detail !== "string") throw new Error(`not a SCIM error: ${what}`);
          if (e.scimType !== undefined && !SCIM_TYPES.has(e.scimType)) throw new Error(`unknown scimType: ${what}`);
        }
        // B's people are never reached through A's key.
        if (bIds.some((x) => r.path.includes(x)) && res.status < 300 && r.method !== "OPTIONS" && !r.path.startsWith("/Users?") && !r.path.startsWith("/Groups?")) throw new Error(`B reached: ${what}`);
        const now = await fingerprint(a.orgId);
        if (res.status >= 400 && now !== aState) throw new Error(`a refused request wrote: ${what}`);
        if (res.status >= 400 && ["POST", "PUT", "PATCH", "DELETE"].includes(r.method)) stats.refusedWrites++;
        aState = now;
      }),
      { numRuns: REQUESTS, seed: SEED, endOnFailure: true },
    );
    console.log(`SCIM fuzz: ${stats.requests} requests (seed ${SEED}), refused writes ${stats.refusedWrites}, statuses ${JSON.stringify(Object.fromEntries([...stats.byStatus].sort((x, y) => x[0] - y[0])))}`);
    expect(await fingerprint(b.orgId)).toBe(bBefore);
    expect(stats.requests).toBe(REQUESTS);
    expect(stats.refusedWrites).toBeGreaterThan(REQUESTS / 10);
    // The door still answers.
    expect((await a.get("/ServiceProviderConfig")).status).toBe(200);
  }, fuzzTimeout(REQUESTS));
});
