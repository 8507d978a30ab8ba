import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster, type Instance } from "./cluster.js";

/**
 * SIGTERM under load (a rolling deploy): requests already in flight are answered and their writes
 * land before the database and Redis connections close; the process then exits 0.
 */
let cluster: Cluster;
let instance: Instance;

beforeAll(async () => {
  cluster = await startCluster({ RATE_LIMIT_ENABLED: "false" });
  instance = await cluster.start();
}, 120_000);
afterAll(() => cluster?.close());

describe("graceful shutdown", () => {
  it("answers the sign-ins in flight when SIGTERM arrives, then exits 0", async () => {
    const headers = { "content-type": "application/json" };
    const body = JSON.stringify({ email: "drain@example.com", password: "a long enough password 1" });
    expect((await fetch(`${instance.url}/api/v1/auth/register`, { method: "POST", headers, body })).status).toBe(201);

    // Each sign-in spends ~20-50 ms in argon2id (four at a time) and then writes its session and
    // audit record. When the first answer is back, the others were sent with it and wait for the
    // hash: SIGTERM arrives with about eight of them in flight.
    const inFlight = Array.from({ length: 12 }, () => fetch(`${instance.url}/api/v1/auth/login`, { method: "POST", headers, body }).then((r) => r.status));
    await Promise.race(inFlight);
    instance.process.child.kill("SIGTERM");
    const statuses = await Promise.all(inFlight);

    expect(statuses).toEqual(Array(12).fill(200));
    expect(await instance.process.exited).toBe(0);
    expect(instance.process.output()).not.toMatch(/CONNECTION_ENDED|Connection is closed|"level":50/);
  }, 60_000);
});
