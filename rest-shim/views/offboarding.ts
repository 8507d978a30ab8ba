import { z } from "zod";
import type { Services } from "../../src/container.js";
import { date, type Item, named, orgRole, type Returns, sameShape } from "./same-shape.js";

const cut = z.object({ count: z.number().int(), ids: z.array(z.string()) });

export const offboardingReceiptView = named("OffboardingReceipt", z.object({
  id: z.string().describe("The receipt's id"),
  auditId: z.string().describe("The audit record that is the receipt (verified by the audit chain like every record)"),
  organizationId: z.string(),
  userId: z.string(),
  actorId: z.string().nullable(),
  createdAt: date,
  mode: z.enum(["suspend", "remove"]),
  reason: z.string(),
  role: orgRole.describe("The role the person held"),
  managed: z.boolean().describe("The account is managed by this organization: its sessions and CLI tokens ended too"),
  accountSuspended: z.boolean().describe("A managed account suspended: its sign-in is refused until reinstated"),
  sessions: cut,
  cliTokens: z.object({ count: z.number().int() }).describe("Delegated CLI (OIDC) tokens, grants and codes ended"),
  apiKeys: cut.describe("Organization API keys the person created, revoked"),
  enrollmentTokens: cut.describe("Unused host enrollment tokens the person created, revoked"),
  certificates: cut.extend({ serials: z.array(z.string()) }).describe("SSH certificates revoked (their serials are in the published KRL)"),
  devices: cut.describe("Device memberships on this organization's networks, deauthorized"),
  departments: cut,
  principals: cut,
  pending: z.object({ devices: z.array(z.string()) }).describe("Still being retried: devices the network controller has not confirmed (reconciliation finishes them)"),
}));
sameShape<z.output<typeof offboardingReceiptView>, Returns<Services["offboarding"]["receipt"]>>();

export const reinstateView = named("Reinstatement", z.object({
  organizationId: z.string(),
  userId: z.string(),
  role: orgRole,
  receiptId: z.string(),
  accountReactivated: z.boolean(),
}));
sameShape<z.output<typeof reinstateView>, Returns<Services["offboarding"]["reinstate"]>>();
sameShape<z.output<typeof offboardingReceiptView>, Item<Returns<Services["offboarding"]["receipts"]>>>();
