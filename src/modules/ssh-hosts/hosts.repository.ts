import { and, desc, eq, gt, isNull, or, sql } from "drizzle-orm";
import { hostEnrollmentTokens, sshHosts, type HostCertEntry, type HostKeyEntry } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";

/** Everything about a token but its hash. */
const tokenColumns = pickColumns(hostEnrollmentTokens, ["id", "organizationId", "prefix", "names", "description", "expiresAt", "createdBy", "createdAt", "usedAt", "hostId", "revokedAt"]);
export type EnrollmentTokenRow = Pick<typeof hostEnrollmentTokens.$inferSelect, keyof typeof tokenColumns>;

/** Everything about a host but its pending renewal challenge. */
const hostColumns = pickColumns(sshHosts, [
  "id", "organizationId", "name", "names", "hostKeys", "certificates", "certValidAfter", "certValidBefore", "lastRenewedAt", "enrolledAt", "enrollmentTokenId", "enrolledBy", "retiredAt", "createdAt",
]);
export type HostRow = Pick<typeof sshHosts.$inferSelect, keyof typeof hostColumns>;

/** Enrollment tokens and enrolled hosts, always within their organization. */
export const hostsRepository = {
  async insertToken(db: Executor, v: { organizationId: string; tokenHash: string; prefix: string; names: string[]; description?: string; expiresAt: Date; createdBy: string; now: Date }): Promise<EnrollmentTokenRow> {
    const [row] = await db.insert(hostEnrollmentTokens).values({ ...v, createdAt: v.now }).returning(tokenColumns);
    return row!;
  },

  listTokens: (db: Executor, organizationId: string, limit: number): Promise<EnrollmentTokenRow[]> =>
    db.select(tokenColumns).from(hostEnrollmentTokens).where(eq(hostEnrollmentTokens.organizationId, organizationId)).orderBy(desc(hostEnrollmentTokens.createdAt)).limit(limit),

  async findTokenByHash(db: Executor, tokenHash: string): Promise<EnrollmentTokenRow | undefined> {
    const [row] = await db.select(tokenColumns).from(hostEnrollmentTokens).where(eq(hostEnrollmentTokens.tokenHash, tokenHash));
    return row;
  },

  /**
   * Spends a token: only one caller ever gets the row back (the update takes the row's lock; a
   * concurrent use waits, then finds it spent). Unused, unrevoked and unexpired, or nothing.
   */
  async spendToken(db: Executor, tokenHash: string, now: Date): Promise<(EnrollmentTokenRow & { tokenHash?: never }) | undefined> {
    const [row] = await db
      .update(hostEnrollmentTokens)
      .set({ usedAt: now })
      .where(and(eq(hostEnrollmentTokens.tokenHash, tokenHash), isNull(hostEnrollmentTokens.usedAt), isNull(hostEnrollmentTokens.revokedAt), gt(hostEnrollmentTokens.expiresAt, now)))
      .returning(tokenColumns);
    return row;
  },

  async setTokenHost(db: Executor, tokenId: string, hostId: string): Promise<void> {
    await db.update(hostEnrollmentTokens).set({ hostId }).where(eq(hostEnrollmentTokens.id, tokenId));
  },

  /** Revokes every unused, unrevoked token a person created in the organization (offboarding). */
  revokeCreatedBy: (db: Executor, organizationId: string, createdBy: string, now: Date): Promise<Array<{ id: string; prefix: string }>> =>
    db
      .update(hostEnrollmentTokens)
      .set({ revokedAt: now })
      .where(and(eq(hostEnrollmentTokens.organizationId, organizationId), eq(hostEnrollmentTokens.createdBy, createdBy), isNull(hostEnrollmentTokens.usedAt), isNull(hostEnrollmentTokens.revokedAt)))
      .returning({ id: hostEnrollmentTokens.id, prefix: hostEnrollmentTokens.prefix }),

  async revokeToken(db: Executor, organizationId: string, id: string, by: string | null, now: Date): Promise<EnrollmentTokenRow | undefined> {
    const [row] = await db
      .update(hostEnrollmentTokens)
      .set({ revokedAt: now, revokedBy: by })
      .where(and(idInOrg(hostEnrollmentTokens, organizationId, id), isNull(hostEnrollmentTokens.usedAt), isNull(hostEnrollmentTokens.revokedAt)))
      .returning(tokenColumns);
    return row;
  },

  async findToken(db: Executor, organizationId: string, id: string): Promise<EnrollmentTokenRow | undefined> {
    const [row] = await db.select(tokenColumns).from(hostEnrollmentTokens).where(idInOrg(hostEnrollmentTokens, organizationId, id));
    return row;
  },

  async insertHost(db: Executor, v: { organizationId: string; name: string; names: string[]; hostKeys: HostKeyEntry[]; enrollmentTokenId: string; enrolledBy: string; now: Date }): Promise<HostRow> {
    const [row] = await db
      .insert(sshHosts)
      .values({ organizationId: v.organizationId, name: v.name, names: v.names, hostKeys: v.hostKeys, enrollmentTokenId: v.enrollmentTokenId, enrolledBy: v.enrolledBy, enrolledAt: v.now, createdAt: v.now })
      .returning(hostColumns);
    return row!;
  },

  async setCertificates(db: Executor, id: string, v: { certificates: HostCertEntry[]; validAfter: Date; validBefore: Date; renewedAt: Date | null }): Promise<HostRow> {
    const [row] = await db
      .update(sshHosts)
      .set({ certificates: v.certificates, certValidAfter: v.validAfter, certValidBefore: v.validBefore, ...(v.renewedAt ? { lastRenewedAt: v.renewedAt } : {}) })
      .where(eq(sshHosts.id, id))
      .returning(hostColumns);
    return row!;
  },

  listHosts: (db: Executor, organizationId: string, includeRetired: boolean, limit: number): Promise<HostRow[]> =>
    db
      .select(hostColumns)
      .from(sshHosts)
      .where(and(eq(sshHosts.organizationId, organizationId), includeRetired ? undefined : isNull(sshHosts.retiredAt)))
      .orderBy(sshHosts.name, sshHosts.createdAt)
      .limit(limit),

  async findHost(db: Executor, id: string): Promise<HostRow | undefined> {
    const [row] = await db.select(hostColumns).from(sshHosts).where(eq(sshHosts.id, id));
    return row;
  },

  async findHostInOrg(db: Executor, organizationId: string, id: string): Promise<HostRow | undefined> {
    const [row] = await db.select(hostColumns).from(sshHosts).where(idInOrg(sshHosts, organizationId, id));
    return row;
  },

  /**
   * Records a renewal challenge as used, once: it must be newer than the last one used (by its
   * expiry), so a captured signature cannot be replayed. Locks the host row for the renewal.
   */
  async useChallenge(db: Executor, id: string, v: { challengeHash: string; expiresAt: Date }): Promise<HostRow | undefined> {
    const [row] = await db
      .update(sshHosts)
      .set({ renewChallengeHash: v.challengeHash, renewChallengeExpiresAt: v.expiresAt })
      .where(and(eq(sshHosts.id, id), isNull(sshHosts.retiredAt), or(isNull(sshHosts.renewChallengeExpiresAt), gt(sql`${v.expiresAt.toISOString()}::timestamptz`, sshHosts.renewChallengeExpiresAt))))
      .returning(hostColumns);
    return row;
  },

  /** The organization's live hosts enrolled under this name, locked for their replacement. */
  liveHostsNamed: (db: Executor, organizationId: string, name: string): Promise<HostRow[]> =>
    db
      .select(hostColumns)
      .from(sshHosts)
      .where(and(eq(sshHosts.organizationId, organizationId), isNull(sshHosts.retiredAt), eq(sshHosts.name, name)))
      .orderBy(sshHosts.createdAt)
      .for("update"),

  async retire(db: Executor, organizationId: string, id: string, by: string | null, now: Date): Promise<HostRow | undefined> {
    const [row] = await db
      .update(sshHosts)
      .set({ retiredAt: now, retiredBy: by })
      .where(and(idInOrg(sshHosts, organizationId, id), isNull(sshHosts.retiredAt)))
      .returning(hostColumns);
    return row;
  },
};
