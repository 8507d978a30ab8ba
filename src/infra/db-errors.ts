/** True when a database error (postgres-js, PGlite, or wrapped by drizzle) is a unique violation. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  for (let e: any = error, depth = 0; e && depth < 4; e = e.cause, depth++) {
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
