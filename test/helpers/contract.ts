import { appendFileSync } from "node:fs";
import { expect } from "vitest";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import * as formatsModule from "ajv-formats";

// ajv-formats is CommonJS: its function arrives as `default`, or `default.default`, depending on the loader.
type FormatsPlugin = (ajv: Ajv2020) => unknown;
const unwrap = (m: unknown): FormatsPlugin => (typeof m === "function" ? (m as FormatsPlugin) : unwrap((m as { default: unknown }).default));
const addFormats = unwrap(formatsModule);

/** An OpenAPI 3.1 document, as buildOpenApi makes it. */
export interface ContractDocument {
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, unknown> };
}

/** The part of an operation the checker reads. */
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> }>;
}

export interface ObservedResponse {
  method: string;
  /** Path and query as requested (`/api/v1/x?y=z`). */
  url: string;
  status: number;
  headers: Headers;
  text: string;
}

/**
 * The server's own answers to requests it cannot read (body-parser, the path decoder): they reach
 * any operation, so the document states them once (info.description) instead of on every operation.
 * They are still held to the error envelope.
 */
const TRANSPORT_ERRORS: Record<string, number> = {
  INVALID_JSON: 400,
  JSON_TOO_DEEP: 400,
  REQUEST_ABORTED: 400,
  INVALID_CONTENT_LENGTH: 400,
  INVALID_PATH_ENCODING: 400,
  INVALID_BODY_ENCODING: 400,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_ENCODING: 415,
  UNSUPPORTED_CHARSET: 415,
};

const COMPONENTS_ID = "keyward-components";
const METHODS = new Set(["get", "post", "put", "patch", "delete"]);

interface Template {
  path: string;
  regex: RegExp;
  literals: number;
}

/** True for the paths the REST contract covers: /api/v1 (not the OIDC provider) and /api/health|ready. */
export function isContractPath(path: string): boolean {
  if (path === "/api/health" || path === "/api/ready") return true;
  // The OIDC provider under /api/v1/oidc speaks OAuth, not the envelope: outside this contract.
  return path.startsWith("/api/v1/") && path !== "/api/v1/oidc" && !path.startsWith("/api/v1/oidc/");
}

/**
 * Checks HTTP answers against the OpenAPI document: the status must be documented for the method
 * and path, and the body must match the schema of that response. Requests outside the document
 * (unknown paths, other methods, unreadable bodies) must still answer the error envelope.
 */
