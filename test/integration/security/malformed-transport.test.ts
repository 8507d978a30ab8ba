import { gzipSync } from "node:zlib";
import { GraphQLEnumType, getNamedType, type GraphQLField, type GraphQLSchema } from "graphql";
import { getMetadataStorage } from "type-graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restRoutes } from "../../../rest-shim/index.js";
import { buildGraphqlSchema } from "../../../src/graphql/schema.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { countRows } from "../../helpers/db.js";
import { captureLogger } from "../../helpers/log-capture.js";
import {
  BAD_CURSORS,
  createSweeper,
  fieldsOf,
  fill,
  fullSweep,
  gqlProbes,
  gqlProblem,
  isJson,
  JSON_TYPE,
  nest,
  operation,
  paramsOf,
  restProbes,
  restProblem,
  sampleSweep,
  sweepSeed,
  validVariables,
  type Caller,
  type Probe,
} from "../../helpers/malformed.js";
import { newOrg } from "../../factories/orgs.js";
import { newSuperadmin, newUser, type TestUser } from "../../factories/users.js";

/**
 * The malformed-transport sweep (issue 12, item 13). Generated from the REST route table and the
 * GraphQL schema, so a new route or operation is swept without anyone adding it here: every REST
 * route, anonymous and signed in, gets bad %-escapes in each path parameter, huge numbers and
 * overlong strings, a gzip header on a plain body, bad and too-deep JSON, wrong content types;
 * every GraphQL operation gets missing, wrong-typed and too-deep variables. Nothing may answer
 * 5xx; every REST error is the envelope, every GraphQL error carries extensions.code and
 * extensions.status; and nothing reaches the log as an unhandled error. Run as production runs.
 *
 * The generated sweeps take a sample (test/helpers/malformed.ts, sampleSweep): a third of each
 * family's routes (REST tag) and operations (GraphQL resolver), rotating with the seed, and at
 * least one route or operation for every family and every kind of malformation, every run. The
 * seed is printed and named in a failure; FUZZ_SEED=<seed> replays it, MALFORMED_SWEEP=full
 * sweeps every route and operation (about 29,000 requests against about 10,000).
 */
let app: TestApp;
let admin: TestUser;
let bystander: TestUser;
let orgId: string;
const capture = captureLogger("info");

/**
 * A fresh session per request: some routes (logout, revoke) end the one they are called with.
 * Signing out every other session would end the sessions of the probes running beside it (and the
 * admin's own): those requests come from a bystander account of their own.
 */
const endsOtherSessions = (probe: Probe) =>
  (probe.method === "DELETE" && /^\/api\/v1\/auth\/sessions\/?(\?|$)/.test(probe.path)) || String(probe.body ?? "").includes("revokeOtherSessions");
async function authHeader(caller: Caller, probe?: Probe): Promise<Record<string, string>> {
  if (caller === "anonymous") return {};
  const session = await app.services.sessions.create(probe && endsOtherSessions(probe) ? bystander.id : admin.id, { rememberMe: false, ip: null, userAgent: null });
  return { authorization: `Bearer ${session.token}` };
}
let sweeper: ReturnType<typeof createSweeper>;
const SEED = sweepSeed();
/** Named in every sweep's failures: the seed that replays the sample. */
const REPLAY = `FUZZ_SEED=${SEED}${fullSweep() ? " MALFORMED_SWEEP=full" : ""}`;
const swept: string[] = [];

beforeAll(async () => {
  app = await startTestApp({ NODE_ENV: "production", LOG_LEVEL: "info", RATE_LIMIT_ENABLED: "false" }, { logger: capture.logger });
  admin = await newSuperadmin(app);
  bystander = await newUser(app);
  sweeper = createSweeper(app.url, authHeader);
});
afterAll(() => app?.close());

/**
 * Each sweep stands on an organization of its own that the signed-in caller owns, so requests get
 * past tenancy to validation. A sweep may delete it (DELETE with no body deletes a one-member
 * organization: not malformed, just the route), which is why those routes run last.
 */
async function freshOrg(): Promise<string> {
  orgId = (await newOrg(app, admin)).id;
  return orgId;
}

