import { and, eq, sql } from "drizzle-orm";
import { mfaCompliance } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { preparedQuery } from "../../infra/prepared.js";

/** A member's standing under an organization's MFA policy (written by the MFA policy's passes). */
export type ComplianceStatus = (typeof mfaCompliance.$inferSelect)["status"];

// Every organization-scoped request asks this (requireOrgAccess): prepared once.
const findStanding = preparedQuery("mfa_compliance_status", (db) =>
  db.select({ status: mfaCompliance.status }).from(mfaCompliance).where(and(eq(mfaCompliance.userId, sql.placeholder("userId")), eq(mfaCompliance.organizationId, sql.placeholder("organizationId")))),
);

/** The same reading of a standing read along with other things (the signing path reads it in its one query). */
export const isPastDue = (status: ComplianceStatus | null | undefined): boolean => status === "past_due";

/**
 * Whether a member is past an organization's MFA deadline without MFA (the tenancy guard restricts
 * them until they enroll). The one reading of compliance other modules make.
 */
export async function isPastMfaDeadline(db: Executor, userId: string, organizationId: string): Promise<boolean> {
  const [row] = await findStanding(db, { userId, organizationId });
  return isPastDue(row?.status);
}
