import { z } from "zod";
import type { Services } from "../../src/container.js";
import { date, type Item, named, orgRole, type Returns, sameShape } from "./same-shape.js";

// --- organizations, members, invites ---
export const orgView = named("Organization", z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  logoUrl: z.string().nullable(),
  createdAt: date,
  updatedAt: date,
  role: orgRole.describe("Your role in it (a role grant in force counts)"),
  storedRole: orgRole.describe("The role kept on your membership, whatever a role grant adds: what a temporary role never confers needs it"),
  elevatedUntil: date.nullable().describe("When your role above stored_role (a role grant) ends; null when you are not elevated"),
}));
sameShape<z.output<typeof orgView>, Returns<Services["orgs"]["create"]>>();
sameShape<z.output<typeof orgView>, Item<Returns<Services["orgs"]["listMine"]>>>();

export const simpleOrgView = named("SimpleOrganization", z.object({ id: z.string(), name: z.string(), slug: z.string(), role: orgRole }));
sameShape<z.output<typeof simpleOrgView>, Item<Returns<Services["orgs"]["listMineSimple"]>>>();

export const memberView = named("Member", z.object({
  userId: z.string(),
  email: z.string(),
  fullName: z.string().nullable(),
  avatarUrl: z.string().nullable(),
  status: z.string(),
  role: orgRole,
  joinedAt: date,
  lastLoginAt: date.nullable().describe("When the member last signed in: for the organization's admins only (null for anyone else)"),
  managed: z.boolean().describe("The account is managed by this organization"),
}));
sameShape<z.output<typeof memberView>, Item<Returns<Services["members"]["list"]>>>();

export const inviteView = named("Invite", z.object({
  id: z.string(),
  email: z.string(),
  role: orgRole,
  invitedBy: z.string(),
  expiresAt: date,
  createdAt: date,
  expired: z.boolean(),
}));
sameShape<z.output<typeof inviteView>, Item<Returns<Services["invites"]["list"]>>>();
sameShape<z.output<typeof inviteView>, Returns<Services["invites"]["send"]>>();
/** On REST, the inviter's id also under the original API's name (invited_by_id). */
export const restInviteView = named("RestInvite", inviteView.extend({ invitedById: z.string() }));

// --- departments and principals ---
export const departmentView = named("Department", z.object({
  id: z.string(),
  organizationId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  canSudo: z.boolean(),
  createdAt: date,
  updatedAt: date,
}));
sameShape<z.output<typeof departmentView>, Returns<Services["departments"]["get"]>>();

export const principalView = named("Principal", departmentView.omit({ canSudo: true }));
sameShape<z.output<typeof principalView>, Returns<Services["principals"]["get"]>>();
sameShape<z.output<typeof principalView>, Item<Returns<Services["departments"]["listPrincipals"]>>>();
sameShape<z.output<typeof departmentView>, Item<Returns<Services["principals"]["listDepartments"]>>>();

export const groupMemberView = named("GroupMember", z.object({ userId: z.string(), email: z.string(), fullName: z.string().nullable(), addedAt: date }));
sameShape<z.output<typeof groupMemberView>, Item<Returns<Services["departments"]["listMembers"]>>>();
export const addedMemberView = groupMemberView.omit({ addedAt: true });
sameShape<z.output<typeof addedMemberView>, Returns<Services["principals"]["addMember"]>>();

export const certPolicyView = named("CertPolicy", z.object({
  departmentId: z.string(),
  allowUserExpiry: z.boolean(),
  defaultExpiryHours: z.number().int(),
  maxExpiryHours: z.number().int(),
  allowedExtensions: z.array(z.string()),
  customExtensions: z.array(z.string()),
  requireHardwareKey: z.boolean().describe("Only FIDO2 security keys (sk-ssh-ed25519, sk-ecdsa-sha2-nistp256) are certified"),
  requireTouch: z.boolean().describe("The security key's proof of possession showed a touch; certificates never carry no-touch-required"),
  requireVerify: z.boolean().describe("The security key's proof of possession showed a PIN or biometric check; certificates carry verify-required"),
  allExtensions: z.array(z.string()),
  standardExtensions: z.array(z.string()),
  isDefault: z.boolean(),
}));
sameShape<z.output<typeof certPolicyView>, Returns<Services["departments"]["getCertPolicy"]>>();

