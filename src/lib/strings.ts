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

/**
 * A key conversion that remembers its answers: the same few hundred field names are converted on
 * every request, and a regular-expression replace per key per answer showed in the profile. Keys
 * come from clients too (anonymous ones included), so only short keys, and only so many, are
 * remembered: a field name is short, and a client cannot park megabytes here.
 */
function memoized(fn: (k: string) => string): (k: string) => string {
  const seen = new Map<string, string>();
  return (k) => {
    let out = seen.get(k);
    if (out === undefined) {
      out = fn(k);
      if (k.length <= 64 && seen.size < 4096) seen.set(k, out);
    }
    return out;
  };
}
const toSnakeKey = memoized(camelToSnake);
const toCamelKey = memoized(snakeToCamel);

function mapKeys(value: unknown, fn: (k: string) => string): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => mapKeys(v, fn));
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Verbatim) return value.value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    const key = fn(k);
    const v = mapKeys((value as Record<string, unknown>)[k], fn);
    // A client's "__proto__" key stays a plain own property (as Object.fromEntries made it), never the prototype.
    if (key === "__proto__") Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else out[key] = v;
  }
  return out;
}

/** A value whose keys must reach the client as they are (WebAuthn options, JWKS, audit metadata). */
export class Verbatim {
  constructor(readonly value: unknown) {}
}

/** Service views are camelCase; the REST shim speaks the snake_case of the original API. */
export const toSnake = (value: unknown): unknown => mapKeys(value, toSnakeKey);
export const toCamel = (value: unknown): unknown => mapKeys(value, toCamelKey);
export { camelToSnake, snakeToCamel };
