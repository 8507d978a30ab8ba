import { z } from "zod";
import { paginationSchema } from "../../lib/pagination.js";
import { confirms } from "../auth/index.js";
import { ROLES } from "../access/index.js";

const httpUrl = z
  .url()
  .max(2048)
  .refine((v) => /^https?:\/\//i.test(v), "must be an http(s) URL");
const slug = z
  .string()
  .trim()
  .toLowerCase()
  .min(2)
  .max(63)
  .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, "may contain lower-case letters, digits and inner hyphens");
const email = z.string().trim().max(320).pipe(z.email("must be a valid email address"));
export const role = z.enum(ROLES);

export const createOrgSchema = z.object({
  name: z.string().trim().min(1).max(255),
  slug: slug.optional(),
  description: z.string().trim().max(2000).optional(),
  logoUrl: httpUrl.optional(),
});
export type CreateOrgInput = z.input<typeof createOrgSchema>;

export const updateOrgSchema = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    description: z.string().trim().max(2000).nullable().optional(),
    logoUrl: httpUrl.nullable().optional(),
  })
  .refine((v) => Object.keys(v).length > 0, "nothing to update: give name, description or logo_url");
export type UpdateOrgInput = z.input<typeof updateOrgSchema>;

export const deleteOrgSchema = z.object({ confirm: z.boolean().optional() });
export type DeleteOrgInput = z.input<typeof deleteOrgSchema>;
export const transferSchema = z.object({ newOwnerUserId: z.uuid("must be a user id") });
export type TransferInput = z.input<typeof transferSchema>;
export const addMemberSchema = z.object({ email, role: role.default("member"), fullName: z.string().trim().min(1).max(255).optional() });
export type AddMemberInput = z.input<typeof addMemberSchema>;
export const changeRoleSchema = z.object({ role });
export type ChangeRoleInput = z.input<typeof changeRoleSchema>;
export const inviteSchema = z.object({ email, role: role.default("member") });
export type InviteInput = z.input<typeof inviteSchema>;
export const emailSchema = z.object({ email });
export type EmailInput = z.input<typeof emailSchema>;

export const acceptInviteSchema = z
  .object({
    fullName: z.string().trim().min(1).max(255).optional(),
    password: z.string().max(1024).optional(),
    passwordConfirm: z.string().max(1024).optional(),
  })
  .superRefine(confirms("password", "passwordConfirm"));
export type AcceptInviteInput = z.input<typeof acceptInviteSchema>;

export const departmentSchema = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().trim().max(2000).optional(),
  canSudo: z.boolean().default(false),
});
export const updateDepartmentSchema = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    description: z.string().trim().max(2000).nullable().optional(),
    canSudo: z.boolean().optional(),
  })
  .refine((v) => Object.keys(v).length > 0, "nothing to update");

export const principalSchema = z.object({
  name: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9._@-]+$/, "may contain letters, digits, '.', '_', '@' and '-' (it becomes an SSH principal)"),
  description: z.string().trim().max(2000).optional(),
});
export const updatePrincipalSchema = z
  .object({ name: principalSchema.shape.name.optional(), description: z.string().trim().max(2000).nullable().optional() })
  .refine((v) => Object.keys(v).length > 0, "nothing to update");

/** The five standard OpenSSH certificate extensions. */
export const STANDARD_EXTENSIONS = [
  "permit-X11-forwarding",
  "permit-agent-forwarding",
  "permit-port-forwarding",
  "permit-pty",
  "permit-user-rc",
] as const;

export const certPolicySchema = z
  .object({
    allowUserExpiry: z.boolean().optional(),
    defaultExpiryHours: z.number().int().positive().max(8760).optional(),
    maxExpiryHours: z.number().int().positive().max(8760).optional(),
    allowedExtensions: z.array(z.enum(STANDARD_EXTENSIONS)).max(5).optional(),
    customExtensions: z
      .array(z.string().min(1).max(128).regex(/^[A-Za-z0-9._@-]+$/, "must be an extension name such as login@example.com"))
      .max(32)
      .optional(),
    requireHardwareKey: z.boolean().optional(),
    requireTouch: z.boolean().optional(),
    requireVerify: z.boolean().optional(),
  })
  .refine((v) => Object.keys(v).length > 0, "nothing to update");
export type CertPolicyInput = z.input<typeof certPolicySchema>;

export const adminUsersQuerySchema = paginationSchema.extend({
  q: z.string().trim().max(320).optional(),
  /** Which accounts: all live ones (default), operators, suspended ones, or deleted ones (superadmins only). */
  show: z.enum(["all", "superadmins", "suspended", "deleted"]).default("all"),
});
export const adminDeleteSchema = z.object({ confirm: z.literal(true, "send confirm: true to delete the account") });
export const adminPasswordSchema = z.object({ password: z.string().max(1024) });
