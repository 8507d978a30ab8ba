/** True when a database error (postgres-js, PGlite, or wrapped by drizzle) is a unique violation. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  for (let e: any = error, depth = 0; e && depth < 4; e = e.cause, depth++) {
    if (e.code === "23505") return !constraint || e.constraint_name === constraint || e.constraint === constraint || String(e.message).includes(constraint);
  }
  return false;
}
