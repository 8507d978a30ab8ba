/** Normalises an email address for storage and lookup: trimmed and lower-cased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** "alice@example.com" → "a***e@example.com": enough to recognise, not enough to harvest. */
export function maskEmail(email: string): string {
  const [local = "", domain = ""] = email.split("@");
  const masked = local.length <= 2 ? `${local[0] ?? ""}*` : `${local[0]}${"*".repeat(Math.min(local.length - 2, 5))}${local.at(-1)}`;
  return `${masked}@${domain}`;
}

const camelToSnake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const snakeToCamel = (k: string) => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function mapKeys(value: unknown, fn: (k: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => mapKeys(v, fn));
  if (value instanceof Date) return value.toISOString();
  if (value === null || typeof value !== "object" || Buffer.isBuffer(value)) return value;
  if (value instanceof Verbatim) return value.value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [fn(k), mapKeys(v, fn)]));
}

/** A value whose keys must reach the client as they are (WebAuthn options, JWKS, audit metadata). */
export class Verbatim {
  constructor(readonly value: unknown) {}
}

/** Service views are camelCase; the REST shim speaks the snake_case of the original API. */
export const toSnake = (value: unknown): unknown => mapKeys(value, camelToSnake);
export const toCamel = (value: unknown): unknown => mapKeys(value, snakeToCamel);
export { camelToSnake, snakeToCamel };