export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly templates: Template[];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: ContractDocument) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: COMPONENTS_ID, $defs: this.rewrite(doc.components.schemas) });
    this.templates = Object.keys(doc.paths).map((path) => ({
      path,
      // Case-insensitive and with an optional trailing slash, as Express routes (GET /api/v1/INVITES/x/ is GET /invites/{token}).
      regex: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{\w+\}/g, "[^/]+")}/?$`, "i"),
      literals: path.split("/").filter((s) => s && !s.startsWith("{")).length,
    }));
  }

  /** The problem with an answer, or null when it honours the contract (or is outside it). */
  check(r: ObservedResponse): string | null {
    const path = r.url.split("?")[0]!;
    const method = r.method.toLowerCase();
    if (!isContractPath(path) || !METHODS.has(method === "head" ? "get" : method)) return null;
    const body = this.parse(r.text);

    // The document's own path and method: the most specific template that has the method (as OpenAPI resolves paths).
    const matches = this.templates.filter((t) => t.regex.test(path)).sort((a, b) => b.literals - a.literals);
    const lookup = method === "head" ? "get" : method;
    const template = matches.find((t) => this.doc.paths[t.path]![lookup]);
    if (!template) {
      const expected = matches.length ? 405 : 404;
      if (r.status !== expected) return `${matches.length ? "an undocumented method" : "an undocumented path"} answered ${r.status}, expected ${expected} in the error envelope`;
      return this.errorEnvelope(body, r.status, method === "head");
    }
    const op = this.doc.paths[template.path]![lookup] as Operation;
    const documented = op.responses[String(r.status)];
    if (!documented) {
      const type = (body as { error?: { type?: unknown } } | null)?.error?.type;
      if (typeof type === "string" && TRANSPORT_ERRORS[type] === r.status) return this.errorEnvelope(body, r.status, method === "head");
      return `status ${r.status} is not documented for ${method.toUpperCase()} ${template.path} (documented: ${Object.keys(op.responses).join(", ")})${type ? `; error.type ${String(type)}` : ""}`;
    }
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      if ((header as { required?: boolean }).required && !r.headers.get(name)) return `status ${r.status} without its required ${name} header`;
    }
    if (!documented.content) {
      if (r.status >= 300 && r.status < 400 && !r.headers.get("location")) return `redirect ${r.status} without a Location header`;
      return null;
    }
    const contentType = r.headers.get("content-type") ?? "";
    // An operation may document several media types (an export as JSON lines or CSV): the answer's must be one.
    const entries = Object.entries(documented.content);
    const [mediaType, media] = entries.find(([type]) => contentType.startsWith(type)) ?? entries[0]!;
    if (!contentType.startsWith(mediaType)) return `content-type ${contentType || "(none)"}, documented ${entries.map(([type]) => type).join(" or ")}`;
    if (mediaType !== "application/json" || method === "head") return null;
    if (body === undefined) return `the body is not JSON: ${r.text.slice(0, 200)}`;
    const key = `${lookup} ${template.path} ${r.status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      // Operations share schemas (every error is the envelope): compile each distinct one once.
      const text = JSON.stringify(media.schema ?? {});
      validate = this.compiled.get(text) ?? this.ajv.compile(this.rewrite(media.schema ?? {}) as object);
      this.compiled.set(key, validate);
      this.compiled.set(text, validate);
    }
    if (!validate(body)) return `the body does not match the schema of ${r.status}: ${this.describe(validate)}`;
    if (typeof body === "object" && body && "success" in body && (body as { code?: unknown }).code !== r.status) return `envelope code ${String((body as { code?: unknown }).code)} differs from the status ${r.status}`;
    return null;
  }

  private errorEnvelope(body: unknown, status: number, head: boolean): string | null {
    if (head) return null;
    const validate = this.ajv.getSchema(`${COMPONENTS_ID}#/$defs/ErrorEnvelope`)!;
    if (!validate(body)) return `the answer is not the error envelope: ${this.describe(validate)}`;
    if ((body as { code?: unknown }).code !== status) return `envelope code ${String((body as { code?: unknown }).code)} differs from the status ${status}`;
    return null;
  }

  private parse(text: string): unknown {
    try {
      return text ? JSON.parse(text) : undefined;
    } catch {
      return undefined;
    }
  }

  private describe(validate: ValidateFunction): string {
    return (validate.errors ?? [])
      .slice(0, 8)
      .map((e) => `${e.instancePath || "(root)"} ${e.message ?? e.keyword}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ""}`)
      .join("; ");
  }

  /** `#/components/schemas/X` → the registered components schema, so each response compiles on its own. */
  private rewrite(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.rewrite(s));
    if (!schema || typeof schema !== "object") return schema;
    return Object.fromEntries(
      Object.entries(schema).map(([k, v]) => [
        k,
        k === "$ref" && typeof v === "string" ? v.replace("#/components/schemas/", `${COMPONENTS_ID}#/$defs/`) : this.rewrite(v),
      ]),
    );
  }
}

/**
 * What happens on a mismatch. Default: the call throws, failing the test that made it. With
 * KEYWARD_CONTRACT_REPORT=<file>, mismatches are appended to the file instead (one JSON line each),
 * to survey a whole run at once.
 */
export function reportMismatch(r: ObservedResponse, problem: string): void {
  const message = `Contract mismatch: ${r.method} ${r.url} → ${r.status}: ${problem}`;
  const file = process.env.KEYWARD_CONTRACT_REPORT;
  if (file) {
    appendFileSync(file, JSON.stringify({ method: r.method, url: r.url, status: r.status, problem, test: currentTest() }) + "\n");
    return;
  }
  throw new Error(message);
}

function currentTest(): string {
  const { testPath, currentTestName } = expect.getState();
  return `${(testPath ?? "").replace(/^.*\/test\//, "test/")} > ${currentTestName ?? ""}`;
}

/** Set on a request's init by callers that check the answer themselves (HttpClient). */
export const CHECKED_BY_CALLER = Symbol("contract-checked-by-caller");

const watched = new Map<string, ContractChecker>();
let fetchPatched = false;

/**
 * Also checks the answers tests fetch from a running app without HttpClient (a browser-like agent
 * with cookies, the raw KRL): the global fetch of the test worker is wrapped once, and answers from
 * a watched origin under the contract's paths go through the same checker. Returns the unwatch.
 */
export function watchFetches(origin: string, checker: ContractChecker): () => void {
  watched.set(origin, checker);
  if (!fetchPatched) {
    fetchPatched = true;
    const original = globalThis.fetch;
    globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
      const res = await original(input, init);
      if ((init as { [CHECKED_BY_CALLER]?: boolean } | undefined)?.[CHECKED_BY_CALLER]) return res;
      const requested = new URL(input instanceof Request ? input.url : String(input));
      // After a followed redirect the answer is the last hop's, fetched with GET.
      const url = res.redirected && res.url ? new URL(res.url) : requested;
      const check = watched.get(url.origin);
      if (!check || !isContractPath(url.pathname)) return res;
      const method = res.redirected ? "GET" : (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
      const observed = { method, url: url.pathname + url.search, status: res.status, headers: res.headers, text: await res.clone().text() };
      const problem = check.check(observed);
      if (problem) reportMismatch(observed, problem);
      return res;
    };
  }
  return () => watched.delete(origin);
}
