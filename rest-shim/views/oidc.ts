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
