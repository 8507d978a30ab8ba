const SECRET_KEY = /pass(word)?|secret|token|private_?key|api_?key|authorization|cookie|backup_?codes?|otp|seed/i;

/** Masks secret-looking fields (any depth) before a payload is stored in the audit log or logged. */
export function redact<T>(value: T, depth = 0): T {
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1)) as T;
  if (value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_KEY.test(k) ? "[REDACTED]" : redact(v, depth + 1);
  }
  return out as T;
}
