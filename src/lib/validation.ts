import type { z } from "zod";
import { CommonErrors } from "./errors.js";

/** Path of the first string holding a NUL character (PostgreSQL text cannot store one). */
function findNul(value: unknown, path: string[] = [], depth = 0): string[] | null {
  if (typeof value === "string") return value.includes("\u0000") ? path : null;
  if (depth > 20 || value === null || typeof value !== "object") return null;
  for (const [k, v] of Object.entries(value)) {
    const found = findNul(v, [...path, k], depth + 1);
    if (found) return found;
  }
  return null;
}

/** Validates service input once; every transport gets the same VALIDATION_ERROR for the same mistake. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const nul = findNul(input);
  if (nul) throw CommonErrors.validation([{ path: nul.join("."), message: "must not contain NUL characters" }]);
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
