import { z } from "zod";

export const createApiKeySchema = z.object({ name: z.string().trim().min(1).max(255), description: z.string().trim().max(2000).optional() });
export const updateApiKeySchema = z
  .object({ name: z.string().trim().min(1).max(255).optional(), description: z.string().trim().max(2000).nullable().optional() })
  .refine((v) => Object.keys(v).length > 0, "nothing to update: give name or description");
export const revokeApiKeySchema = z.object({ reason: z.string().trim().max(1000).optional() });
