import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster, type Instance } from "./cluster.js";

/**
 * Dependency outages without restarting Keyward (issue 18 item 3): the machine's PostgreSQL and
 * Redis are stopped under a running instance and started again. While one is down, requests that
 * need it get 503 SERVICE_UNAVAILABLE in the envelope (never a 500, never a request let through
 * unauthenticated), /api/ready names the dependency, and service comes back within 5 s of its
 * return. Runs as root with pg_ctlcluster (CI does), in the resilience suite only.
 */
const pgCluster = (action: "stop" | "start") =>
  execFileSync("pg_ctlcluster", ["--skip-systemctl-redirect", readdirSync("/etc/postgresql")[0]!, "main", action, ...(action === "stop" ? ["-m", "fast"] : [])]);
const redisUp = () => {
  try {
    return execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", "6379", "ping"]).toString().trim() === "PONG";
  } catch {
    return false;
  }
};
const startRedis = () => {
  if (!redisUp()) execFileSync("redis-server", ["--daemonize", "yes", "--bind", "127.0.0.1", "--port", "6379", "--save", "", "--appendonly", "no"]);
};
const pgUp = () => {
  try {
    execFileSync("pg_isready", ["-h", "127.0.0.1", "-p", "5432", "-q"]);
    return true;
  } catch {
    return false;
  }
};
const until = async (ok: () => boolean | Promise<boolean>, ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
};

let cluster: Cluster;
let instance: Instance;
beforeAll(async () => {
  cluster = await startCluster();
  // Info: the Redis test reads the line that says the connection is back.
  instance = await cluster.start({ LOG_LEVEL: "info" });
}, 120_000);
afterAll(async () => {
  // Whatever happened above, the services are left running.
  if (!pgUp()) pgCluster("start");
  startRedis();
  await until(() => pgUp() && redisUp(), 30_000);
  await cluster?.close();
}, 60_000);

const call = async (path: string, init: { body?: unknown; token?: string } = {}) => {
  const res = await fetch(`${instance.url}${path}`, {
    method: init.body ? "POST" : "GET",
    headers: { "content-type": "application/json", ...(init.token ? { authorization: `Bearer ${init.token}` } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json().catch(() => ({}))) as { error?: { type: string; details?: Record<string, unknown> }; data?: Record<string, unknown> } };
};
const PASSWORD = "correct horse battery staple";
const signIn = async (email: string) => String((await call("/api/v1/auth/login", { body: { email, password: PASSWORD } })).body.data?.token ?? "");

describe("dependency outages", () => {
  it("PostgreSQL down: 503 in the envelope, readiness says which, back within 5 s of its return", async () => {
    const email = `outage.${Date.now()}@example.com`;
    expect((await call("/api/v1/auth/register", { body: { email, password: PASSWORD, full_name: "O" } })).status).toBe(201);
    const token = await signIn(email);
    expect((await call("/api/v1/auth/me", { token })).status).toBe(200);

    pgCluster("stop");
    const me = await call("/api/v1/auth/me", { token });
    expect(me.status).toBe(503);
    expect(me.body.error?.type).toBe("SERVICE_UNAVAILABLE");
    expect(me.retryAfter).toBe("5");
    const registering = await call("/api/v1/auth/register", { body: { email: `during.${Date.now()}@example.com`, password: PASSWORD, full_name: "D" } });
    expect(registering.status).toBe(503);
    const ready = await call("/api/ready");
    expect(ready.status).toBe(503);
    expect(JSON.stringify(ready.body.error?.details)).toMatch(/database/i);
    expect((await call("/api/health")).status).toBe(200);

    pgCluster("start");
    expect(await until(pgUp, 30_000)).toBe(true);
    const back = Date.now();
    expect(await until(async () => (await call("/api/v1/auth/me", { token })).status === 200, 5_000)).toBe(true);
    expect(Date.now() - back).toBeLessThan(5_000);
    expect((await call("/api/ready")).status).toBe(200);
  });

  it("Redis down: sessions fail closed with 503, and after its return sign-in works within 5 s", async () => {
    const email = `redis.${Date.now()}@example.com`;
    expect((await call("/api/v1/auth/register", { body: { email, password: PASSWORD, full_name: "R" } })).status).toBe(201);
    const token = await signIn(email);
    expect((await call("/api/v1/auth/me", { token })).status).toBe(200);

    try {
      execFileSync("redis-cli", ["-h", "127.0.0.1", "-p", "6379", "shutdown", "nosave"]);
    } catch {
      // redis-cli reports the dropped connection of a shutdown as an error.
    }
    expect(await until(() => !redisUp(), 10_000)).toBe(true);
    const statuses = await Promise.all(Array.from({ length: 5 }, async () => (await call("/api/v1/auth/me", { token })).status));
    expect(statuses.every((s) => s === 503)).toBe(true);
    // Rate limits live in Redis too: sign-in fails closed rather than going unlimited.
    expect((await call("/api/v1/auth/login", { body: { email, password: PASSWORD } })).status).toBe(503);
    const ready = await call("/api/ready");
    expect(ready.status).toBe(503);
    expect(JSON.stringify(ready.body.error?.details)).toMatch(/redis/i);

    startRedis();
    expect(await until(redisUp, 10_000)).toBe(true);
    const back = Date.now();
    // Redis kept nothing (no persistence here): the old session is gone, a new sign-in works.
    expect(await until(async () => (await signIn(email)).length > 0, 5_000)).toBe(true);
    expect(Date.now() - back).toBeLessThan(5_000);
    expect((await call("/api/v1/auth/me", { token })).status).toBe(401);

    // The outage is in the structured log once, and its end; never ioredis's raw stderr dump of
    // each failed reconnection.
    const log = instance.process.output();
    expect(log).not.toContain("Unhandled error event");
    const lost = log.split("\n").filter((l) => l.includes("redis connection lost"));
    expect(lost).toHaveLength(1);
    expect(JSON.parse(lost[0]!)).toMatchObject({ level: 40, redis: { code: expect.stringMatching(/^E[A-Z]+$/) } });
    expect(log).toContain("redis connection restored");
  });
});
