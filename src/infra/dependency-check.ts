import type { Redis } from "ioredis";
import type { Database } from "./db.js";
import { errorCode, isDependencyOutage } from "./db-errors.js";
import { StartupError } from "./dir-lock.js";

/**
 * A dependency that does not answer while the process starts (PostgreSQL still starting, Redis
 * down): `main` exits with EX_TEMPFAIL (75) for whatever runs it to start it again. The message
 * names which one, where, and why.
 */
export class DependencyUnavailableError extends Error {
  override name = "DependencyUnavailableError";
}

/** Where a URL points, for a message: host, port and path, never the user's password. */
export function whereUrl(url: string): string {
  try {
    const u = new URL(url);
    const socket = u.searchParams.get("host");
    return `${socket?.startsWith("/") ? socket : u.hostname || "localhost"}${u.port ? `:${u.port}` : ""}${u.pathname.length > 1 ? u.pathname : ""}`;
  } catch {
    return "(an unreadable URL)";
  }
}

/**
 * PostgreSQL answers before anything else runs; what it says that an operator must fix is said
 * in their words (the database does not exist: how to create it; the password is refused), and an
 * outage is named as PostgreSQL's.
 */
async function checkPostgres(database: Database, url: string): Promise<void> {
  try {
    await database.ping();
  } catch (e) {
    const code = errorCode(e);
    const u = new URL(url);
    const name = decodeURIComponent(u.pathname.slice(1)) || decodeURIComponent(u.username) || "postgres";
    const user = decodeURIComponent(u.username) || "<user>";
    const host = u.searchParams.get("host") ?? (u.hostname || "localhost");
    if (code === "3D000") {
      throw new StartupError(
        `The database "${name}" does not exist on the PostgreSQL server at ${whereUrl(url)} (DATABASE_URL). Create it, then start again: ` +
          `createdb -h ${host} -p ${u.port || "5432"} -U ${user} ${name}   (or, in psql as an administrator: CREATE DATABASE "${name}" OWNER "${user}";)`,
      );
    }
    if (code === "28P01" || code === "28000") {
      throw new StartupError(`PostgreSQL at ${whereUrl(url)} refused the user "${user}" (${code === "28P01" ? "wrong password" : "not allowed to connect"}): check the user and password in DATABASE_URL, and pg_hba.conf.`);
    }
    if (isDependencyOutage(e)) throw new DependencyUnavailableError(`PostgreSQL is not reachable at ${whereUrl(url)} (DATABASE_URL): ${code ?? (e as Error).message}`);
    throw e;
  }
}

/**
 * Redis must answer at start too: otherwise the banner would say all is well and every sign-in
 * would answer 503. ioredis retries quietly; the reason it keeps failing comes from its `error`
 * events. A server that does not answer at all gives up after `timeoutMs`.
 */
async function checkRedis(redis: Redis, url: string, timeoutMs: number): Promise<void> {
  let reason: string | undefined;
  const heard = (e: NodeJS.ErrnoException) => void (reason ??= e.code ?? e.message);
  redis.on("error", heard);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([redis.ping(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs)))]);
  } catch (e) {
    throw new DependencyUnavailableError(`Redis is not reachable at ${whereUrl(url)} (REDIS_URL): ${reason ?? (e as Error).message}`);
  } finally {
    clearTimeout(timer);
    redis.off("error", heard);
  }
}

/** PostgreSQL (when DATABASE_URL is set), then Redis (when REDIS_URL is set), before the service starts. */
export async function checkDependencies(deps: { database: Database; redis?: Redis; urls: { database?: string; redis?: string } }, timeoutMs = 10_000): Promise<void> {
  if (deps.urls.database) await checkPostgres(deps.database, deps.urls.database);
  else await deps.database.ping();
  if (deps.redis && deps.urls.redis) await checkRedis(deps.redis, deps.urls.redis, timeoutMs);
}