const routes = () => restRoutes({} as never, {} as never).sort((a, b) => Number(a.method === "delete") - Number(b.method === "delete"));
type Route = ReturnType<typeof routes>[number];
const routeKey = (r: Route) => `${r.method} ${r.path}`;

describe("malformed transport on every REST route", () => {
  it("answers every route, anonymous and signed in, with a 4xx envelope, never 5xx", async () => {
    await freshOrg();
    const all = routes();
    expect(all.length).toBeGreaterThan(100);
    expect(all.flatMap((r) => restProbes(r, orgId)).length).toBeGreaterThan(1500);
    const kindsOf = (r: Route) => restProbes(r, orgId).map((p) => p.kind!);
    const sample = sampleSweep(all, SEED, { key: routeKey, family: (r) => r.tag, kinds: kindsOf });
    expect(new Set(sample.map((r) => r.tag))).toEqual(new Set(all.map((r) => r.tag)));
    expect(new Set(sample.flatMap(kindsOf))).toEqual(new Set(all.flatMap(kindsOf)));
    swept.push(`${sample.length} of ${all.length} routes`);
    const probes = sample.flatMap((r) => restProbes(r, orgId));
    expect(await sweeper.sweep(probes, restProblem), REPLAY).toEqual([]);
  }, 120_000);

  it("answers hostile field values on every route with 4xx and writes nothing", async () => {
    const WRITE_TABLES = ["users", "password_credentials", "user_tokens", "email_outbox"];
    const snapshot = async () => Object.fromEntries(await Promise.all(WRITE_TABLES.map(async (t) => [t, await countRows(app, t)])));
    await freshOrg();
    const before = await snapshot();
    const values = [null, 12345, true, [], { $gt: "" }, "x".repeat(5000), "'; drop table users; --", "\u0000\uFFFF"];
    const RAW_BODIES = ["[]", "[1,2]", '"a string"', "123", "null"];
    const writes = routes().filter((r) => r.method !== "get");
    // Its families, and the kinds of field each takes (and whether a path parameter is swept too).
    const kindsOf = (r: Route) => [...fieldsOf(r.body).map(([, type]) => `a ${type} field`), ...(paramsOf(r.path).length ? ["a path parameter"] : [])];
    const sample = sampleSweep(writes, SEED, { key: routeKey, family: (r) => r.tag, kinds: kindsOf });
    expect(new Set(sample.map((r) => r.tag))).toEqual(new Set(writes.map((r) => r.tag)));
    swept.push(`${sample.length} of ${writes.length} writing routes`);
    const probes: Probe[] = sample
      .flatMap((route) => {
        const fields = fieldsOf(route.body).map(([f]) => f);
        const bodies = [{}, { unknown_field: "ignored?" }, ...fields.flatMap((f) => values.map((v) => ({ [f]: v }))), Object.fromEntries(fields.map((f) => [f, { nested: { deeper: [1, 2, 3] } }]))];
        const paths = [fill(route.path, orgId), fill(route.path, orgId, Object.fromEntries(paramsOf(route.path).map((p) => [p, "not-an-id%00"])))];
        return [...bodies.map((b) => JSON.stringify(b)), ...RAW_BODIES].flatMap((body) =>
          paths.map((path) => ({ label: body.slice(0, 60), method: route.method.toUpperCase(), path, headers: JSON_TYPE, body })),
        );
      });
    expect(await sweeper.sweep(probes, restProblem), REPLAY).toEqual([]);
    expect(await snapshot()).toEqual(before);
  }, 120_000);

  it("refuses malformed query values on the token hand-off and ignores unknown ones", async () => {
    const user = await newUser(app);
    for (const q of ["redirect=a&redirect=b", "redirect=" + "x".repeat(3000)]) {
      const res = await app.http.get(`/api/v1/auth/token?${q}`, { token: user.token });
      expect(res.status).toBe(400);
      expect(res.body.error.type).toMatch(/VALIDATION_ERROR|INVALID_REDIRECT/);
    }
    const unknown = await app.http.get("/api/v1/auth/token?foo[bar]=1", { token: user.token });
    expect(unknown.status).toBe(200);
  });
});

