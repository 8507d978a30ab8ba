import { sign } from "cookie-signature";
import type { NextFunction, Request, Response } from "express";
import session from "express-session";
import type { Config } from "../config/index.js";

/**
 * express-session reads the signed cookie and loads the session record (through the hashing
 * store). A request without the session cookie (API clients on bearer tokens, probes) skips it:
 * otherwise express-session mints and wraps a throwaway session for every such request, which is
 * never saved (saveUninitialized is off) and nothing reads.
 */
export function sessionMiddleware(config: Config, store: session.Store) {
  const loadSession = session({
    name: config.session.cookieName,
    secret: [...config.session.secrets],
    store,
    resave: false,
    saveUninitialized: false,
    rolling: false,
    cookie: cookieOptions(config),
  });
  const cookiePrefix = `${config.session.cookieName}=`;
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!req.headers.cookie?.includes(cookiePrefix)) return next();
    loadSession(req, res, next);
  };
}

function cookieOptions(config: Config) {
  return { httpOnly: true, sameSite: "lax" as const, secure: config.session.secureCookie, path: "/" };
}

/**
 * Sets the session cookie for a token the sessions service issued, signed the way express-session
 * expects. Without remember-me it is a browser-session cookie; with it, it lasts until the cap.
 */
export function setSessionCookie(res: Response, config: Config, token: string, expiresAt: Date | null): void {
  res.cookie(config.session.cookieName, `s:${sign(token, config.session.secrets[0]!)}`, {
    ...cookieOptions(config),
    ...(expiresAt ? { expires: expiresAt } : {}),
  });
}

export function clearSessionCookie(res: Response, config: Config): void {
  res.clearCookie(config.session.cookieName, cookieOptions(config));
}

/**
 * The pending second-factor token for browsers: HttpOnly, SameSite=Strict, and scoped to the whole
 * origin so that both doors that finish a sign-in read it: REST under /api/v1/auth and the GraphQL
 * second-factor mutations at /graphql (a cookie has one path; the two share only "/"). Over HTTPS
 * it is a `__Host-` cookie, which no sibling subdomain can plant.
 */
function mfaCookie(config: Config) {
  const secure = config.session.secureCookie;
  return { name: secure ? "__Host-keyward.mfa" : "keyward.mfa", options: { httpOnly: true, sameSite: "strict" as const, secure, path: "/" } };
}

// Where the cookie lived before it was widened to "/": one left there would shadow the new one on REST.
const LEGACY_MFA_PATH = "/api/v1/auth";

export function setMfaCookie(res: Response, config: Config, token: string, expiresAt: Date): void {
  const { name, options } = mfaCookie(config);
  res.clearCookie("keyward.mfa", { ...options, path: LEGACY_MFA_PATH });
  res.cookie(name, token, { ...options, expires: expiresAt });
}

export function clearMfaCookie(res: Response, config: Config): void {
  const { name, options } = mfaCookie(config);
  res.clearCookie(name, options);
}

