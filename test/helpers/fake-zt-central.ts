import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { readBody } from "./loopback-server.js";

/**
 * Local stand-in for ZeroTier Central's API v1, following shared/reference/external-apis.md §6
 * ("What a faithful Central fake must do"). Serves the routes at the root: point a client's base
 * URL (the stand-in for https://api.zerotier.com/api/v1) at `url`.
 *
 * Documented [doc]: the routes and statuses of §6.2, `Authorization: token <t>` (and `bearer`, which
 * the official Go client sends), plain JSON arrays for network and member lists, the Member and
 * Network shapes of §6.3, POST member merging writable fields only.
 * Assumed, marked [UNCONFIRMED] in §6: the 429 answer (status, body, Retry-After), POST creating a
 * member that never joined (`upsertMembers`, on by default), the bodies of errors (minimal JSON),
 * the fields of the Status object (§6 names only "Status object").
 * Not modelled: POST/DELETE of networks (501), "New Central".
 */

export interface CentralMember {
  id: string;
  clock: number;
  networkId: string;
  nodeId: string;
  controllerId: string;
  hidden: boolean;
  name: string;
  description: string;
  config: {
    id: string;
    authorized: boolean;
    activeBridge: boolean;
    ipAssignments: string[];
    noAutoAssignIps: boolean;
    capabilities: number[];
    tags: Array<[number, number]>;
    ssoExempt: boolean;
    identity: string;
    creationTime: number;
    lastAuthorizedTime: number;
    lastDeauthorizedTime: number;
    revision: number;
    vMajor: number;
    vMinor: number;
    vRev: number;
    vProto: number;
  };
  lastOnline: number;
  lastSeen: number;
  physicalAddress: string | null;
  clientVersion: string | null;
  protocolVersion: number | null;
  supportsRulesEngine: boolean;
}

interface StoredNetwork {
  id: string;
  name: string;
  description: string;
  creationTime: number;
  members: Map<string, CentralMember>;
}

export type CentralFault =
  /** 429 with X-Ratelimit-* headers (§6.4); Retry-After (seconds) only when given, since §6.4 does not confirm it. */
  | { kind: "rate_limit"; retryAfter?: number; resetInSeconds?: number }
  | { kind: "server_error"; status?: number }
  /** Accepts the request and never answers. */
  | { kind: "hang" }
  /** Destroys the connection before answering. */
  | { kind: "close" }
  /** Sends the headers of a 200 and part of a body, then destroys the connection. */
  | { kind: "truncate" }
  /** Sends the headers of a 200 and part of a body, then never finishes it. */
  | { kind: "stall" }
  /** A 200 whose body is not JSON. */
  | { kind: "malformed" };

export interface CentralRequest {
  method: string;
  path: string;
  authorization: string | null;
  body: unknown;
  status: number | null;
  fault: CentralFault["kind"] | null;
}

export interface FakeZtCentral {
  url: string;
  /** Every request in arrival order (faulted ones included). */
  requests: CentralRequest[];
  /** A token; `networks` limits what it may see (403 elsewhere), all networks when omitted. */
  addToken(token: string, networks?: string[]): void;
  addNetwork(id: string, opts?: { name?: string; description?: string }): void;
  /** A member as if the node had joined (the harness may set the ephemeral fields, 0/null allowed). */
  addMember(networkId: string, nodeId: string, fields?: Partial<Pick<CentralMember, "name" | "lastOnline" | "lastSeen" | "physicalAddress" | "clientVersion">> & { authorized?: boolean }): CentralMember;
  member(networkId: string, nodeId: string): CentralMember | undefined;
  /** The next `times` requests get this fault instead of an answer. */
  fail(fault: CentralFault, times?: number): void;
  /** Forgets the request log and faults not yet served; the limits go back to their defaults. */
  reset(): void;
  /** Requests per second before a 429 (§6.4: 20 free, 100 paid). */
  rateLimit: number;
  /** Whether POSTing a member that never joined creates it ([UNCONFIRMED] in §6.4). */
  upsertMembers: boolean;
  close(): Promise<void>;
}

const NETWORK = /^[0-9a-f]{16}$/i;
const NODE = /^[0-9a-f]{10}$/i;
const CONTROLLER_ID = "a1b2c3d4e5";

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { ...(text ? { "content-type": "application/json" } : {}), ...headers });
  res.end(text);
};

function newMember(networkId: string, nodeId: string, now: number): CentralMember {
  return {
    id: `${networkId}-${nodeId}`,
    clock: now,
    networkId,
    nodeId,
    controllerId: CONTROLLER_ID,
    hidden: false,
    name: "",
    description: "",
    config: {
      id: nodeId,
      authorized: false,
      activeBridge: false,
      ipAssignments: [],
      noAutoAssignIps: false,
      capabilities: [],
      tags: [],
      ssoExempt: false,
      identity: "",
      creationTime: now,
      lastAuthorizedTime: 0,
      lastDeauthorizedTime: 0,
      revision: 1,
      vMajor: -1,
      vMinor: -1,
      vRev: -1,
      vProto: -1,
    },
    lastOnline: 0,
    lastSeen: 0,
    physicalAddress: null,
    clientVersion: null,
    protocolVersion: null,
    supportsRulesEngine: false,
  };
}

