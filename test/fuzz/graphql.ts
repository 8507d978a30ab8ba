import { readFileSync } from "node:fs";
import fc from "fast-check";
import {
  buildSchema,
  getNamedType,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  isLeafType,
  isObjectType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
} from "graphql";
import type { SchemaFuzzer } from "./json-schema.js";
import { FuzzRequest } from "./request.js";
import { Ref } from "./world.js";
import { anyJson, brokenJsonText, hostileNumber, hostileString, WRONG_CONTENT_TYPES } from "./values.js";

/** The checked-in SDL (emitted from the resolvers; a test keeps it current). */
export const SCHEMA = buildSchema(readFileSync(new URL("../../schema.graphql", import.meta.url), "utf8"));

type Field = GraphQLField<unknown, unknown>;
export interface GqlOp {
  kind: "query" | "mutation";
  field: Field;
}

/** Every query and mutation of the schema. */
export const gqlOperations = (): GqlOp[] => [
  ...Object.values(SCHEMA.getQueryType()!.getFields()).map((field) => ({ kind: "query" as const, field })),
  ...Object.values(SCHEMA.getMutationType()!.getFields()).map((field) => ({ kind: "mutation" as const, field })),
];

const JSON_TYPE = { "content-type": "application/json" };

/** A selection of the type's plain fields, and one level of its objects' (arguments left out). */
function selection(type: GraphQLOutputType, depth = 1): string {
  const named = getNamedType(type);
  if (isLeafType(named)) return "";
  if (!isObjectType(named)) return " { __typename }";
  const fields = Object.values(named.getFields()).filter((f) => !f.args.some((a) => a.type instanceof GraphQLNonNull));
  const parts = fields.flatMap((f) => {
    const inner = getNamedType(f.type);
    if (isLeafType(inner)) return [f.name];
    return depth > 0 ? [`${f.name}${selection(f.type, depth - 1)}`] : [];
  });
  return ` { __typename ${parts.join(" ")} }`;
}

/**
 * Values for a GraphQL input type: mostly what the schema accepts (ids of the world, plausible
 * strings), leaves sometimes hostile or of another type, required fields sometimes null or
 * missing, input objects sometimes with unknown fields.
 */
export class GqlInputs {
  constructor(private readonly fuzzer: SchemaFuzzer) {}

  value(type: GraphQLInputType, name: string, depth = 0): fc.Arbitrary<unknown> {
    if (type instanceof GraphQLNonNull) return fc.oneof({ arbitrary: this.value(type.ofType, name, depth), weight: 15 }, { arbitrary: fc.constant(null), weight: 1 });
    const wrong = fc.oneof(hostileString, hostileNumber, anyJson);
    return fc.oneof({ arbitrary: this.valid(type, name, depth), weight: 8 }, { arbitrary: wrong, weight: 1 });
  }

  private valid(type: GraphQLInputType, name: string, depth: number): fc.Arbitrary<unknown> {
    if (type instanceof GraphQLNonNull) return this.valid(type.ofType, name, depth);
    if (type instanceof GraphQLList) return fc.array(this.value(type.ofType, name, depth + 1), { maxLength: 3 });
    if (type instanceof GraphQLEnumType) return fc.constantFrom(...type.getValues().map((v) => v.name));
    if (type instanceof GraphQLInputObjectType) {
      if (depth > 3) return fc.constant({});
      const fields = Object.values(type.getFields());
      const parts = fields.map((f) => fc.option(this.value(f.type, f.name, depth + 1).map((v) => [f.name, v] as const), { freq: f.type instanceof GraphQLNonNull ? 15 : 1, nil: null }));
      const extra = fc.option(fc.tuple(fc.constantFrom("unknownField", "id", "isSuperadmin", "__proto__"), anyJson), { freq: 8, nil: null });
      return fc.tuple(fc.tuple(...parts), extra).map(([present, more]) => {
        const out: Record<string, unknown> = {};
        for (const e of present) if (e) out[e[0]] = e[1];
        if (more) Object.defineProperty(out, more[0], { value: more[1], enumerable: true, writable: true, configurable: true });
        return out;
      });
    }
    switch (getNamedType(type).name) {
      case "ID":
        return fc.oneof({ arbitrary: this.fuzzer.ref(name), weight: 4 }, { arbitrary: fc.uuid(), weight: 1 }, { arbitrary: hostileString, weight: 1 });
      case "Int":
        return fc.oneof(fc.integer({ min: -5, max: 300 }), fc.integer());
      case "Float":
        return fc.double({ noNaN: true, noDefaultInfinity: true });
      case "Boolean":
        return fc.boolean();
      case "DateTimeISO":
        return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      case "JSON":
        return anyJson;
      case "JSONObject":
        return fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 4 });
      default:
        return this.fuzzer.valid({ type: "string", maxLength: 255 }, name);
    }
  }
}

