import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenLoopback, readBody } from "./loopback-server.js";

/**
 * Local stand-in for Google's OpenID Connect provider, following shared/reference/external-apis.md §2
 * ("What a faithful Google fake must do"). One origin serves everything; the issuer is the origin
 * (no trailing slash) and discovery lives at /.well-known/openid-configuration.
 */

export interface GoogleAccount { sub: string; email: string; email_verified: boolean; name?: string; given_name?: string; family_name?: string; picture?: string; hd?: string }
export interface IdTokenTamper { nonce?: string; iss?: string; aud?: string; expired?: boolean; badSignature?: boolean; unknownKid?: boolean }
export type GoogleFailure = "invalid_client" | "invalid_grant" | "server_error";
export interface FakeGoogle {
  url: string;
  signIn(account: GoogleAccount): void;
  denyNext(): void;
  tamperNextIdToken(t: IdTokenTamper): void;
  failNext(f: GoogleFailure): void;
  /** Publishes the next signing key without using it yet, as Google does ahead of a rotation. */
  publishNextKey(): void;
  /** Signs with the next key (the pre-published one if any); earlier keys stay published. */
  rotateKeys(): void;
  authorizeRequests: Array<Record<string, string>>;
  tokenRequests: Array<Record<string, string>>;
  close(): Promise<void>;
}

const CODE_TTL_MS = 10 * 60_000;
const EMAIL_URL = "https://www.googleapis.com/auth/userinfo.email";
const PROFILE_URL = "https://www.googleapis.com/auth/userinfo.profile";
const KEYS_CACHE = "public, max-age=19766, must-revalidate, no-transform"; // §2.5: libraries cache per max-age
const NO_STORE = { "cache-control": "no-cache, no-store, max-age=0, must-revalidate", pragma: "no-cache" };

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
};
const page = (res: ServerResponse, status: number, title: string, detail: string) => {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
  res.end(`<!DOCTYPE html><html><body><h1>${title}</h1><p>${detail}</p></body></html>`);
};
const redirect = (res: ServerResponse, to: string, params: Record<string, string | undefined>) => {
  const u = new URL(to);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  res.writeHead(302, { location: u.toString() });
  res.end();
};
const b64json = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const hasEmail = (scopes: string[]) => scopes.includes("email") || scopes.includes(EMAIL_URL);
const hasProfile = (scopes: string[]) => scopes.includes("profile") || scopes.includes(PROFILE_URL);

interface SigningKey { kid: string; privateKey: KeyObject; publicKey: KeyObject }
const newKey = (): SigningKey => ({ kid: randomBytes(20).toString("hex"), ...generateKeyPairSync("rsa", { modulusLength: 2048 }) });

interface Grant { account: GoogleAccount; scopes: string[]; nonce?: string }
interface Code extends Grant { redirectUri: string; challenge?: string; method?: string; refresh: boolean; expiresAt: number }

/** §2.2 [obs]: the callback echoes the scope expanded, e.g. "email profile …userinfo.profile …userinfo.email openid". */
function expandScopes(requested: string[]): string[] {
  const out = requested.filter((s) => s !== "openid");
  if (hasProfile(requested)) out.push(PROFILE_URL);
  if (hasEmail(requested)) out.push(EMAIL_URL);
  return [...new Set([...out, "openid"])];
}

/** Claims shared by the ID token and UserInfo (§2.4, §2.6): email only with the email scope, profile claims with profile. */
function userClaims({ account: a, scopes }: Grant) {
  const profile = hasProfile(scopes) ? { name: a.name, given_name: a.given_name, family_name: a.family_name, picture: a.picture } : {};
  return { sub: a.sub, ...profile, ...(hasEmail(scopes) && { email: a.email, email_verified: a.email_verified }), hd: a.hd };
}

