import * as oc from "openid-client";
import { sha256Hex } from "../../../lib/crypto/index.js";
import { type AuthorizationRequest, type CodeExchange, type ExternalProfile, type IdentityProviderClient, type ProviderSettings, IdpError } from "./idp.types.js";

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const TIMEOUT_S = 10;

/**
 * Google as an OpenID Connect provider, through openid-client (a certified relying party): its
 * discovery document, PKCE, and an ID token checked against the published keys, issuer, audience,
 * expiry and our nonce. The discovered configuration (and with it the key cache) is reused.
 */
export class GoogleClient implements IdentityProviderClient {
  private cached: { key: string; at: number; config: Promise<oc.Configuration> } | null = null;

  constructor(private readonly issuer: string) {}

  async authorizationUrl(s: ProviderSettings, req: AuthorizationRequest): Promise<URL> {
    return oc.buildAuthorizationUrl(await this.config(s), {
      redirect_uri: req.redirectUri,
      scope: s.scopes.join(" "),
      state: req.state,
      nonce: req.nonce,
      code_challenge: req.codeChallenge,
      code_challenge_method: "S256",
      prompt: "select_account",
    });
  }

  async exchange(s: ProviderSettings, ex: CodeExchange): Promise<ExternalProfile> {
    const config = await this.config(s);
    let claims: oc.IDToken | undefined;
    try {
      const tokens = await oc.authorizationCodeGrant(
        config,
        ex.callbackUrl,
        { pkceCodeVerifier: ex.codeVerifier, expectedNonce: ex.nonce, expectedState: ex.state, idTokenExpected: true },
        { redirect_uri: ex.redirectUri },
      );
      claims = tokens.claims();
    } catch (e) {
      const code = (e as { error?: unknown; code?: unknown }).error ?? (e as { code?: unknown }).code;
      throw new IdpError(`the sign-in could not be verified (${typeof code === "string" ? code : "invalid response"})`, e);
    }
    if (!claims?.sub) throw new IdpError("the ID token had no subject");
    const email = typeof claims.email === "string" ? claims.email : null;
    // Very old tokens carried "true" as a string.
    const verified = claims.email_verified === true || claims.email_verified === "true";
    return {
      provider: "google",
      subject: claims.sub,
      email,
      emailVerified: verified && email !== null,
      verifiedEmails: verified && email ? [email] : [],
      username: null,
      displayName: typeof claims.name === "string" ? claims.name : null,
      avatarUrl: typeof claims.picture === "string" ? claims.picture : null,
    };
  }

  private config(s: ProviderSettings): Promise<oc.Configuration> {
    const key = `${s.clientId}|${sha256Hex(s.clientSecret)}`;
    const now = Date.now();
    if (this.cached && this.cached.key === key && now - this.cached.at < DISCOVERY_TTL_MS) return this.cached.config;
    const url = new URL(this.issuer);
    // The ID token's signature is checked against Google's published keys, not only trusted
    // because it came over TLS. Plain http is allowed on loopback only (config refuses it elsewhere).
    const execute = [oc.enableNonRepudiationChecks, ...(url.protocol === "http:" ? [oc.allowInsecureRequests] : [])];
    const config = oc.discovery(url, s.clientId, s.clientSecret, oc.ClientSecretPost(s.clientSecret), { execute, timeout: TIMEOUT_S }).catch((e: unknown) => {
      this.cached = null;
      throw new IdpError("its discovery document could not be loaded", e);
    });
    this.cached = { key, at: now, config };
    return config;
  }
}