/** A GraphQL literal for a generated value (refs become a fixed id: literals are not resolved). */
function literal(v: unknown): string {
  if (v instanceof Ref) return JSON.stringify(`00000000-0000-4000-8000-${String(v.index).padStart(12, "0")}`);
  if (Array.isArray(v)) return `[${v.map(literal).join(", ")}]`;
  if (v && typeof v === "object") return `{${Object.entries(v).map(([k, x]) => `${k}: ${literal(x)}`).join(", ")}}`;
  if (typeof v === "number" && !Number.isFinite(v)) return "0";
  return v === undefined ? "null" : JSON.stringify(v);
}

/** Requests for one operation: variables (mostly), inline literals, broken documents and bodies. */
export function gqlRequest(inputs: GqlInputs, { kind, field }: GqlOp): fc.Arbitrary<FuzzRequest> {
  const op = `${kind} ${field.name}`;
  const args = field.args;
  const values = fc.tuple(...args.map((a) => fc.option(inputs.value(a.type, a.name), { freq: a.type instanceof GraphQLNonNull ? 15 : 2, nil: undefined })));
  const select = selection(field.type);
  const decl = args.length ? `(${args.map((a) => `$${a.name}: ${a.type.toString()}`).join(", ")})` : "";
  const call = args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(", ")})` : "";
  const document = `${kind} Fuzz${decl} { ${field.name}${call}${select} }`;
  const post = (json: unknown) => new FuzzRequest(op, "POST", ["/graphql"], JSON_TYPE, json);

  const withVariables = values.map((vs) => {
    const variables: Record<string, unknown> = {};
    for (const [i, v] of vs.entries()) if (v !== undefined) variables[args[i]!.name] = v;
    return post({ query: document, variables });
  });
  const inline = values.map((vs) => {
    const given = args.map((a, i) => [a.name, vs[i]] as const).filter(([, v]) => v !== undefined);
    const callArgs = given.length ? `(${given.map(([n, v]) => `${n}: ${literal(v)}`).join(", ")})` : "";
    return post({ query: `${kind} { ${field.name}${callArgs}${select} }` });
  });
  const broken = fc.oneof(
    fc.constant(post({ query: document })), // required variables missing
    fc.constant(post({ query: document.slice(0, -2) })),
    fc.constant(post({ query: `${kind} { ${field.name}${call}${select} nope }`, variables: {} })),
    fc.constant(post({ query: `${document} ${document.replace("Fuzz", "Other")}` })),
    fc.constant(post({ query: `${kind} A { __typename } ${kind} B { __typename }`, operationName: field.name })),
    anyJson.map((variables) => post({ query: document, variables })),
    anyJson.map((query) => post({ query })),
    fc.array(fc.constant({ query: `{ __typename }` }), { minLength: 2, maxLength: 3 }).map(post),
  );
  const transport = fc.oneof(
    brokenJsonText.map((raw) => new FuzzRequest(op, "POST", ["/graphql"], JSON_TYPE, undefined, raw)),
    fc.constantFrom(...WRONG_CONTENT_TYPES).map((type) => new FuzzRequest(op, "POST", ["/graphql"], { "content-type": type }, undefined, JSON.stringify({ query: document }))),
    fc.constant(new FuzzRequest(op, "GET", [`/graphql?query=${encodeURIComponent(document.slice(0, 2000))}`], { "apollo-require-preflight": "1", accept: "application/json" }, undefined)),
  );
  return fc.oneof({ arbitrary: withVariables, weight: 12 }, { arbitrary: inline, weight: 2 }, { arbitrary: broken, weight: 2 }, { arbitrary: transport, weight: 1 });
}

/** An operation's name in the run's statistics (and what FUZZ_ONLY matches): "mutation createOrganization". */
export const gqlOperationName = (o: GqlOp) => `${o.kind} ${o.field.name}`;

/** Any query or mutation of the schema (FUZZ_ONLY's, and `keep`'s when given), equally likely. */
export function gqlRequests(inputs: GqlInputs, keep: (name: string) => boolean = () => true): fc.Arbitrary<FuzzRequest> {
  const only = new RegExp(process.env.FUZZ_ONLY ?? "");
  return fc.oneof(...gqlOperations().filter((o) => only.test(gqlOperationName(o)) && keep(gqlOperationName(o))).map((o) => gqlRequest(inputs, o)));
}