/** `opts.redirectUri` is read at each request, so a test may register it once its app's port is known. */
export async function startFakeGoogle(opts: { clientId: string; clientSecret: string; redirectUri: string }): Promise<FakeGoogle> {
  const authorizeRequests: Array<Record<string, string>> = [];
  const tokenRequests: Array<Record<string, string>> = [];
  // §2.5 rotation: keys[signing] signs; earlier ones stay published (retired) so older tokens still
  // verify, and a later one may already be published ahead of its use.
  const keys: SigningKey[] = [newKey()];
  let signing = 0;
  const codes = new Map<string, Code>();
  const accessTokens = new Map<string, Grant & { expiresAt: number }>();
  const refreshTokens = new Map<string, Grant>();
  const offlineGranted = new Set<string>(); // subs that already consented to offline access (§2.3)
  let account: GoogleAccount | undefined;
  let deny = false;
  let tamper: IdTokenTamper | undefined;
  let failure: GoogleFailure | undefined;
  let url = "";

  /** RS256 JWT with header {alg, kid, typ} and the §2.4 claims; applies and clears any pending tamper. */
  function idToken(g: Grant, accessToken: string): string {
    const t = tamper ?? {};
    tamper = undefined;
    const key = keys[signing]!;
    const iat = Math.floor(Date.now() / 1000) - (t.expired ? 7200 : 0); // expired: exp an hour in the past
    const header = { alg: "RS256", kid: t.unknownKid ? randomBytes(20).toString("hex") : key.kid, typ: "JWT" };
    const atHash = createHash("sha256").update(accessToken).digest().subarray(0, 16).toString("base64url"); // left-most half
    const claims = {
      iss: t.iss ?? url, azp: opts.clientId, aud: t.aud ?? opts.clientId, ...userClaims(g), at_hash: atHash,
      nonce: t.nonce ?? g.nonce, iat, exp: iat + 3600,
    };
    const input = `${b64json(header)}.${b64json(claims)}`; // undefined claims are dropped by JSON.stringify
    const sig = sign("sha256", Buffer.from(input), key.privateKey);
    if (t.badSignature) sig[sig.length - 1]! ^= 0xff;
    return `${input}.${sig.toString("base64url")}`;
  }

  /** Issues an access token (ya29.… like Google's) and the §2.3 token response body. */
  function tokenResponse(g: Grant, refresh: boolean) {
    const accessToken = `ya29.${randomBytes(48).toString("base64url")}`;
    accessTokens.set(accessToken, { ...g, expiresAt: Date.now() + 3599_000 });
    const body: Record<string, unknown> = {
      access_token: accessToken, expires_in: 3599, scope: expandScopes(g.scopes).filter((s) => s !== "email" && s !== "profile").join(" "),
      token_type: "Bearer", id_token: idToken(g, accessToken),
    };
    if (refresh) {
      body.refresh_token = `1//${randomBytes(48).toString("base64url")}`;
      refreshTokens.set(body.refresh_token as string, g);
    }
    return body;
  }

  async function authorize(u: URL, res: ServerResponse) {
    const q = Object.fromEntries(u.searchParams);
    authorizeRequests.push(q);
    // Google shows an error page (no redirect) for an unknown client or a redirect_uri mismatch.
    if (q.client_id !== opts.clientId) return page(res, 401, "Error 401: invalid_client", "The OAuth client was not found.");
    if (q.redirect_uri !== opts.redirectUri) return page(res, 400, "Error 400: redirect_uri_mismatch", "redirect_uri must match exactly (§2.2)");
    const bad = (detail: string) => page(res, 400, "Error 400: invalid_request", detail); // ASSUMED: page rather than error redirect
    if (q.response_type !== "code") return bad("response_type must be code");
    const scopes = (q.scope ?? "").split(" ").filter(Boolean);
    if (!scopes.includes("openid")) return bad("scope must include openid");
    const prompt = (q.prompt ?? "").split(" ").filter(Boolean);
    if (prompt.includes("none") && prompt.length > 1) return bad("prompt=none must appear alone");
    // §2.2 PKCE: S256 or plain; plain when a challenge comes without a method; a method without a challenge is an error.
    const challenge = q.code_challenge || undefined;
    const method = challenge ? (q.code_challenge_method ?? "plain") : undefined;
    if (!challenge && q.code_challenge_method) return bad("code_challenge_method requires code_challenge");
    if (method && method !== "S256" && method !== "plain") return bad("Invalid code_challenge_method");
    if (challenge && !/^[A-Za-z0-9._~-]{43,128}$/.test(challenge)) return bad("Invalid code_challenge");
    // ASSUMED (§2.2 [UNCONFIRMED]): `iss` on the callback (RFC 9207), which discovery advertises.
    if (deny) {
      deny = false;
      return redirect(res, q.redirect_uri, { error: "access_denied", state: q.state, iss: url });
    }
    if (!account) return page(res, 500, "fake-google", "no account is signed in; call signIn() first");
    // §2.3: refresh token only with access_type=offline on first consent, or again with prompt=consent.
    const offline = q.access_type === "offline";
    const refresh = offline && (!offlineGranted.has(account.sub) || prompt.includes("consent"));
    if (offline) offlineGranted.add(account.sub);
    const code = `4/0${randomBytes(48).toString("base64url")}`;
    codes.set(code, { account, scopes, nonce: q.nonce, redirectUri: q.redirect_uri, challenge, method, refresh, expiresAt: Date.now() + CODE_TTL_MS });
    redirect(res, q.redirect_uri, { code, state: q.state, iss: url, scope: expandScopes(scopes).join(" "), authuser: "0", prompt: "consent" });
  }

  async function token(req: IncomingMessage, res: ServerResponse) {
    const raw = await readBody(req);
    const p: Record<string, string> = /json/i.test(req.headers["content-type"] ?? "")
      ? Object.fromEntries(Object.entries(JSON.parse(raw || "{}") as object).map(([k, v]) => [k, String(v)]))
      : Object.fromEntries(new URLSearchParams(raw));
    tokenRequests.push(p);
    const reply = (status: number, body: unknown) => json(res, status, body, NO_STORE);
    const invalidGrant = (d = "Bad Request") => reply(400, { error: "invalid_grant", error_description: d });
    const forced = failure;
    failure = undefined;
    if (forced === "server_error") return reply(500, { error: "internal_failure", error_description: "Backend Error" }); // ASSUMED body
    if (forced === "invalid_client") return reply(401, { error: "invalid_client", error_description: "Unauthorized" });
    if (forced === "invalid_grant") return invalidGrant();

    // §2.3: client_secret_basic (RFC 6749 §2.3.1: form-encoded id:secret) or client_secret_post.
    let { client_id: clientId, client_secret: secret } = p;
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? "");
    if (basic) {
      const decoded = Buffer.from(basic[1]!, "base64").toString();
      const i = decoded.includes(":") ? decoded.indexOf(":") : decoded.length;
      const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
      [clientId, secret] = [dec(decoded.slice(0, i)), dec(decoded.slice(i + 1))];
    }
    if (!clientId) return reply(400, { error: "invalid_request", error_description: "Could not determine client ID from request." });
    if (clientId !== opts.clientId) return reply(401, { error: "invalid_client", error_description: "The OAuth client was not found." });
    if (secret !== opts.clientSecret) return reply(401, { error: "invalid_client", error_description: "Unauthorized" });

    if (p.grant_type === "refresh_token") {
      const g = refreshTokens.get(p.refresh_token ?? "");
      return g ? reply(200, tokenResponse(g, false)) : invalidGrant("Token has been expired or revoked.");
    }
    if (p.grant_type !== "authorization_code") return reply(400, { error: "unsupported_grant_type", error_description: `Invalid grant_type: ${p.grant_type ?? ""}` });
    const c = codes.get(p.code ?? "");
    codes.delete(p.code ?? ""); // single-use: any presentation consumes the code
    if (!c || Date.now() > c.expiresAt) return invalidGrant(); // §2.3: unknown, reused or expired (10 min)
    // ASSUMED (§2.3 [UNCONFIRMED]): the bodies for a redirect_uri mismatch and for PKCE failures.
    if (p.redirect_uri !== c.redirectUri) return reply(400, { error: "redirect_uri_mismatch", error_description: "Bad Request" });
    if (!c.challenge && p.code_verifier) return invalidGrant("code_verifier or verifier is not needed.");
    if (c.challenge) {
      const v = p.code_verifier ?? "";
      const derived = c.method === "S256" ? createHash("sha256").update(v).digest("base64url") : v;
      if (!v || derived !== c.challenge) return invalidGrant();
    }
    reply(200, tokenResponse(c, c.refresh));
  }

  const server = await listenLoopback("fake-google", async (req, res) => {
    const u = new URL(req.url ?? "/", url);
    const route = `${req.method} ${u.pathname}`;
    if (route === "GET /.well-known/openid-configuration") {
      // §2.1, with every endpoint pointing at the fake. Lists marked "values not retrieved" in §2.1 are ASSUMED.
      return json(res, 200, {
        issuer: url, authorization_endpoint: `${url}/o/oauth2/v2/auth`, device_authorization_endpoint: `${url}/device/code`,
        token_endpoint: `${url}/token`, userinfo_endpoint: `${url}/v1/userinfo`, revocation_endpoint: `${url}/revoke`,
        jwks_uri: `${url}/oauth2/v3/certs`,
        response_types_supported: ["code", "token", "id_token", "code token", "code id_token", "token id_token", "code token id_token", "none"],
        response_modes_supported: ["query", "fragment", "form_post"],
        subject_types_supported: ["public"], id_token_signing_alg_values_supported: ["RS256"],
        scopes_supported: ["openid", "email", "profile"], token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic"],
        claims_supported: ["aud", "email", "email_verified", "exp", "family_name", "given_name", "iat", "iss", "name", "picture", "sub"],
        code_challenge_methods_supported: ["plain", "S256"],
        grant_types_supported: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
        authorization_response_iss_parameter_supported: true,
      }, { "cache-control": "public, max-age=3600" });
    }
    if (route === "GET /oauth2/v3/certs") {
      const jwks = keys.map((k) => ({ ...k.publicKey.export({ format: "jwk" }), kid: k.kid, alg: "RS256", use: "sig" }));
      return json(res, 200, { keys: jwks.reverse() }, { "cache-control": KEYS_CACHE });
    }
    if (route === "GET /oauth2/v1/certs") {
      // Google serves self-signed X.509 certificates here. node:crypto cannot mint certificates, so this
      // serves the SPKI public-key PEM per kid; crypto.verify / createPublicKey accept both forms.
      return json(res, 200, Object.fromEntries(keys.map((k) => [k.kid, k.publicKey.export({ type: "spki", format: "pem" })])), { "cache-control": KEYS_CACHE });
    }
    if (route === "GET /o/oauth2/v2/auth") return authorize(u, res);
    if (route === "POST /token") return token(req, res);
    if (route === "GET /v1/userinfo" || route === "GET /oauth2/v3/userinfo") {
      const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
      const g = m ? accessTokens.get(m[1]!) : undefined;
      if (!g || Date.now() > g.expiresAt) {
        // §2.6 (v1 body ASSUMED to equal the v3 alias's).
        return json(res, 401, { error: "invalid_request", error_description: "Invalid Credentials" }, { "www-authenticate": 'Bearer realm="https://accounts.google.com/", error="invalid_token"' });
      }
      return json(res, 200, userClaims(g));
    }
    if (route === "POST /revoke") {
      const t = new URLSearchParams(await readBody(req)).get("token") ?? u.searchParams.get("token") ?? "";
      const known = accessTokens.delete(t) || refreshTokens.delete(t);
      return known ? json(res, 200, {}) : json(res, 400, { error: "invalid_token", error_description: "Token expired or revoked" });
    }
    json(res, 404, { error: "not_found" });
  });
  url = server.url;

  return {
    url,
    signIn: (a) => void (account = a),
    denyNext: () => void (deny = true),
    tamperNextIdToken: (t) => void (tamper = t),
    failNext: (f) => void (failure = f),
    publishNextKey: () => void keys.push(newKey()),
    rotateKeys: () => {
      if (signing === keys.length - 1) keys.push(newKey());
      signing++;
    },
    authorizeRequests,
    tokenRequests,
    close: server.close,
  };
}
