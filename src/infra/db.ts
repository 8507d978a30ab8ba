import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import * as schema from "../../schema/index.js";
import { uuid } from "../lib/crypto/index.js";
import { lockDataDir, StartupError } from "./dir-lock.js";
import { postgresPatched } from "./postgres-patch.js";
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
  /**
   * Subscribes to a NOTIFY channel. `ready` runs whenever the subscription is (again) in place and
   * `lost` whenever it drops: notifications sent in between are gone, so a listener that caches
   * must distrust what it holds from `lost` until the next `ready`. Resolves once subscribed, or
   * once the first attempt failed (it is retried in the background).
   */
  listen(channel: string, listener: ChangeListener): Promise<void>;
  close(): Promise<void>;
}

export interface ChangeListener {
  notify(payload: string): void;
  ready(): void;
  lost(): void;
}

export const MIGRATIONS_DIR = projectPath("schema/migrations");

/**
 * postgres-js options for a DATABASE_URL. A URL may name a Unix socket directory as libpq does
 * (`postgres://keyward@localhost/keyward?host=/run/postgresql`): postgres-js reads no such
 * parameter (it would send `host` to the server as a setting, which refuses it), so it becomes the
 * socket's path here. On the same machine as PostgreSQL a socket costs less CPU per statement than
 * loopback TCP (measured: README › Production mode).
 */
export function postgresConnection(url: string): { url: string; path?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url };
  }
  const dir = parsed.searchParams.get("host");
  if (!dir?.startsWith("/")) return { url };
  parsed.searchParams.delete("host");
  return { url: parsed.toString(), path: `${dir.replace(/\/+$/, "")}/.s.PGSQL.${parsed.port || "5432"}` };
}

/** A postgres-js client for a DATABASE_URL (see postgresConnection): the service, its tests and benches connect through it. */
export function connectPostgres(url: string, options: postgres.Options<Record<string, never>> = {}): postgres.Sql {
  const { url: target, path } = postgresConnection(url);
  return postgres(target, path ? { ...options, path } : options) as unknown as postgres.Sql;
}
/**
 * How the pool behaves while PostgreSQL is unreachable. postgres-js waits before reconnecting a
 * closed connection, and by default that wait grows to 10-20 s after a few failed attempts (shared
 * by the whole pool), so requests during an outage would hang that long before failing, and the
 * first ones after the database's return would too. Capped here at one second (with jitter, so
 * instances do not reconnect in step): an outage answers 503 at once and service is back within
 * about a second of the database's. A server that does not answer at all (a dropped route, not a
 * refused connection) fails a connection attempt after 10 s instead of 30.
 */
export const OUTAGE_OPTIONS = {
  connect_timeout: 10,
  backoff: (attempt: number) => Math.min(0.05 * 2 ** attempt, 1) * (0.5 + Math.random() / 2),
};

// Arbitrary constant: the advisory lock that serialises migrations across starting instances.
const MIGRATION_LOCK_ID = 7_420_001;

/**
 * PostgreSQL through postgres-js when a URL is given, otherwise PGlite: on disk under `dataDir`,
 * or in memory when `dataDir` is "memory://".
 */
/** Hears each statement's SQL text as it is sent (tests and benches count statements; never in production). */
export type StatementObserver = (sql: string) => void;

export async function openDatabase(options: { url?: string; dataDir: string; poolSize?: number; onStatement?: StatementObserver }): Promise<Database> {
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

  const memory = options.dataDir.startsWith("memory://");
  if (!memory) mkdirSync(options.dataDir, { recursive: true });
  const lock = memory ? null : lockDataDir(options.dataDir);
  let client: PGlite;
  let embedded: { drizzle: typeof import("drizzle-orm/pglite").drizzle; migrate: typeof import("drizzle-orm/pglite/migrator").migrate };
  try {
    // Loaded only for the embedded database: a PostgreSQL deployment never holds PGlite's code.
    const [{ PGlite }, drizzlePglite, migratorPglite] = await Promise.all([import("@electric-sql/pglite"), import("drizzle-orm/pglite"), import("drizzle-orm/pglite/migrator")]);
    embedded = { drizzle: drizzlePglite.drizzle, migrate: migratorPglite.migrate };
    client = new PGlite(memory ? "memory://" : options.dataDir);
    await client.waitReady;
  } catch (e) {
    lock?.release();
    throw e;
  }
  // PGlite has no such hook: drizzle's logger sees every statement it runs.
  const lite = embedded.drizzle(client, { schema, ...(observe ? { logger: { logQuery: (query: string) => observe(query) } } : {}) });
  return {
    db: lite as unknown as Db,
    kind: "pglite",
    poolSize: 1,
    dataDir: memory ? undefined : resolve(options.dataDir),
    migrate: (folder = MIGRATIONS_DIR) => embedded.migrate(lite, { migrationsFolder: folder }),
    ping: async () => void (await client.query("select 1")),
    // One connection in the process: a notification arrives before the committing query returns.
    listen: async (channel, listener) => {
      await client.listen(channel, (payload) => listener.notify(payload));
      listener.ready();
    },
    close: async () => {
      try {
        await client.close();
      } finally {
        lock?.release();
      }
    },
  };
}

