import { cpus } from "node:os";
import { connectPostgres, openDatabase } from "../src/infra/db.js";

/**
 * npm run bench:activity — times the organization activity listing at 10^6 audit rows on
 * PostgreSQL (DATABASE_URL names the server; a scratch database is created and dropped).
 */
const ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 1_000_000);
const base = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const name = `keyward_bench_activity_${process.pid}`;
const admin = connectPostgres(base, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database "${name}"`);
const url = new URL(base);
url.pathname = `/${name}`;
try {
  const db = await openDatabase({ url: url.toString(), dataDir: "" });
  await db.migrate();
  await db.close();
  const sql = connectPostgres(url.toString(), { max: 1, onnotice: () => {} });
  const org = "11111111-1111-4111-8111-111111111111";
  const user = "22222222-2222-4222-8222-222222222222";
  const t0 = performance.now();
  // 1,000 organizations; the one we read holds 10% of all rows (a very busy tenant).
  await sql.unsafe(`
    insert into audit_logs (created_at, action, organization_id, user_id, metadata)
    select now() - (g || ' seconds')::interval,
           (array['org.update','principal.created','user.login','department.created','ssh.cert.issued'])[1 + g % 5],
           case when g % 10 = 0 then '${org}'::uuid else ('00000000-0000-4000-8000-' || lpad((g % 1000)::text, 12, '0'))::uuid end,
           case when g % 7 = 0 then '${user}'::uuid else gen_random_uuid() end,
           '{}'::jsonb
    from generate_series(1, ${ROWS}) g`);
  await sql.unsafe("analyze audit_logs");
  console.log(`inserted ${ROWS.toLocaleString()} audit rows in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${cpus().length} cores, PostgreSQL`);

  const [{ created_at: deep }] = (await sql.unsafe(`select created_at from audit_logs where organization_id = '${org}' order by created_at desc offset 90000 limit 1`)) as unknown as [{ created_at: string }];
  const queries: Record<string, string> = {
    "first page (50)": `select * from audit_logs where organization_id = '${org}' order by created_at desc, id desc limit 51`,
    "filtered by user": `select * from audit_logs where organization_id = '${org}' and user_id = '${user}' order by created_at desc, id desc limit 51`,
    "filtered by action": `select * from audit_logs where organization_id = '${org}' and action = 'user.login' order by created_at desc, id desc limit 51`,
    "page after 90,000 rows (cursor)": `select * from audit_logs where organization_id = '${org}' and (created_at, id) < ('${new Date(deep).toISOString()}'::timestamptz, '00000000-0000-4000-8000-000000000000'::uuid) order by created_at desc, id desc limit 51`,
  };
  for (const [label, q] of Object.entries(queries)) {
    const times: number[] = [];
    let planText = "";
    for (let i = 0; i < 21; i++) {
      const rows = await sql.unsafe(`explain (analyze, format json) ${q}`);
      const plan = (rows[0] as any)["QUERY PLAN"][0];
      times.push(plan["Execution Time"]);
      planText = plan.Plan["Node Type"] + " > " + (plan.Plan.Plans?.[0]?.["Node Type"] ?? "") + " " + (plan.Plan.Plans?.[0]?.["Index Name"] ?? "");
    }
    times.sort((a, b) => a - b);
    console.log(`${label.padEnd(34)} median ${times[10]!.toFixed(3)} ms  p95 ${times[19]!.toFixed(3)} ms  plan: ${planText}`);
  }
  await sql.end();
} finally {
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
}
