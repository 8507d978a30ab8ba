import { z } from "zod";
import { paginationSchema, timeRange } from "../../lib/pagination.js";

const httpUrl = z
  .url()
  .max(2048)
  .refine((v) => /^https?:\/\//i.test(v), "must be an http(s) URL");

export const updateMeSchema = z
  .object({
    fullName: z.string().trim().min(1).max(255).nullable().optional(),
    avatarUrl: httpUrl.nullable().optional(),
  })
  .refine((v) => Object.keys(v).length > 0, "nothing to update: give full_name or avatar_url");
export type UpdateMeInput = z.input<typeof updateMeSchema>;

export const deleteMeSchema = z.object({ password: z.string().max(1024).optional() });
export type DeleteMeInput = z.input<typeof deleteMeSchema>;

export const suspendSchema = z.object({ reason: z.string().trim().max(1000).optional() });

export const auditQuerySchema = paginationSchema.extend({ action: z.string().trim().min(1).max(100).optional(), ...timeRange });
export type AuditQueryInput = z.input<typeof auditQuerySchema>;
