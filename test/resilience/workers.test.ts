import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stopServerProcess } from "../helpers/server-process.js";
import { startCluster, type Cluster, type Instance } from "./cluster.js";

/**
 * WORKERS=2 (issue 17): one instance, two worker processes on one port, supervised by the primary.
 * Both serve; a worker that dies is replaced while the other keeps serving; SIGTERM stops them all.
 */
let cluster: Cluster;
let instance: Instance;
beforeAll(async () => {
  cluster = await startCluster();
  instance = await cluster.start({ WORKERS: "2" });
}, 120_000);
afterAll(async () => {
  await cluster?.close();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const workerPids = (output: string) => (/with 2 workers \(pids ([\d, ]+)\)/.exec(output)?.[1] ?? "").split(", ").map(Number);

describe("WORKERS=2", () => {
  it("announces one instance with two workers, and both answer", async () => {
    const pids = workerPids(instance.process.output());
    expect(pids).toHaveLength(2);
    expect(pids.every(alive)).toBe(true);
    const statuses = await Promise.all(Array.from({ length: 40 }, () => fetch(`${instance.url}/api/health`).then((r) => r.status)));
    expect(statuses.every((s) => s === 200)).toBe(true);
    // A session made through one worker is known to whichever worker answers next (they share Redis).
    const email = `workers.${Date.now()}@example.com`;
    const body = JSON.stringify({ email, password: "correct horse battery staple", full_name: "W" });
    expect((await fetch(`${instance.url}/api/v1/auth/register`, { method: "POST", headers: { "content-type": "application/json" }, body })).status).toBe(201);
    const login = (await (await fetch(`${instance.url}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body })).json()) as { data: { token: string } };
    const me = await Promise.all(Array.from({ length: 10 }, () => fetch(`${instance.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${login.data.token}` } }).then((r) => r.status)));
    expect(me.every((s) => s === 200)).toBe(true);
  });

  it("replaces a worker that dies, serving all the while, and stops every worker on SIGTERM", async () => {
    const [first] = workerPids(instance.process.output());
    process.kill(first!, "SIGKILL");
    // Connections the dead worker held are gone with it (a client retries those); new ones are served.
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 20; i++) expect((await fetch(`${instance.url}/api/health`)).status).toBe(200);
    for (let i = 0; i < 100 && !instance.process.output().includes("starting another"); i++) await new Promise((r) => setTimeout(r, 100));
    expect(instance.process.output()).toContain(`keyward: worker ${first} ended (SIGKILL); starting another.`);

    const children = execFileSync("pgrep", ["-P", String(instance.process.child.pid)]).toString().trim().split("\n").map(Number);
    expect(children).toHaveLength(2);
    expect(await stopServerProcess(instance.process)).toBe(0);
    expect(children.filter(alive)).toEqual([]);
  });
});
