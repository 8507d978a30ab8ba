import fc from "fast-check";
import type { TestApp } from "../helpers/app.js";
import { CHECKED_BY_CALLER, ContractChecker, type ContractDocument } from "../helpers/contract.js";
import { truncate, type FuzzRequest } from "./request.js";
import { OPENAPI } from "./rest.js";
import type { World } from "./world.js";
import { WriteTracker } from "./writes.js";

export type Caller = "anonymous" | "signed-in";

export interface Answer {
  status: number;
  text: string;
  body: any;
}

/**
 * Server errors that are answers, not failures: the state of an upstream the fuzz does not control
 * (the ZeroTier Central stand-in refusing a fuzzed token).
 */
const UPSTREAM_CODES = /^CONTROLLER_[A-Z_]+$/;
const ENVELOPE_TYPE = /^[A-Z][A-Z0-9_]*$/;

const contract = new ContractChecker(OPENAPI as unknown as ContractDocument);

/** The REST contract: no 5xx, every error the envelope with a code, every answer as documented. */
export function restProblem(req: { method: string; url: string }, a: Answer, headers: Headers): string | null {
  const type = a.body?.error?.type;
  if (a.status >= 500 && !(typeof type === "string" && UPSTREAM_CODES.test(type))) return `server error ${a.status}`;
  if (a.status >= 400) {
    const b = a.body;
    const envelope = b && b.version === "1.0" && b.success === false && b.code === a.status && typeof b.request_id === "string" && ENVELOPE_TYPE.test(b.error?.type ?? "");
    if (!envelope) return "an error outside the envelope (version, success: false, code = status, request_id, error.type)";
  }
  const problem = contract.check({ method: req.method, url: req.url, status: a.status, headers, text: a.text });
  // Outside the document (another method, an unknown path) the answer is 405 or 404, unless the
  // request fails before routing: a body or credential it cannot read, or the edge rate limit.
  if (problem?.startsWith("an undocumented") && BEFORE_ROUTING.test(`${a.status} ${a.body?.error?.type}`)) return null;
  return problem;
}

const BEFORE_ROUTING = /^(400 (INVALID_JSON|JSON_TOO_DEEP|INVALID_BODY_ENCODING|INVALID_PATH_ENCODING|INVALID_CONTENT_LENGTH)|413 PAYLOAD_TOO_LARGE|415 UNSUPPORTED_[A-Z]+|401 [A-Z_]+|429 RATE_LIMIT_EXCEEDED)$/;

/** The GraphQL contract: no 5xx, a GraphQL-shaped answer, every error coded and none internal. */
export function gqlProblem(_req: unknown, a: Answer): string | null {
  if (a.status >= 500) return `server error ${a.status}`;
  const b = a.body;
  if (!b || typeof b !== "object" || Array.isArray(b) || !("data" in b || "errors" in b)) return "not a GraphQL answer";
  for (const e of b.errors ?? []) {
    const code = e?.extensions?.code;
    const status = e?.extensions?.status;
    if (typeof code !== "string" || typeof status !== "number") return "an error without extensions.code and extensions.status";
    if (code === "INTERNAL_SERVER_ERROR" || code === "INTERNAL_ERROR") return `an internal error (${code})`;
    if (status >= 500 && !UPSTREAM_CODES.test(code)) return `an error with status ${status}`;
  }
  return null;
}

/** Refused: nothing of it may have happened. REST: a 4xx. GraphQL: errors and no top-level field answered. */
export function refused(door: "rest" | "graphql", a: Answer): boolean {
  if (door === "rest") return a.status >= 400 && a.status < 500;
  if (!Array.isArray(a.body?.errors) || !a.body.errors.length) return false;
  const data = a.body.data;
  return data == null || Object.values(data).every((v) => v === null);
}

export interface Stats {
  requests: number;
  batches: number;
  writeChecked: number;
  rebuilds: number;
  statuses: Record<string, number>;
  operations: Set<string>;
  /** Milliseconds spent per operation (to see what a run's time goes to). */
  time: Record<string, number>;
}

export const newStats = (): Stats => ({ requests: 0, batches: 0, writeChecked: 0, rebuilds: 0, statuses: {}, operations: new Set(), time: {} });

/**
 * Runs `requests` fuzzed requests as one caller, in batches sent concurrently; fast-check shrinks a
 * failing batch to the smallest one that still fails. Each answer is checked; a batch whose
 * requests were all refused must not have written to the database.
 */
export interface FuzzOptions {
  app: TestApp;
  door: "rest" | "graphql";
  caller: Caller;
  world: World;
  arbitrary: fc.Arbitrary<FuzzRequest>;
  requests: number;
  batch: number;
  stats: Stats;
}

/**
 * fuzz(), then more batches drawn from the operations the run has not sent yet, until each of
 * `operations` has been fuzzed: a draw of 2,500 over 200 equally likely operations leaves one out
 * about once in a few hundred runs, and every run must reach every operation. `only(keep)` is the
 * run's arbitrary narrowed to the operations `keep` accepts.
 */
