import { z } from "zod";

export const PROVIDERS = ["github", "google"] as const;
export type ProviderName = (typeof PROVIDERS)[number];
export const PROVIDER_LABEL: Record<ProviderName, string> = { github: "GitHub", google: "Google" };

export const FLOWS = ["login", "register", "link"] as const;
export type FlowKind = (typeof FLOWS)[number];

/** Where a hosted page wants to land afterwards: a path on this origin only, never a URL. */
const localPath = z
  .string()
  .max(2048)
  .regex(/^\/(?!\/)[^\s\\]*$/, "must be a path on this site, starting with a single /");

export const authorizeQuerySchema = z.object({
  flow: z.enum(FLOWS).default("login"),
  next: localPath.optional(),
  /** "redirect": answer with a redirect to the provider instead of JSON (top-level navigations). */
  mode: z.enum(["json", "redirect"]).optional(),
});
export type AuthorizeQueryInput = z.input<typeof authorizeQuerySchema>;

export const callbackQuerySchema = z.object({
  code: z.string().max(2048).optional(),
  state: z.string().max(512).optional(),
  /** RFC 9207: the issuer that answered (checked by the OpenID Connect client where advertised). */
  iss: z.string().max(2048).optional(),
  error: z.string().max(256).optional(),
  errorDescription: z.string().max(1024).optional(),
});
export type CallbackQueryInput = z.input<typeof callbackQuerySchema>;

const scope = z.string().regex(/^[\w:./-]{1,100}$/, "scopes are words such as read:user or openid");

export const providerConfigSchema = z.object({
  clientId: z.string().trim().min(1).max(255),
  /** Optional on update: an absent secret keeps the stored one. */
  clientSecret: z.string().min(1).max(1024).optional(),
  scopes: z
    .union([z.array(scope).max(20), z.string().max(1000).transform((s) => s.split(/[\s,]+/).filter(Boolean))])
    .pipe(z.array(scope).max(20))
    .optional(),
  isEnabled: z.boolean().optional(),
});
export type ProviderConfigInput = z.input<typeof providerConfigSchema>;
