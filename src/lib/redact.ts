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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Query parameters whose values are never secret and help reading a log. Every other value is
 * masked (token, code, state, cli_token, redirect_url with its token=, nonce, …): an allow-list,
 * so a parameter added later is masked until someone decides it is harmless.
 */
const PLAIN_QUERY = new Set(["page", "per_page", "limit", "mode", "flow", "ca_type", "org_id", "action", "client_id", "response_type", "response_mode", "scope", "prompt", "error"]);
const PARAM_NAME = /^[A-Za-z][\w.[\]-]{0,31}$/;
const MASK = "[REDACTED]";

/** Express matches paths case-insensitively and after percent-decoding a segment: compare the same way. */
function segmentName(segment: string | undefined): string {
  try {
    return decodeURIComponent(segment ?? "").toLowerCase();
  } catch {
    return (segment ?? "").toLowerCase();
  }
}

/**
 * A request URL fit for a log line: the invitation link's token (`/invites/<token>`) and every
 * query value not known to be harmless are masked, so a log reader cannot replay a link. An
 * invitation's id (`/organizations/{id}/invites/{uuid}`, `/users/me/invites/{uuid}`) names a row,
 * not a credential, and stays.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf("?");
  const segments = (q === -1 ? url : url.slice(0, q)).split("/");
  for (let i = 1; i < segments.length; i++) {
    if (segmentName(segments[i - 1]) !== "invites" || !segments[i]) continue;
    const owner = segmentName(segments[i - 3]);
    const byId = (owner === "organizations" || (owner === "users" && segmentName(segments[i - 2]) === "me")) && UUID.test(segments[i]!);
    if (!byId) segments[i] = MASK;
  }
  const path = segments.join("/");
  if (q === -1) return path;
  const query = url
    .slice(q + 1)
    .split("&")
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf("=");
      const name = segmentName(eq === -1 ? pair : pair.slice(0, eq));
      if (PLAIN_QUERY.has(name)) return pair.slice(0, 200);
      return PARAM_NAME.test(name) ? `${name}=${MASK}` : MASK;
    });
  return query.length ? `${path}?${query.join("&")}` : path;
}