/** A cookie value, percent-decoded when well-formed; a malformed one (`%E0%A4%A`) is no value at all. */
function decodeCookieValue(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** A cookie's value from the request's Cookie header. */
function cookieOf(req: Request, name: string): string | undefined {
  const match = new RegExp(`(?:^|;\\s*)${name.replace(/[.]/g, "\\.")}=([^;]+)`).exec(req.get("cookie") ?? "");
  return decodeCookieValue(match?.[1]);
}

/** The MFA token from the request body, or else from the browser's cookie. */
export function mfaTokenOf(req: Request, config: Config): string | undefined {
  const fromBody = (req.body as { mfa_token?: unknown } | undefined)?.mfa_token;
  if (typeof fromBody === "string") return fromBody;
  return cookieOf(req, mfaCookie(config).name);
}

/**
 * Binds external sign-in flows to the browser that started them. Lax, because the provider brings
 * the browser back with a cross-site top-level GET. Over HTTPS it is a `__Host-` cookie (no
 * sibling subdomain can plant a known value); over plain http it is scoped to the flow's paths.
 * One value serves every flow the browser has open (two tabs both work); it lapses with the flow TTL.
 */
function oauthCookie(config: Config) {
  const secure = config.session.secureCookie;
  return { name: secure ? "__Host-keyward.oauth" : "keyward.oauth", options: { httpOnly: true, sameSite: "lax" as const, secure, path: secure ? "/" : "/api/v1/auth/external" } };
}

export function setOAuthBindingCookie(res: Response, config: Config, value: string, ttlSeconds: number): void {
  const { name, options } = oauthCookie(config);
  res.cookie(name, value, { ...options, maxAge: ttlSeconds * 1000 });
}

export function oauthBindingOf(req: Request, config: Config): string | undefined {
  return cookieOf(req, oauthCookie(config).name);
}

/** The same binding for SSO flows (issue 35): its callback lives under /sso, so its own cookie. */
function ssoCookie(config: Config) {
  const secure = config.session.secureCookie;
  return { name: secure ? "__Host-keyward.sso" : "keyward.sso", options: { httpOnly: true, sameSite: "lax" as const, secure, path: secure ? "/" : "/sso" } };
}

export function setSsoBindingCookie(res: Response, config: Config, value: string, ttlSeconds: number): void {
  const { name, options } = ssoCookie(config);
  res.cookie(name, value, { ...options, maxAge: ttlSeconds * 1000 });
}

export function ssoBindingOf(req: Request, config: Config): string | undefined {
  return cookieOf(req, ssoCookie(config).name);
}

/**
 * The binding of SAML flows (issue 35): the IdP returns the browser with a cross-site POST to the
 * ACS, which a SameSite=Lax cookie does not follow. Over HTTPS it is SameSite=None (still HttpOnly,
 * `__Host-`, and only a flow's opaque binding value: the RelayState's flow must match it). Browsers
 * refuse SameSite=None without Secure, but take Secure cookies from http://localhost (a secure
 * context): there it is SameSite=None; Secure too, so an IdP on another site works in loopback
 * development. Other plain-http origins get Lax (an IdP on the same site only).
 */
function samlCookie(config: Config) {
  const secure = config.session.secureCookie;
  const host = new URL(config.http.publicUrl).hostname;
  const crossSite = secure || ["localhost", "127.0.0.1", "[::1]"].includes(host);
  return { name: secure ? "__Host-keyward.saml" : "keyward.saml", options: { httpOnly: true, sameSite: crossSite ? ("none" as const) : ("lax" as const), secure: crossSite, path: secure ? "/" : "/sso" } };
}

export function setSamlBindingCookie(res: Response, config: Config, value: string, ttlSeconds: number): void {
  const { name, options } = samlCookie(config);
  res.cookie(name, value, { ...options, maxAge: ttlSeconds * 1000 });
}

export function samlBindingOf(req: Request, config: Config): string | undefined {
  return cookieOf(req, samlCookie(config).name);
}

/**
 * The binding of a pending SSO link (issue 35): set when an SSO sign-in found an existing account
 * not linked yet, and read by the sign-in that confirms it (password and its second step, passkey,
 * the mailed link). Those live under /api/v1 and /sso, so its path is "/" (a `__Host-` cookie over
 * HTTPS); HttpOnly, Lax (set on the provider's redirect back), lapsing with the pending link.
 */
function ssoLinkCookie(config: Config) {
  const secure = config.session.secureCookie;
  return { name: secure ? "__Host-keyward.sso-link" : "keyward.sso-link", options: { httpOnly: true, sameSite: "lax" as const, secure, path: "/" } };
}

export function setSsoLinkBindingCookie(res: Response, config: Config, value: string, ttlSeconds: number): void {
  const { name, options } = ssoLinkCookie(config);
  res.cookie(name, value, { ...options, maxAge: ttlSeconds * 1000 });
}

export function ssoLinkBindingOf(req: Request, config: Config): string | undefined {
  return cookieOf(req, ssoLinkCookie(config).name);
}
