import { z } from "zod";
import { camelToSnake } from "../src/lib/strings.js";
import type { RouteDef } from "./route.js";
import { API_KEY_SCOPES } from "../src/lib/api-key-scopes.js";
import { API_SCOPES } from "../src/lib/api-scopes.js";
import { viewRegistry } from "./views/same-shape.js";

type JsonSchema = Record<string, unknown>;

/** Service schemas are written in camelCase; REST clients send and read snake_case. */
function snakeSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(snakeSchema);
  if (!schema || typeof schema !== "object") return schema;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "properties" && v && typeof v === "object") {
      out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [camelToSnake(p), snakeSchema(s)]));
    } else if (k === "required" && Array.isArray(v)) {
      out[k] = v.map((p) => camelToSnake(String(p)));
    } else if (k !== "$schema") {
      out[k] = snakeSchema(v);
    }
  }
  return out;
}

/**
 * JSON Schema of a zod schema as it travels: requests as the service parses them (`input`), views
 * as the service returns them (`output`), with Dates as the ISO strings JSON carries.
 */
export function wireSchema(schema: z.ZodType, io: "input" | "output", metadata?: typeof viewRegistry): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    ...(metadata ? { metadata } : {}),
    override: (ctx) => {
      if (ctx.zodSchema._zod.def.type === "date") Object.assign(ctx.jsonSchema, { type: "string", format: "date-time" });
      // An instant accepted as a Date (from GraphQL) or as ISO text (timeRange): on the wire, one date-time.
      const anyOf = ctx.jsonSchema.anyOf as JsonSchema[] | undefined;
      if (anyOf?.length && anyOf.every((s) => s.format === "date-time")) {
        delete ctx.jsonSchema.anyOf;
        Object.assign(ctx.jsonSchema, { type: "string", format: "date-time" });
      }
    },
  });
  return snakeSchema(json) as JsonSchema;
}

const errorEnvelope = {
  type: "object",
  required: ["version", "success", "code", "message", "request_id", "error"],
  properties: {
    version: { type: "string", const: "1.0" },
    success: { type: "boolean", const: false },
    code: { type: "integer", description: "The HTTP status" },
    message: { type: "string" },
    request_id: { type: "string" },
    error: {
      type: "object",
      required: ["type", "details"],
      properties: { type: { type: "string", description: "UPPER_SNAKE error code", pattern: "^[A-Z][A-Z0-9_]*$" }, details: { type: "object" } },
    },
  },
};

const successBase = {
  type: "object",
  required: ["version", "success", "code", "message", "request_id"],
  properties: {
    version: { type: "string", const: "1.0" },
    success: { type: "boolean", const: true },
    code: { type: "integer", description: "The HTTP status" },
    message: { type: "string" },
    request_id: { type: "string" },
    data: { type: "object", description: "The result (absent when there is nothing to return)" },
  },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ "application/json": { schema } });

/** `#/$defs/X` (zod's named views) → `#/components/schemas/X`. */
function retarget(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(retarget);
  if (!schema || typeof schema !== "object") return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [k, k === "$ref" && typeof v === "string" ? v.replace("#/$defs/", "#/components/schemas/") : retarget(v)]),
  );
}

/** A route's `data` schema; the named views it uses go to `components` (once each) and are referred to. */
function dataSchema(schema: z.ZodType, components: Record<string, unknown>): unknown {
  const { $defs, ...rest } = wireSchema(schema, "output", viewRegistry);
  for (const [name, def] of Object.entries(($defs ?? {}) as Record<string, unknown>)) components[name] ??= retarget(def);
  return retarget(rest);
}

/** The success envelope for one status, with the route's `data` when it declares one. */
function successSchema(r: RouteDef, status: number, components: Record<string, unknown>): unknown {
  if (r.data === null) return { allOf: [ref("SuccessEnvelope"), { properties: { code: { const: status } }, not: { required: ["data"] } }] };
  const data = r.data ? dataSchema(r.data, components) : undefined;
  return {
    allOf: [ref("SuccessEnvelope"), { properties: { code: { const: status }, ...(data ? { data } : {}) }, ...(data ? { required: ["data"] } : {}) }],
  };
}

/**
 * The error statuses a route can answer, derived from its declaration and the middleware in front
 * of it, plus the ones it lists itself. `edge`: under /api/v1 (caller resolution, CSRF check, the
 * per-IP edge limit); /api/health and /api/ready have none of these.
 */
