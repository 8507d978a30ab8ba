/**
 * The one adapter between Keyward and a ZeroTier controller: a self-hosted ZeroTierOne controller
 * (`X-ZT1-Auth`, external-apis.md §7) or ZeroTier Central (`Authorization: token`, §6). Nothing
 * else in Keyward speaks HTTP to a controller. Both APIs are normalized to the shapes below.
 */

export type ControllerMode = "controller" | "central";
export interface ControllerConfig {
  mode: ControllerMode;
  baseUrl: string;
  token: string;
}
export interface ControllerNetwork {
  /** 16 hex. */
  id: string;
  name: string;
  description: string | null;
}
export interface ControllerMember {
  networkId: string;
  /** 10 hex. */
  nodeId: string;
  authorized: boolean;
  name: string | null;
  ipAssignments: string[];
  /** When the node last talked to the controller, if it ever did (Central only reports it). */
  lastSeen: Date | null;
}
export type ControllerErrorKind = "unreachable" | "unauthorized" | "forbidden" | "not_found" | "rate_limited" | "server_error" | "bad_response";

export class ControllerError extends Error {
  constructor(
    readonly kind: ControllerErrorKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "ControllerError";
  }
}

export interface ControllerClient {
  /** A live connectivity and credential check; the controller's address when it says. */
  test(): Promise<{ address: string | null; version: string | null }>;
  listNetworks(): Promise<ControllerNetwork[]>;
  getNetwork(networkId: string): Promise<ControllerNetwork>;
  listMembers(networkId: string): Promise<ControllerMember[]>;
  getMember(networkId: string, nodeId: string): Promise<ControllerMember | null>;
  /** Idempotent; creates the member record when the node never joined (both APIs upsert). */
  setAuthorized(networkId: string, nodeId: string, authorized: boolean): Promise<void>;
  /** Self-hosted only (tests and benches): a new network under the controller's address. */
  createNetwork?(name: string): Promise<string>;
}

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

export const CENTRAL_API_URL = "https://api.zerotier.com/api/v1";

const NETWORK_ID = /^[0-9a-f]{16}$/;
const NODE_ID = /^[0-9a-f]{10}$/;
/**
 * The documented self-hosted member listing is an id → revision map, each member then fetched on
 * its own; ZeroTierOne's HTTP server slows down sharply with parallel connections (100 members:
 * 1.1 s two at a time, 21 s eight at a time), so the fallback stays at two.
 */
const MEMBER_FETCH_CONCURRENCY = 2;

const checkNetworkId = (id: string): string => {
  const v = id.toLowerCase();
  if (!NETWORK_ID.test(v)) throw new ControllerError("bad_response", "a network id is 16 hexadecimal characters");
  return v;
};
const checkNodeId = (id: string): string => {
  const v = id.toLowerCase();
  if (!NODE_ID.test(v)) throw new ControllerError("bad_response", "a node id is 10 hexadecimal characters");
  return v;
};

const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);
const obj = (v: unknown): Record<string, unknown> => {
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new ControllerError("bad_response", "expected a JSON object");
  return v as Record<string, unknown>;
};
const arr = (v: unknown): unknown[] => {
  if (!Array.isArray(v)) throw new ControllerError("bad_response", "expected a JSON array");
  return v;
};

export function createControllerClient(config: ControllerConfig, options: ClientOptions = {}): ControllerClient {
  const http = new Http(config, options);
  return config.mode === "central" ? centralClient(http) : selfHostedClient(http);
}

