import { ControllerError, type ControllerConfig, type ControllerErrorKind } from "./types.js";

export interface ClientOptions {
  fetch?: typeof fetch;
  /** Retries of 429, 5xx and unreachable answers (exponential back-off; Retry-After, then a 429's X-Ratelimit-Reset, honoured). */
  maxRetries?: number;
  sleep?: (ms: number) => Promise<void>;
  timeoutMs?: number;
  /** First back-off step in ms. */
  backoffMs?: number;
  /**
   * The most one call may spend waiting between retries (default 20 s): a rate-limiting controller
   * must not hold a person's request, or a reconciliation pass, for minutes.
   */
  maxWaitMs?: number;
}

/** Requests with authentication, timeouts, error mapping and retries. Never puts the token in a message. */
export class Http {
  private readonly base: string;
  private readonly fetch: typeof fetch;
  private readonly maxRetries: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly timeoutMs: number;
  private readonly backoffMs: number;
  private readonly maxWaitMs: number;

  constructor(
    private readonly config: ControllerConfig,
    options: ClientOptions,
  ) {
    this.base = config.baseUrl.replace(/\/+$/, "");
    this.fetch = options.fetch ?? fetch;
    this.maxRetries = options.maxRetries ?? 3;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.backoffMs = options.backoffMs ?? 200;
    this.maxWaitMs = options.maxWaitMs ?? 20_000;
  }

  /** The parsed JSON body, or null for a 404 when `allowMissing`. */
  async json(method: "GET" | "POST", path: string, body?: unknown, opts: { allowMissing?: boolean } = {}): Promise<unknown> {
    let waited = 0;
    /** Sleeps before the next attempt when retries and the wait budget allow; false when they do not. */
    const retry = async (attempt: number, ms: number): Promise<boolean> => {
      if (attempt >= this.maxRetries || waited + ms > this.maxWaitMs) return false;
      waited += ms;
      await this.sleep(ms);
      return true;
    };
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      let text = "";
      try {
        res = await this.fetch(this.base + path, {
          method,
          headers: { ...this.auth(), ...(body === undefined ? {} : { "content-type": "application/json" }), accept: "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.timeoutMs),
          redirect: "error",
        });
        // The body is part of the answer: the timeout or a dropped connection while it is read is the
        // same failure as before the headers (and must not escape as a raw TimeoutError/TypeError).
        if (res.ok) text = await res.text();
        else await res.body?.cancel().catch(() => {});
      } catch (e) {
        if (await retry(attempt, this.backoff(attempt))) continue;
        throw new ControllerError("unreachable", `${method} ${path}: ${(e as Error).name === "TimeoutError" ? "timed out" : "connection failed"}`);
      }
      if (res.ok) {
        try {
          return text ? JSON.parse(text) : null;
        } catch {
          throw new ControllerError("bad_response", `${method} ${path}: the answer is not JSON`, res.status);
        }
      }
      if (res.status === 404 && opts.allowMissing) return null;
      const retryable = res.status === 429 || res.status >= 500;
      if (retryable && (await retry(attempt, this.retryAfter(res) ?? this.rateLimitReset(res) ?? this.backoff(attempt)))) continue;
      throw new ControllerError(kindOf(res.status), `${method} ${path}: HTTP ${res.status}`, res.status);
    }
  }

  private auth(): Record<string, string> {
    return this.config.mode === "central" ? { authorization: `token ${this.config.token}` } : { "x-zt1-auth": this.config.token };
  }

  private backoff(attempt: number): number {
    return this.backoffMs * 2 ** attempt;
  }

  /** Retry-After in seconds or as an HTTP date, capped at a minute. */
  private retryAfter(res: Response): number | null {
    const v = res.headers.get("retry-after");
    if (!v) return null;
    const ms = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v) - Date.now();
    return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 60_000) : null;
  }

  /**
   * Central's 429 may come without Retry-After (§6.4 does not confirm it); it does send
   * `X-Ratelimit-Reset` as an HTTP date (§6.4, per the official Go client). Used when it lies ahead,
   * capped at a minute.
   */
  private rateLimitReset(res: Response): number | null {
    const v = res.status === 429 ? res.headers.get("x-ratelimit-reset") : null;
    if (!v || /^\d+$/.test(v.trim())) return null;
    const ms = Date.parse(v) - Date.now();
    return Number.isFinite(ms) && ms > 0 ? Math.min(ms, 60_000) : null;
  }
}

function kindOf(status: number): ControllerErrorKind {
  if (status === 401) return "unauthorized";
  // The token is good but may not touch this network (a Central token of another account or team).
  if (status === 403) return "forbidden";
  if (status === 404) return "not_found";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "server_error";
  return "bad_response";
}