export function errorStatuses(r: RouteDef, edge: boolean): Record<number, string> {
  const out: Record<number, string> = {};
  const signedIn = r.auth === "user" || r.auth === "superadmin";
  if (r.body || r.query) out[400] = "The body or query is invalid (VALIDATION_ERROR with details.errors), or the JSON is malformed";
  if (edge) out[401] = signedIn ? "Not signed in, or the credential is invalid or expired" : "A credential was sent and is invalid or expired";
  const forbidden: string[] = [];
  if (signedIn) forbidden.push("the account may not do this (suspended, MFA compliance)");
  // Every route checks a delegated caller's scope before it runs (mountRoutes), public ones too.
  if (edge) forbidden.push(r.scope ? `an OIDC access token without the ${r.scope} scope (INSUFFICIENT_SCOPE)` : "an OIDC access token: this route takes none (INSUFFICIENT_SCOPE)");
  if (edge) forbidden.push(r.apiKey ? `an organization API key without the ${r.apiKey} scope (INSUFFICIENT_SCOPE)` : "an organization API key: this route takes none (INSUFFICIENT_SCOPE)");
  if (r.org) forbidden.push(`the caller's role is below ${r.org}`);
  if (r.auth === "superadmin") forbidden.push("the caller is not a superadmin");
  if (edge && r.method !== "get") forbidden.push("a cookie-authenticated write from another origin (CSRF_CHECK_FAILED)");
  if (forbidden.length) out[403] = `Refused: ${forbidden.join("; ")}`;
  if (r.path.includes("/:")) out[404] = r.org ? "The organization (to non-members too) or the resource does not exist" : "The resource does not exist";
  if (edge) out[429] = "Too many requests (RATE_LIMIT_EXCEEDED; Retry-After says when to try again)";
  // Sessions, rate limits and data live in Redis and PostgreSQL: while one is down, 503.
  if (edge) out[503] = "PostgreSQL or Redis is unavailable right now, or the request met a concurrent change and was not applied (SERVICE_UNAVAILABLE; Retry-After says when to try again)";
  return { ...out, ...(r.errors as Record<number, string> | undefined) };
}

/** The Bearer challenges of src/http/bearer-challenge.ts, as the document describes them. */
const CHALLENGE_401 = {
  description:
    'Bearer, with resource_metadata naming the protected resource document (RFC 9728 §5.1); error="invalid_token" when a bearer token was sent and refused, error="invalid_request" for an Authorization header that is not Bearer',
  required: true,
  schema: { type: "string" },
};
const CHALLENGE_403 = {
  description: 'On INSUFFICIENT_SCOPE: Bearer error="insufficient_scope", the scope the operation needs (when one would do) and resource_metadata',
  required: false,
  schema: { type: "string" },
};

/** Who may call a route, as security requirements (undefined: the document's default, a session). */
function securityOf(r: RouteDef): Array<Record<string, string[]>> | undefined {
  const delegated = r.scope ? [{ delegatedToken: [r.scope] }] : [];
  // OpenAPI 3.1 lets a non-OAuth requirement list roles: the key's scope the route needs.
  const keyed = r.apiKey ? [{ organizationApiKey: [r.apiKey] }] : [];
  if (r.auth === "none") return keyed.length ? [{}, ...keyed] : [];
  if (r.auth === "optional") return [{}, { bearerAuth: [] }, { cookieAuth: [] }, ...delegated, ...keyed];
  return r.scope || r.apiKey ? [{ bearerAuth: [] }, { cookieAuth: [] }, ...delegated, ...keyed] : undefined;
}

