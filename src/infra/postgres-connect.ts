import postgres from "postgres";

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
