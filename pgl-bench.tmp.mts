import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
const c0 = new PGlite();
await migrate(drizzle(c0), { migrationsFolder: "/work/main/schema/migrations" });
const mode = process.argv[2] ?? "plain";
if (mode === "checkpoint") await c0.exec("checkpoint");
const dump = await c0.dumpDataDir("none");
await c0.close();
const buf = Buffer.from(await dump.arrayBuffer());
const blob = new Blob([buf]);
console.log(mode, "dump bytes", blob.size);
const startParams = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"];
for (let i = 0; i < 5; i++) {
  const t = performance.now(); const cpu = process.cpuUsage();
  const c = new PGlite("memory://", { loadDataDir: blob, startParams });
  await c.waitReady;
  await c.query("select 1");
  const u = process.cpuUsage(cpu);
  console.log("restore", (performance.now() - t).toFixed(0), "ms", ((u.user + u.system) / 1000).toFixed(0), "cpu ms");
  if (i === 4) {
    const tables = (await c.query<{ t: string }>("select quote_ident(schemaname)||'.'||quote_ident(tablename) t from pg_tables where schemaname not in ('pg_catalog','information_schema')")).rows.map((r) => r.t);
    const counts = [];
    for (const t of tables) { const n = (await c.query<{ n: number }>(`select count(*)::int n from ${t}`)).rows[0].n; if (n) counts.push([t, n]); }
    console.log(tables.length, "tables; seeded:", JSON.stringify(counts));
    for (let j = 0; j < 3; j++) {
      const t2 = performance.now(); const cpu2 = process.cpuUsage();
      await c.exec(`truncate ${tables.join(", ")} restart identity cascade`);
      const u2 = process.cpuUsage(cpu2);
      console.log("truncate", (performance.now() - t2).toFixed(0), "ms", ((u2.user + u2.system) / 1000).toFixed(0), "cpu ms");
    }
  }
  await c.close();
}
// What is in the tar, by top folder.
const sizes = new Map<string, number>();
for (let off = 0; off + 512 <= buf.length; ) {
  const name = buf.subarray(off, off + 100).toString().replace(/\0.*$/s, "");
  if (!name) break;
  const size = parseInt(buf.subarray(off + 124, off + 136).toString().replace(/\0.*$/s, "").trim() || "0", 8);
  const key = name.split("/").slice(0, 3).join("/");
  sizes.set(key, (sizes.get(key) ?? 0) + size);
  off += 512 + Math.ceil(size / 512) * 512;
}
console.log([...sizes].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => `${k} ${(v / 1e6).toFixed(1)}MB`).join("\n"));
