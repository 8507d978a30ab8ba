import fc from "fast-check";
import { Ref } from "./world.js";
import { anyJson, hostileNumber, hostileString } from "./values.js";

/** The part of JSON Schema (OpenAPI 3.1, as zod emits it) the request bodies and parameters use. */
export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  additionalProperties?: Schema | boolean;
}

/** Keys a careless service might trust if a body carried them. */
const SMUGGLED_KEYS = ["id", "user_id", "organization_id", "role", "is_superadmin", "isSuperadmin", "status", "email_verified", "deleted_at", "created_at", "__proto__", "constructor", "unknown_field"];

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camel = (k: string) => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * Generates request values from a schema: mostly values the schema accepts (so that requests get
 * past validation into the service), each field sometimes replaced by a hostile value of the same
 * kind or by a value of another kind, required fields sometimes missing, unknown fields sometimes
 * added. `field` names the value (an id field draws from the world's ids of that kind).
 */
export class SchemaFuzzer {
  constructor(private readonly idKinds: readonly string[]) {}

  fuzzed(schema: Schema, field = ""): fc.Arbitrary<unknown> {
    return fc.oneof({ arbitrary: this.valid(schema, field, true), weight: 6 }, { arbitrary: this.sameKind(schema), weight: 2 }, { arbitrary: anyJson, weight: 1 });
  }

  /** A value the schema accepts, as far as a generator can tell; with `nested`, its parts are fuzzed. */
  valid(schema: Schema, field = "", nested = false): fc.Arbitrary<unknown> {
    if (schema.allOf) return this.valid(Object.assign({}, ...schema.allOf.map((s) => s), { ...schema, allOf: undefined }), field, nested);
    const alternatives = schema.anyOf ?? schema.oneOf;
    if (alternatives) return fc.oneof(...alternatives.map((s) => this.valid(s, field, nested)));
    if ("const" in schema) return fc.constant(schema.const);
    if (schema.enum) return fc.constantFrom(...schema.enum);
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    switch (type) {
      case "string":
        return this.string(schema, field);
      case "integer":
      case "number":
        return this.number(schema, type === "integer");
      case "boolean":
        return fc.boolean();
      case "null":
        return fc.constant(null);
      case "array": {
        const item = schema.items ? (nested ? this.fuzzed(schema.items, field) : this.valid(schema.items, field)) : anyJson;
        const minLength = schema.minItems ?? 0;
        return fc.array(item, { minLength, maxLength: Math.max(minLength, Math.min(schema.maxItems ?? 4, 4)) });
      }
      case "object":
        return this.object(schema, nested);
      default:
        return anyJson;
    }
  }

  /** A body or query object: each property valid, fuzzed or absent; sometimes extra keys. */
  object(schema: Schema, nested = true): fc.Arbitrary<Record<string, unknown>> {
    const required = new Set(schema.required ?? []);
    const props = Object.entries(schema.properties ?? {});
    const parts = props.map(([key, s]) => {
      const value = nested ? this.fuzzed(s, key) : this.valid(s, key);
      // Required fields are mostly there (the request then reaches the service); optional ones half the time.
      const freq = required.has(key) ? 12 : 1;
      return fc.option(value.map((v) => [key, v] as const), { freq, nil: null });
    });
    const extraKeys = [...SMUGGLED_KEYS, ...props.map(([k]) => camel(k)).filter((k) => !props.some(([p]) => p === k))];
    const extras = fc.option(fc.array(fc.tuple(fc.constantFrom(...extraKeys), anyJson), { minLength: 1, maxLength: 2 }), { freq: 4, nil: [] });
    const open = schema.additionalProperties && typeof schema.additionalProperties === "object" ? fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 }) : fc.constant({});
    return fc.tuple(fc.tuple(...parts), extras, open).map(([present, extra, more]) => {
      const out: Record<string, unknown> = { ...more };
      for (const entry of present) if (entry) out[entry[0]] = entry[1];
      // defineProperty: a "__proto__" key must be an own key in the JSON, not a prototype change here.
      for (const [k, v] of extra) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      return out;
    });
  }

  /** A value of the schema's own kind that it (most likely) refuses: too long, out of range, malformed. */
  private sameKind(schema: Schema): fc.Arbitrary<unknown> {
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    if (type === "integer" || type === "number") return fc.oneof(hostileNumber, hostileString.filter((s) => s.length < 64));
    if (type === "boolean") return fc.constantFrom("true", 1, 0, "yes", null);
    if (type === "array") return fc.oneof(fc.constant([]), fc.array(anyJson, { minLength: 1, maxLength: 3 }), fc.constant(Array.from({ length: 300 }, (_, i) => String(i))));
    if (type === "object") return fc.oneof(fc.constant({}), fc.constant([]), fc.dictionary(hostileString, anyJson, { maxKeys: 3 }));
    return hostileString;
  }

  private string(schema: Schema, field: string): fc.Arbitrary<unknown> {
    const min = schema.minLength ?? 0;
    const max = schema.maxLength ?? 200;
    if (schema.format === "uuid" || /(^|_)id$/.test(snake(field)) || /_ids$/.test(snake(field))) {
      return fc.oneof({ arbitrary: this.ref(field), weight: 3 }, { arbitrary: fc.uuid(), weight: 1 });
    }
    if (schema.format === "email" || /email/.test(field)) {
      return fc.oneof(fc.nat(10_000).map((n) => `fuzz.${n}@example.com`), fc.emailAddress().filter((e) => e.length <= max));
    }
    if (schema.format === "uri" || /ur[il]s?$/.test(field)) return fc.oneof(fc.constantFrom("http://127.0.0.1:47999/cb", "https://rp.example.com/callback", "/account", "//evil.example"), fc.webUrl());
    if (schema.format === "date-time") return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
    if (schema.pattern) {
      const matching = stringMatching(schema.pattern);
      if (matching) return matching.filter((s) => s.length >= min && s.length <= max);
    }
    const bounded = fc.string({ unit: "grapheme", minLength: Math.min(min, 40), maxLength: Math.max(Math.min(max, 40), Math.min(min, 40)) });
    const edges = fc.constantFrom(...new Set([min, Math.max(min, 1), max].filter((n) => n <= 100_000))).map((n) => "a".repeat(n));
    return fc.oneof({ arbitrary: bounded, weight: 4 }, { arbitrary: edges, weight: 1 });
  }

  private number(schema: Schema, integer: boolean): fc.Arbitrary<number> {
    const lo = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -1_000_000);
    const hi = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : 1_000_000);
    const min = Math.max(lo, -(2 ** 31));
    const max = Math.max(min, Math.min(hi, 2 ** 31 - 1));
    const inRange = integer ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true });
    return fc.oneof({ arbitrary: inRange, weight: 3 }, { arbitrary: fc.constantFrom(min, max).map((n) => (integer ? Math.round(n) : n)), weight: 1 });
  }

  /** An id of the kind the field names (`user_id` → a user of the world), resolved when sent. */
  ref(field: string): fc.Arbitrary<Ref> {
    const name = snake(field).replace(/s$/, "");
    const kind = this.idKinds.find((k) => name.endsWith(snake(k))) ?? "any";
    return fc.nat(7).map((i) => new Ref(kind, i));
  }
}

const matchers = new Map<string, fc.Arbitrary<string> | null>();
function stringMatching(pattern: string): fc.Arbitrary<string> | null {
  if (!matchers.has(pattern)) {
    let arb: fc.Arbitrary<string> | null = null;
    try {
      arb = fc.stringMatching(new RegExp(pattern));
      fc.sample(arb, 1);
    } catch {
      arb = null; // a construct fast-check does not generate from (lookahead): fall back to plain strings
    }
    matchers.set(pattern, arb);
  }
  return matchers.get(pattern)!;
}