function networkView(n: StoredNetwork) {
  const members = [...n.members.values()];
  return {
    id: n.id,
    clock: Date.now(),
    config: {
      id: n.id,
      name: n.name,
      private: true,
      creationTime: n.creationTime,
      lastModified: n.creationTime,
      ipAssignmentPools: [],
      routes: [],
      v4AssignMode: { zt: false },
      v6AssignMode: { "6plane": false, rfc4193: false, zt: false },
      mtu: 2800,
      multicastLimit: 32,
      enableBroadcast: true,
      dns: { domain: "", servers: [] },
      rules: [{ type: "ACTION_ACCEPT" }],
      tags: [],
      capabilities: [],
      ssoConfig: { enabled: false },
    },
    description: n.description,
    rulesSource: "accept;",
    permissions: {},
    ownerId: "00000000-0000-0000-0000-000000000000",
    onlineMemberCount: members.filter((m) => m.lastOnline > 0).length,
    authorizedMemberCount: members.filter((m) => m.config.authorized).length,
    totalMemberCount: members.length,
    capabilitiesByName: {},
    tagsByName: {},
  };
}

/** §6.3 "What POST accepts": writable fields only, everything else ignored. */
function mergeMember(m: CentralMember, body: Record<string, unknown>, now: number) {
  if (typeof body.name === "string") m.name = body.name;
  if (typeof body.description === "string") m.description = body.description;
  if (typeof body.hidden === "boolean") m.hidden = body.hidden;
  const c = body.config && typeof body.config === "object" ? (body.config as Record<string, unknown>) : {};
  if (typeof c.authorized === "boolean" && c.authorized !== m.config.authorized) {
    m.config.authorized = c.authorized;
    if (c.authorized) m.config.lastAuthorizedTime = now;
    else m.config.lastDeauthorizedTime = now;
  }
  if (typeof c.activeBridge === "boolean") m.config.activeBridge = c.activeBridge;
  if (typeof c.noAutoAssignIps === "boolean") m.config.noAutoAssignIps = c.noAutoAssignIps;
  if (typeof c.ssoExempt === "boolean") m.config.ssoExempt = c.ssoExempt;
  if (Array.isArray(c.ipAssignments)) m.config.ipAssignments = c.ipAssignments.filter((x): x is string => typeof x === "string");
  if (Array.isArray(c.capabilities)) m.config.capabilities = c.capabilities.filter((x): x is number => Number.isInteger(x));
  if (Array.isArray(c.tags)) m.config.tags = c.tags.filter((t): t is [number, number] => Array.isArray(t) && t.length === 2);
  m.config.revision++;
  m.clock = now;
}

