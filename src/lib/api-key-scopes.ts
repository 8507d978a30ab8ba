/**
 * What an organization API key may do (ARCHITECTURE rule 17). A key speaks for one organization,
 * never for a person; each scope names a few operations, every REST route that takes keys declares
 * the one it needs (RouteDef.apiKey), and the access core maps scopes to capabilities
 * (src/modules/access/permissions.ts). Anything undeclared refuses keys.
 */
export const API_KEY_SCOPES = {
  "ssh:sudo": "Answer the sudo check for the certificates of the organization's members",
  "members:read": "List the organization's members and their roles",
  "principals:read": "List the organization's principals",
  "audit:read": "Read the organization's audit log",
  scim: "Provision the organization's managed accounts over SCIM 2.0 (/scim/v2): create, update, deactivate and delete them",
} as const;

/** What every organization API key starts with: recognisable by secret scanners, and as a bearer never a session or token. */
export const API_KEY_PREFIX = "kwk_";

export type ApiKeyScope = keyof typeof API_KEY_SCOPES;

export const API_KEY_SCOPE_NAMES = Object.keys(API_KEY_SCOPES) as [ApiKeyScope, ...ApiKeyScope[]];

/** What a key can do when its creator names no scopes: what every key could do before scopes (the sudo check). */
export const DEFAULT_API_KEY_SCOPES: readonly ApiKeyScope[] = ["ssh:sudo"];

export const isApiKeyScope = (value: unknown): value is ApiKeyScope => typeof value === "string" && Object.hasOwn(API_KEY_SCOPES, value);
