import { gzipSync } from "node:zlib";
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  getNamedType,
  isObjectType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLScalarType,
} from "graphql";
import { z } from "zod";
import type { RouteDef } from "../../rest-shim/route.js";

/**
 * Malformed-transport probes and the error contracts they are checked against (used by
 * test/integration/security/malformed-transport.test.ts, generated from the route table).
 */
export type Caller = "anonymous" | "signed-in";
export const CALLERS: Caller[] = ["anonymous", "signed-in"];

export interface Probe {
  label: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** What this malformation must be answered with, when the answer does not depend on the route. */
  expect?: { status: number; code: string };
  /** The malformation without the route or operation it is sent to: what a sampled sweep keeps covered. */
  kind?: string;
}

export interface Answer {
  status: number;
  body: any;
  text: string;
}

export type Check = (probe: Probe, answer: Answer) => string | null;

/**
 * Sends every probe as every caller, a few at a time (the server runs in the test's process; more
 * would only queue), and returns one line per answer that breaks the contract.
 */
export function createSweeper(baseUrl: string, authHeader: (caller: Caller, probe: Probe) => Promise<Record<string, string>>) {
  let sent = 0;
  async function send(probe: Probe, caller: Caller): Promise<Answer> {
    sent += 1;
    const res = await fetch(baseUrl + probe.path, {
      method: probe.method,
      headers: { ...(probe.headers ?? {}), ...(await authHeader(caller, probe)) },
      body: typeof probe.body === "string" || probe.body === undefined ? probe.body : new Uint8Array(probe.body),
      redirect: "manual",
    });
    const text = await res.text();
    let body: any = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body, text };
  }
  async function sweep(probes: Probe[], check: Check): Promise<string[]> {
    const jobs = probes.flatMap((p) => CALLERS.map((c) => [p, c] as const));
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const [probe, caller] = jobs[next++]!;
        const answer = await send(probe, caller);
        const problem = check(probe, answer);
        if (problem) failures.push(`${caller} ${probe.method} ${probe.path.slice(0, 120)} [${probe.label}] → ${answer.status} ${problem}: ${answer.text.slice(0, 160)}`);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    return failures;
  }
  return { sweep, sent: () => sent };
}

export const JSON_TYPE = { "content-type": "application/json" };
/** `{"a":{"a":…1…}}`, `levels` objects deep. */
export const nest = (levels: number, leaf = "1") => '{"a":'.repeat(levels) + leaf + "}".repeat(levels);

// ---------------------------------------------------------------------------------------------
// REST

export const RANDOM_ID = "00000000-0000-4000-8000-000000000000";
const SAMPLE_PARAM: Record<string, string> = { provider: "github", method: "totp" };
export const paramsOf = (path: string) => [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!);

/** A route's URL: the caller's organization for :orgId, a sample for the others unless overridden. */
export const fill = (path: string, orgId: string, override: Record<string, string> = {}) =>
  "/api/v1" + path.replace(/:(\w+)/g, (_, n: string) => override[n] ?? (n === "orgId" ? orgId : (SAMPLE_PARAM[n] ?? RANDOM_ID)));

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The top-level fields of a route's zod schema, in the API's snake_case, with their JSON types. */
export function fieldsOf(schema: z.ZodType | undefined): Array<[string, string]> {
  if (!schema) return [];
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as { properties?: object; anyOf?: any[]; allOf?: any[] };
  const props = (json.properties ?? json.allOf?.[0]?.properties ?? json.anyOf?.[0]?.properties ?? {}) as Record<string, any>;
  return Object.entries(props).map(([k, v]) => [snake(k), String(v.type ?? v.anyOf?.[0]?.type ?? "any")]);
}

