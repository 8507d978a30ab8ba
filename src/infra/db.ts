import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import * as schema from "../../schema/index.js";
import { lockDataDir } from "./dir-lock.js";
import { projectPath } from "./paths.js";

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
/** Either the pool or an open transaction: repositories accept both, services own transactions. */
export type Executor = Db | Tx;

export interface Database {
  readonly db: Db;
  readonly kind: "postgres" | "pglite";
  /** Connections the pool may open (PGlite is one connection). */
  readonly poolSize: number;
  /** The embedded database's directory (absolute), when on disk. */
  readonly dataDir?: string;
  /** Applies pending migrations (from `folder`, default schema/migrations). */
  migrate(folder?: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const MIGRATIONS_DIR = projectPath("schema/migrations");
// Arbitrary constant: the advisory lock that serialises migrations across starting instances.
const MIGRATION_LOCK_ID = 7_420_001;

/**
 * PostgreSQL through postgres-js when a URL is given, otherwise PGlite: on disk under `dataDir`,
 * or in memory when `dataDir` is "memory://".
 */
export async function openDatabase(options: { url?: string; dataDir: string; poolSize?: number }): Promise<Database> {
  if (options.url) {
    const poolSize = options.poolSize ?? 10;
    const client = postgres(options.url, { max: poolSize, onnotice: () => {} });
    const db = drizzlePostgres(client, { schema }) as unknown as Db;
    return {
      db,
      kind: "postgres",
      poolSize,
      async migrate(folder = MIGRATIONS_DIR) {
        // A one-connection client: the session-level advisory lock and the migration share it.
        const single = postgres(options.url!, { max: 1, onnotice: () => {} });
        try {
          await single`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
          await migratePostgres(drizzlePostgres(single), { migrationsFolder: folder });
          await single`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`;
        } finally {
          await single.end({ timeout: 5 });
        }
      },
      ping: async () => void (await db.execute(sql`select 1`)),
      close: () => client.end({ timeout: 5 }),
    };
  }

  const memory = options.dataDir.startsWith("memory://");
  if (!memory) mkdirSync(options.dataDir, { recursive: true });
  const lock = memory ? null : lockDataDir(options.dataDir);
  let client: PGlite;
  try {
    client = new PGlite(memory ? "memory://" : options.dataDir);
    await client.waitReady;
  } catch (e) {
    lock?.release();
    throw e;
  }
  const lite = drizzlePglite(client, { schema });
  return {
    db: lite as unknown as Db,
    kind: "pglite",
    poolSize: 1,
    dataDir: memory ? undefined : resolve(options.dataDir),
    migrate: (folder = MIGRATIONS_DIR) => migratePglite(lite, { migrationsFolder: folder }),
    ping: async () => void (await client.query("select 1")),
    close: async () => {
      try {
        await client.close();
      } finally {
        lock?.release();
      }
    },
  };
}

/** `db.execute` returns an array on postgres-js and `{ rows }` on PGlite; this reads both. */
export function resultRows<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}
