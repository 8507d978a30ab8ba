import "reflect-metadata";
import { cpus } from "node:os";
import { sql } from "drizzle-orm";
import { connectPostgres } from "../src/infra/db.js";
import { loadConfig } from "../src/config/index.js";
import { createContainer } from "../src/container.js";
import { systemContext } from "../src/lib/request-context.js";
import { AuditAction } from "../src/modules/audit/index.js";

/**
 * npm run bench:audit — what the hash chain costs, on PostgreSQL (DATABASE_URL names the server; a
 * scratch database is created and dropped):
 *  - audit inserts per second from CONCURRENCY writers (each one insert in its own transaction, as on
 *    sign-in), without the chain's unchained-records index (the schema before the chain), with it,
 *    and with the chain job running beside the writers every 100 ms;
 *  - records chained per second (batches of AUDIT_CHAIN_BATCH) and records verified per second.
 */
const ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 20_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const base = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const name = `keyward_bench_chain_${process.pid}`;
const admin = connectPostgres(base, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database "${name}"`);
const url = new URL(base);
url.pathname = `/${name}`;
const ORGS = Array.from({ length: 50 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);

const c = await createContainer(loadConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", DATABASE_URL: url.toString(), SESSION_SECRET: "x".repeat(40), ENCRYPTION_KEYS: `b1:${Buffer.alloc(32, 7).toString("base64")}` }));
try {
  await c.database.migrate();
  const { audit, auditChain, auditVerify } = c.services;
  const ctx = { ...systemContext("bench"), ip: "203.0.113.9", userAgent: "bench/1.0" };

  async function inserts(): Promise<number> {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < ROWS; i = next++) {
          await c.db.transaction((tx) => audit.record(tx, ctx, AuditAction.userLogin, { organizationId: ORGS[i % ORGS.length], metadata: { method: "password", i } }));
        }
      }),
    );
    return ROWS / ((performance.now() - t0) / 1000);
  }

  async function withJob<T>(fn: () => Promise<T>): Promise<T> {
    let stop = false;
    const job = (async () => {
      while (!stop) {
        await auditChain.tick();
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      return await fn();
    } finally {
      stop = true;
      await job;
    }
  }

  // Each measurement starts on a vacuumed table: the dead row versions chaining leaves behind are
  // cleaned up between runs, so the insert-path cost is not mixed with a vacuum in progress.
  const settle = async () => {
    await auditChain.chainAll();
    await c.db.execute(sql.raw("vacuum analyze audit_logs"));
  };
  const rows: Record<string, number[]> = { "without the unchained index (before)": [], "with it, no chain job": [], "with it, chain job every 100 ms": [] };
  for (let round = 0; round < ROUNDS; round++) {
    await c.db.execute(sql.raw("drop index if exists audit_logs_unchained_idx"));
    await c.db.execute(sql.raw("vacuum analyze audit_logs"));
    rows["without the unchained index (before)"]!.push(await inserts());
    await c.db.execute(sql.raw("create index if not exists audit_logs_unchained_idx on audit_logs (created_at, id) where seq is null"));
    await settle();
    rows["with it, no chain job"]!.push(await inserts());
    await settle();
    rows["with it, chain job every 100 ms"]!.push(await withJob(inserts));
    await settle();
  }
  console.log(`audit inserts/s, ${CONCURRENCY} writer(s), ${ROWS.toLocaleString()} inserts a run, median of ${ROUNDS} (${cpus().length} cores, PostgreSQL):`);
  for (const [label, v] of Object.entries(rows)) console.log(`  ${label.padEnd(40)} ${Math.round(v.sort((a, b) => a - b)[Math.floor(v.length / 2)]!)}`);

  await inserts();
  let t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const chained = await auditChain.chainAll();
  const cpu = process.cpuUsage(cpu0);
  console.log(`chained ${chained.toLocaleString()} records in ${((performance.now() - t0) / 1000).toFixed(2)} s: ${Math.round(chained / ((performance.now() - t0) / 1000))}/s, ${((cpu.user + cpu.system) / chained).toFixed(0)} µs of this process's CPU per record`);
  t0 = performance.now();
  const report = await auditVerify.verifyAsOperator(ctx);
  const s = (performance.now() - t0) / 1000;
  console.log(`verified ${report.global.records.toLocaleString()} records (global chain and ${report.organizationsChecked} organizations' chains: each record twice) in ${s.toFixed(2)} s: ${Math.round(report.global.records / s)}/s; ok: ${report.ok}`);
} finally {
  await c.close();
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
}
