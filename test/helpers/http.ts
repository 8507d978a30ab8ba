import { CHECKED_BY_CALLER, reportMismatch, type ContractChecker } from "./contract.js";

export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string;
  token?: string;
  cookie?: string;
  headers?: Record<string, string>;
}

/**
 * A small fetch wrapper for the REST envelope and GraphQL. With a contract checker, every answer
 * under /api/v1 and /api/health|ready is checked against the OpenAPI document (status and body):
 * a mismatch fails the call, and so the test that made it.
 */
export class HttpClient {
  constructor(
    readonly baseUrl: string,
    private readonly contract?: ContractChecker,
  ) {}

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.body !== undefined || options.rawBody !== undefined) headers["content-type"] ??= "application/json";
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.cookie) headers.cookie = options.cookie;
    const res = await fetch(this.baseUrl + path, {
      method,
      headers,
      body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
      redirect: "manual",
      // The global fetch watch (contract.ts) leaves this answer to the check below.
      ...{ [CHECKED_BY_CALLER]: true },
    });
    const text = await res.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    const problem = this.contract?.check({ method, url: path, status: res.status, headers: res.headers, text });
    if (problem) reportMismatch({ method, url: path, status: res.status, headers: res.headers, text }, problem);
    return { status: res.status, headers: res.headers, body, text };
  }

  get = <T = any>(path: string, o?: RequestOptions) => this.request<T>("GET", path, o);
  post = <T = any>(path: string, body?: unknown, o?: RequestOptions) => this.request<T>("POST", path, { ...o, body: body ?? {} });
  put = <T = any>(path: string, body?: unknown, o?: RequestOptions) => this.request<T>("PUT", path, { ...o, body: body ?? {} });
  patch = <T = any>(path: string, body?: unknown, o?: RequestOptions) => this.request<T>("PATCH", path, { ...o, body: body ?? {} });
  delete = <T = any>(path: string, o?: RequestOptions) => this.request<T>("DELETE", path, o);

  /** POST /graphql; returns `{ data, errors }` plus the HTTP status and headers. */
  async gql(query: string, variables?: Record<string, unknown>, o: RequestOptions = {}): Promise<{ data: any; errors: any; status: number; headers: Headers }> {
    const res = await this.request("POST", "/graphql", { ...o, body: { query, variables } });
    return { data: res.body?.data, errors: res.body?.errors, status: res.status, headers: res.headers };
  }
}

/** The `name=value` part of a Set-Cookie header, ready to send back. */
export function sessionCookie(headers: Headers): string {
  const setCookie = headers.getSetCookie().find((c) => c.includes(".sid="));
  if (!setCookie) throw new Error("no session cookie was set");
  return setCookie.split(";")[0]!;
}
