import { z } from "zod";
import { API_KEY_SCOPE_NAMES, DEFAULT_API_KEY_SCOPES } from "../../lib/api-key-scopes.js";

/** What a key may do: known scopes only (anything else is a 400), each once, in a stable order. */
const scopesSchema = z
  .array(z.enum(API_KEY_SCOPE_NAMES))
  .min(1, "give at least one scope (revoke a key that should do nothing)")
  .max(API_KEY_SCOPE_NAMES.length * 2)
  .transform((v) => API_KEY_SCOPE_NAMES.filter((s) => v.includes(s)))
  .describe(`What the key may do: ${API_KEY_SCOPE_NAMES.join(", ")}`);

export const createApiKeySchema = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().trim().max(2000).optional(),
  scopes: scopesSchema.default([...DEFAULT_API_KEY_SCOPES]),
});
export type CreateApiKeyInput = z.input<typeof createApiKeySchema>;
export const updateApiKeySchema = z
  .object({ name: z.string().trim().min(1).max(255).optional(), description: z.string().trim().max(2000).nullable().optional(), scopes: scopesSchema.optional() })
  .refine((v) => Object.keys(v).length > 0, "nothing to update: give name, description or scopes");
export type UpdateApiKeyInput = z.input<typeof updateApiKeySchema>;
export const revokeApiKeySchema = z.object({ reason: z.string().trim().max(1000).optional() });
export type RevokeApiKeyInput = z.input<typeof revokeApiKeySchema>;
