import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { connectPostgres, type Database, MIGRATIONS_DIR, openDatabase, resultRows } from "../../src/infra/db.js";
import { withDatabase } from "../helpers/global-setup.js";

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (opened.length) await opened.pop()!();
});

/** An empty database in the current mode (a new PostgreSQL database, or PGlite in memory). */
async function emptyDatabase(): Promise<Database> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const db = await openDatabase({ dataDir: "memory://" });
    opened.push(() => db.close());
    return db;
  }
  const name = `keyward_mig_${Math.random().toString(36).slice(2, 10)}`;
  const admin = connectPostgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const db = await openDatabase({ url: withDatabase(base, name), dataDir: "", poolSize: 2 });
  opened.push(async () => {
    await db.close();
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  });
  return db;
}

/** A copy of the migrations folder holding only the first `count` migrations. */
function firstMigrations(count: number): string {
  const dir = mkdtempSync(join(tmpdir(), "kw-migrations-"));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  const journalPath = join(dir, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8"));
  journal.entries = journal.entries.slice(0, count);
  writeFileSync(journalPath, JSON.stringify(journal));
  return dir;
}

const migrationCount = () => JSON.parse(readFileSync(join(MIGRATIONS_DIR, "meta", "_journal.json"), "utf8")).entries.length as number;
const count = async (db: Database, table: string) =>
  Number(resultRows<{ n: number }>(await db.db.execute(sql.raw(`select count(*)::int as n from ${table}`)))[0]!.n);

// Each case starts an empty cluster and replays every migration, some one by one: on a busy two-core
// machine that alone came near the 30 s default (an embedded pass under load: 30 s and 34 s).
const MIGRATING = 120_000;

describe("migrations", () => {
  it("apply to an empty database, and applying again changes nothing", async () => {
    const db = await emptyDatabase();
    await db.migrate();
    const applied = await count(db, "drizzle.__drizzle_migrations");
    expect(applied).toBe(migrationCount());
    await db.migrate();
    expect(await count(db, "drizzle.__drizzle_migrations")).toBe(applied);
  }, MIGRATING);

  it("upgrade a seeded database step by step without losing rows", async () => {
    const db = await emptyDatabase();
    const total = migrationCount();
    await db.migrate(firstMigrations(1));
    await db.db.execute(sql`insert into users (id, email, full_name) values ('11111111-1111-4111-8111-111111111111', 'seed@example.com', 'Seed')`);
    await db.db.execute(sql`insert into password_credentials (user_id, password_hash) values ('11111111-1111-4111-8111-111111111111', '$argon2id$seed')`);
    await db.db.execute(sql`insert into audit_logs (action, user_id) values ('user.register', '11111111-1111-4111-8111-111111111111')`);
    for (let k = 2; k <= total; k++) await db.migrate(firstMigrations(k));
    await db.migrate();
    expect(await count(db, "users")).toBe(1);
    expect(await count(db, "password_credentials")).toBe(1);
    expect(await count(db, "audit_logs")).toBe(1);
  }, MIGRATING);
});

describe("the admin-reach backfill (0010)", () => {
  it("unverifies addresses an organization admin vouched for, and records how the others were proven", async () => {
    const db = await emptyDatabase();
    const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, "meta", "_journal.json"), "utf8")).entries as Array<{ tag: string }>;
    await db.migrate(firstMigrations(journal.findIndex((e) => e.tag === "0010_admin_reach_backfill")));
    const [orgAdmin, byAdmin, byLink, byProvider, byRoot, root] = ["a", "b", "c", "d", "e", "f"].map((c) => `${c.repeat(8)}-1111-4111-8111-111111111111`) as [string, string, string, string, string, string];
    for (const [id, superadmin] of [[orgAdmin, false], [byAdmin, false], [byLink, false], [byProvider, false], [byRoot, false], [root, true]] as const) {
      await db.db.execute(sql`insert into users (id, email, email_verified_at, is_superadmin) values (${id}, ${`${id}@example.com`}, now(), ${superadmin})`);
    }
    await db.db.execute(sql`insert into audit_logs (action, actor_id, user_id) values ('admin.email.verify', ${orgAdmin}, ${byAdmin}), ('admin.email.verify', ${root}, ${byRoot})`);
    await db.db.execute(sql`insert into user_tokens (user_id, purpose, token_hash, expires_at, used_at) values (${byLink}, 'email_verification', ${"0".repeat(64)}, now(), now())`);
    await db.db.execute(sql`insert into external_identities (user_id, provider, subject, email_verified) values (${byProvider}, 'github', '42', true)`);
    await db.migrate();
    const rows = resultRows<{ id: string; verified: boolean; via: string | null }>(
      await db.db.execute(sql`select id, email_verified_at is not null as verified, email_verified_via as via from users`),
    );
    const by = Object.fromEntries(rows.map((r) => [r.id, { verified: r.verified, via: r.via }]));
    expect(by[byAdmin]).toEqual({ verified: false, via: null });
    expect(by[byLink]).toEqual({ verified: true, via: "email_link" });
    expect(by[byProvider]).toEqual({ verified: true, via: "provider" });
    // A superadmin's word stands, but is not a mailed link: SUPERADMIN_EMAILS would not promote it.
    expect(by[byRoot]).toEqual({ verified: true, via: null });
  }, MIGRATING);
});

describe("API-key scopes (0022)", () => {
  it("leaves the keys made before scopes able to do what they did: the sudo check", async () => {
    const db = await emptyDatabase();
    const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, "meta", "_journal.json"), "utf8")).entries as Array<{ tag: string }>;
    await db.migrate(firstMigrations(journal.findIndex((e) => e.tag === "0022_api_key_scopes")));
    const org = "22222222-1111-4111-8111-111111111111";
    await db.db.execute(sql`insert into organizations (id, name, slug) values (${org}, 'Seed', 'seed')`);
    await db.db.execute(sql`insert into api_keys (organization_id, name, prefix, key_hash) values (${org}, 'bastion', 'kwk_seed', ${"a".repeat(64)})`);
    await db.migrate();
    const rows = resultRows<{ scopes: string[] }>(await db.db.execute(sql`select scopes from api_keys`));
    expect(rows).toEqual([{ scopes: ["ssh:sudo"] }]);
  }, MIGRATING);
});