const BAD_ESCAPES = ["%E0%A4%A", "%ZZ", "id%"];
const HUGE_NUMBERS = ["1e30", "-1", "99999999999999999999", "NaN", "Infinity", "0x7fffffffffffffff"];
/** Activity cursors that decode but do not fit the database (year 275760, year 0, an id of dashes), and junk. */
export const BAD_CURSORS = ["+275760-09-13T00:00:00.000Z|00000000-0000-4000-8000-000000000000", "0000-01-01T00:00:00.000Z|00000000-0000-4000-8000-000000000000", "2024-01-01T00:00:00.000Z|------------------------------------"]
  .map((c) => Buffer.from(c).toString("base64url"))
  .concat(["!!!", "%E0%A4%A", "x".repeat(3000)]);

/** Every transport-level malformation for one REST route. */
export function restProbes(route: RouteDef, orgId: string): Probe[] {
  const method = route.method.toUpperCase();
  const withBody = method !== "GET";
  const empty = withBody ? { headers: JSON_TYPE, body: "{}" } : {};
  const probes: Probe[] = [];
  const base = fill(route.path, orgId);

  for (const p of paramsOf(route.path)) {
    for (const bad of BAD_ESCAPES) probes.push({ label: `bad escape in :${p}`, kind: `bad escape ${bad} in a path parameter`, method, path: fill(route.path, orgId, { [p]: bad }), ...empty, expect: { status: 400, code: "INVALID_PATH_ENCODING" } });
    probes.push({ label: `huge number in :${p}`, kind: "huge number in a path parameter", method, path: fill(route.path, orgId, { [p]: "99999999999999999999" }), ...empty });
    probes.push({ label: `overlong :${p}`, kind: "overlong path parameter", method, path: fill(route.path, orgId, { [p]: "x".repeat(4000) }), ...empty });
  }

  for (const [name, type] of fieldsOf(route.query)) {
    const family = type === "number" || type === "integer" ? "number" : name === "cursor" ? "cursor" : "string";
    const values = family === "number" ? HUGE_NUMBERS : family === "cursor" ? BAD_CURSORS : ["%E0%A4%A", "x".repeat(3000)];
    for (const [i, v] of values.entries()) probes.push({ label: `?${name}=${v.slice(0, 16)}`, kind: `${family} query parameter: value ${i}`, method, path: `${base}?${name}=${v.startsWith("%") ? v : encodeURIComponent(v)}`, ...empty });
  }
  probes.push({ label: "out-of-range paging", kind: "out-of-range paging", method, path: `${base}?page=1e30&per_page=-1&limit=1e30&cursor=!!!&x[y]=1&%E0%A4%A=1`, ...empty });
  if (!withBody) return probes;

  const body = (label: string, payload: string | Buffer, headers: Record<string, string>, expected?: Probe["expect"], kind = label) =>
    probes.push({ label, kind, method, path: base, headers, body: payload, ...(expected ? { expect: expected } : {}) });
  const undecodable = { status: 400, code: "INVALID_BODY_ENCODING" };
  for (const encoding of ["gzip", "deflate", "br"]) body(`${encoding} header on a plain body`, '{"a":1}', { ...JSON_TYPE, "content-encoding": encoding }, undecodable);
  body("truncated gzip", gzipSync('{"email":"a@example.com","password":"a long passphrase"}').subarray(0, 20), { ...JSON_TYPE, "content-encoding": "gzip" }, undecodable);
  body("unknown encoding", "{}", { ...JSON_TYPE, "content-encoding": "compress" }, { status: 415, code: "UNSUPPORTED_ENCODING" });
  const tooDeep = { status: 400, code: "JSON_TOO_DEEP" };
  body("33 levels", nest(33), JSON_TYPE, tooDeep);
  body("2,000 levels", nest(2000), JSON_TYPE, tooDeep);
  body("40,000 nested arrays", "[".repeat(40_000) + "]".repeat(40_000), JSON_TYPE, tooDeep);
  body("32 levels (the limit)", nest(32), JSON_TYPE);
  for (const bad of ["{", '{"a":}', '{"a":1}x', "\u0000"]) body(`bad JSON ${JSON.stringify(bad)}`, bad, JSON_TYPE, { status: 400, code: "INVALID_JSON" });
  body("latin1 JSON", "{}", { "content-type": "application/json; charset=latin1" }, { status: 415, code: "UNSUPPORTED_CHARSET" });
  body("text/plain", '{"a":1}', { "content-type": "text/plain" });
  body("form", "a=1&b=%E0%A4%A", { "content-type": "application/x-www-form-urlencoded" });
  body("multipart", "--x\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n--x--", { "content-type": "multipart/form-data; boundary=x" });
  body("xml", "<a/>", { "content-type": "application/xml" });
  for (const [name, type] of fieldsOf(route.body)) {
    if (type === "number" || type === "integer") {
      for (const v of ["1e308", "-1", "99999999999999999999", '"99999999999999999999"', "1.5"]) body(`${name}: ${v}`, `{"${name}":${v}}`, JSON_TYPE, undefined, `number field: ${v}`);
    } else {
      body(`overlong ${name}`, JSON.stringify({ [name]: "x".repeat(60_000) }), JSON_TYPE, undefined, "overlong string field");
    }
  }
  return probes;
}

