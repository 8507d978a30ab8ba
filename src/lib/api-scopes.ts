/**
 * What a delegated OIDC access token may do on Keyward's own API. Each scope names a small set of
 * operations; every REST route and GraphQL operation that a delegated caller may use declares one,
 * and anything undeclared is refused to delegated callers (sessions, passkeys, API keys, admin work).
 */
export const API_SCOPES = {
  "profile:read": "See your name and email address",
  "orgs:read": "See the organizations you belong to and your role in each",
  "ssh:keys": "List, add, prove and remove your SSH public keys",
  "ssh:sign": "Sign SSH certificates for your keys and list your certificates",
  "networks:activate": "See your network devices and switch your network access on and off",
} as const;

export type ApiScope = keyof typeof API_SCOPES;

export const API_SCOPE_NAMES = Object.keys(API_SCOPES) as ApiScope[];

export const isApiScope = (value: unknown): value is ApiScope => typeof value === "string" && Object.hasOwn(API_SCOPES, value);

/** The resource indicator (RFC 8707) and audience of tokens for Keyward's own API. */
export const apiResource = (publicUrl: string): string => `${publicUrl.replace(/\/+$/, "")}/api/v1`;
