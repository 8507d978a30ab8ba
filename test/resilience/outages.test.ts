import { sign } from "cookie-signature";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster, type Instance } from "./cluster.js";
import { pgCluster, pgUp, redisUp, restoreServices, startRedis, stopRedis, until } from "./services.js";

/**
 * Dependency outages without restarting Keyward (issue 18 item 3): the machine's PostgreSQL and
 * Redis are stopped under a running instance and started again. While one is down, requests that
 * need it get 503 SERVICE_UNAVAILABLE in the envelope (never a 500, never a request let through
 * unauthenticated), /api/ready names the dependency, and service comes back within 5 s of its
 * return. Runs as root with pg_ctlcluster (CI does), in the resilience suite only.
 */
let cluster: Cluster;
let instance: Instance;
beforeAll(async () => {
  cluster = await startCluster();
  // Info: the Redis test reads the line that says the connection is back.
  instance = await cluster.start({ LOG_LEVEL: "info" });
}, 120_000);
afterAll(async () => {
  // Whatever happened above, the services are left running.
  await restoreServices();
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
const cookieName = "keyward.sid";
const signIn = async (email: string) => String((await call("/api/v1/auth/login", { body: { email, password: PASSWORD } })).body.data?.token ?? "");

describe("dependency outages", () => {
  it("PostgreSQL down: 503 in the envelope, readiness says which, back within 5 s of its return", async () => {
    const email = `outage.${Date.now()}@example.com`;
    expect((await call("/api/v1/auth/register", { body: { email, password: PASSWORD, full_name: "O" } })).status).toBe(201);
    const token = await signIn(email);
    expect((await call("/api/v1/auth/me", { token })).status).toBe(200);

    await pgCluster("stop");
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
    // Every door says it in its own terms, with 503 and Retry-After.
    const gql = await fetch(`${instance.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query: "{ me { id } }" }) });
    expect([gql.status, gql.headers.get("retry-after")]).toEqual([503, "5"]);
    expect(((await gql.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe("SERVICE_UNAVAILABLE");
    const tokenAnswer = await fetch(`${instance.url}/api/v1/oidc/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from("some-client:some-secret").toString("base64")}` },
      body: "grant_type=client_credentials",
    });
    expect([tokenAnswer.status, tokenAnswer.headers.get("retry-after")]).toEqual([503, "5"]);
    expect(((await tokenAnswer.json()) as { error: string }).error).toBe("temporarily_unavailable");
    // A person in a browser: the provider's authorization page and the hosted sign-in page.
    for (const path of ["/api/v1/oidc/authorize?client_id=some-client&response_type=code&scope=openid&redirect_uri=https%3A%2F%2Frp.example%2Fcb", "/login", "/invite?token=abc"]) {
      const page = await fetch(`${instance.url}${path}`, { headers: { accept: "text/html,application/xhtml+xml" }, redirect: "manual" });
      expect([path, page.status, page.headers.get("retry-after"), page.headers.get("content-type")?.split(";")[0]]).toEqual([path, 503, "5", "text/html"]);
      expect(await page.text()).toContain("Try again shortly");
    }

    await pgCluster("start");
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

    await stopRedis();
    expect(await until(async () => !(await redisUp()), 10_000)).toBe(true);
    const statuses = await Promise.all(Array.from({ length: 5 }, async () => (await call("/api/v1/auth/me", { token })).status));
    expect(statuses.every((s) => s === 503)).toBe(true);
    // Rate limits live in Redis too: sign-in fails closed rather than going unlimited.
    expect((await call("/api/v1/auth/login", { body: { email, password: PASSWORD } })).status).toBe(503);
    const ready = await call("/api/ready");
    expect(ready.status).toBe(503);
    expect(JSON.stringify(ready.body.error?.details)).toMatch(/redis/i);
    // The account page with a session cookie: "try again shortly", not a sign-in prompt that would fail too.
    const account = await fetch(`${instance.url}/account`, { headers: { accept: "text/html", cookie: `${cookieName}=s:${sign(token, cluster.env.SESSION_SECRET!)}` }, redirect: "manual" });
    expect([account.status, account.headers.get("retry-after")]).toEqual([503, "5"]);
    expect(await account.text()).toContain("Try again shortly");

    await startRedis();
    expect(await until(redisUp, 10_000)).toBe(true);
    const back = Date.now();
    // Redis kept nothing (no persistence here): the old session is gone, a new sign-in works.
    expect(await until(async () => (await signIn(email)).length > 0, 5_000)).toBe(true);
    expect(Date.now() - back, "ms from Redis's return to a sign-in").toBeLessThan(5_000);
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