/** Requests with authentication, timeouts, error mapping and retries. Never puts the token in a message. */
class Http {
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

// --- self-hosted ZeroTierOne controller (§7) -----------------------------------------------------

function selfHostedClient(http: Http): ControllerClient {
  const network = (v: unknown): ControllerNetwork => {
    const o = obj(v);
    const id = str(o.id) ?? str(o.nwid);
    if (!id) throw new ControllerError("bad_response", "a network without an id");
    return { id: id.toLowerCase(), name: str(o.name) ?? "", description: null };
  };
  const member = (networkId: string, v: unknown): ControllerMember => {
    const o = obj(v);
    const nodeId = str(o.address) ?? str(o.id);
    if (!nodeId) throw new ControllerError("bad_response", "a member without an address");
    return {
      networkId,
      nodeId: nodeId.toLowerCase(),
      authorized: o.authorized === true,
      name: str(o.name),
      ipAssignments: Array.isArray(o.ipAssignments) ? o.ipAssignments.filter((x): x is string => typeof x === "string") : [],
      // The controller API says nothing about presence; a node that contacted it has an identity.
      lastSeen: str(o.identity) ? new Date(0) : null,
    };
  };
  const getNetwork = async (networkId: string) => {
    const nwid = checkNetworkId(networkId);
    const found = await http.json("GET", `/controller/network/${nwid}`, undefined, { allowMissing: true });
    if (!found) throw new ControllerError("not_found", `network ${nwid} is unknown to the controller`, 404);
    return network(found);
  };
  const getMember = async (networkId: string, nodeId: string) => {
    const nwid = checkNetworkId(networkId);
    const found = await http.json("GET", `/controller/network/${nwid}/member/${checkNodeId(nodeId)}`, undefined, { allowMissing: true });
    return found ? member(nwid, found) : null;
  };
  return {
    async test() {
      const status = obj(await http.json("GET", "/status"));
      const controller = obj(await http.json("GET", "/controller"));
      if (controller.controller !== true) throw new ControllerError("bad_response", "this ZeroTier node is not a network controller");
      return { address: str(status.address), version: str(status.version) };
    },
    async listNetworks() {
      // 1.10+ lists whole objects in one call (the "unstable" API); older controllers list ids.
      const all = await http.json("GET", "/unstable/controller/network", undefined, { allowMissing: true });
      if (all) return arr(obj(all).data).map(network);
      const ids = arr(await http.json("GET", "/controller/network")).filter((x): x is string => typeof x === "string");
      const out: ControllerNetwork[] = [];
      for (const id of ids) out.push(await getNetwork(id));
      return out;
    },
    getNetwork,
    async listMembers(networkId) {
      const nwid = checkNetworkId(networkId);
      // One call for every member where the controller has it (100 members: 3 ms instead of ~1 s).
      const all = await http.json("GET", `/unstable/controller/network/${nwid}/member`, undefined, { allowMissing: true });
      if (all) return arr(obj(all).data).map((m) => member(nwid, m));
      const found = await http.json("GET", `/controller/network/${nwid}/member`, undefined, { allowMissing: true });
      if (!found) throw new ControllerError("not_found", `network ${nwid} is unknown to the controller`, 404);
      const ids = Object.keys(obj(found));
      const out: ControllerMember[] = [];
      for (let i = 0; i < ids.length; i += MEMBER_FETCH_CONCURRENCY) {
        const batch = await Promise.all(ids.slice(i, i + MEMBER_FETCH_CONCURRENCY).map((id) => getMember(nwid, id)));
        for (const m of batch) if (m) out.push(m);
      }
      return out;
    },
    getMember,
    async setAuthorized(networkId, nodeId, authorized) {
      const nwid = checkNetworkId(networkId);
      const res = await http.json("POST", `/controller/network/${nwid}/member/${checkNodeId(nodeId)}`, { authorized }, { allowMissing: true });
      if (!res) throw new ControllerError("not_found", `network ${nwid} is unknown to the controller`, 404);
    },
    async createNetwork(name) {
      const { address } = await this.test();
      if (!address) throw new ControllerError("bad_response", "the controller did not say its address");
      return network(await http.json("POST", `/controller/network/${address}______`, { name })).id;
    },
  };
}

// --- ZeroTier Central (§6) -----------------------------------------------------------------------

function centralClient(http: Http): ControllerClient {
  const network = (v: unknown): ControllerNetwork => {
    const o = obj(v);
    const config = o.config && typeof o.config === "object" ? (o.config as Record<string, unknown>) : {};
    const id = str(o.id) ?? str(config.id);
    if (!id) throw new ControllerError("bad_response", "a network without an id");
    return { id: id.toLowerCase(), name: str(config.name) ?? "", description: str(o.description) };
  };
  const member = (networkId: string, v: unknown): ControllerMember => {
    const o = obj(v);
    const config = o.config && typeof o.config === "object" ? (o.config as Record<string, unknown>) : {};
    const nodeId = str(o.nodeId) ?? str(config.id);
    if (!nodeId) throw new ControllerError("bad_response", "a member without a node id");
    const seen = typeof o.lastSeen === "number" && o.lastSeen > 0 ? o.lastSeen : typeof o.lastOnline === "number" && o.lastOnline > 0 ? o.lastOnline : null;
    return {
      networkId,
      nodeId: nodeId.toLowerCase(),
      authorized: config.authorized === true,
      name: str(o.name),
      ipAssignments: Array.isArray(config.ipAssignments) ? config.ipAssignments.filter((x): x is string => typeof x === "string") : [],
      lastSeen: seen ? new Date(seen) : null,
    };
  };
  return {
    async test() {
      const status = obj(await http.json("GET", "/status"));
      // /status answers anonymous callers too: listing networks proves the token.
      await http.json("GET", "/network");
      return { address: null, version: str(status.version) };
    },
    async listNetworks() {
      return arr(await http.json("GET", "/network")).map(network);
    },
    async getNetwork(networkId) {
      return network(await http.json("GET", `/network/${checkNetworkId(networkId)}`));
    },
    async listMembers(networkId) {
      const nwid = checkNetworkId(networkId);
      return arr(await http.json("GET", `/network/${nwid}/member`)).map((m) => member(nwid, m));
    },
    async getMember(networkId, nodeId) {
      const nwid = checkNetworkId(networkId);
      const found = await http.json("GET", `/network/${nwid}/member/${checkNodeId(nodeId)}`, undefined, { allowMissing: true });
      return found ? member(nwid, found) : null;
    },
    async setAuthorized(networkId, nodeId, authorized) {
      await http.json("POST", `/network/${checkNetworkId(networkId)}/member/${checkNodeId(nodeId)}`, { config: { authorized } });
    },
  };
}
