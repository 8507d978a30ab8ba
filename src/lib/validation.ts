import type { z } from "zod";
import { CommonErrors } from "./errors.js";

/** Validates service input once; every transport gets the same VALIDATION_ERROR for the same mistake. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
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
