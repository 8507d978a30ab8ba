import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
import * as oc from "openid-client";
import { importClientAssertionKey } from "../../lib/crypto/index.js";
import type { OidcConnectionConfig } from "../../../schema/index.js";

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const TIMEOUT_S = 10;
/** A logout token older than this is refused (it is sent the moment the provider session ends). */
const LOGOUT_TOKEN_MAX_AGE_S = 300;

/** The identity provider answered with something we cannot trust; `reason` is safe to show. */
export class SsoIdpError extends Error {
  constructor(
    readonly reason: string,
    readonly detail?: unknown,
  ) {
    super(reason);
    this.name = "SsoIdpError";
  }
}

/** A connection as the OpenID Connect client needs it: settings, and its unsealed credential. */
export interface OidcClientSettings {
  connectionId: string;
  /** Changes whenever the connection does, so a stale discovery or credential is not reused. */
  version: string;
  config: OidcConnectionConfig;
  secret: string | null;
}

export interface OidcClaims {
  subject: string;
  email: string | null;
  name: string | null;
  groups: string[];
  /** The provider's session id (ID token `sid`), which a back-channel logout token may name. */
  sid?: string;
}

/** OpenID Connect Back-Channel Logout 1.0 §2.4: the member of `events` a logout token carries. */
export const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";

/** A logout token's checked claims: whose sessions (the person, the provider session, or both) to end. */
export interface LogoutTokenClaims {
  sub?: string;
  sid?: string;
  jti: string;
  iat: number;
}

/** Plain http is for loopback only (a test or a local provider), as providerUrl allows it in config. */
export function issuerProblem(issuer: string): string | null {
  const url = new URL(issuer);
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  if (url.protocol === "https:" || (url.protocol === "http:" && loopback)) return null;
  return "the issuer must be https (http only on loopback)";
}

async function clientAuth(s: OidcClientSettings): Promise<oc.ClientAuth> {
  const method = s.config.authMethod;
  if (method === "private_key_jwt") return oc.PrivateKeyJwt(await importClientAssertionKey(s.secret ?? ""));
  return method === "client_secret_post" ? oc.ClientSecretPost(s.secret ?? "") : oc.ClientSecretBasic(s.secret ?? "");
}

const execute = (issuer: string) => [oc.enableNonRepudiationChecks, ...(new URL(issuer).protocol === "http:" ? [oc.allowInsecureRequests] : [])];

/**
 * An organization's OpenID Connect provider, through openid-client (oauth4webapi underneath): the
 * discovered metadata (its issuer must equal the configured one), PKCE S256, state and nonce, and an
 * ID token checked against the provider's keys, its issuer (mix-up), our client id (audience), the
 * connection's allowed algorithms and expiry. Discovery is cached per connection version.
 */
export class OidcConnectionClient {
  private readonly cache = new Map<string, { at: number; config: Promise<oc.Configuration> }>();

  /** Reads the discovery document once (creating or changing a connection checks it this way). */
  async discover(issuer: string, clientId: string): Promise<{ issuer: string; algs: string[] }> {
    const problem = issuerProblem(issuer);
    if (problem) throw new SsoIdpError(problem);
    try {
      const config = await oc.discovery(new URL(issuer), clientId, undefined, oc.None(), { execute: execute(issuer), timeout: TIMEOUT_S });
      const meta = config.serverMetadata();
      return { issuer: meta.issuer, algs: meta.id_token_signing_alg_values_supported ?? [] };
    } catch (e) {
      throw new SsoIdpError(e instanceof Error ? e.message : "it could not be loaded", e);
    }
  }

  async authorizationUrl(s: OidcClientSettings, req: { state: string; nonce: string; codeChallenge: string; redirectUri: string; loginHint?: string }): Promise<URL> {
    return oc.buildAuthorizationUrl(await this.config(s), {
      redirect_uri: req.redirectUri,
      scope: s.config.scopes.join(" "),
      state: req.state,
      nonce: req.nonce,
      code_challenge: req.codeChallenge,
      code_challenge_method: "S256",
      ...(req.loginHint ? { login_hint: req.loginHint } : {}),
    });
  }

