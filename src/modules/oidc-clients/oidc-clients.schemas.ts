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

export const GRANT_TYPES = ["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"] as const;

export const createClientSchema = z
  .object({
    name: z.string().trim().min(1).max(255),
    redirectUris: z.array(uri).max(20).default([]),
    postLogoutRedirectUris: z.array(uri).max(20).default([]),
    grantTypes: z.array(z.enum(GRANT_TYPES)).min(1).max(4).default(["authorization_code", "refresh_token"]),
    /** Confidential clients authenticate with a secret; public ones (SPAs, CLIs) use PKCE alone. */
    public: z.boolean().default(false),
    corsOrigins: z.array(origin).max(20).default([]),
    accessTokenTtl: z.number().int().min(60).max(86_400).default(3600),
    idTokenTtl: z.number().int().min(60).max(86_400).default(3600),
    refreshTokenTtl: z.number().int().min(300).max(31_536_000).default(2_592_000),
  })
  .refine((v) => !v.grantTypes.includes("authorization_code") || v.redirectUris.length > 0, { path: ["redirectUris"], message: "at least one is required for the authorization_code grant" })
  .refine((v) => !(v.public && v.grantTypes.includes("client_credentials")), { path: ["grantTypes"], message: "client_credentials needs a confidential client" });

export const updateClientSchema = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    redirectUris: z.array(uri).max(20).optional(),
    postLogoutRedirectUris: z.array(uri).max(20).optional(),
    grantTypes: z.array(z.enum(GRANT_TYPES)).min(1).max(4).optional(),
    corsOrigins: z.array(origin).max(20).optional(),
    accessTokenTtl: z.number().int().min(60).max(86_400).optional(),
    idTokenTtl: z.number().int().min(60).max(86_400).optional(),
    refreshTokenTtl: z.number().int().min(300).max(31_536_000).optional(),
  })
  .refine((v) => Object.keys(v).length > 0, "nothing to update");