export async function fuzzEveryOperation(options: FuzzOptions, operations: string[], only: (keep: (operation: string) => boolean) => fc.Arbitrary<FuzzRequest>): Promise<void> {
  await fuzz(options);
  for (;;) {
    const left = new Set(operations.filter((op) => !options.stats.operations.has(op)));
    if (!left.size) return;
    await fuzz({ ...options, arbitrary: only((op) => left.has(op)), requests: options.stats.requests + 6 * left.size });
  }
}

export async function fuzz(options: FuzzOptions): Promise<void> {
  const { app, door, caller, world, stats } = options;
  const tracker = new WriteTracker(app);
  await tracker.baseline();
  const check = door === "rest" ? restProblem : gqlProblem;

  async function send(req: FuzzRequest) {
    const raw = req.materialize(world);
    // What actually goes out: fetch's URL parser resolves dot segments ("/x/./y", "/x/%2e%2e/y").
    const sent = new URL(app.url + raw.url);
    const m = { ...raw, url: sent.pathname + sent.search };
    const t0 = performance.now();
    const headers: Record<string, string> = { ...m.headers };
    if (caller === "signed-in") headers.authorization = `Bearer ${world.token}`;
    const res = await fetch(app.url + m.url, { method: m.method, headers, body: m.body, redirect: "manual", ...{ [CHECKED_BY_CALLER]: true } });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const ms = performance.now() - t0;
    stats.time[req.operation] = (stats.time[req.operation] ?? 0) + ms;
    return { m, answer: { status: res.status, text, body }, headers: res.headers };
  }

  const property = fc.asyncProperty(fc.array(options.arbitrary, { minLength: 1, maxLength: options.batch }), async (reqs) => {
    const t0 = performance.now();
    const results = await Promise.all(reqs.map(send));
    stats.time["~batch"] = (stats.time["~batch"] ?? 0) + performance.now() - t0;
    stats.batches += 1;
    stats.requests += reqs.length;
    for (const [i, r] of results.entries()) {
      stats.statuses[r.answer.status] = (stats.statuses[r.answer.status] ?? 0) + 1;
      stats.operations.add(reqs[i]!.operation);
      const t2 = performance.now();
      const problem = check({ method: r.m.method, url: r.m.url }, r.answer, r.headers);
      stats.time["~check"] = (stats.time["~check"] ?? 0) + performance.now() - t2;
      if (problem) {
        // Take this batch's writes as the reference first: shrinking runs the property again.
        await tracker.check(false);
        throw new Error(`${caller} ${describe(r.m)}\n→ ${r.answer.status}: ${problem}\n${truncate(r.answer.text, 1500)}`);
      }
    }
    const allRefused = results.every((r) => refused(door, r.answer));
    if (allRefused) stats.writeChecked += 1;
    const t1 = performance.now();
    const written = await tracker.check(allRefused);
    stats.time["~writes"] = (stats.time["~writes"] ?? 0) + performance.now() - t1;
    if (written) throw new Error(`${caller}: a batch of refused requests wrote to the database: ${written}\n${results.map((r) => `${describe(r.m)} → ${r.answer.status} ${truncate(r.answer.text, 300)}`).join("\n")}`);
    // A write that succeeded may have taken the world apart (deleted the organization, ended the session).
    if (caller === "signed-in" && results.some((r, i) => reqs[i]!.mutates && reqs[i]!.destructive && !refused(door, r.answer))) {
      const t3 = performance.now();
      if (await world.ensure()) stats.rebuilds += 1;
      await tracker.baseline();
      stats.time["~ensure"] = (stats.time["~ensure"] ?? 0) + performance.now() - t3;
    }
  });

  // Batches are 1..batch requests long: top up until the count is reached.
  while (stats.requests < options.requests) {
    const runs = Math.ceil((options.requests - stats.requests) / ((options.batch + 1) / 2));
    await fc.assert(property, { numRuns: runs, ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) });
  }
}

function describe(m: { method: string; url: string; headers: Record<string, string>; body: string | undefined }): string {
  const h = Object.keys(m.headers).length ? ` headers=${JSON.stringify(m.headers)}` : "";
  return `${m.method} ${truncate(m.url, 400)}${h}${m.body === undefined ? "" : ` body=${truncate(m.body)}`}`;
}

/** CPU seconds this process has used (the run's cost on a shared machine, where wall time varies). */
export const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

export function summary(label: string, s: Stats, ms: number): string {
  const statuses = Object.entries(s.statuses).sort().map(([k, v]) => `${k}:${v}`).join(" ");
  const slowest = Object.entries(s.time).sort((a, b) => b[1] - a[1]).slice(0, 9).map(([op, ms]) => `${op} ${Math.round(ms)} ms`).join(", ");
  return `${label}: ${s.requests} requests in ${(ms / 1000).toFixed(1)} s (process CPU so far ${cpuSeconds().toFixed(1)} s) over ${s.operations.size} operations; ${s.batches} batches, ${s.writeChecked} write-checked, ${s.rebuilds} rebuilds; ${statuses}; time: ${slowest}`;
}
