import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenLoopback, readBody } from "./loopback-server.js";

/**
 * Local stand-in for GitHub's OAuth web application flow and the REST user endpoints, following
 * shared/reference/external-apis.md §1 ("What a faithful GitHub fake must do"). OAuth
 * (/login/oauth/*) and REST (/user, /user/emails) share one origin; REST paths are also accepted
 * under /api/v3, the GHES-style base URL from which Octokit derives the OAuth host (§1.2).
 * Not modelled: expiring tokens / refresh tokens (`offline_access`), ETag/304, secondary limits.
 */

export interface GithubEmail { email: string; primary: boolean; verified: boolean; visibility: "public" | "private" | null }
export interface GithubAccount { id: number; login: string; name: string | null; email: string | null /* public email */; avatar_url?: string; emails: GithubEmail[] }
export type GithubFailure = "incorrect_client_credentials" | "bad_verification_code" | "user_unauthorized" | "emails_forbidden" | "rate_limited" | "server_error";
export interface FakeGithub {
  url: string;
  signIn(account: GithubAccount): void;
  denyNext(): void;
  failNext(f: GithubFailure): void;
  authorizeRequests: Array<Record<string, string>>;
  tokenRequests: Array<Record<string, string>>;
  close(): Promise<void>;
}

const DOCS = "https://docs.github.com";
const AUTHZ_ERRORS = `${DOCS}/apps/managing-oauth-apps/troubleshooting-authorization-request-errors`;
const TOKEN_ERRORS = `${DOCS}/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors`;
const CODE_TTL_MS = 10 * 60_000; // §1.1: the code expires after 10 minutes
const API_VERSIONS = new Set(["2022-11-28", "2026-03-10"]); // §1.5
const RATE_LIMIT = 5000; // §1.5: 5000/h for a user token
// §1.3 [obs]: the classic plain-text 403 for a request without a User-Agent.
const UA_403 =
  "Request forbidden by administrative rules. Please make sure your request has a User-Agent header " +
  "(https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const randomAlnum = (n: number) => Array.from(randomBytes(n), (b) => ALNUM[b % ALNUM.length]).join("");
const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
};
const page = (res: ServerResponse, status: number, text: string) => {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
  res.end(`<!DOCTYPE html><html><body><h1>${text}</h1></body></html>`);
};
const redirect = (res: ServerResponse, to: string, params: Record<string, string | undefined>) => {
  const u = new URL(to);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  res.writeHead(302, { location: u.toString() });
  res.end();
};

/**
 * §1.1 redirect rules: same scheme; host equal to the callback's (the docs compare the host
 * "excluding sub-domains", so a sub-domain of the callback host is accepted too); port equal,
 * except that loopback (127.0.0.1, ::1) may use any port; path equal to or below the callback path.
 */
function redirectAllowed(given: string, registered: URL): boolean {
  let u: URL;
  try {
    u = new URL(given);
  } catch {
    return false;
  }
  const loopback = u.hostname === "127.0.0.1" || u.hostname === "[::1]";
  const hostOk = u.hostname === registered.hostname || u.hostname.endsWith(`.${registered.hostname}`);
  const portOk = u.port === registered.port || (loopback && u.hostname === registered.hostname);
  const base = registered.pathname.endsWith("/") ? registered.pathname : `${registered.pathname}/`;
  const pathOk = u.pathname === registered.pathname || u.pathname.startsWith(base);
  return u.protocol === registered.protocol && hostOk && portOk && pathOk;
}

interface Grant { account: GithubAccount; scopes: string[] }
interface Code extends Grant { clientId: string; redirectUri: string; challenge?: string; expiresAt: number }