describe("malformed transport outside the REST table", () => {
  // The OIDC provider reads its own bodies and the hosted pages have no route table: a fixed list.
  const PATHS = ["/api/v1/oidc/token", "/api/v1/oidc/token/introspection", "/api/v1/oidc/token/revocation", "/api/v1/oidc/me", "/api/v1/oidc/auth", "/api/v1/oidc/session/end",
    "/api/v1/oidc/interaction/%ZZ", "/api/v1/oidc/interaction/%E0%A4%A/confirm", "/api/v1/oidc/reg/%ZZ", "/.well-known/openid-configuration", "/login", "/account", "/cli/authorize", "/", "/register", "/verify-email", "/forgot-password", "/reset-password", "/activate", "/invite", "/assets/%ZZ", "/%ZZ", "/api/health"];

  it("answers the OIDC provider's endpoints and the hosted pages without a 5xx", async () => {
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const probes: Probe[] = PATHS.flatMap((path) => [
      { label: "bad query", method: "GET", path: `${path}?client_id=%E0%A4%A&redirect_uri=%&x[y]=1&response_type=code&scope=openid` },
      { label: "gzip header on a plain body", method: "POST", path, headers: { ...form, "content-encoding": "gzip" }, body: "grant_type=x" },
      { label: "truncated gzip", method: "POST", path, headers: { ...form, "content-encoding": "gzip" }, body: gzipSync("grant_type=client_credentials").subarray(0, 12) },
      { label: "bad escapes in a form", method: "POST", path, headers: form, body: "a=%E0%A4%A&b[c][d]=1" },
      { label: "deep JSON", method: "POST", path, headers: JSON_TYPE, body: nest(5000) },
      { label: "bad JSON", method: "POST", path, headers: JSON_TYPE, body: "{" },
    ]);
    expect(await sweeper.sweep(probes, (_p, { status }) => (status >= 500 ? "5xx" : null))).toEqual([]);
  });
});

describe("the review's reproductions", () => {
  it("refuses a 20-digit serial on /sudo/check with a working API key (400, not a database error)", async () => {
    await freshOrg();
    const key = (await app.http.post(`/api/v1/organizations/${orgId}/api-keys`, { name: "bastion" }, { token: admin.token })).body.data.api_key.key;
    for (const serial of ["99999999999999999999", "9223372036854775808", 1e30, 1.5, "12abc", -1]) {
      const res = await app.http.post("/api/v1/sudo/check", { api_key: key, certificate_serial: serial });
      expect(res.status, `${serial}: ${res.text}`).toBe(400);
      expect(res.body.error.type).toBe("VALIDATION_ERROR");
    }
    // The largest bigint is a serial that simply names no certificate.
    expect((await app.http.post("/api/v1/sudo/check", { api_key: key, certificate_serial: "9223372036854775807" })).status).toBe(404);
  });

  it("refuses out-of-range activity and audit-log paging on REST and GraphQL", async () => {
    await freshOrg();
    for (const cursor of BAD_CURSORS) {
      const rest = await app.http.get(`/api/v1/organizations/${orgId}/audit-logs?cursor=${encodeURIComponent(cursor)}`, { token: admin.token });
      expect(rest.status, cursor).toBe(400);
      expect(rest.body.error.type).toBe("VALIDATION_ERROR");
      const gql = await app.http.gql("query($o: ID!, $c: String) { organizationActivity(orgId: $o, cursor: $c) { nextCursor } }", { o: orgId, c: cursor }, { token: admin.token });
      expect(gql.errors[0].extensions).toMatchObject({ code: "VALIDATION_ERROR", status: 400 });
    }
    for (const path of ["/api/v1/auth/audit-logs", `/api/v1/superadmin/users/${admin.id}/audit`]) {
      for (const q of ["page=1e30", "per_page=-1", "page=99999999999999999999", "per_page=NaN"]) {
        const res = await app.http.get(`${path}?${q}`, { token: admin.token });
        expect(res.status, `${path}?${q}`).toBe(400);
        expect(res.body.error.type).toBe("VALIDATION_ERROR");
      }
    }
    const gql = await app.http.gql("query($p: Int, $n: Int) { myAuditLog(page: $p, perPage: $n) { count } }", { p: 2_000_000_000, n: -1 }, { token: admin.token });
    expect(gql.errors[0].extensions).toMatchObject({ code: "VALIDATION_ERROR", status: 400 });
  });

  it("treats a malformed %-escape in the external sign-in flow cookie as no cookie", async () => {
    const res = await app.http.get("/api/v1/auth/external/github/callback?code=x&state=y", { cookie: "keyward.oauth=%E0%A4%A" });
    expect(res.status).toBeLessThan(500);
    expect(res.status).not.toBe(200);
  });
});