const RESUBSCRIBE_MIN_MS = 250;
const RESUBSCRIBE_MAX_MS = 10_000;
/** How often the subscription proves it hears announcements, and how long the proof may take. */
const HEARTBEAT_MS = 5_000;
const HEARTBEAT_TIMEOUT_MS = 3_000;

/**
 * LISTEN on a connection of its own (a pooled connection would carry it back into the pool), named
 * "keyward listener" in pg_stat_activity. Every HEARTBEAT_MS it proves that announcements arrive:
 * a NOTIFY sent through the pool must come back on the listener (a live connection is not enough:
 * behind a transaction-pooling proxy LISTEN is accepted and nothing is ever delivered). When that
 * fails, or the connection drops (a restart, a terminated backend), listeners hear `lost` and the
 * subscription is re-made on a fresh connection with back-off until it holds, then `ready`.
 * (postgres-js's own `listen` gives up after one failed attempt and cannot tell a silent cut.) So a
 * change is heard at once, or an instance learns within about eight seconds that it may have
 * missed one.
 */
class PostgresSubscriptions {
  private readonly channels = new Map<string, ChangeListener[]>();
  private connection?: postgres.Sql;
  private retry?: NodeJS.Timeout;
  private heartbeat?: NodeJS.Timeout;
  private delay = RESUBSCRIBE_MIN_MS;
  private closed = false;
  /** The heartbeat announcement awaited on the listener, if one is out. */
  private awaited?: { payload: string; heard: () => void };

  constructor(
    private readonly url: string,
    private readonly pool: postgres.Sql,
  ) {}

  async listen(channel: string, listener: ChangeListener): Promise<void> {
    const listeners = this.channels.get(channel);
    if (listeners) listeners.push(listener);
    else this.channels.set(channel, [listener]);
    try {
      await this.sql().unsafe(`listen ${quoteIdent(channel)}`);
      listener.ready();
      this.beat();
    } catch {
      // The database is not reachable yet: keep trying in the background (nothing is cached meanwhile).
      this.dropped();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearTimeout(this.heartbeat);
    await this.connection?.end({ timeout: 1 });
  }

  private sql(): postgres.Sql {
    if (this.connection) return this.connection;
    const options = {
      max: 1,
      max_lifetime: null,
      fetch_types: false,
      connection: { application_name: "keyward listener" },
      onnotice: () => {},
      // Not in postgres-js's typings, but its hook for NotificationResponse messages.
      onnotify: (channel: string, payload: string) => {
        if (payload === this.awaited?.payload) this.awaited.heard();
        this.channels.get(channel)?.forEach((l) => l.notify(payload));
      },
      onclose: () => {
        if (this.connection === connection) this.dropped();
      },
    };
    const connection = connectPostgres(this.url, options as postgres.Options<Record<string, never>>);
    this.connection = connection;
    return connection;
  }

  /** Drops the connection (if any) and tells listeners; re-subscribing starts after the back-off. */
  private dropped(): void {
    if (this.closed) return;
    const old = this.connection;
    this.connection = undefined;
    void old?.end({ timeout: 0 }).catch(() => {});
    clearTimeout(this.heartbeat);
    for (const listeners of this.channels.values()) listeners.forEach((l) => l.lost());
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.resubscribe(), this.delay);
    this.retry.unref();
  }

  private async resubscribe(): Promise<void> {
    if (this.closed) return;
    try {
      for (const channel of this.channels.keys()) await this.sql().unsafe(`listen ${quoteIdent(channel)}`);
      this.delay = RESUBSCRIBE_MIN_MS;
      for (const listeners of this.channels.values()) listeners.forEach((l) => l.ready());
      this.beat();
    } catch {
      if (this.closed) return;
      this.delay = Math.min(this.delay * 2, RESUBSCRIBE_MAX_MS);
      this.dropped();
    }
  }

  private beat(): void {
    clearTimeout(this.heartbeat);
    // Every outcome of a beat is handled inside it (a failure drops the connection): nothing to await.
    this.heartbeat = setTimeout(() => void this.heartbeatOnce(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private async heartbeatOnce(): Promise<void> {
    const connection = this.connection;
    const channel = this.channels.keys().next().value;
    if (!connection || this.closed || channel === undefined) return;
    // Listeners ignore it: no cache's kind is "heartbeat".
    const payload = `heartbeat:${uuid()}`;
    const heard = new Promise<void>((resolve) => (this.awaited = { payload, heard: resolve }));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("listener heartbeat timed out")), HEARTBEAT_TIMEOUT_MS)));
    try {
      await Promise.race([this.pool`select pg_notify(${channel}, ${payload})`.then(() => heard), timeout]);
      if (this.connection === connection) this.beat();
    } catch {
      if (this.connection === connection) this.dropped();
    } finally {
      clearTimeout(timer);
      this.awaited = undefined;
    }
  }
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** `db.execute` returns an array on postgres-js and `{ rows }` on PGlite; this reads both. */
export function resultRows<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}
