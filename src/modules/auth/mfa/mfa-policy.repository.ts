import { and, count, eq, inArray, sql } from "drizzle-orm";
import { mfaCompliance, orgMemberships, orgSecurityPolicies, organizations, users } from "../../../../schema/index.js";
import { pickColumns } from "../../../infra/columns.js";
import { type Executor, resultRows } from "../../../infra/db.js";
import { live } from "../../../infra/soft-delete.js";

type PolicyRow = typeof orgSecurityPolicies.$inferSelect;
type StandingRow = typeof mfaCompliance.$inferSelect;
export type PolicySettings = Pick<PolicyRow, "mfaPolicyMode" | "mfaGracePeriodDays" | "notifyDaysBefore">;
export type ComplianceStatus = StandingRow["status"];
/** A standing the scheduled pass acts on. */
export type OpenStanding = Pick<StandingRow, "userId" | "organizationId" | "status" | "deadlineAt" | "remindersSent">;
/** What reconciliation writes for a member who has no current standing. */
export type StandingValues = Pick<StandingRow, "status" | "policyVersion" | "deadlineAt" | "compliantAt" | "remindersSent" | "updatedAt">;

const ofStanding = (userId: string, organizationId: string) => and(eq(mfaCompliance.userId, userId), eq(mfaCompliance.organizationId, organizationId));

/** Organization security policies: one row per organization, none meaning the defaults. */
export const securityPolicyRepository = {
  async find(db: Executor, organizationId: string): Promise<(PolicySettings & Pick<PolicyRow, "policyVersion">) | undefined> {
    const [row] = await db
      .select(pickColumns(orgSecurityPolicies, ["mfaPolicyMode", "mfaGracePeriodDays", "notifyDaysBefore", "policyVersion"]))
      .from(orgSecurityPolicies)
      .where(eq(orgSecurityPolicies.organizationId, organizationId));
    return row;
  },

  /** Writes the policy; every change after the first bumps its version. Returns the version. */
  async upsert(db: Executor, organizationId: string, settings: PolicySettings, updatedBy: string, now: Date): Promise<number> {
    const [row] = await db
      .insert(orgSecurityPolicies)
      .values({ organizationId, ...settings, updatedBy, updatedAt: now })
      .onConflictDoUpdate({
        target: orgSecurityPolicies.organizationId,
        set: { ...settings, updatedBy, updatedAt: now, policyVersion: sql`${orgSecurityPolicies.policyVersion} + 1` },
      })
      .returning({ version: orgSecurityPolicies.policyVersion });
    return row!.version;
  },

  /** Live organizations whose policy requires MFA. */
  listRequired: (db: Executor) =>
    db
      .select({ organizationId: orgSecurityPolicies.organizationId, version: orgSecurityPolicies.policyVersion, grace: orgSecurityPolicies.mfaGracePeriodDays, notify: orgSecurityPolicies.notifyDaysBefore })
      .from(orgSecurityPolicies)
      .innerJoin(organizations, eq(organizations.id, orgSecurityPolicies.organizationId))
      .where(and(eq(orgSecurityPolicies.mfaPolicyMode, "required"), live(organizations))),

  /** Takes the compliance pass's transaction-scoped lock; false when another instance holds it. */
  async tryLockCompliancePass(tx: Executor): Promise<boolean> {
    // 7420002: an arbitrary constant naming this pass's lock.
    const [lock] = resultRows<{ locked: boolean }>(await tx.execute(sql`select pg_try_advisory_xact_lock(7420002) as locked`));
    return !!lock?.locked;
  },
};

