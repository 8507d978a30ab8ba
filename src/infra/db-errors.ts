/** A driver error's fields that these checks read. */
interface DriverError {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  detail?: unknown;
  constraint?: unknown;
  constraint_name?: unknown;
}

/**
 * An error and the errors it wraps (drizzle and the stores put the driver's error in `cause`),
 * outermost first, at most five deep (a cycle of causes ends there too).
 */
function* causes(error: unknown): Generator<DriverError> {
  let e = error;
  for (let depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    yield e as DriverError;
    e = (e as { cause?: unknown }).cause;
  }
}

/** True when a database error (postgres-js, PGlite, or wrapped by drizzle) is a unique violation. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  for (const e of causes(error)) {
    if (e.code === "23505") return !constraint || e.constraint_name === constraint || e.constraint === constraint || String(e.message).includes(constraint);
  }
  return false;
}

/**
 * Runs `work` and turns a unique violation of a named constraint into that constraint's own error
 * (e.g. `{ users_email_live_uq: AuthErrors.emailTaken }`); any other failure passes through.
 * The one place the try/catch around a uniqueness-guarded write is written.
 */
export async function uniqueOr<T>(work: () => Promise<T>, errors: Record<string, () => Error>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    for (const [constraint, error] of Object.entries(errors)) if (isUniqueViolation(e, constraint)) throw error();
    throw e;
  }
}

/** Socket-level failures of postgres-js and ioredis (the server is down, restarting or unreachable). */
const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH", "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT"]);

/**
 * True when an error (possibly wrapped by drizzle or a store) means PostgreSQL or Redis is not
 * available right now, rather than a fault of the request or of Keyward: SQLSTATE class 08
 * (connection exception), 57P01–57P03 (shutting down, cannot connect now), 53300 (too many
 * connections), a refused or dropped socket, or ioredis giving up on a closed connection. The doors
 * answer it with 503 SERVICE_UNAVAILABLE and the client retries.
 */
export function isDependencyOutage(error: unknown): boolean {
  for (const e of causes(error)) {
    const code = typeof e.code === "string" ? e.code : "";
    if (UNREACHABLE.has(code) || code.startsWith("08") || ["57P01", "57P02", "57P03", "53300"].includes(code)) return true;
    if (e.name === "MaxRetriesPerRequestError" || /^Connection is closed\.?$|Stream isn't writeable/.test(String(e.message))) return true;
  }
  return false;
}

/**
 * True when PostgreSQL rolled the transaction back because of concurrent transactions: it was the
 * victim of a deadlock (40P01) or of a serialization failure (40001). Nothing it wrote stands, and
 * the same request may succeed if tried again. Lock orders are kept so that this does not happen;
 * the doors answer it, should it happen anyway, with 503 SERVICE_UNAVAILABLE and a short
 * Retry-After (never 500), and log it as a warning.
 */
export function isTransientConflict(error: unknown): boolean {
  return transientConflict(error) !== undefined;
}

/** What PostgreSQL said of a transient conflict (its SQLSTATE, message and detail: lock waits, never the statement's values), for the log. */
export function transientConflict(error: unknown): { code: string; message: string; detail?: string } | undefined {
  for (const e of causes(error)) {
    if (e.code === "40P01" || e.code === "40001") return { code: e.code, message: String(e.message), ...(typeof e.detail === "string" ? { detail: e.detail } : {}) };
  }
  return undefined;
}

/** The SQLSTATE (or socket code) of a database error, possibly wrapped by drizzle or a store. */
export function errorCode(error: unknown): string | undefined {
  for (const e of causes(error)) if (typeof e.code === "string" && e.code) return e.code;
  return undefined;
}
