import { z } from "zod";
import type { Services } from "../../src/container.js";
import { date, type Item, named, type Returns, sameShape } from "./same-shape.js";

// --- OpenID Connect clients and consents ---
export const clientView = named("OidcClient", z.object({
  id: z.string(),
  organizationId: z.string().nullable().describe("Null for Keyward's built-in clients"),
  builtIn: z.boolean(),
  allowedApiScopes: z.array(z.string()),
  clientId: z.string(),
  name: z.string(),
  redirectUris: z.array(z.string()),
  postLogoutRedirectUris: z.array(z.string()),
  grantTypes: z.array(z.string()),
  tokenEndpointAuthMethod: z.string(),
  corsOrigins: z.array(z.string()),
  accessTokenTtl: z.number().int(),
  idTokenTtl: z.number().int(),
  refreshTokenTtl: z.number().int(),
  idTokenSignedResponseAlg: z.string(),
  registrationTokenId: z.string().nullable().describe("The initial access token the client registered itself with (Dynamic Client Registration); null when an admin created it"),
  createdAt: date,
  updatedAt: date,
  public: z.boolean(),
}));
sameShape<z.output<typeof clientView>, Returns<Services["oidcClients"]["get"]>>();
sameShape<z.output<typeof clientView>, Item<Returns<Services["oidcClients"]["list"]>>>();

export const createdClientView = named("CreatedOidcClient", clientView.extend({ clientSecret: z.string().nullable().describe("Confidential clients: the secret, shown once") }));
sameShape<z.output<typeof createdClientView>, Returns<Services["oidcClients"]["create"]>>();

export const rotatedSecret = z.object({ clientId: z.string(), clientSecret: z.string() });
sameShape<z.output<typeof rotatedSecret>, Returns<Services["oidcClients"]["rotateSecret"]>>();

export const consentView = named("Consent", z.object({ clientId: z.string(), clientName: z.string(), scopes: z.array(z.string()), updatedAt: date }));
sameShape<z.output<typeof consentView>, Item<Returns<Services["oidcClients"]["myConsents"]>>>();

// --- Dynamic Client Registration: initial access tokens ---
export const registrationTokenView = named("RegistrationToken", z.object({
  id: z.string(),
  organizationId: z.string(),
  name: z.string(),
  prefix: z.string().describe("The token's non-secret start, to recognise it"),
  maxUses: z.number().int().nullable().describe("How many clients it may register; null: any number until it expires"),
  uses: z.number().int(),
  expiresAt: date,
  lastUsedAt: date.nullable(),
  revokedAt: date.nullable(),
  createdBy: z.string().nullable(),
  createdAt: date,
  updatedAt: date,
}));
sameShape<z.output<typeof registrationTokenView>, Item<Returns<Services["oidcRegistration"]["listTokens"]>>>();
sameShape<z.output<typeof registrationTokenView>, Returns<Services["oidcRegistration"]["revokeToken"]>>();

export const createdRegistrationTokenView = named(
  "CreatedRegistrationToken",
  registrationTokenView.extend({ token: z.string().describe("The initial access token (Authorization: Bearer at the registration endpoint), shown once") }),
);
sameShape<z.output<typeof createdRegistrationTokenView>, Returns<Services["oidcRegistration"]["createToken"]>>();