/** Each member's standing under their organization's MFA policy. */
export const complianceRepository = {
  async find(db: Executor, userId: string, organizationId: string): Promise<Pick<StandingRow, "status" | "deadlineAt"> | undefined> {
    const [row] = await db.select({ status: mfaCompliance.status, deadlineAt: mfaCompliance.deadlineAt }).from(mfaCompliance).where(ofStanding(userId, organizationId));
    return row;
  },

  /** One user's standings in the given organizations. */
  ofUser: (db: Executor, userId: string, organizationIds: string[]): Promise<Array<Pick<StandingRow, "organizationId" | "status" | "deadlineAt">>> =>
    organizationIds.length === 0
      ? Promise.resolve([])
      : db
          .select({ organizationId: mfaCompliance.organizationId, status: mfaCompliance.status, deadlineAt: mfaCompliance.deadlineAt })
          .from(mfaCompliance)
          .where(and(eq(mfaCompliance.userId, userId), inArray(mfaCompliance.organizationId, organizationIds))),

  /** Every live member of the organization with their standing (absent: none yet), by email. */
  /** Live members with their standing, by email; `page` (limit and offset) for one page of them. */
  listMembers: (db: Executor, organizationId: string, page?: { limit: number; offset: number }) => {
    const query = db
      .select({
        userId: orgMemberships.userId,
        userEmail: users.email,
        userName: users.fullName,
        status: mfaCompliance.status,
        deadlineAt: mfaCompliance.deadlineAt,
        compliantAt: mfaCompliance.compliantAt,
        lastNotifiedAt: mfaCompliance.lastNotifiedAt,
      })
      .from(orgMemberships)
      .innerJoin(users, eq(users.id, orgMemberships.userId))
      .leftJoin(mfaCompliance, and(eq(mfaCompliance.userId, orgMemberships.userId), eq(mfaCompliance.organizationId, orgMemberships.organizationId)))
      .where(and(eq(orgMemberships.organizationId, organizationId), live(orgMemberships), live(users)))
      // The id breaks ties, so pages never overlap.
      .orderBy(users.email, orgMemberships.userId);
    return page ? query.limit(page.limit).offset(page.offset) : query;
  },

  async countMembers(db: Executor, organizationId: string): Promise<number> {
    const [row] = await db
      .select({ n: count() })
      .from(orgMemberships)
      .innerJoin(users, eq(users.id, orgMemberships.userId))
      .where(and(eq(orgMemberships.organizationId, organizationId), live(orgMemberships), live(users)));
    return row?.n ?? 0;
  },

  /** Live memberships with the standing each has (if any), for reconciliation. */
  listMemberStandings: (db: Executor, organizationId: string) =>
    db
      .select({ userId: orgMemberships.userId, status: mfaCompliance.status, policyVersion: mfaCompliance.policyVersion })
      .from(orgMemberships)
      .leftJoin(mfaCompliance, and(eq(mfaCompliance.userId, orgMemberships.userId), eq(mfaCompliance.organizationId, orgMemberships.organizationId)))
      .where(and(eq(orgMemberships.organizationId, organizationId), live(orgMemberships))),

  /** Standings still owing MFA (in grace or past due). */
  listOpen: (db: Executor, organizationId: string): Promise<OpenStanding[]> =>
    db
      .select({ userId: mfaCompliance.userId, organizationId: mfaCompliance.organizationId, status: mfaCompliance.status, deadlineAt: mfaCompliance.deadlineAt, remindersSent: mfaCompliance.remindersSent })
      .from(mfaCompliance)
      .where(and(eq(mfaCompliance.organizationId, organizationId), inArray(mfaCompliance.status, ["in_grace", "past_due"]))),

  async upsert(db: Executor, userId: string, organizationId: string, values: StandingValues): Promise<void> {
    await db.insert(mfaCompliance).values({ userId, organizationId, ...values }).onConflictDoUpdate({ target: [mfaCompliance.userId, mfaCompliance.organizationId], set: values });
  },

  async setPolicyVersion(db: Executor, userId: string, organizationId: string, policyVersion: number): Promise<void> {
    await db.update(mfaCompliance).set({ policyVersion }).where(ofStanding(userId, organizationId));
  },

  /** The policy no longer requires MFA: every standing in the organization stops counting. */
  async markAllNotApplicable(db: Executor, organizationId: string, now: Date): Promise<void> {
    await db.update(mfaCompliance).set({ status: "not_applicable", updatedAt: now }).where(eq(mfaCompliance.organizationId, organizationId));
  },

  async markPastDue(db: Executor, userId: string, organizationId: string, now: Date): Promise<void> {
    await db.update(mfaCompliance).set({ status: "past_due", updatedAt: now }).where(ofStanding(userId, organizationId));
  },

  /** Every in-grace or past-due standing of the user becomes compliant; returns their organizations. */
  async markCompliant(db: Executor, userId: string, now: Date): Promise<string[]> {
    const rows = await db
      .update(mfaCompliance)
      .set({ status: "compliant", compliantAt: now, updatedAt: now })
      .where(and(eq(mfaCompliance.userId, userId), inArray(mfaCompliance.status, ["in_grace", "past_due"])))
      .returning({ organizationId: mfaCompliance.organizationId });
    return rows.map((r) => r.organizationId);
  },

  /** Compliant standings fall back to their deadline: past due if it has passed, in grace otherwise. */
  async reopenCompliant(db: Executor, userId: string, now: Date): Promise<void> {
    await db
      .update(mfaCompliance)
      .set({ status: sql`case when ${mfaCompliance.deadlineAt} is not null and ${mfaCompliance.deadlineAt} <= ${now.toISOString()}::timestamptz then 'past_due'::mfa_compliance_status else 'in_grace'::mfa_compliance_status end`, compliantAt: null, updatedAt: now })
      .where(and(eq(mfaCompliance.userId, userId), eq(mfaCompliance.status, "compliant")));
  },

  /** A reminder went out; a scheduled step is remembered so it is sent once. */
  async markNotified(db: Executor, userId: string, organizationId: string, now: Date, step: string | null): Promise<void> {
    await db
      .update(mfaCompliance)
      .set({ lastNotifiedAt: now, updatedAt: now, ...(step ? { remindersSent: sql`array_append(${mfaCompliance.remindersSent}, ${step})` } : {}) })
      .where(ofStanding(userId, organizationId));
  },

  /** Whom a reminder goes to and which organization it names. */
  async reminderRecipient(db: Executor, userId: string, organizationId: string): Promise<{ email: string; fullName: string | null; organizationName: string } | undefined> {
    const [user] = await db.select({ email: users.email, fullName: users.fullName }).from(users).where(eq(users.id, userId));
    const [org] = await db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, organizationId));
    return user && org ? { ...user, organizationName: org.name } : undefined;
  },
};