/** The REST error contract: never 5xx, every error is the envelope with an UPPER_SNAKE type. */
export const restProblem: Check = (probe, { status, body }) => {
  if (status >= 500) return "5xx";
  if (probe.expect && (status !== probe.expect.status || body?.error?.type !== probe.expect.code)) return `expected ${probe.expect.status} ${probe.expect.code}`;
  if (status < 400) return null;
  const envelope = body?.version === "1.0" && body.success === false && body.code === status && typeof body.request_id === "string" && /^[A-Z][A-Z0-9_]*$/.test(body.error?.type ?? "");
  return envelope ? null : "not an error envelope";
};

/** The GraphQL error contract: never 5xx, every error coded with extensions.code and extensions.status. */
export const gqlProblem: Check = (probe, { status, body }) => {
  if (status >= 500) return "5xx";
  if (!body || typeof body !== "object" || Array.isArray(body)) return "not a GraphQL response";
  for (const e of body.errors ?? []) {
    const ext = e?.extensions ?? {};
    if (typeof ext.code !== "string" || typeof ext.status !== "number") return "error without extensions.code and extensions.status";
    if (ext.code === "INTERNAL_ERROR" || ext.status >= 500) return "internal error";
  }
  if (probe.expect) {
    const first = body.errors?.[0]?.extensions;
    if (first?.code !== probe.expect.code || first?.status !== probe.expect.status) return `expected ${probe.expect.status} ${probe.expect.code}`;
  }
  return null;
};

// ---------------------------------------------------------------------------------------------
// GraphQL

type Field = GraphQLField<unknown, unknown>;

export const gqlProbe = (label: string, query: string, variables: Record<string, unknown> | undefined, expected?: Probe["expect"], kind?: string): Probe => ({
  label,
  ...(kind ? { kind } : {}),
  method: "POST",
  path: "/graphql",
  headers: JSON_TYPE,
  body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
  ...(expected ? { expect: expected } : {}),
});

export const isJson = (t: GraphQLInputType) => ["JSON", "JSONObject"].includes(getNamedType(t).name);

/** A value GraphQL accepts for an input type (required fields only). */
export function sample(type: GraphQLInputType, name: string, orgId: string): unknown {
  if (type instanceof GraphQLNonNull) return sample(type.ofType, name, orgId);
  if (type instanceof GraphQLList) return [sample(type.ofType, name, orgId)];
  if (type instanceof GraphQLEnumType) return type.getValues()[0]!.value;
  if (type instanceof GraphQLInputObjectType) {
    return Object.fromEntries(Object.values(type.getFields()).filter((f) => f.type instanceof GraphQLNonNull).map((f) => [f.name, sample(f.type, f.name, orgId)]));
  }
  const scalar = type as GraphQLScalarType;
  if (scalar.name === "ID") return name === "orgId" ? orgId : RANDOM_ID;
  if (scalar.name === "Int" || scalar.name === "Float") return 1;
  if (scalar.name === "Boolean") return true;
  if (scalar.name === "DateTimeISO") return "2030-01-01T00:00:00.000Z";
  if (isJson(scalar)) return {};
  return name.toLowerCase().includes("email") ? "someone@example.com" : "sample";
}

