import fc from "fast-check";
import type { Ref, World } from "./world.js";
import { encodeSegment } from "./values.js";

/** A path or query part: literal text (already %-encoded) or a world id, encoded when sent. */
export type Part = string | Ref;

/** One fuzzed HTTP request, as generated: ids are references, resolved against the world when sent. */
export class FuzzRequest {
  constructor(
    /** The operation it targets (`POST /api/v1/ssh/keys`, `mutation createApiKey`), for the statistics. */
    readonly operation: string,
    readonly method: string,
    readonly path: Part[],
    readonly headers: Record<string, string>,
    /** A JSON value (may hold refs) sent as application/json unless `raw` is set. */
    readonly json: unknown,
    /** A literal body (malformed JSON, another media type). */
    readonly raw?: string,
  ) {}

  /** Whether it can change state when it succeeds (a REST write, a GraphQL mutation). */
  get mutates(): boolean {
    return this.operation.startsWith("mutation") || (!this.operation.startsWith("query") && this.method !== "GET");
  }

  /** Whether its success may take the world apart (delete, leave, revoke, suspend…): checked after. */
  get destructive(): boolean {
    return this.method === "DELETE" || /delete|remove|leave|transfer|suspend|revoke|logout|unlink|disable|password|superadmin|rotate|kill|decline|role/i.test(this.operation);
  }

  /** The request as it goes out. */
  materialize(world: World | null): { method: string; url: string; headers: Record<string, string>; body: string | undefined } {
    const url = this.path.map((p) => (typeof p === "string" ? p : world ? encodeSegment(world.id(p)) : p.toString())).join("");
    const body = this.raw ?? (this.json === undefined ? undefined : JSON.stringify(world ? world.resolve(this.json) : this.json));
    return { method: this.method, url, headers: this.headers, body };
  }

  toString() {
    const { method, url, headers, body } = this.materialize(null);
    const h = Object.keys(headers).length ? ` headers=${JSON.stringify(headers)}` : "";
    return `${method} ${truncate(url, 300)}${h}${body === undefined ? "" : ` body=${truncate(body, 300)}`}`;
  }

  [fc.toStringMethod]() {
    return this.toString();
  }
}

export const truncate = (s: string, n = 600) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);

/** Authorization headers an anonymous caller might send: none mostly, else ones that prove nothing. */
export const anonymousAuth: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { arbitrary: fc.constant({}), weight: 8 },
  {
    arbitrary: fc
      .constantFrom("Bearer ", "Bearer kws_", "Bearer kws_0000000000000000000000000000000000000000000", "Bearer kwk_fake", "Basic Zm9vOmJhcg==", "Bearer " + "a".repeat(5000), "bearer x y", "Token x", "Bearer eyJhbGciOiJub25lIn0.e30.")
      .map((authorization) => ({ authorization })),
    weight: 1,
  },
  { arbitrary: fc.constant({ cookie: "keyward.sid=s%3Afake.sig; keyward.oauth=%E0%A4%A" }), weight: 1 },
);

/** The same request with more headers (an anonymous caller's bogus credentials). */
export const withHeaders = (req: FuzzRequest, headers: Record<string, string>) =>
  new FuzzRequest(req.operation, req.method, req.path, { ...req.headers, ...headers }, req.json, req.raw);
