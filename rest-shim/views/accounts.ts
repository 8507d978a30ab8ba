import { z } from "zod";
import type { Services } from "../../src/container.js";
import { date, type Item, named, orgRole, type Returns, sameShape } from "./same-shape.js";

// --- users and sessions ---
export const userView = named("User", z.object({
  id: z.string(),
  email: z.string(),
  fullName: z.string().nullable(),
  avatarUrl: z.string().nullable(),
  emailVerified: z.boolean(),
  emailVerifiedAt: date.nullable(),
  status: z.enum(["active", "suspended", "pending_activation"]),
  isSuperadmin: z.boolean(),
  lastLoginAt: date.nullable(),
  createdAt: date,
  updatedAt: date,
}));
sameShape<z.output<typeof userView>, Returns<Services["users"]["updateMe"]>>();

export const meView = named("Me", userView.extend({ hasPassword: z.boolean(), managedBy: z.object({ id: z.string(), name: z.string() }).nullable() }));
sameShape<z.output<typeof meView>, Returns<Services["users"]["getMe"]>>();
// GET /users/me: the profile with how the account signs in (left out for a delegated token).
export const profileView = named("Profile", meView.extend({ totpEnabled: z.boolean().optional(), linkedProviders: z.array(z.string()).optional() }));
sameShape<z.output<typeof profileView>, Returns<Services["users"]["getProfile"]>>();
export const myOrganizationView = named("MyOrganization", z.object({ id: z.string(), name: z.string(), slug: z.string(), role: z.string() }));
// The organizations are left out for a delegated token without orgs:read.
export const meWithOrganizations = z.object({ user: meView, organizations: z.array(myOrganizationView).optional() });
sameShape<z.output<typeof meWithOrganizations>, Returns<Services["users"]["getMeWithOrganizations"]>>();

export const sessionView = named("Session", z.object({
  id: z.string(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  createdAt: date,
  lastActivityAt: date,
  expiresAt: date,
  rememberMe: z.boolean(),
  current: z.boolean(),
}));
sameShape<z.output<typeof sessionView>, Item<Returns<Services["mySessions"]["list"]>>>();

// --- signing in ---
type Issued = Returns<Services["mfaLogin"]["completeWithCode"]>;
export const sessionIssued = named("SessionIssued", z.object({ user: userView, token: z.string(), expiresAt: date }));
sameShape<z.output<typeof sessionIssued>, Pick<Issued, "user" | "token" | "expiresAt">>();

type Challenge = Extract<Returns<Services["login"]["loginWithPassword"]>, { kind: "mfa" }>;
const mfaMethod = z.enum(["webauthn", "totp", "backup_code"]);
sameShape<z.output<typeof mfaMethod>, Challenge["methods"][number]>();
export const mfaRequired = named("MfaRequired", z.object({
  requiresMfa: z.literal(true),
  mfaToken: z.string(),
  mfaMethods: z.array(mfaMethod),
  expiresAt: date,
  requiresWebauthn: z.boolean(),
  requiresTotp: z.boolean(),
}));


// --- MFA ---
export const mfaStatusView = named("MfaStatus", z.object({
  mfaEnabled: z.boolean(),
  webauthnEnabled: z.boolean(),
  credentialCount: z.number().int(),
  totpEnabled: z.boolean(),
  totpVerifiedAt: date.nullable(),
  backupCodesRemaining: z.number().int(),
}));
sameShape<z.output<typeof mfaStatusView>, Returns<Services["mfa"]["status"]>>();

export const credentialView = named("WebauthnCredential", z.object({
  id: z.string(),
  userId: z.string(),
  name: z.string(),
  transports: z.array(z.string()),
  deviceType: z.string(),
  backedUp: z.boolean(),
  aaguid: z.string().nullable(),
  createdAt: date,
  lastUsedAt: date.nullable(),
}));
sameShape<z.output<typeof credentialView>, Returns<Services["mfa"]["renameCredential"]>>();

export const totpEnrollment = z.object({ secret: z.string(), provisioningUri: z.string(), qrCode: z.string().describe("A data: URL of a PNG") });
sameShape<z.output<typeof totpEnrollment>, Returns<Services["mfa"]["enrollTotp"]>>();
export const totpEnabled = z.object({ enabled: z.literal(true), backupCodes: z.array(z.string()).nullable() });
sameShape<z.output<typeof totpEnabled>, Returns<Services["mfa"]["verifyTotpEnrollment"]>>();
export const backupCodes = z.object({ backupCodes: z.array(z.string()) });
sameShape<z.output<typeof backupCodes>, Returns<Services["mfa"]["regenerateBackupCodes"]>>();

// --- account administration ---
export const adminUserView = named("AdminUser", userView.extend({
  managedBy: z.object({ id: z.string(), name: z.string() }).nullable(),
  organizations: z.array(z.object({ id: z.string(), name: z.string(), role: orgRole })),
}));
sameShape<z.output<typeof adminUserView>, Returns<Services["adminUsers"]["get"]>>();
sameShape<z.output<typeof adminUserView>, Item<Returns<Services["adminUsers"]["search"]>>>();
sameShape<z.output<typeof userView>, Returns<Services["adminUsers"]["suspend"]>>();

// --- health ---
export const healthView = named("Health", z.object({ status: z.string(), service: z.string(), version: z.string() }));
sameShape<z.output<typeof healthView>, Returns<Services["health"]["health"]>>();
export const readinessView = named("Readiness", z.object({
  ready: z.boolean(),
  service: z.string(),
  version: z.string(),
  checks: z.object({ database: z.enum(["ok", "unavailable"]), redis: z.enum(["ok", "unavailable", "in-process"]) }),
}));
sameShape<z.output<typeof readinessView>, Returns<Services["health"]["readiness"]>>();
