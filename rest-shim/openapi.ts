import { z } from "zod";
import { camelToSnake } from "../src/lib/strings.js";
import type { RouteDef } from "./route.js";
import { API_SCOPES } from "../src/lib/api-scopes.js";

type JsonSchema = Record<string, unknown>;

/** Request schemas are written in the services' camelCase; REST clients send snake_case. */
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

const toJson = (schema: z.ZodType) => snakeSchema(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }));

const envelope = {
  type: "object",
  required: ["version", "success", "code", "message", "request_id"],
  properties: {
    version: { type: "string", const: "1.0" },
    success: { type: "boolean" },
    code: { type: "integer", description: "The HTTP status" },
    message: { type: "string" },
    request_id: { type: "string" },
    data: { type: "object", description: "Present on success" },
    error: {
      type: "object",
      description: "Present on failure",
      properties: { type: { type: "string", description: "UPPER_SNAKE error code" }, details: { type: "object" } },
    },
  },
};

/** The OpenAPI 3.1 document of the REST shim, generated from the same route list the router mounts. */
export function buildOpenApi(routes: readonly RouteDef[], info: { version: string; serverUrl?: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = `/api/v1${r.path}`.replace(/:(\w+)/g, "{$1}").replace("/api/v1/health", "/api/health").replace("/api/v1/ready", "/api/ready");
    const params = [...r.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    const query = r.query ? (toJson(r.query) as { properties?: Record<string, unknown> }) : undefined;
    for (const [name, schema] of Object.entries(query?.properties ?? {})) params.push({ name, in: "query", required: false, schema: schema as never });
    const status = String(r.status ?? 200);
    paths[path] ??= {};
    paths[path][r.method] = {
      tags: [r.tag],
      summary: r.summary,
      operationId: `${r.method}${path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`,
      ...(params.length ? { parameters: params } : {}),
      ...(r.body ? { requestBody: { required: true, content: { "application/json": { schema: toJson(r.body) } } } } : {}),
      ...(r.auth === "none" ? { security: [] } : r.scope ? { security: [{ bearerAuth: [] }, { cookieAuth: [] }, { delegatedToken: [r.scope] }] } : {}),
      "x-keyward-auth": r.auth,
      ...(r.scope ? { "x-keyward-scope": r.scope } : {}),
      responses: {
        [status]: { description: "Success", content: { "application/json": { schema: { $ref: "#/components/schemas/Envelope" } } } },
        default: { description: "Error (see error.type)", content: { "application/json": { schema: { $ref: "#/components/schemas/Envelope" } } } },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Keyward REST API",
      version: info.version,
      description: "The REST shim over Keyward's service layer (for the CLI, scripts and OIDC relying parties). The web app uses GraphQL at /graphql.",
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
      },
      schemas: { Envelope: envelope },
    },
    paths,
  };
}
