import { type CodeExchange, type ExternalProfile, type IdentityProviderClient, type ProviderSettings, type AuthorizationRequest, IdpError } from "./idp.types.js";

const TIMEOUT_MS = 10_000;
const API_VERSION = "2022-11-28";

interface GithubUser {
  id: number;
  login: string;
  name: string | null;
  email: string | null;
  avatar_url?: string;
}
interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

/**
 * GitHub's OAuth web flow (with PKCE, S256), then its REST user and user-emails APIs. Both base
 * URLs are configuration, so tests point them at a local stand-in.
 */
export class GithubClient implements IdentityProviderClient {
  constructor(private readonly urls: { oauthUrl: string; apiUrl: string }) {}

  async authorizationUrl(s: ProviderSettings, req: AuthorizationRequest): Promise<URL> {
    const url = new URL(`${this.urls.oauthUrl}/login/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id: s.clientId,
      redirect_uri: req.redirectUri,
      scope: s.scopes.join(" "),
      state: req.state,
      code_challenge: req.codeChallenge,
      code_challenge_method: "S256",
      allow_signup: "true",
    }).toString();
    return url;
  }

  async exchange(s: ProviderSettings, ex: CodeExchange): Promise<ExternalProfile> {
    const code = ex.callbackUrl.searchParams.get("code");
    if (!code) throw new IdpError("no authorization code was returned");
    const token = await this.token(s, code, ex);
    const user = await this.api<GithubUser>("/user", token);
    if (typeof user?.id !== "number" || typeof user.login !== "string") throw new IdpError("the user profile was malformed");
    // Needs user:email; without that scope (a 404, or a 403 that is not a rate limit) only the
    // public email is known, and it counts as unverified.
    const emails = await this.api<GithubEmail[]>("/user/emails?per_page=100", token).catch((e: unknown) => {
      const d = e instanceof IdpError ? (e.detail as { status?: number; rateLimited?: boolean } | undefined) : undefined;
      if (d?.status === 404 || (d?.status === 403 && !d.rateLimited)) return [];
      throw e;
    });
    const list = Array.isArray(emails) ? emails.filter((e) => typeof e?.email === "string") : [];
    const primary = list.find((e) => e.primary);
    return {
      provider: "github",
      subject: String(user.id),
      email: primary?.email ?? user.email ?? null,
      emailVerified: primary?.verified === true,
      verifiedEmails: list.filter((e) => e.verified === true).map((e) => e.email),
      username: user.login,
      displayName: user.name ?? user.login,
      avatarUrl: user.avatar_url ?? null,
    };
  }

  /** GitHub answers token errors with HTTP 200 and an `error` field, so the body decides. */
  private async token(s: ProviderSettings, code: string, ex: CodeExchange): Promise<string> {
    const res = await fetch(`${this.urls.oauthUrl}/login/oauth/access_token`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", "user-agent": "Keyward" },
      body: JSON.stringify({ client_id: s.clientId, client_secret: s.clientSecret, code, redirect_uri: ex.redirectUri, code_verifier: ex.codeVerifier }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    }).catch((e: unknown) => {
      throw new IdpError("the token endpoint could not be reached", e);
    });
    const body = (await res.json().catch(() => null)) as { access_token?: unknown; error?: unknown; error_description?: unknown } | null;
    if (!res.ok) throw new IdpError(`the token endpoint answered HTTP ${res.status}`);
    if (typeof body?.error === "string") throw new IdpError(`the code was refused (${body.error})`, body.error_description);
    if (typeof body?.access_token !== "string") throw new IdpError("the token response had no access token");
    return body.access_token;
  }

  private async api<T>(path: string, token: string): Promise<T> {
    const res = await fetch(`${this.urls.apiUrl}${path}`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": API_VERSION,
        // GitHub refuses API requests without a User-Agent.
        "user-agent": "Keyward",
      },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    }).catch((e: unknown) => {
      throw new IdpError("the API could not be reached", e);
    });
    if (!res.ok) {
      const rateLimited = res.headers.get("x-ratelimit-remaining") === "0" || res.status === 429;
      throw new IdpError(`the API answered HTTP ${res.status} for ${path.split("?")[0]}${rateLimited ? " (rate limited)" : ""}`, { status: res.status, rateLimited });
    }
    return (await res.json().catch(() => {
      throw new IdpError("the API answer was not JSON");
    })) as T;
  }
}
