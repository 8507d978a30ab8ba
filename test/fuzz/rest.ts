import { readFileSync } from "node:fs";
import fc from "fast-check";
import { SchemaFuzzer, type Schema } from "./json-schema.js";
import { FuzzRequest, type Part } from "./request.js";
import { Ref } from "./world.js";
import { anyJson, brokenJsonText, encodeSegment, hostileSegment, WRONG_CONTENT_TYPES } from "./values.js";

/** The checked-in OpenAPI document (generated from the route table; a test keeps it current). */
export const OPENAPI = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8")) as {
  paths: Record<string, Record<string, RestOperation>>;
  components: { schemas: Record<string, unknown> };
};

interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema: Schema;
}
interface RestOperation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}

export interface RestOp {
  method: string;
  path: string;
  op: RestOperation;
}

const METHODS = ["get", "post", "put", "patch", "delete"];

/** Every operation of the document: 210 or so, the health endpoints included. */
export const restOperations = (): RestOp[] =>
  Object.entries(OPENAPI.paths).flatMap(([path, ops]) => Object.entries(ops).filter(([m]) => METHODS.includes(m)).map(([method, op]) => ({ method, path, op })));

const JSON_TYPE = { "content-type": "application/json" };

/**
 * Requests for one operation: path parameters that name a real resource of the world, a malformed
 * id or a hostile segment; query parameters and bodies from the operation's own schemas, fuzzed;
 * sometimes a body that is not JSON, not an object, or sent as another media type.
 */
export function restRequest(fuzzer: SchemaFuzzer, { method, path, op }: RestOp): fc.Arbitrary<FuzzRequest> {
  const params = op.parameters ?? [];
  const segments = path.split(/(\{\w+\})/).filter(Boolean);
  const pathArb: fc.Arbitrary<Part[]> = fc.tuple(
    ...segments.map((s): fc.Arbitrary<Part> => {
      const name = /^\{(\w+)\}$/.exec(s)?.[1];
      if (!name) return fc.constant(s);
      return fc.oneof({ arbitrary: fc.nat(7).map((i) => new Ref(name, i)), weight: 6 }, { arbitrary: hostileSegment, weight: 3 }, { arbitrary: fc.uuid(), weight: 1 });
    }),
  );
  const query = params.filter((p) => p.in === "query");
  const queryArb = fc.tuple(
    ...query.map((p) => fc.option(fuzzer.fuzzed(p.schema, p.name).map((v) => queryPairs(p.name, v)), { freq: p.required ? 12 : 2, nil: [] as Part[][] })),
    fc.option(fc.array(fc.tuple(fc.constantFrom("x", "page", "per_page", "q", "__proto__", "x[y]", "%E0%A4%A", "a%00"), hostileSegment), { maxLength: 2 }), { freq: 5, nil: [] }),
  );
  const variant = fc.constantFrom("as-is", "as-is", "as-is", "as-is", "as-is", "as-is", "trailing-slash", "upper-case", "unknown-suffix", "other-method");
  const base = fc.tuple(pathArb, queryArb).map(([parts, [...q]]) => {
    const extra = q.pop() as unknown as Array<[string, string]>;
    const pairs: Part[][] = [...(q as Part[][][]).flat(), ...extra.map(([k, v]): Part[] => [k.includes("%") ? k : encodeSegment(k), "=", v])];
    return { parts, pairs };
  });
  const withBody = method !== "get";
  const schema = op.requestBody?.content["application/json"]?.schema;
  const bodyArb: fc.Arbitrary<{ headers: Record<string, string>; json?: unknown; raw?: string }> = !withBody
    ? fc.constant({ headers: {} })
    : fc.oneof(
        { arbitrary: (schema ? fuzzer.object(schema) : fc.constant({})).map((json) => ({ headers: JSON_TYPE, json })), weight: schema ? 12 : 4 },
        { arbitrary: anyJson.map((json) => ({ headers: JSON_TYPE, json })), weight: 1 },
        { arbitrary: brokenJsonText.map((raw) => ({ headers: JSON_TYPE, raw })), weight: 1 },
        {
          arbitrary: fc.tuple(fc.constantFrom(...WRONG_CONTENT_TYPES), schema ? fuzzer.object(schema) : fc.constant({})).map(([type, json]) => ({ headers: { "content-type": type }, raw: JSON.stringify(json) })),
          weight: 1,
        },
        { arbitrary: fc.constant({ headers: {} }), weight: schema ? 1 : 4 },
      );
  return fc.tuple(base, variant, bodyArb).map(([{ parts, pairs }, how, body]) => {
    let url: Part[] = [...parts];
    let verb = method.toUpperCase();
    if (how === "trailing-slash") url.push("/");
    if (how === "upper-case") url = url.map((p) => (typeof p === "string" ? p.toUpperCase() : p));
    if (how === "unknown-suffix") url.push("/nope");
    if (how === "other-method") verb = METHODS.find((m) => m !== method && !OPENAPI.paths[path]![m])?.toUpperCase() ?? verb;
    if (pairs.length) url.push("?", ...pairs.flatMap((pair, i) => (i ? ["&", ...pair] : pair)));
    // Node's HTTP parser answers a request head past 16 KiB with a bare 431 before the app sees it.
    url = url.map((p) => (typeof p === "string" && p.length > 3000 ? p.slice(0, 3000).replace(/%[0-9A-F]?$/i, "") : p));
    // GET carries no body (fetch refuses one): a fuzzed GET only varies its path and query.
    const sendsBody = verb !== "GET" && verb !== "HEAD";
    return new FuzzRequest(`${method.toUpperCase()} ${path}`, verb, url, sendsBody ? body.headers : {}, sendsBody ? body.json : undefined, sendsBody ? body.raw : undefined);
  });
}

/** `name=value` pairs for a query value: arrays repeat the name, objects use brackets, strings are %-encoded. */
function queryPairs(name: string, value: unknown): Part[][] {
  if (Array.isArray(value)) return value.slice(0, 3).flatMap((v) => queryPairs(name, v));
  if (value instanceof Ref) return [[name, "=", value]];
  if (value && typeof value === "object") return Object.entries(value).slice(0, 2).map(([k, v]) => [`${name}%5B${encodeSegment(k)}%5D=`, encodeSegment(String(v))]);
  return [[name, "=", encodeSegment(String(value))]];
}

/** An operation's name in the run's statistics (and what FUZZ_ONLY matches): "POST /api/v1/…". */
export const restOperationName = (o: RestOp) => `${o.method.toUpperCase()} ${o.path}`;

/** Any operation of the document (FUZZ_ONLY's, and `keep`'s when given), equally likely. */
export function restRequests(fuzzer: SchemaFuzzer, keep: (name: string) => boolean = () => true): fc.Arbitrary<FuzzRequest> {
  const only = new RegExp(process.env.FUZZ_ONLY ?? "");
  return fc.oneof(...restOperations().filter((o) => only.test(restOperationName(o)) && keep(restOperationName(o))).map((o) => restRequest(fuzzer, o)));
}
