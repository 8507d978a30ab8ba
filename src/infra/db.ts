import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import * as schema from "../../schema/index.js";
import { lockDataDir, StartupError } from "./dir-lock.js";
import { postgresPatched } from "./postgres-patch.js";
import { projectPath } from "./paths.js";
import { connectPostgres, OUTAGE_OPTIONS } from "./postgres-connect.js";
import { PostgresSubscriptions, type ChangeListener } from "./postgres-subscriptions.js";

export { connectPostgres, OUTAGE_OPTIONS, postgresConnection } from "./postgres-connect.js";
export type { ChangeListener } from "./postgres-subscriptions.js";

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
  /**
   * Subscribes to a NOTIFY channel. `ready` runs whenever the subscription is (again) in place and
   * `lost` whenever it drops: notifications sent in between are gone, so a listener that caches
   * must distrust what it holds from `lost` until the next `ready`. Resolves once subscribed, or
   * once the first attempt failed (it is retried in the background).
   */
  listen(channel: string, listener: ChangeListener): Promise<void>;
  close(): Promise<void>;
}

export const MIGRATIONS_DIR = projectPath("schema/migrations");

// Arbitrary constant: the advisory lock that serialises migrations across starting instances.
const MIGRATION_LOCK_ID = 7_420_001;
/** PGlite's shared buffers (PostgreSQL's default is 128MB): see openDatabase's embedded branch. */
const EMBEDDED_SHARED_BUFFERS = "16MB";

/** Hears each statement's SQL text as it is sent (tests and benches count statements; never in production). */
export type StatementObserver = (sql: string) => void;

/**
 * PostgreSQL through postgres-js when a URL is given, otherwise PGlite: on disk under `dataDir`,
 * or in memory when `dataDir` is "memory://".
 */
export async function openDatabase(options: {
  url?: string;
  dataDir: string;
  poolSize?: number;
  onStatement?: StatementObserver;
  /**
   * An in-memory embedded database starts from this dump of another one (PGlite's dumpDataDir)
   * instead of an empty cluster: the test suite migrates one database and starts every app from
   * it, as it clones a template database on PostgreSQL. Ignored on PostgreSQL and on disk.
   */
  snapshot?: Blob;
  /**
   * An open in-memory embedded database to use as it is, instead of opening one: the test suite
   * lends each app a pristine one from a pool per worker. close() ends this database's
   * subscriptions and leaves the client open for its owner. Ignored when `url` is given.
   */
  client?: PGlite;
}): Promise<Database> {
  const observe = options.onStatement;
  if (options.url) {
    // Without the fix a database restart under load ends the process (src/infra/postgres-patch.ts).
    if (!postgresPatched()) throw new StartupError("the PostgreSQL driver lacks Keyward's fix for closed connections: run `npm run patch:driver` (npm install and npm run build run it)");
    const poolSize = options.poolSize ?? 10;
    // postgres-js's debug hook sees every statement the pool sends (prepared ones, transactions' too).
    const client = connectPostgres(options.url, { max: poolSize, onnotice: () => {}, ...OUTAGE_OPTIONS, ...(observe ? { debug: (_c: number, query: string) => observe(query) } : {}) });
    const db = drizzlePostgres(client, { schema }) as unknown as Db;
    const subscriptions = new PostgresSubscriptions(options.url, client);
    return {
      db,
      kind: "postgres",
      poolSize,
      async migrate(folder = MIGRATIONS_DIR) {
        // A one-connection client: the session-level advisory lock and the migration share it.
        const single = connectPostgres(options.url!, { max: 1, onnotice: () => {} });
        try {
          await single`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
          await migratePostgres(drizzlePostgres(single), { migrationsFolder: folder });
          await single`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`;
        } finally {
          await single.end({ timeout: 5 });
        }
      },
      ping: async () => void (await db.execute(sql`select 1`)),
      listen: (channel, listener) => subscriptions.listen(channel, listener),
      close: async () => {
        await subscriptions.close();
        await client.end({ timeout: 5 });
      },
    };
  }

  const borrowed = options.client;
  const memory = borrowed !== undefined || options.dataDir.startsWith("memory://");
  if (!memory) mkdirSync(options.dataDir, { recursive: true });
  const lock = memory ? null : lockDataDir(options.dataDir);
  let client: PGlite;
  let embedded: { drizzle: typeof import("drizzle-orm/pglite").drizzle; migrate: typeof import("drizzle-orm/pglite/migrator").migrate };
  try {
    // Loaded only for the embedded database: a PostgreSQL deployment never holds PGlite's code.
    const [drizzlePglite, migratorPglite] = await Promise.all([import("drizzle-orm/pglite"), import("drizzle-orm/pglite/migrator")]);
    embedded = { drizzle: drizzlePglite.drizzle, migrate: migratorPglite.migrate };
    client = borrowed ?? (await startPglite(memory ? "memory://" : options.dataDir, memory ? options.snapshot : undefined));
  } catch (e) {
    lock?.release();
    throw e;
  }
  // PGlite has no such hook: drizzle's logger sees every statement it runs.
  const lite = embedded.drizzle(client, { schema, ...(observe ? { logger: { logQuery: (query: string) => observe(query) } } : {}) });
  const unlistens: Array<() => Promise<void>> = [];
  return {
    db: lite as unknown as Db,
    kind: "pglite",
    poolSize: 1,
    dataDir: memory ? undefined : resolve(options.dataDir),
    migrate: (folder = MIGRATIONS_DIR) => embedded.migrate(lite, { migrationsFolder: folder }),
    ping: async () => void (await client.query("select 1")),
    // One connection in the process: a notification arrives before the committing query returns.
    listen: async (channel, listener) => {
      unlistens.push(await client.listen(channel, (payload) => listener.notify(payload)));
      listener.ready();
    },
    close: async () => {
      try {
        if (borrowed) for (const unlisten of unlistens.splice(0)) await unlisten();
        else await client.close();
      } finally {
        lock?.release();
      }
    },
  };
}

/**
 * Starts PGlite as the embedded database runs it: on disk under `dataDir`, or in memory
 * ("memory://"), empty or from a dump of another one (PGlite's dumpDataDir).
 */
export async function startPglite(dataDir: string, snapshot?: Blob): Promise<PGlite> {
  const { PGlite } = await import("@electric-sql/pglite");
  // PostgreSQL's default 128 MB of shared buffers lives inside PGlite's WebAssembly memory, which
  // never shrinks: as the tables outgrow it (the audit chain grows with every sign-in) the
  // process keeps up to 128 MB more resident for pages the operating system's file cache holds
  // anyway. One connection's working set (the hot rows; profiles and clients are cached in
  // memory) fits in 16 MB: measured in docs/benchmarks.md (bench:memory).
  const startParams = [...PGlite.defaultStartParams, "-c", `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`];
  const client = snapshot ? new PGlite("memory://", { loadDataDir: snapshot, startParams }) : new PGlite(dataDir, { startParams });
  await client.waitReady;
  return client;
}

/** `db.execute` returns an array on postgres-js and `{ rows }` on PGlite; this reads both. */
export function resultRows<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}
