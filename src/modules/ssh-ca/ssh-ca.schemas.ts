import { z } from "zod";
import { paginationSchema } from "../../lib/pagination.js";
import { hostPatternsSchema } from "./host-patterns.js";

export const createCaSchema = z
  .object({
    name: z.string().trim().min(1).max(255),
    description: z.string().trim().max(2000).optional(),
    caType: z.enum(["user", "host"]).default("user"),
    keyType: z.enum(["ed25519", "ecdsa", "rsa"]).default("ed25519"),
    defaultCertValidityHours: z.number().int().positive().max(87_600).default(8),
    maxCertValidityHours: z.number().int().positive().max(87_600).default(720),
    /** A host CA's host patterns (see host-patterns.ts). */
    hostPatterns: hostPatternsSchema.optional(),
    /** Says that a pattern matching every host (`*`) is meant. */
    allowAnyHost: z.boolean().optional(),
  })
  .refine((v) => v.defaultCertValidityHours <= v.maxCertValidityHours, {
    path: ["defaultCertValidityHours"],
    message: "must not exceed max_cert_validity_hours",
  });
export type CreateCaInput = z.input<typeof createCaSchema>;

export const updateCaSchema = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    description: z.string().trim().max(2000).nullable().optional(),
    defaultCertValidityHours: z.number().int().positive().max(87_600).optional(),
    maxCertValidityHours: z.number().int().positive().max(87_600).optional(),
    /** A host CA's host patterns; null clears them (known_hosts then says `*`). */
    hostPatterns: hostPatternsSchema.nullable().optional(),
    allowAnyHost: z.boolean().optional(),
  })
  .refine((v) => Object.keys(v).some((k) => k !== "allowAnyHost"), "nothing to update");
export type UpdateCaInput = z.input<typeof updateCaSchema>;

export const rotateCaSchema = z.object({
  keyType: z.enum(["ed25519", "ecdsa", "rsa"]).optional(),
  reason: z.string().trim().max(1000).optional(),
});
export type RotateCaInput = z.input<typeof rotateCaSchema>;

const principal = z.string().min(1).max(255).regex(/^[^\s,]+$/, "principals contain no spaces or commas");

/** `cert_id` is what the original CLI sends for the key id. */
export const signUserSchema = z.object({
  keyId: z.uuid().optional(),
  certId: z.uuid().optional(),
  principals: z.array(principal).max(256).optional(),
  expiryHours: z.number().int().positive().max(87_600).optional(),
  orgId: z.uuid().optional(),
  certType: z.literal("user").optional(),
});
export type SignUserInput = z.input<typeof signUserSchema>;

export const signHostSchema = z.object({
  hostPublicKey: z.string().min(1).max(16_384),
  principals: z.array(principal.regex(/^[A-Za-z0-9.*?_:\[\]-]+$/, "must be a host name or address")).min(1).max(256),
  validityHours: z.number().int().positive().max(87_600).optional(),
  caId: z.uuid().optional(),
  orgId: z.uuid().optional(),
});
export type SignHostInput = z.input<typeof signHostSchema>;

export const certAuditQuerySchema = paginationSchema.extend({ action: z.enum(["issued", "failed", "revoked"]).optional() });
export type CertAuditQueryInput = z.input<typeof certAuditQuerySchema>;

export const revokeSchema = z.object({ reason: z.string().trim().max(1000).optional() });
export type RevokeInput = z.input<typeof revokeSchema>;

export const certListSchema = paginationSchema.extend({ userId: z.uuid().optional(), includeRevoked: z.coerce.boolean().optional() });
export type CertListInput = z.input<typeof certListSchema>;

/** An organization's inventory: also by principal (a host certificate's are its host names), status and kind. */
export const orgCertListSchema = certListSchema.extend({
  principal: z.string().trim().min(1).max(255).optional(),
  status: z.enum(["active", "expired", "revoked"]).optional(),
  certType: z.enum(["user", "host"]).optional(),
});
export type OrgCertListInput = z.input<typeof orgCertListSchema>;

const SERIAL_DIGITS = /^\d{1,20}$/;

export const sudoCheckSchema = z.object({
  // The original form: the key in the body. Absent when it is the bearer (Authorization: Bearer kwk_…).
  apiKey: z.string().min(1).max(256).optional(),
  // Serials are stored as PostgreSQL bigint: a larger one cannot name a certificate (and must not reach the query).
  certificateSerial: z.union([
    z
      .string()
      .regex(SERIAL_DIGITS)
      .refine((v) => !SERIAL_DIGITS.test(v) || BigInt(v) <= 9223372036854775807n, "must be at most 9223372036854775807"),
    z.number().int().positive(),
  ]),
});
export type SudoCheckInput = z.input<typeof sudoCheckSchema>;