/** Values of the wrong type (or out of range) for an input type: each must be refused before any resolver runs. */
export function wrong(type: GraphQLInputType, orgId: string): unknown[] {
  if (type instanceof GraphQLNonNull) return [null, ...wrong(type.ofType, orgId)];
  if (type instanceof GraphQLList) return wrong(type.ofType, orgId).filter((v) => v !== null).slice(0, 1).map((v) => [v]);
  if (type instanceof GraphQLEnumType) return ["NOT_A_MEMBER"];
  if (type instanceof GraphQLInputObjectType) {
    const inner = Object.values(type.getFields()).find((f) => wrong(f.type, orgId).some((v) => v !== null));
    const base = sample(type, type.name, orgId) as Record<string, unknown>;
    return ["a string", { ...base, notAField: 1 }, ...(inner ? [{ ...base, [inner.name]: wrong(inner.type, orgId).find((v) => v !== null) }] : [])];
  }
  switch ((type as GraphQLScalarType).name) {
    case "Int":
      return ["12abc", 1e30, 1.5];
    case "Float":
      return ["abc"];
    case "Boolean":
      return ["yes"];
    case "String":
    case "ID":
      return [{ nested: { a: 1 } }];
    case "DateTimeISO":
      return ["not-a-date"];
    case "JSONObject":
      return [[1, 2], "a string"];
    default:
      return []; // JSON: every JSON value is a JSON value; depth is what is swept for it.
  }
}

/** An operation calling `field` with every argument as a variable, except those written inline. */
export function operation(kind: string, field: Field, inline: Record<string, string> = {}): string {
  const vars = field.args.filter((a) => !(a.name in inline));
  const decl = vars.map((a) => `$${a.name}: ${a.type.toString()}`).join(", ");
  const args = field.args.map((a) => `${a.name}: ${inline[a.name] ?? `$${a.name}`}`).join(", ");
  const selection = isObjectType(getNamedType(field.type)) ? " { __typename }" : "";
  return `${kind}${decl ? `(${decl})` : ""} { ${field.name}${args ? `(${args})` : ""}${selection} }`;
}

export const validVariables = (field: Field, orgId: string) =>
  Object.fromEntries(field.args.filter((a) => a.type instanceof GraphQLNonNull).map((a) => [a.name, sample(a.type, a.name, orgId)]));

/** An input type as a kind of probe target: "[Int!]!", "enum", "input object?" (its name is the operation's own). */
function typeKind(type: GraphQLInputType): string {
  if (type instanceof GraphQLNonNull) return `${typeKind(type.ofType)}!`;
  if (type instanceof GraphQLList) return `[${typeKind(type.ofType)}]`;
  if (type instanceof GraphQLEnumType) return "enum";
  if (type instanceof GraphQLInputObjectType) return "input object";
  return type.name;
}