  async exchange(s: OidcClientSettings, ex: { callbackUrl: URL; state: string; nonce: string; codeVerifier: string; redirectUri: string }): Promise<OidcClaims> {
    const config = await this.config(s);
    let claims: oc.IDToken | undefined;
    let accessToken: string;
    let alg: string | undefined;
    try {
      const tokens = await oc.authorizationCodeGrant(
        config,
        ex.callbackUrl,
        { pkceCodeVerifier: ex.codeVerifier, expectedNonce: ex.nonce, expectedState: ex.state, idTokenExpected: true },
        { redirect_uri: ex.redirectUri },
      );
      claims = tokens.claims();
      accessToken = tokens.access_token;
      alg = tokens.id_token ? headerAlg(tokens.id_token) : undefined;
    } catch (e) {
      const code = (e as { error?: unknown; code?: unknown }).error ?? (e as { code?: unknown }).code;
      throw new SsoIdpError(`the sign-in could not be verified (${typeof code === "string" ? code : "invalid response"})`, e);
    }
    // The signature was checked with the provider's keys; the algorithm must also be one the admin allowed.
    if (!alg || !s.config.allowedIdTokenAlgs.includes(alg)) throw new SsoIdpError(`the ID token is signed with ${alg ?? "no algorithm"}, which this connection does not allow`);
    if (!claims?.sub) throw new SsoIdpError("the ID token had no subject");
    let source: Record<string, unknown> = claims;
    const names = s.config.claims;
    // Providers that keep the address or groups out of the ID token serve them at userinfo.
    if (claims[names.email] === undefined || claims[names.groups] === undefined) {
      const info = await oc.fetchUserInfo(config, accessToken, claims.sub).catch(() => null);
      if (info) source = { ...info, ...claims };
    }
    const str = (v: unknown) => (typeof v === "string" && v.length > 0 ? v : null);
    const groups = source[names.groups];
    return {
      subject: claims.sub,
      email: str(source[names.email]),
      name: str(source[names.name]),
      groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === "string") : typeof groups === "string" ? [groups] : [],
      ...(typeof claims.sid === "string" && claims.sid.length > 0 && claims.sid.length <= 255 ? { sid: claims.sid } : {}),
    };
  }

  /**
   * Validates a back-channel logout token as OpenID Connect Back-Channel Logout 1.0 §2.6 says: a
   * JWT signed by a key of the provider's JWKS with an algorithm the connection allows, from its
   * issuer, for our client id, recently issued, carrying the logout event, a `sub` or a `sid`, and
   * no `nonce` (so an ID token cannot pass for one). The `jti` replay check is the caller's.
   */
  async verifyLogoutToken(s: OidcClientSettings, token: string, clockSkewSeconds: number, now: Date): Promise<LogoutTokenClaims> {
    let payload: JWTPayload;
    try {
      const jwks = await this.jwks(s);
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: s.config.issuer,
        audience: s.config.clientId,
        algorithms: s.config.allowedIdTokenAlgs,
        requiredClaims: ["iat", "jti"],
        clockTolerance: clockSkewSeconds,
        maxTokenAge: LOGOUT_TOKEN_MAX_AGE_S,
        currentDate: now,
      }));
    } catch (e) {
      if (e instanceof SsoIdpError) throw e;
      const code = e instanceof joseErrors.JOSEError ? e.code : "invalid";
      const claim = e instanceof joseErrors.JWTClaimValidationFailed ? ` (${e.claim})` : "";
      throw new SsoIdpError(`the logout token could not be verified: ${code}${claim}`, e);
    }
    // An ID token (it has a nonce) or any other JWT from the provider is not a logout request.
    if ("nonce" in payload) throw new SsoIdpError("the logout token carries a nonce");
    const events = payload.events;
    if (!events || typeof events !== "object" || Array.isArray(events) || typeof (events as Record<string, unknown>)[BACKCHANNEL_LOGOUT_EVENT] !== "object") {
      throw new SsoIdpError("the logout token has no back-channel logout event");
    }
    const text = (v: unknown) => (typeof v === "string" && v.length > 0 && v.length <= 255 ? v : undefined);
    const sub = text(payload.sub);
    const sid = text(payload.sid);
    if (!sub && !sid) throw new SsoIdpError("the logout token names neither a subject nor a session");
    const jti = text(payload.jti);
    if (!jti) throw new SsoIdpError("the logout token has no usable jti");
    return { ...(sub ? { sub } : {}), ...(sid ? { sid } : {}), jti, iat: payload.iat! };
  }

  private async jwks(s: OidcClientSettings): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const hit = this.keySets.get(s.connectionId);
    if (hit && hit.version === s.version) return hit.set;
    const uri = (await this.config(s)).serverMetadata().jwks_uri;
    if (!uri) throw new SsoIdpError("the provider publishes no jwks_uri");
    const set = createRemoteJWKSet(new URL(uri), { timeoutDuration: TIMEOUT_S * 1000 });
    this.keySets.set(s.connectionId, { version: s.version, set });
    return set;
  }

  private readonly keySets = new Map<string, { version: string; set: ReturnType<typeof createRemoteJWKSet> }>();

  private config(s: OidcClientSettings): Promise<oc.Configuration> {
    const now = Date.now();
    const hit = this.cache.get(s.connectionId);
    if (hit && now - hit.at < DISCOVERY_TTL_MS && this.versions.get(s.connectionId) === s.version) return hit.config;
    const algs = s.config.allowedIdTokenAlgs;
    const metadata: Partial<oc.ClientMetadata> = algs.length === 1 ? { id_token_signed_response_alg: algs[0] } : {};
    const config = clientAuth(s).then((auth) => oc.discovery(new URL(s.config.issuer), s.config.clientId, metadata, auth, { execute: execute(s.config.issuer), timeout: TIMEOUT_S })).catch((e: unknown) => {
      this.cache.delete(s.connectionId);
      throw new SsoIdpError("its discovery document could not be loaded", e);
    });
    this.cache.set(s.connectionId, { at: now, config });
    this.versions.set(s.connectionId, s.version);
    return config;
  }

  private readonly versions = new Map<string, string>();
}

function headerAlg(jwt: string): string | undefined {
  try {
    const header = JSON.parse(Buffer.from(jwt.split(".")[0] ?? "", "base64url").toString("utf8")) as { alg?: unknown };
    return typeof header.alg === "string" ? header.alg : undefined;
  } catch {
    return undefined;
  }
}
