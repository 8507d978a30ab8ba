import { describe, expect, it } from "vitest";
import { isDependencyOutage, isTransientConflict, isUniqueViolation, transientConflict, uniqueOr } from "../../src/infra/db-errors.js";

/** An error wrapped the way drizzle (DrizzleQueryError) and our stores wrap a driver's. */
const wrap = (inner: object, times = 1): Error => {
  let e: unknown = inner;
  for (let i = 0; i < times; i++) e = new Error("Failed query: insert ...", { cause: e });
  return e as Error;
};
const pgError = (fields: Record<string, unknown>) => Object.assign(new Error(String(fields.message ?? "driver error")), fields);

describe("database error classification", () => {
  it("finds a unique violation, and its constraint, through the causes that wrap it", async () => {
    const postgresJs = wrap(pgError({ code: "23505", constraint_name: "users_email_live_uq" }), 2);
    const pglite = wrap(pgError({ code: "23505", constraint: "users_email_live_uq" }));
    for (const e of [postgresJs, pglite]) {
      expect(isUniqueViolation(e)).toBe(true);
      expect(isUniqueViolation(e, "users_email_live_uq")).toBe(true);
      expect(isUniqueViolation(e, "orgs_slug_uq")).toBe(false);
    }
    await expect(uniqueOr(() => Promise.reject(postgresJs), { orgs_slug_uq: () => new Error("slug taken"), users_email_live_uq: () => new Error("email taken") })).rejects.toThrow("email taken");
    // Any other failure passes through as it was.
    const other = wrap(pgError({ code: "23503" }));
    await expect(uniqueOr(() => Promise.reject(other), { users_email_live_uq: () => new Error("email taken") })).rejects.toBe(other);
  });

  it("looks five errors deep and no further, and a cycle of causes ends", () => {
    expect(isUniqueViolation(wrap(pgError({ code: "23505" }), 4))).toBe(true);
    expect(isUniqueViolation(wrap(pgError({ code: "23505" }), 5))).toBe(false);
    const a = new Error("a") as Error & { cause?: unknown };
    const b = new Error("b", { cause: a });
    a.cause = b;
    expect(isUniqueViolation(a)).toBe(false);
    expect(isDependencyOutage(a)).toBe(false);
    expect(isUniqueViolation("23505")).toBe(false);
    expect(isUniqueViolation(undefined)).toBe(false);
  });

  it("tells an unreachable PostgreSQL or Redis from a fault of the request", () => {
    for (const outage of [
      wrap(pgError({ code: "ECONNREFUSED" })),
      wrap(pgError({ code: "CONNECTION_ENDED" }), 2),
      pgError({ code: "57P01", message: "terminating connection due to administrator command" }),
      pgError({ code: "08006" }),
      pgError({ name: "MaxRetriesPerRequestError" }),
      new Error("session store", { cause: new Error("Connection is closed.") }),
    ]) expect(isDependencyOutage(outage)).toBe(true);
    for (const fault of [wrap(pgError({ code: "23505" })), pgError({ code: "22P02" }), new Error("boom"), { code: 5 }]) expect(isDependencyOutage(fault)).toBe(false);
  });

  it("reads a deadlock or serialization failure with PostgreSQL's detail, and nothing of the statement", () => {
    const deadlock = wrap(pgError({ code: "40P01", message: "deadlock detected", detail: "Process 1 waits for ShareLock on transaction 2", parameters: ["secret@example.com"] }), 2);
    expect(isTransientConflict(deadlock)).toBe(true);
    expect(transientConflict(deadlock)).toEqual({ code: "40P01", message: "deadlock detected", detail: "Process 1 waits for ShareLock on transaction 2" });
    expect(transientConflict(pgError({ code: "40001", message: "could not serialize access" }))).toEqual({ code: "40001", message: "could not serialize access" });
    expect(isTransientConflict(wrap(pgError({ code: "23505" })))).toBe(false);
  });
});