export async function startFakeZtCentral(): Promise<FakeZtCentral> {
  const networks = new Map<string, StoredNetwork>();
  const tokens = new Map<string, Set<string> | "all">();
  const faults: CentralFault[] = [];
  const requests: CentralRequest[] = [];
  let window = { second: 0, count: 0 };

  /** §6.1: `token` (documented) or `bearer` (the Go client), scheme case-insensitive. */
  const tokenOf = (req: IncomingMessage): string | null => {
    const m = /^(token|bearer)\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
    return m && tokens.has(m[2]!) ? m[2]! : null;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, entry: CentralRequest) => {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (window.second !== second) window = { second, count: 0 };
    window.count++;
    const reset = (inSeconds = 1) => new Date((second + inSeconds) * 1000).toUTCString();
    const limits = { "x-ratelimit-limit": String(fake.rateLimit), "x-ratelimit-remaining": String(Math.max(fake.rateLimit - window.count, 0)), "x-ratelimit-reset": reset() };

    const fault = faults.shift();
    if (fault) {
      entry.fault = fault.kind;
      switch (fault.kind) {
        case "rate_limit":
          return send(res, 429, { message: "Too Many Requests" }, {
            ...limits,
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": reset(fault.resetInSeconds),
            ...(fault.retryAfter === undefined ? {} : { "retry-after": String(fault.retryAfter) }),
          });
        case "server_error":
          return send(res, fault.status ?? 500, { message: "Internal Server Error" });
        case "hang":
          return;
        case "close":
          return req.socket.destroy();
        case "truncate":
          res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
          res.write('[{"id":"');
          setTimeout(() => res.destroy(), 20);
          return;
        case "stall":
          res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
          res.write('[{"id":"');
          return;
        case "malformed":
          res.writeHead(200, { "content-type": "application/json" });
          return res.end('{"id": "8056c2e21c000001", "config": {');
      }
    }
    if (window.count > fake.rateLimit) return send(res, 429, { message: "Too Many Requests" }, { ...limits, "x-ratelimit-remaining": "0" });

    const path = new URL(req.url ?? "/", "http://central").pathname;
    const method = req.method ?? "GET";
    const token = tokenOf(req);

    if (path === "/status" && method === "GET") {
      // §6.2: 200 only (the Status object of the account behind the token, when there is one).
      return send(res, 200, { id: "central", type: "CentralStatus", clock: now, version: "1.0.0-fake", apiVersion: "4", uptime: 1, user: token ? { id: "u-1", displayName: "Central user" } : null }, limits);
    }
    if (!token) return send(res, 401, { message: "Authorization required" }, limits);
    const scope = tokens.get(token)!;
    const allowed = (nwid: string) => scope === "all" || scope.has(nwid);

    if (path === "/network") {
      if (method === "GET") return send(res, 200, [...networks.values()].filter((n) => allowed(n.id)).map(networkView), limits);
      return send(res, 501, { message: "not modelled by the stand-in" }, limits);
    }
    const m = /^\/network\/([^/]+)(?:\/member(?:\/([^/]+))?)?$/.exec(path);
    if (!m || !NETWORK.test(m[1]!) || (m[2] !== undefined && !NODE.test(m[2]))) return send(res, 404, { message: "Item not found" }, limits);
    const nwid = m[1]!.toLowerCase();
    const network = networks.get(nwid);
    // 403 for a network this token may not see (even one that does not exist: nothing leaks), 404 after.
    if (!allowed(nwid)) return send(res, 403, { message: "Access denied" }, limits);
    if (!network) return send(res, 404, { message: "Item not found" }, limits);
    const isMemberList = path.endsWith("/member");
    const nodeId = m[2]?.toLowerCase();

    if (!isMemberList && nodeId === undefined) {
      if (method === "GET") return send(res, 200, networkView(network), limits);
      return send(res, 501, { message: "not modelled by the stand-in" }, limits);
    }
    if (isMemberList) {
      if (method === "GET") return send(res, 200, [...network.members.values()], limits);
      return send(res, 404, { message: "Item not found" }, limits);
    }
    const member = network.members.get(nodeId!);
    switch (method) {
      case "GET":
        return member ? send(res, 200, member, limits) : send(res, 404, { message: "Item not found" }, limits);
      case "POST": {
        const body = entry.body;
        if (!body || typeof body !== "object" || Array.isArray(body)) return send(res, 400, { message: "Bad request" }, limits);
        let target = member;
        if (!target) {
          if (!fake.upsertMembers) return send(res, 404, { message: "Item not found" }, limits);
          target = newMember(nwid, nodeId!, now);
          network.members.set(nodeId!, target);
        }
        mergeMember(target, body as Record<string, unknown>, now);
        return send(res, 200, target, limits);
      }
      case "DELETE":
        if (!member) return send(res, 404, { message: "Item not found" }, limits);
        network.members.delete(nodeId!);
        return send(res, 200, undefined, limits);
      default:
        return send(res, 404, { message: "Item not found" }, limits);
    }
  };

  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      let body: unknown = raw || null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        /* kept as text; POST answers 400 */
      }
      const entry: CentralRequest = { method: req.method ?? "GET", path: req.url ?? "/", authorization: req.headers.authorization ?? null, body, status: null, fault: null };
      requests.push(entry);
      res.on("finish", () => (entry.status = res.statusCode));
      await handle(req, res, entry);
    })().catch((e) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`fake-zt-central: ${String(e)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  const fake: FakeZtCentral = {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    rateLimit: 100,
    upsertMembers: true,
    addToken(token, only) {
      tokens.set(token, only ? new Set(only.map((n) => n.toLowerCase())) : "all");
    },
    addNetwork(id, opts = {}) {
      if (!NETWORK.test(id)) throw new Error(`a network id is 16 hex: ${id}`);
      networks.set(id.toLowerCase(), { id: id.toLowerCase(), name: opts.name ?? "", description: opts.description ?? "", creationTime: Date.now(), members: new Map() });
    },
    addMember(networkId, nodeId, fields = {}) {
      const network = networks.get(networkId.toLowerCase());
      if (!network || !NODE.test(nodeId)) throw new Error(`unknown network ${networkId} or bad node id ${nodeId}`);
      const { authorized, ...rest } = fields;
      const m = newMember(network.id, nodeId.toLowerCase(), Date.now());
      m.config.identity = `${m.nodeId}:0:${"ab".repeat(32)}`;
      m.config.authorized = authorized ?? false;
      Object.assign(m, rest);
      network.members.set(m.nodeId, m);
      return m;
    },
    member: (networkId, nodeId) => networks.get(networkId.toLowerCase())?.members.get(nodeId.toLowerCase()),
    fail(fault, times = 1) {
      for (let i = 0; i < times; i++) faults.push(fault);
    },
    reset() {
      requests.length = 0;
      faults.length = 0;
      fake.rateLimit = 100;
      fake.upsertMembers = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return fake;
}
