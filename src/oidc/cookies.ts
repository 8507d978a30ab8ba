import type Provider from "oidc-provider";
import type { Configuration } from "oidc-provider";

type CookieSettings = NonNullable<Configuration["cookies"]>;

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Does a browser at this public origin keep Secure cookies (https, or loopback: a secure context)? */
export function keepsSecureCookies(publicUrl: string): boolean {
  const url = new URL(publicUrl);
  return url.protocol === "https:" || LOOPBACK.has(url.hostname);
}

/**
 * How the provider's cookies are set, and whether its authorization and end-session endpoints take
 * POST (OpenID Connect Core §3.1.2.1, RP-Initiated Logout §2).
 *
 * A relying party's form POST to those endpoints is a cross-site request: browsers send only
 * `SameSite=None` cookies with it, and keep a `SameSite=None` cookie only when it is `Secure`. So
 * the long-lived provider session cookie is `SameSite=None; Secure` wherever browsers keep Secure
 * cookies: over https, and on http://localhost, 127.0.0.1 and [::1], which browsers treat as a
 * secure context (Chromium and Firefox store Secure cookies from them). The short-lived interaction
 * cookies stay `SameSite=Lax`: they are set by the answer to that POST and read on the top-level
 * GET navigations that follow it, which Lax allows.
 *
 * Plain http on any other name (development only: production refuses it) cannot keep a Secure
 * cookie, so there the session cookie stays Lax and the two endpoints answer GET only.
 *
 * Keyward's own session cookie stays `SameSite=Lax`; a cross-site POST does not carry it, so the
 * provider sees nobody signed in and sends the browser to the interaction page (a top-level GET,
 * which carries it): the sign-in completes there without a question. `prompt=none` sent by a
 * cross-site POST therefore answers `login_required`.
 */
export function providerCookies(publicUrl: string, keys: readonly string[], names: CookieSettings["names"]): { cookies: CookieSettings; postMethods: boolean } {
  const postMethods = keepsSecureCookies(publicUrl);
  return {
    postMethods,
    cookies: {
      keys: [...keys],
      names,
      long: { httpOnly: true, sameSite: postMethods ? "none" : "lax", signed: true },
      short: { httpOnly: true, sameSite: "lax", signed: true },
    },
  };
}

/**
 * Marks every provider cookie Secure when the browser's side is secure (see providerCookies): the
 * public origin is https (TLS may end at a proxy the request came through) or loopback. Koa sets
 * Secure cookies only on requests it sees as https, so the provider is told its requests are; it
 * reads `ctx.secure` for cookies alone (the URLs it builds come from the issuer and the protocol).
 */
export function secureProviderCookies(provider: Provider, postMethods: boolean): void {
  if (!postMethods) return;
  Object.defineProperty((provider as unknown as { request: object }).request, "secure", { get: () => true, configurable: true });
}
