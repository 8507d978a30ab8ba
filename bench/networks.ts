import "reflect-metadata";
import { spawn } from "node:child_process";
import { cpus, tmpdir } from "node:os";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { loadConfig } from "../src/config/index.js";
import { createContainer } from "../src/container.js";
import { actingAs, anonymousContext } from "../src/lib/request-context.js";
import { createControllerClient } from "../src/modules/networks/controller/index.js";
import { usersRepository } from "../src/modules/users/users.repository.js";

/**
 * Reconciliation at scale, against the REAL ZeroTier controller (../shared/tools/zerotier): 1,000
 * device memberships on 10 networks, half of them activated. Prints the time and the controller
 * calls of a reconciliation pass (with no drift, then with 10% drift) beside the bare controller
 * listing of the same members, and the ratio. `npm run bench:networks` (needs root and iproute2).
 */
const NETWORKS = Number(process.env.BENCH_NETWORKS ?? 10);
const PER_NETWORK = Number(process.env.BENCH_MEMBERS ?? 100);
const ROUNDS = 5;
const TOOL = process.env.ZEROTIER_TOOL ?? "/work/shared/tools/zerotier/controller.mjs";

let calls = 0;
const countingFetch: typeof fetch = (input, init) => {
  calls++;
  return fetch(input, init);
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const zt = spawn(process.execPath, [TOOL, "--home", mkdtempSync(join(tmpdir(), "kw-bench-zt-"))], { stdio: ["pipe", "pipe", "inherit"] });
  const info: { url: string; token: string } = await new Promise((resolve) => createInterface({ input: zt.stdout! }).once("line", (l) => resolve(JSON.parse(l))));
  const config = loadConfig({
    ...process.env,
    NODE_ENV: "test",
    LOG_LEVEL: "silent",
    SESSION_SECRET: "bench-session-secret-that-is-long-enough-0123456789",
    ENCRYPTION_KEYS: `b1:${Buffer.alloc(32, 7).toString("base64")}`,
    ZEROTIER_CONTROLLER_URLS: info.url,
    RATE_LIMIT_ENABLED: "false",
    // Its account is written straight into the database, with no address to prove.
    REQUIRE_VERIFIED_EMAIL: "false",
    DATA_DIR: mkdtempSync(join(tmpdir(), "kw-bench-data-")),
  });
  const c = await createContainer(config, { controllerClient: (cfg) => createControllerClient(cfg, { fetch: countingFetch }) });
  await c.database.migrate();
  const s = c.services;
  const bare = createControllerClient({ mode: "controller", baseUrl: info.url, token: info.token }, { fetch: countingFetch, maxRetries: 0 });
  try {
    const user = await usersRepository.insert(c.db, { email: `bench.${Date.now()}@example.com`, fullName: "Bench", isSuperadmin: false, now: new Date() });
    const ctx = actingAs(anonymousContext("bench"), user);
    const org = await s.orgs.create(ctx, { name: "Bench networks" });
    await s.networkController.put(ctx, org.id, { ztApiMode: "controller", ztApiUrl: info.url, ztApiToken: info.token });

    process.stdout.write(`seeding ${NETWORKS} networks × ${PER_NETWORK} members… `);
    const t0 = performance.now();
    const nets: Array<{ id: string; nwid: string }> = [];
    for (let n = 0; n < NETWORKS; n++) {
      const nwid = await bare.createNetwork!(`bench-${n}`);
      const network = await s.portalNetworks.create(ctx, org.id, { name: `bench ${n}`, zerotierNetworkId: nwid, requestMode: "open" });
      await s.networkApprovals.request(ctx, org.id, { portalNetworkId: network.id });
      nets.push({ id: network.id, nwid });
    }
    let node = 0x1000000000;
    for (const net of nets) {
      for (let i = 0; i < PER_NETWORK; i++) {
        const nodeId = (node++).toString(16);
        const { device } = await s.devices.create(ctx, org.id, { nodeId, nickname: `bench ${nodeId}` });
        const m = await s.devices.joinNetwork(ctx, org.id, device.id, net.id);
        // Half are activated (authorized at the controller); the other half are members left off.
        if (i % 2 === 0) await s.networkAccess.activate(ctx, org.id, m.id, { lifetimeMinutes: 600 });
        else await bare.setAuthorized(net.nwid, nodeId, false);
      }
    }
    console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const bareRuns: number[] = [];
    let bareCalls = 0;
    for (let r = 0; r < ROUNDS; r++) {
      calls = 0;
      const t = performance.now();
      for (const net of nets) await bare.listMembers(net.nwid);
      bareRuns.push(performance.now() - t);
      bareCalls = calls;
    }
    const pass = async () => {
      calls = 0;
      const t = performance.now();
      const report = await s.networkReconcile.reconcileOrg(ctx, org.id);
      return { ms: performance.now() - t, calls, report };
    };
    const clean: Array<Awaited<ReturnType<typeof pass>>> = [];
    for (let r = 0; r < ROUNDS; r++) clean.push(await pass());
    // 10% drift behind Keyward's back: strays on, activated members off.
    let drift = 0;
    for (const net of nets) {
      const members = await bare.listMembers(net.nwid);
      for (const m of members.slice(0, PER_NETWORK / 10)) {
        await bare.setAuthorized(net.nwid, m.nodeId, !m.authorized);
        drift++;
      }
    }
    const drifted = await pass();

    const bareMs = median(bareRuns);
    const cleanMs = median(clean.map((x) => x.ms));
    console.log(`\nKeyward network reconciliation bench: ${cpus().length} cores (${cpus()[0]?.model}), database ${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"}, real ZeroTierOne controller`);
    console.log(`${NETWORKS} networks, ${NETWORKS * PER_NETWORK} members (${(NETWORKS * PER_NETWORK) / 2} activated), median of ${ROUNDS}`);
    console.log(`  bare controller listing of every member:   ${bareMs.toFixed(0).padStart(6)} ms, ${bareCalls} controller calls`);
    console.log(`  reconciliation pass, no drift:             ${cleanMs.toFixed(0).padStart(6)} ms, ${clean[0]!.calls} controller calls, ${clean[0]!.report.changes} changes`);
    console.log(`  reconciliation pass, ${drift} drifted members: ${drifted.ms.toFixed(0).padStart(6)} ms, ${drifted.calls} controller calls, ${drifted.report.changes} changes`);
    console.log(`  ratio (no drift / bare listing): ${(cleanMs / bareMs).toFixed(2)}`);
    if (drifted.report.changes !== drift) throw new Error(`expected ${drift} corrections, got ${drifted.report.changes}`);
  } finally {
    await c.close();
    zt.kill("SIGTERM");
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
