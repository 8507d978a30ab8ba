import type { ProviderName } from "../external-auth.schemas.js";

/** What an identity provider told us about the person who signed in. */
export interface ExternalProfile {
  provider: ProviderName;
  /** The provider's stable, never reused account id: the only key an identity is found by. */
  subject: string;
  email: string | null;
  emailVerified: boolean;
  /** Every address the provider says this person has verified (GitHub lists several). */
  verifiedEmails: string[];
  username: string | null;
  displayName: string | null;
  avatarUrl: string | null;
}

/** The client credentials and scopes in force for one provider. */
export interface ProviderSettings {
  provider: ProviderName;
  clientId: string;
  clientSecret: string;
  scopes: string[];
}

export interface AuthorizationRequest {
  state: string;
  nonce: string;
  codeChallenge: string;
  redirectUri: string;
}

export interface CodeExchange {
  /** The callback URL as the browser reached it (code, state and any iss parameter). */
  callbackUrl: URL;
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
}

/** One upstream provider: builds its authorization URL, and turns a returned code into a profile. */
export interface IdentityProviderClient {
  authorizationUrl(settings: ProviderSettings, req: AuthorizationRequest): Promise<URL>;
  exchange(settings: ProviderSettings, ex: CodeExchange): Promise<ExternalProfile>;
}

/** The provider answered with an error or something we cannot trust; `reason` is safe to show. */
export class IdpError extends Error {
  constructor(
    readonly reason: string,
    readonly detail?: unknown,
  ) {
    super(reason);
    this.name = "IdpError";
  }
}