/** The OpenAPI 3.1 document of the REST shim, generated from the same route list the router mounts. */
export function buildOpenApi(routes: readonly RouteDef[], info: { version: string; serverUrl?: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  const views: Record<string, unknown> = {};
  for (const r of routes) {
    const path = `/api/v1${r.path}`.replace(/:(\w+)/g, "{$1}").replace("/api/v1/health", "/api/health").replace("/api/v1/ready", "/api/ready");
    const edge = path.startsWith("/api/v1/");
    const params = [...r.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    const query = r.query ? wireSchema(r.query, "input") : undefined;
    const requiredQuery = new Set((query?.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((query?.properties ?? {}) as Record<string, unknown>)) {
      params.push({ name, in: "query", required: requiredQuery.has(name), schema: schema as never });
    }
    const body = r.body ? wireSchema(r.body, "input") : undefined;
    const bodyRequired = Array.isArray(body?.required) && body.required.length > 0;

    const responses: Record<string, unknown> = {};
    const success = r.status ?? 200;
    if (!r.redirect?.only) {
      for (const status of [success, ...(r.alsoStatus ?? [])]) {
        responses[status] = r.produces
          ? { description: "Success", content: Object.fromEntries([r.produces].flat().map((type) => [type, { schema: { type: "string", contentMediaType: type } }])) }
          : { description: status === 201 ? "Created" : "Success", content: json(successSchema(r, status, views)) };
      }
    }
    if (r.redirect) {
      responses[r.redirect.status] = {
        description: r.redirect.description,
        headers: { Location: { description: "Where the browser goes next", required: true, schema: { type: "string" } } },
      };
    }
    for (const [status, description] of Object.entries(errorStatuses(r, edge))) {
      const challenge = status === "401" ? CHALLENGE_401 : status === "403" && edge ? CHALLENGE_403 : undefined;
      responses[status] = { description, ...(challenge ? { headers: { "WWW-Authenticate": challenge } } : {}), content: json(ref("ErrorEnvelope")) };
    }

    const security = securityOf(r);

    paths[path] ??= {};
    paths[path][r.method] = {
      tags: [r.tag],
      summary: r.summary,
      operationId: `${r.method}${path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`,
      ...(params.length ? { parameters: params } : {}),
      ...(body ? { requestBody: { required: bodyRequired, content: json(body) } } : {}),
      ...(security ? { security } : {}),
      "x-keyward-auth": r.auth,
      ...(r.org ? { "x-keyward-org-role": r.org } : {}),
      ...(r.scope ? { "x-keyward-scope": r.scope } : {}),
      ...(r.apiKey ? { "x-keyward-api-key-scope": r.apiKey } : {}),
      responses,
    };
  }
  paths["/api/v1/openapi.json"] = {
    get: {
      tags: ["meta"],
      summary: "This document",
      operationId: "getApiV1OpenapiJson",
      security: [],
      "x-keyward-auth": "none",
      responses: { 200: { description: "The OpenAPI document (plain JSON, not the envelope)", content: json({ type: "object", required: ["openapi", "paths"] }) } },
    },
  };
  return {
    openapi: "3.1.0",
    info: {
      title: "Keyward REST API",
      version: info.version,
      description:
        "The REST shim over Keyward's service layer (for the CLI, scripts and OIDC relying parties). The web app uses GraphQL at /graphql. " +
        "Every answer is the envelope {version, success, code, message, request_id} with `data` on success and `error {type, details}` on failure. " +
        "Besides the statuses each operation lists, a request the server cannot read answers 400 (malformed JSON or path), 413 (too large) or 415 " +
        "(unsupported encoding), an unknown path 404 and another method on a known path 405 (with Allow), all in the error envelope. " +
        "A client too slow with its headers or its body (HTTP_HEADERS_TIMEOUT, HTTP_REQUEST_TIMEOUT) gets 408 from the HTTP server itself, " +
        "without the envelope, and the connection closes.",
    },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    security: [{ bearerAuth: [] }, { cookieAuth: [] }],
    components: {
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "A session token (kws_…)" },
        delegatedToken: {
          type: "oauth2",
          description:
            "An OIDC access token for this API (resource indicator <PUBLIC_URL>/api/v1), acting for its user within its scopes; operations without a scope refuse it (INSUFFICIENT_SCOPE)",
          flows: {
            authorizationCode: { authorizationUrl: "/api/v1/oidc/authorize", tokenUrl: "/api/v1/oidc/token", refreshUrl: "/api/v1/oidc/token", scopes: API_SCOPES },
          },
        },
        cookieAuth: { type: "apiKey", in: "cookie", name: "keyward.sid" },
        organizationApiKey: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "kwk_…",
          description:
            `An organization API key (kwk_…), speaking for its organization alone. Only operations that list this scheme take one, and only with the scope they name (${Object.entries(API_KEY_SCOPES).map(([k, v]) => `${k}: ${v}`).join("; ")}); elsewhere, or without the scope, INSUFFICIENT_SCOPE (403). An unknown or revoked key is INVALID_TOKEN (401).`,
        },
      },
      schemas: { SuccessEnvelope: successBase, ErrorEnvelope: errorEnvelope, ...Object.fromEntries(Object.entries(views).sort(([a], [b]) => a.localeCompare(b))) },
    },
    paths,
  };
}

export type OpenApiDocument = ReturnType<typeof buildOpenApi>;
