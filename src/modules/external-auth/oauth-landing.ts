import type { FlowKind, ProviderName } from "./external-auth.schemas.js";

export type Landing =
  | { kind: "session" }
  | { kind: "linked" }
  | { kind: "mfa"; methods: string[] }
  | { kind: "error"; code: string; message: string };

/**
 * Where the browser lands after a provider callback. Hosted pages (a `next` path, or no separate
 * web app) land on this origin; a separate web app (APP_URL) gets its `/oauth/callback` and
 * `/linked-accounts` routes as in the original API. No token ever travels in the URL: the session
 * is a cookie, and a pending second factor is a cookie too.
 */
export function landingUrl(
  origins: { publicUrl: string; appUrl: string },
  flow: { provider: ProviderName; flow: FlowKind | null; next: string | null },
  landing: Landing,
): string {
  const hosted = flow.next !== null || origins.appUrl === origins.publicUrl;
  const after = flow.next ?? "/account";
  const at = (base: string, path: string, params: Record<string, string>) => {
    const url = new URL(path, base);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url.toString();
  };
  const common = { provider: flow.provider, ...(flow.flow ? { flow: flow.flow } : {}) };

  if (hosted) {
    switch (landing.kind) {
      case "session":
        return at(origins.publicUrl, after, {});
      case "linked":
        return at(origins.publicUrl, after, { linked: flow.provider });
      case "mfa":
        return at(origins.publicUrl, "/login", { mfa: landing.methods.join(","), next: after });
      case "error":
        // A failed link returns to the page it started from; a failed sign-in to the sign-in page.
        return flow.flow === "link"
          ? at(origins.publicUrl, after, { error: landing.message, error_type: landing.code })
          : at(origins.publicUrl, "/login", { error: landing.message, error_type: landing.code, ...(flow.next ? { next: flow.next } : {}) });
    }
  }
  switch (landing.kind) {
    case "session":
      return at(origins.appUrl, "/oauth/callback", { ...common, status: "success" });
    case "linked":
      return at(origins.appUrl, "/linked-accounts", { linked: "1", provider: flow.provider });
    case "mfa":
      return at(origins.appUrl, "/oauth/callback", { ...common, requires_mfa: "1", mfa_methods: landing.methods.join(",") });
    case "error":
      return at(origins.appUrl, "/oauth/callback", { ...common, error: landing.message, error_type: landing.code });
  }
}
