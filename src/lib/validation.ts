import type { z } from "zod";
import { CommonErrors } from "./errors.js";

// With the u flag, a surrogate pair reads as one code point: only a lone surrogate is in Cs.
const LONE_SURROGATE = /\p{Cs}/u;

/** What PostgreSQL cannot store: a NUL character (text refuses it), a lone surrogate (jsonb refuses it, text gets U+FFFD). */
const unstorable = (s: string): string | null =>
  s.includes("\u0000") ? "must not contain NUL characters" : LONE_SURROGATE.test(s) ? "must be well-formed Unicode (no lone surrogates)" : null;

/** Path and problem of the first string (value or key) PostgreSQL cannot store. */
export function findUnstorable(value: unknown, path: string[] = [], depth = 0): { path: string[]; message: string } | null {
  if (typeof value === "string") {
    const message = unstorable(value);
    return message ? { path, message } : null;
  }
  if (depth > 20 || value === null || typeof value !== "object") return null;
  for (const [k, v] of Object.entries(value)) {
    const keyProblem = unstorable(k);
    if (keyProblem) return { path, message: keyProblem };
    const found = findUnstorable(v, [...path, k], depth + 1);
    if (found) return found;
  }
  return null;
}

/** Validates service input once; every transport gets the same VALIDATION_ERROR for the same mistake. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  // Checked before the schema: a login's address is recorded (audit metadata, jsonb) even when wrong.
  const bad = findUnstorable(input);
  if (bad) throw CommonErrors.validation([{ path: bad.path.join("."), message: bad.message }]);
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  throw CommonErrors.validation(
    result.error.issues.map((issue) => ({
      path: issue.path.map(String).join("."),
      message: issue.message,
    })),
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Path ids: anything that is not a UUID cannot name a row, so it is reported as not found. */
export function parseId(value: unknown, notFound: () => Error): string {
  if (typeof value !== "string" || !UUID.test(value)) throw notFound();
  return value.toLowerCase();
}
