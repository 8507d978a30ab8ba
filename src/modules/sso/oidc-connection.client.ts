import * as oc from "openid-client";
import { importClientAssertionKey } from "../../lib/crypto/index.js";
import type { OidcConnectionConfig } from "../../../schema/index.js";

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const TIMEOUT_S = 10;

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
    };
  }

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