/** `opts.callbackUrl` is read at each request, so a test may register it once its app's port is known. */
export async function startFakeGithub(opts: { clientId: string; clientSecret: string; callbackUrl: string }): Promise<FakeGithub> {
  const authorizeRequests: Array<Record<string, string>> = [];
  const tokenRequests: Array<Record<string, string>> = [];
  const codes = new Map<string, Code>();
  const tokens = new Map<string, Grant>();
  const pending: GithubFailure[] = [];
  let account: GithubAccount | undefined;
  let deny = false;
  let used = 0;
  const resetAt = Math.floor(Date.now() / 1000) + 3600;
  /** Consumes a pending failure of one of the given kinds, if any. */
  const take = (...kinds: GithubFailure[]) => {
    const i = pending.findIndex((f) => kinds.includes(f));
    return i < 0 ? undefined : pending.splice(i, 1)[0];
  };

  async function authorize(url: URL, res: ServerResponse) {
    const q = Object.fromEntries(url.searchParams);
    authorizeRequests.push(q);
    if (q.client_id !== opts.clientId) return page(res, 404, "Not Found"); // unknown client: GitHub's 404 page
    const redirectUri = q.redirect_uri || opts.callbackUrl; // omitted → the registered callback
    if (!redirectAllowed(redirectUri, new URL(opts.callbackUrl))) {
      // §1.1: error redirects go to the registered callback.
      return redirect(res, opts.callbackUrl, {
        error: "redirect_uri_mismatch",
        error_description: "The redirect_uri MUST match the registered callback URL for this application.",
        error_uri: `${AUTHZ_ERRORS}#redirect-uri-mismatch`,
        state: q.state,
      });
    }
    // §1.1 PKCE: challenge and method require each other; only S256, with a 43-character challenge.
    const challenge = q.code_challenge;
    if ((challenge || q.code_challenge_method) && (q.code_challenge_method !== "S256" || !/^[A-Za-z0-9_-]{43}$/.test(challenge ?? ""))) {
      return page(res, 400, "Bad Request: code_challenge must be a 43-character S256 value and code_challenge_method must be S256");
    }
    if (deny) {
      deny = false;
      // Sent to the (validated) redirect_uri rather than the registered callback, so loopback apps
      // on an ephemeral port receive it; the docs' wording says "registered callback URL".
      return redirect(res, redirectUri, {
        error: "access_denied",
        error_description: "The user has denied your application access.",
        error_uri: `${AUTHZ_ERRORS}#access-denied`,
        state: q.state,
      });
    }
    if (!account) return page(res, 500, "fake-github: no account is signed in; call signIn() first");
    // §1.1 scope is space-delimited; offline_access is not a normal scope (and not modelled here).
    const scopes = [...new Set((q.scope ?? "").split(/[\s,]+/).filter((s) => s && s !== "offline_access"))];
    const code = randomBytes(10).toString("hex"); // GitHub codes are 20 hex characters
    codes.set(code, { account, scopes, clientId: q.client_id, redirectUri, challenge, expiresAt: Date.now() + CODE_TTL_MS });
    redirect(res, redirectUri, { code, state: q.state });
  }

  async function token(req: IncomingMessage, res: ServerResponse) {
    const raw = await readBody(req);
    let p: Record<string, string>;
    try {
      // §1.2: Octokit sends JSON, generic OAuth2 clients send form-encoded; accept both.
      p = /json/i.test(req.headers["content-type"] ?? "")
        ? Object.fromEntries(Object.entries(JSON.parse(raw || "{}") as object).map(([k, v]) => [k, String(v)]))
        : Object.fromEntries(new URLSearchParams(raw));
    } catch {
      return json(res, 400, { message: "Problems parsing JSON", documentation_url: `${DOCS}/rest`, status: "400" });
    }
    tokenRequests.push(p);
    // §1.2: the response format follows Accept (form-encoded by default); errors are HTTP 200.
    const accept = String(req.headers.accept ?? "");
    const reply = (body: Record<string, string>) => {
      if (accept.includes("application/json")) return json(res, 200, body);
      if (accept.includes("application/xml")) {
        res.writeHead(200, { "content-type": "application/xml; charset=utf-8" });
        return res.end(`<OAuth>${Object.entries(body).map(([k, v]) => `<${k}>${v.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</${k}>`).join("")}</OAuth>`);
      }
      res.writeHead(200, { "content-type": "application/x-www-form-urlencoded; charset=utf-8" });
      res.end(new URLSearchParams(body).toString());
    };
    const fail = (error: string, error_description: string, anchor: string) => reply({ error, error_description, error_uri: `${TOKEN_ERRORS}#${anchor}` });
    const badCode = () => fail("bad_verification_code", "The code passed is incorrect or expired.", "bad-verification-code");

    if (take("server_error")) {
      res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }); // body of a real 500 not documented
      return res.end("Internal Server Error");
    }
    if (take("incorrect_client_credentials") || p.client_id !== opts.clientId || p.client_secret !== opts.clientSecret) {
      return fail("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.", "incorrect-client-credentials");
    }
    if (p.grant_type === "refresh_token") {
      return fail("bad_refresh_token", "The refresh token passed is incorrect or expired.", "bad-refresh-token"); // none issued
    }
    const c = codes.get(p.code ?? "");
    codes.delete(p.code ?? ""); // single-use: any presentation consumes the code
    // Reuse → bad_verification_code is [UNCONFIRMED] in §1.2 but widely observed.
    if (take("bad_verification_code") || !c || c.clientId !== p.client_id || Date.now() > c.expiresAt) return badCode();
    if (p.redirect_uri && p.redirect_uri !== c.redirectUri) {
      return fail("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.", "redirect-uri-mismatch");
    }
    // ASSUMED: the error code for a missing or wrong PKCE verifier is undocumented (§1.2); we use bad_verification_code.
    if (c.challenge && (!p.code_verifier || s256(p.code_verifier) !== c.challenge)) return badCode();
    const accessToken = `gho_${randomAlnum(36)}`;
    tokens.set(accessToken, { account: c.account, scopes: c.scopes });
    reply({ access_token: accessToken, token_type: "bearer", scope: c.scopes.join(",") }); // §1.2: comma-separated
  }

  function api(req: IncomingMessage, res: ServerResponse, path: string, url: URL) {
    used++;
    const headers = (remaining = RATE_LIMIT - used): Record<string, string> => ({
      "x-ratelimit-limit": String(RATE_LIMIT),
      "x-ratelimit-remaining": String(Math.max(0, remaining)),
      "x-ratelimit-used": String(RATE_LIMIT - Math.max(0, remaining)),
      "x-ratelimit-reset": String(resetAt),
      "x-ratelimit-resource": "core",
    });
    if (!req.headers["user-agent"]) {
      res.writeHead(403, { "content-type": "text/plain; charset=utf-8", ...headers() });
      return res.end(UA_403);
    }
    const version = req.headers["x-github-api-version"];
    if (version !== undefined && !API_VERSIONS.has(String(version))) {
      // §1.5: unknown version → 400. The body text is ASSUMED.
      return json(res, 400, { message: `Unsupported 'X-GitHub-Api-Version' header: ${String(version)}`, documentation_url: `${DOCS}/rest/about-the-rest-api/api-versions`, status: "400" }, headers());
    }
    const m = /^(?:bearer|token)\s+(\S+)$/i.exec(req.headers.authorization ?? ""); // §1.3: both schemes
    const grant = m ? tokens.get(m[1]!) : undefined;
    if (!m) return json(res, 401, { message: "Requires authentication", documentation_url: `${DOCS}/rest`, status: "401" }, headers());
    if (!grant || (path === "/user" && take("user_unauthorized"))) {
      return json(res, 401, { message: "Bad credentials", documentation_url: `${DOCS}/rest`, status: "401" }, headers()); // §1.5
    }
    if (path === "/user" && take("rate_limited")) {
      // §1.5: primary limit exceeded → 403 with x-ratelimit-remaining: 0.
      return json(res, 403, { message: `API rate limit exceeded for user ID ${grant.account.id}.`, documentation_url: `${DOCS}/rest/overview/rate-limits-for-the-rest-api`, status: "403" }, headers(0));
    }
    const scopeHeaders = { ...headers(), "x-oauth-scopes": grant.scopes.join(", "), "x-accepted-oauth-scopes": path === "/user" ? "" : "user, user:email" };
    const a = grant.account;
    if (path === "/user") {
      const api = `https://api.github.com/users/${a.login}`;
      const privateShape = grant.scopes.includes("user") || grant.scopes.includes("read:user"); // §1.3
      return json(res, 200, {
        login: a.login, id: a.id, node_id: `U_${Buffer.from(`04:User${a.id}`).toString("base64url")}`,
        avatar_url: a.avatar_url ?? `https://avatars.githubusercontent.com/u/${a.id}?v=4`, gravatar_id: "", url: api,
        html_url: `https://github.com/${a.login}`, followers_url: `${api}/followers`, following_url: `${api}/following{/other_user}`,
        gists_url: `${api}/gists{/gist_id}`, starred_url: `${api}/starred{/owner}{/repo}`, subscriptions_url: `${api}/subscriptions`,
        organizations_url: `${api}/orgs`, repos_url: `${api}/repos`, events_url: `${api}/events{/privacy}`, received_events_url: `${api}/received_events`,
        type: "User", user_view_type: privateShape ? "private" : "public", site_admin: false,
        name: a.name, company: null, blog: "", location: null, email: a.email, hireable: null, bio: null, twitter_username: null,
        public_repos: 0, public_gists: 0, followers: 0, following: 0, created_at: "2020-01-01T00:00:00Z", updated_at: "2020-01-01T00:00:00Z",
        ...(privateShape && {
          private_gists: 0, total_private_repos: 0, owned_private_repos: 0, disk_usage: 0, collaborators: 0, two_factor_authentication: false,
          plan: { name: "free", space: 976562499, collaborators: 0, private_repos: 10000 },
        }),
      }, scopeHeaders);
    }
    // /user/emails needs user:email or user (§1.4). ASSUMED: 404 (the docs allow 403 or 404).
    if (take("emails_forbidden") || !(grant.scopes.includes("user:email") || grant.scopes.includes("user"))) {
      return json(res, 404, { message: "Not Found", documentation_url: `${DOCS}/rest/users/emails#list-email-addresses-for-the-authenticated-user`, status: "404" }, scopeHeaders);
    }
    const perPage = Math.min(100, Number(url.searchParams.get("per_page")) || 30); // §1.4 pagination
    const pageNo = Math.max(1, Number(url.searchParams.get("page")) || 1);
    json(res, 200, a.emails.slice((pageNo - 1) * perPage, pageNo * perPage), scopeHeaders);
  }

  const server = await listenLoopback("fake-github", async (req, res) => {
    const url = new URL(req.url ?? "/", "http://fake-github");
    const apiPath = url.pathname.replace(/^\/api\/v3(?=\/)/, "");
    if (req.method === "GET" && url.pathname === "/login/oauth/authorize") return authorize(url, res);
    if (req.method === "POST" && url.pathname === "/login/oauth/access_token") return token(req, res);
    if (req.method === "GET" && (apiPath === "/user" || apiPath === "/user/emails")) return api(req, res, apiPath, url);
    json(res, 404, { message: "Not Found", documentation_url: `${DOCS}/rest`, status: "404" });
  });

  return {
    url: server.url,
    signIn: (a) => void (account = a),
    denyNext: () => void (deny = true),
    failNext: (f) => void pending.push(f),
    authorizeRequests,
    tokenRequests,
    close: server.close,
  };
}