/** Missing, wrong-typed, out-of-range and too-deep inputs for one query or mutation. */
export function gqlProbes(kind: string, field: Field, orgId: string): Probe[] {
  const probes: Probe[] = [];
  const query = operation(kind, field);
  const valid = validVariables(field, orgId);
  const badInput = { status: 400, code: "BAD_USER_INPUT" };
  // Without its variables (a valid call when nothing is required: that is not malformed, so not sent).
  if (field.args.some((a) => a.type instanceof GraphQLNonNull)) {
    probes.push(gqlProbe(`${field.name} without variables`, query, undefined, badInput, "without variables"));
    probes.push(gqlProbe(`${field.name} with empty variables`, query, {}, badInput, "with empty variables"));
  }
  for (const arg of field.args) {
    for (const [i, value] of wrong(arg.type, orgId).entries()) {
      probes.push(gqlProbe(`${field.name}(${arg.name}: ${JSON.stringify(value)?.slice(0, 40)})`, query, { ...valid, [arg.name]: value }, badInput, `wrong ${typeKind(arg.type)}: value ${i}`));
    }
    if (getNamedType(arg.type).name === "Int") {
      const huge = operation(kind, field, { [arg.name]: "99999999999999999999" });
      probes.push(gqlProbe(`${field.name}(${arg.name}: huge Int literal)`, huge, valid, { status: 400, code: "GRAPHQL_VALIDATION_FAILED" }, "huge Int literal"));
    }
    if (isJson(arg.type)) {
      probes.push(gqlProbe(`${field.name}(${arg.name}: 40 levels)`, query, { ...valid, [arg.name]: JSON.parse(nest(40)) }, { status: 400, code: "JSON_TOO_DEEP" }, "JSON 40 levels"));
      probes.push(gqlProbe(`${field.name}(${arg.name}: 20 levels)`, query, { ...valid, [arg.name]: JSON.parse(nest(20)) }, undefined, "JSON 20 levels"));
      const literal = operation(kind, field, { [arg.name]: "{a:".repeat(40) + "1" + "}".repeat(40) });
      probes.push(gqlProbe(`${field.name}(${arg.name}: 40-level literal)`, literal, valid, { status: 400, code: "GRAPHQL_VALIDATION_FAILED" }, "JSON 40-level literal"));
    }
  }
  return probes;
}

// ---------------------------------------------------------------------------------------------
// The sweep's sample

/**
 * MALFORMED_SWEEP=full sweeps every route and operation (about 29,000 requests); otherwise the sweep
 * takes a sample (sampleSweep), which `npm test` and CI run.
 */
export const fullSweep = () => process.env.MALFORMED_SWEEP === "full";

/** The sample's seed: FUZZ_SEED replays a sample; without it each run draws one (the test prints it). */
export const sweepSeed = () => (process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31));

/** One route or operation in SWEEP_STRIDE of each family per run: three seeds in a row cover them all. */
export const SWEEP_STRIDE = 3;

const hash = (text: string) => {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
};
const mod = (a: number, n: number) => ((a % n) + n) % n;

/**
 * A seeded rotation through each family (a REST tag, a GraphQL resolver): its members in a fixed
 * order, every SWEEP_STRIDE-th from the seed's offset, at least one; then, for each kind of probe
 * the whole set would send that the sample does not, one member that sends it. So every family
 * and every kind of malformation is swept on every run, and the routes and operations rotate
 * from run to run. The input's order is kept (routes that may delete the sweep's organization
 * run last).
 */
export function sampleSweep<T>(items: readonly T[], seed: number, by: { key(item: T): string; family(item: T): string; kinds(item: T): string[] }): T[] {
  if (fullSweep()) return [...items];
  const chosen = new Set<T>();
  const families = new Map<string, T[]>();
  for (const item of items) families.set(by.family(item), [...(families.get(by.family(item)) ?? []), item]);
  for (const [name, members] of families) {
    const ordered = [...members].sort((a, b) => by.key(a).localeCompare(by.key(b)));
    const turn = mod(seed + hash(name), SWEEP_STRIDE);
    ordered.forEach((item, i) => i % SWEEP_STRIDE === turn && chosen.add(item));
    if (!ordered.some((item) => chosen.has(item))) chosen.add(ordered[mod(seed + hash(name), ordered.length)]!);
  }
  const covered = new Set([...chosen].flatMap((item) => by.kinds(item)));
  const shuffled = [...items].sort((a, b) => (hash(by.key(a)) ^ seed) - (hash(by.key(b)) ^ seed) || by.key(a).localeCompare(by.key(b)));
  for (const item of shuffled) {
    const kinds = by.kinds(item);
    if (kinds.every((k) => covered.has(k))) continue;
    chosen.add(item);
    for (const k of kinds) covered.add(k);
  }
  return items.filter((item) => chosen.has(item));
}
