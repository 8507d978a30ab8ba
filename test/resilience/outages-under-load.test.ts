import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectPostgres } from "../../src/infra/db.js";
import { startCluster, type Cluster } from "./cluster.js";
import { driveMixed, prepareMixed, type Kind, type Outcome, type Phase } from "./mixed-load.js";
import { refresh } from "./load.js";
import { untilListening } from "../helpers/server-process.js";
import { pgCluster, pgUp, redisUp, restoreServices, startRedis, stopRedis, until } from "./services.js";

/**
 * PostgreSQL and Redis stopped under load (issue 31): 35 loops of sign-ins, GraphQL `{ me }`,
 * certificate signing, client-credentials grants and refresh rotations run against one instance
 * (WORKERS=1) or one instance of two workers (WORKERS=2) while the machine's PostgreSQL or Redis
 * stops and starts again. Every process stays up; every answer while the dependency is down is a
 * 2xx (finished before the stop) or a 503 with Retry-After, never a 500 and never a cut connection;
 * every kind of request succeeds again within 5 s of the dependency's return; and every
 * certificate acknowledged is in the database, every refresh chain still rotates.
 */
const OUTAGE_MS = 3_000;
const KINDS: Kind[] = ["login", "me", "sign", "client_credentials", "refresh"];

let cluster: Cluster;
let sql: postgres.Sql;
beforeAll(async () => {
  await restoreServices();
  // Rate limits on, as in production (they live in Redis too), set high enough for the load.
  cluster = await startCluster({
    SSH_REQUIRE_VERIFIED_KEYS: "false",
    RATE_LIMIT_LOGIN_IP: "1000000/3600",
    RATE_LIMIT_API_IP: "1000000/60",
    RATE_LIMIT_OIDC_TOKEN: "1000000/60",
    RATE_LIMIT_OIDC_AUTHORIZE: "1000000/60",
    RATE_LIMIT_REGISTER: "1000/3600",
  });
  sql = connectPostgres(cluster.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
}, 120_000);
afterAll(async () => {
  await restoreServices();
  await sql?.end();
  await cluster?.close();
}, 60_000);

const alive = (pid: number | undefined) => {
  try {
    return pid !== undefined && process.kill(pid, 0);
  } catch {
    return false;
  }
};
const summary = (outcomes: Outcome[]) => {
  const by: Record<string, number> = {};
  for (const o of outcomes) by[`${o.phase} ${o.kind} ${o.status}${o.code ? ` ${o.code}` : ""}`] = (by[`${o.phase} ${o.kind} ${o.status}${o.code ? ` ${o.code}` : ""}`] ?? 0) + 1;
  return by;
};

async function outageUnderLoad(dependency: "postgres" | "redis", workers: 1 | 2) {
  const instance = await cluster.start({ WORKERS: String(workers) });
  try {
    const fixture = await prepareMixed(instance.url, 7);
    let phase: Phase = "before";
    const load = driveMixed(instance.url, fixture, () => phase);
    const succeeded = (kind: Kind, p: Phase, after = 0) => load.outcomes.some((o) => o.kind === kind && o.phase === p && o.status >= 200 && o.status < 300 && o.at >= after);
    // Every kind is served before the outage.
    expect(await until(() => KINDS.every((k) => succeeded(k, "before")), 20_000), JSON.stringify(summary(load.outcomes))).toBe(true);

    phase = "outage";
    // Asynchronously (test/resilience/services.ts): the load runs in this event loop.
    if (dependency === "postgres") await pgCluster("stop");
    else await stopRedis();
    expect(await until(async () => !(await (dependency === "postgres" ? pgUp() : redisUp())), 10_000)).toBe(true);
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    phase = "returning";
    const restarting = Date.now();
    if (dependency === "postgres") await pgCluster("start");
    else await startRedis();
    expect(await until(dependency === "postgres" ? pgUp : redisUp, 30_000)).toBe(true);
    const back = Date.now();
    phase = "after";
    // Every kind is served again within 5 s of the dependency's return.
    const recovered = await until(() => KINDS.every((k) => succeeded(k, "after", back)), 5_000);
    const recoveredIn = Date.now() - back;
    await new Promise((r) => setTimeout(r, 500));
    await load.stop();
    if (process.env.DEBUG_OUTAGE) console.log("BACK", back, JSON.stringify(load.outcomes.filter((o) => o.status === 0).map((o) => ({ ...o, rel: o.at - back }))), instance.process.output().split("\n").filter((l) => /"level":(40|50|60)/.test(l) && !/email_outbox|audit_logs/.test(l)).map((l) => l.slice(0, 400)).join("\n"));
    // What the answers were, and the first errors the process logged, for a failure's message.
    const logged = instance.process.output().split("\n").filter((l) => /"level":(50|60)/.test(l));
    const seen = `${JSON.stringify(summary(load.outcomes))}\n${logged.slice(0, 5).map((l) => l.slice(0, 800)).join("\n")}`;
    expect(recovered, `not every kind answered 2xx within 5 s: ${seen}`).toBe(true);
    expect(recoveredIn).toBeLessThan(5_000);

    // The process (and with WORKERS=2 the primary and both workers) never went down.
    expect(instance.process.child.exitCode, instance.process.output().slice(-3000)).toBeNull();
    expect(instance.process.output()).not.toMatch(/uncaught exception|ended \(|could not start/);
    if (workers === 2) {
      const pids = (/with 2 workers \(pids ([\d, ]+)\)/.exec(instance.process.output())?.[1] ?? "").split(", ").map(Number);
      expect(pids.every(alive)).toBe(true);
    }

    // No 500 anywhere; while the dependency was down, a 2xx (finished before the stop) or a 503
    // with Retry-After; no request went unanswered.
    expect(summary(load.outcomes.filter((o) => o.status === 0 || (o.status >= 500 && o.status !== 503))), seen).toEqual({});
    // (Requests answered once it was starting again may meet it back: a Redis without persistence
    // has forgotten every session, and says 401. They are judged with the "after" ones.)
    const during = load.outcomes.filter((o) => o.phase === "outage" && o.at < restarting);
    expect(summary(during.filter((o) => !(o.status === 503 || (o.status >= 200 && o.status < 300)))), seen).toEqual({});
    expect(summary(during.filter((o) => o.status === 503 && !o.retryAfter)), seen).toEqual({});
    expect(during.filter((o) => o.status === 503).length, seen).toBeGreaterThan(20);
    // GraphQL says it in its own terms, and the token endpoint in OAuth's.
    for (const o of during.filter((x) => x.status === 503)) {
      if (o.kind === "me") expect(o.code).toBe("SERVICE_UNAVAILABLE");
      else if (o.kind === "client_credentials" || o.kind === "refresh") expect(o.code).toBe("temporarily_unavailable");
      else expect(o.code).toBe("SERVICE_UNAVAILABLE");
    }

    // Every certificate acknowledged is stored, with its serial.
    const stored = await sql<{ id: string; serial: string }[]>`select id, serial::text as serial from ssh_certificates where organization_id = ${fixture.orgId}`;
    const byId = new Map(stored.map((c) => [c.id, c.serial]));
    expect(load.certificates.length).toBeGreaterThan(0);
    expect(load.certificates.filter((c) => byId.get(c.certId) !== c.serial)).toEqual([]);
    // Every refresh chain goes on rotating from the last token it was given.
    for (const chain of load.chains) expect((await refresh(fixture.oidc, chain.at(-1)!)).status).toBe(200);
  } finally {
    await restoreServices();
    await cluster.stop(instance);
  }
}

describe("dependency outages under load", () => {
  it("PostgreSQL stops under 35 concurrent requests, one worker", () => outageUnderLoad("postgres", 1));
  it("PostgreSQL stops under 35 concurrent requests, two workers", () => outageUnderLoad("postgres", 2));
  it("Redis stops under 35 concurrent requests, one worker", () => outageUnderLoad("redis", 1));
  it("Redis stops under 35 concurrent requests, two workers", () => outageUnderLoad("redis", 2));
});

describe("starting while PostgreSQL is down", () => {
  it("one process exits with EX_TEMPFAIL (75) for its supervisor to start it again; a primary keeps retrying its workers and serves once the database is back", async () => {
    await pgCluster("stop");
    expect(await until(async () => !(await pgUp()), 10_000)).toBe(true);
    const single = await cluster.spawn();
    const workers = await cluster.spawn({ WORKERS: "2" });
    try {
      expect(await single.process.exited, single.process.output()).toBe(75);
      expect(single.process.output()).toContain("keyward: PostgreSQL is not reachable at ");
      // The primary stays, retrying with growing pauses.
      expect(await until(() => (workers.process.output().match(/could not reach PostgreSQL or Redis; starting another/g) ?? []).length >= 4, 30_000), workers.process.output()).toBe(true);
      expect(workers.process.child.exitCode).toBeNull();
      expect(workers.process.output()).toMatch(/starting another in \d+ s/);
    } finally {
      await pgCluster("start");
    }
    expect(await until(pgUp, 30_000)).toBe(true);
    await untilListening(workers.process);
    expect(await until(async () => (await fetch(`${workers.url}/api/ready`).catch(() => null))?.status === 200, 15_000)).toBe(true);
    await cluster.stop(workers);
  });
});