describe("malformed input on every GraphQL operation", () => {
  let schema: GraphQLSchema;
  beforeAll(async () => {
    schema = await buildGraphqlSchema({} as never);
  });
  const fields = () => [
    ...Object.values(schema.getQueryType()!.getFields()).map((f) => ["query", f] as const),
    ...Object.values(schema.getMutationType()!.getFields()).map((f) => ["mutation", f] as const),
  ];

  it("sweeps every query and mutation, anonymous and signed in: coded errors, never 5xx", async () => {
    await freshOrg();
    const all = fields();
    expect(all.length).toBeGreaterThan(100);
    expect(all.some(([, f]) => f.args.some((a) => isJson(a.type)))).toBe(true);
    expect(all.flatMap(([kind, field]) => gqlProbes(kind, field, orgId)).length).toBeGreaterThan(500);
    // A family is the resolver class that declares the operation.
    const resolverOf = new Map([...getMetadataStorage().queries, ...getMetadataStorage().mutations].map((m) => [m.schemaName, m.target.name]));
    type Operation = readonly [string, GraphQLField<unknown, unknown>];
    const family = ([, f]: Operation) => resolverOf.get(f.name) ?? "?";
    const kindsOf = ([kind, f]: Operation) => [kind, ...gqlProbes(kind, f, orgId).map((p) => p.kind!)];
    const sample = sampleSweep(all, SEED, { key: ([kind, f]) => `${kind} ${f.name}`, family, kinds: kindsOf });
    expect(all.filter((o) => family(o) === "?").map(([, f]) => f.name)).toEqual([]);
    expect(new Set(sample.map(family))).toEqual(new Set(all.map(family)));
    expect(new Set(sample.flatMap(kindsOf))).toEqual(new Set(all.flatMap(kindsOf)));
    swept.push(`${sample.length} of ${all.length} operations`);
    const probes = sample.flatMap(([kind, field]) => gqlProbes(kind, field, orgId));
    expect(await sweeper.sweep(probes, gqlProblem), REPLAY).toEqual([]);
  }, 120_000);

  it("answers malformed requests to /graphql in GraphQL's shape, with code and status", async () => {
    const ok = JSON.stringify({ query: "{ __typename }" });
    const post = (label: string, body: string | Buffer, headers: Record<string, string>, expected?: Probe["expect"]): Probe => ({ label, method: "POST", path: "/graphql", headers, body, ...(expected ? { expect: expected } : {}) });
    const get = (label: string, query: string): Probe => ({ label, method: "GET", path: `/graphql?${query}`, headers: { "apollo-require-preflight": "true", accept: "application/json" } });
    const deepLiteral = `mutation { completePasskeyLogin(challengeId: "x", response: ${"{a:".repeat(8000)}1${"}".repeat(8000)}) { __typename } }`;
    const probes: Probe[] = [
      post("bad JSON", '{"query":', JSON_TYPE, { status: 400, code: "INVALID_JSON" }),
      post("gzip header on a plain body", ok, { ...JSON_TYPE, "content-encoding": "gzip" }, { status: 400, code: "INVALID_BODY_ENCODING" }),
      post("truncated gzip", gzipSync(ok).subarray(0, 12), { ...JSON_TYPE, "content-encoding": "gzip" }, { status: 400, code: "INVALID_BODY_ENCODING" }),
      post("deflate header on a plain body", ok, { ...JSON_TYPE, "content-encoding": "deflate" }, { status: 400, code: "INVALID_BODY_ENCODING" }),
      post("unknown encoding", ok, { ...JSON_TYPE, "content-encoding": "compress" }, { status: 415, code: "UNSUPPORTED_ENCODING" }),
      post("deep variables", `{"query":"{ __typename }","variables":${nest(5000)}}`, JSON_TYPE, { status: 400, code: "JSON_TOO_DEEP" }),
      post("latin1", ok, { "content-type": "application/json; charset=latin1" }, { status: 415, code: "UNSUPPORTED_CHARSET" }),
      post("text/plain (CSRF)", ok, { "content-type": "text/plain" }, { status: 400, code: "BAD_REQUEST" }),
      post("form (CSRF)", "query=%7B__typename%7D", { "content-type": "application/x-www-form-urlencoded" }, { status: 400, code: "BAD_REQUEST" }),
      post("no body", "", JSON_TYPE, { status: 400, code: "BAD_REQUEST" }),
      post("batch", `[${ok},${ok}]`, JSON_TYPE),
      post("query not a string", '{"query":1}', JSON_TYPE, { status: 400, code: "BAD_REQUEST" }),
      post("variables a string", '{"query":"{ __typename }","variables":"x"}', JSON_TYPE, { status: 400, code: "BAD_REQUEST" }),
      post("variables a list", '{"query":"{ __typename }","variables":[1]}', JSON_TYPE),
      post("unknown operationName", '{"query":"query A { __typename }","operationName":"B"}', JSON_TYPE),
      post("parse error", '{"query":"query {"}', JSON_TYPE, { status: 400, code: "GRAPHQL_PARSE_FAILED" }),
      post("literal nested past the parser's stack", JSON.stringify({ query: deepLiteral }), JSON_TYPE, { status: 400, code: "GRAPHQL_PARSE_FAILED" }),
      post("unknown persisted query", '{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"00"}}}', JSON_TYPE, { status: 200, code: "PERSISTED_QUERY_NOT_FOUND" }),
      post("overlong document", JSON.stringify({ query: `{ __typename ${" ".repeat(90_000)}}` }), JSON_TYPE),
      get("GET without the preflight header", "query=%7B__typename%7D"),
      get("GET with bad variables", "query=%7B__typename%7D&variables=%7Bnot-json"),
      // As deep as fits in a URL Node accepts (16 KiB of headers): Apollo parses these itself.
      get("GET with deep variables", `query=${encodeURIComponent("query($v: Int) { __typename }")}&variables=${encodeURIComponent(nest(500))}`),
      get("GET with a bad escape", "query=%E0%A4%A"),
      get("GET of a mutation", `query=${encodeURIComponent("mutation { logout { message } }")}`),
    ];
    expect(await sweeper.sweep(probes, gqlProblem)).toEqual([]);
  });

  it("strips field suggestions from errors in production (validation and variables)", async () => {
    const unknown = await app.http.gql("{ mee { id } }");
    expect(unknown.errors[0].extensions).toEqual({ code: "GRAPHQL_VALIDATION_FAILED", status: 400 });
    expect(unknown.errors[0].message).toMatch(/Cannot query field "mee"/);
    expect(unknown.errors[0].message).not.toMatch(/Did you mean/);
    const [kind, field] = fields().find(([, f]) => f.args.some((a) => getNamedType(a.type) instanceof GraphQLEnumType))!;
    const arg = field.args.find((a) => getNamedType(a.type) instanceof GraphQLEnumType)!;
    const member = (getNamedType(arg.type) as GraphQLEnumType).getValues()[0]!.name;
    const typo = await app.http.gql(operation(kind, field), { ...validVariables(field, orgId), [arg.name]: member.slice(0, -1) });
    expect(typo.errors[0].extensions.code).toBe("BAD_USER_INPUT");
    expect(JSON.stringify(typo.errors)).not.toMatch(/Did you mean/);
  });
});

describe("after the sweep", () => {
  it("still had a signed-in caller at the end (the signed-in half was not silently anonymous)", async () => {
    expect((await app.http.get("/api/v1/auth/me", { headers: await authHeader("signed-in") })).status).toBe(200);
  });

  it("logged no unhandled error, and sent a CI-sized number of requests", () => {
    const unhandled = capture.lines.filter((l) => l.level >= 50).map((l) => `${l.msg}: ${l.err?.message ?? ""}`);
    expect(unhandled, REPLAY).toEqual([]);
    expect(sweeper.sent()).toBeGreaterThan(fullSweep() ? 25_000 : 6_000);
    console.log(`malformed-transport sweep (${REPLAY}): ${sweeper.sent()} requests; ${swept.join(", ")}`);
  });
});
