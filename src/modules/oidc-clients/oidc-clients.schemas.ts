import { z } from "zod";

const uri = z
  .url()
  .max(2048)
  .refine((v) => !v.includes("#"), "must not contain a fragment")
  .refine((v) => /^https:\/\//i.test(v) || /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?\//i.test(v) || /^[a-z][a-z0-9+.-]*:\/\//i.test(v) && !/^(http|javascript|data|file):/i.test(v), "must be https, a loopback http URL, or a private-use scheme");
const origin = z
  .url()
  .max(255)
  .refine((v) => {
    try {
      return new URL(v).origin === v.replace(/\/$/, "");
    } catch {
      return false;
    }
  }, "must be an origin like https://app.example.com (no path)");

/** JWS algorithms a client may choose for its ID tokens (the provider holds one active key of each). */
export const ID_TOKEN_SIGNING_ALGS = ["RS256", "ES256"] as const;

/** How a client authenticates at the token endpoint: with its secret (HTTP Basic or in the form), or not at all (public). */
export const TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"] as const;

export const GRANT_TYPES = ["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"] as const;

const fields = {
  name: z.string().trim().min(1).max(255),
  redirectUris: z.array(uri).max(20),
  postLogoutRedirectUris: z.array(uri).max(20),
  grantTypes: z.array(z.enum(GRANT_TYPES)).min(1).max(4),
  /** Confidential clients authenticate with a secret; public ones (SPAs, CLIs) use PKCE alone. */
  public: z.boolean(),
  corsOrigins: z.array(origin).max(20),
  accessTokenTtl: z.number().int().min(60).max(86_400),
  idTokenTtl: z.number().int().min(60).max(86_400),
  refreshTokenTtl: z.number().int().min(300).max(31_536_000),
  /** RS256 is the OpenID Connect default; ES256 gives smaller tokens for relying parties that verify it. */
  idTokenSignedResponseAlg: z.enum(ID_TOKEN_SIGNING_ALGS),
};

type ClientShape = { [K in keyof typeof fields]: z.output<(typeof fields)[K]> };

/**
 * The rules that hold between a client's fields, checked on the whole client: at registration and
 * on the result of every update, so no sequence of updates reaches a client registration refuses.
 */
function clientInvariants(v: ClientShape, ctx: z.RefinementCtx): void {
  // The code grant redirects somewhere registered; without one it can only fail (or be misused later).
  if (v.grantTypes.includes("authorization_code") && v.redirectUris.length === 0) {
    ctx.addIssue({ code: "custom", path: ["redirectUris"], message: "at least one is required for the authorization_code grant" });
  }
  // client_credentials authenticates the client alone: a public client has nothing to authenticate with.
  if (v.public && v.grantTypes.includes("client_credentials")) {
    ctx.addIssue({ code: "custom", path: ["grantTypes"], message: "client_credentials needs a confidential client" });
  }
}

/** A registration: omitted fields take their defaults, then the whole client is checked. */
export const createClientSchema = z
  .object({
    name: fields.name,
    redirectUris: fields.redirectUris.default([]),
    postLogoutRedirectUris: fields.postLogoutRedirectUris.default([]),
    grantTypes: fields.grantTypes.default(["authorization_code", "refresh_token"]),
    public: fields.public.default(false),
    corsOrigins: fields.corsOrigins.default([]),
    accessTokenTtl: fields.accessTokenTtl.default(3600),
    idTokenTtl: fields.idTokenTtl.default(3600),
    refreshTokenTtl: fields.refreshTokenTtl.default(2_592_000),
    idTokenSignedResponseAlg: fields.idTokenSignedResponseAlg.default("RS256"),
  })
  .superRefine(clientInvariants);
export type CreateClientInput = z.input<typeof createClientSchema>;

/** A complete client (the current one with an update applied), checked by the same rules as a registration. */
export const clientSchema = z.object(fields).superRefine(clientInvariants);

/**
 * An update names only what changes (a client cannot switch between public and confidential: its
 * secret would appear or vanish). The service checks the merged result against `clientSchema`.
 */
export const updateClientSchema = z
  .object({
    name: fields.name.optional(),
    redirectUris: fields.redirectUris.optional(),
    postLogoutRedirectUris: fields.postLogoutRedirectUris.optional(),
    grantTypes: fields.grantTypes.optional(),
    corsOrigins: fields.corsOrigins.optional(),
    accessTokenTtl: fields.accessTokenTtl.optional(),
    idTokenTtl: fields.idTokenTtl.optional(),
    refreshTokenTtl: fields.refreshTokenTtl.optional(),
    idTokenSignedResponseAlg: fields.idTokenSignedResponseAlg.optional(),
  })
  .refine((v) => Object.keys(v).length > 0, "nothing to update");
export type UpdateClientInput = z.input<typeof updateClientSchema>;

/**
 * What a client says about itself when it registers or updates its registration (RFC 7591/7592),
 * in Keyward's terms. CORS origins, token lifetimes and API scopes stay the admins' to set; the
 * whole client is then checked by `createClientSchema` or `clientSchema`, as an admin's would be.
 */
export const registrationSchema = z.object({
  name: fields.name,
  redirectUris: fields.redirectUris,
  postLogoutRedirectUris: fields.postLogoutRedirectUris,
  grantTypes: fields.grantTypes,
  tokenEndpointAuthMethod: z.enum(TOKEN_ENDPOINT_AUTH_METHODS),
  idTokenSignedResponseAlg: fields.idTokenSignedResponseAlg,
});

/** An initial access token: a label, how long it lasts (seconds, up to 90 days) and, optionally, how many clients it may register. */
export const createRegistrationTokenSchema = z.object({
  name: z.string().trim().min(1).max(255),
  expiresIn: z.number().int().min(300).max(90 * 86_400).default(7 * 86_400),
  maxUses: z.number().int().min(1).max(10_000).optional(),
});
export type CreateRegistrationTokenInput = z.input<typeof createRegistrationTokenSchema>;
