import { sql } from "drizzle-orm";
import type { Redis } from "ioredis";
import { resultRows, type Database } from "./db.js";
import { timedPing, type DatabaseSnapshot, type RedisSnapshot } from "./metrics.js";

/**
 * Scrape-time health of the database: a timed ping, the pool's size and, on PostgreSQL, the
 * server's view of connections to this database by state (postgres-js keeps its pool counters private).
 */
export function databaseSource(database: Database): () => Promise<DatabaseSnapshot> {
  return async () => {
    const ping = await timedPing(() => database.ping());
    const snapshot: DatabaseSnapshot = { kind: database.kind, up: ping.up, pingSeconds: ping.seconds, poolSize: database.poolSize };
    if (database.kind === "postgres" && ping.up) {
      const result = await database.db
        .execute(sql`select coalesce(state, 'unknown') as state, count(*)::int as n from pg_stat_activity where datname = current_database() group by 1`)
        .catch(() => null);
      if (result) {
        snapshot.connections = Object.fromEntries(
          resultRows<{ state: string; n: number }>(result).map((r) => [r.state.replace(/[^a-z]+/gi, "_").toLowerCase(), Number(r.n)]),
        );
      }
    }
    return snapshot;
  };
}

/** Scrape-time health of Redis: the client's connection state and a timed ping. */
export function redisSource(redis: Redis): () => Promise<RedisSnapshot> {
  return async () => {
    const ping = await timedPing(() => redis.ping());
    return { up: ping.up, pingSeconds: ping.seconds, status: redis.status };
  };
}
