import { and, arrayContains, count, desc, eq, gt, inArray, isNotNull, isNull, lte, sql } from "drizzle-orm";
import { caKeys, certificateAuditLogs, organizations, orgKrls, orgMemberships, sshCertificates } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import { type Executor, resultRows } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

/** An organization's inventory, narrowed by holder, principal, status and kind. */
export interface OrgCertFilter {
  userId?: string;
  principal?: string;
  status?: "active" | "expired" | "revoked";
  certType?: "user" | "host";
  now: Date;
}

const orgCertWhere = (orgId: string, f: OrgCertFilter) =>
  and(
    eq(sshCertificates.organizationId, orgId),
    f.userId ? eq(sshCertificates.userId, f.userId) : undefined,
    f.principal ? arrayContains(sshCertificates.principals, [f.principal]) : undefined,
    f.certType ? eq(sshCertificates.certType, f.certType) : undefined,
    f.status === "revoked" ? isNotNull(sshCertificates.revokedAt) : undefined,
    f.status === "active" ? and(isNull(sshCertificates.revokedAt), gt(sshCertificates.validBefore, f.now)) : undefined,
    f.status === "expired" ? and(isNull(sshCertificates.revokedAt), lte(sshCertificates.validBefore, f.now)) : undefined,
  );

export const certColumns = pickColumns(sshCertificates, [
  "id", "organizationId", "caId", "caKeyId", "userId", "sshKeyId", "certType", "serial", "keyId", "principals", "extensions", "validAfter", "validBefore",
  "publicKeyFingerprint", "certificate", "revokedAt", "revokeReason", "createdAt",
]);
export type CertRow = Pick<typeof sshCertificates.$inferSelect, keyof typeof certColumns>;

export const certificatesRepository = {
  /**
   * Locks the organizations' rows (FOR NO KEY UPDATE, in id order) until the transaction ends: the
   * lock every revocation and KRL rebuild takes first, the same one membership changes and
   * organization deletion hold before they revoke (memberships.repository's lockOrganization),
   * so all of them queue on it. It does not block signing, whose inserts only take the row's key
   * share. Held, the row also covers the key-share lock that the first insert of an
   * organization's KRL needs, which otherwise came last and deadlocked against an organization
   * deletion waiting on the certificates.
   */
  async lockOrganizations(db: Executor, orgIds: string[]): Promise<void> {
    if (orgIds.length === 0) return;
    await db.select({ id: organizations.id }).from(organizations).where(inArray(organizations.id, orgIds)).orderBy(organizations.id).for("no key update");
  },

  /**
   * The organizations in which a person holds still valid certificates, and with `memberships`
   * those in which they are a member (where one may be signed before their offboarding locks the
   * account).
   */
  async organizationsOfPerson(db: Executor, userId: string, now: Date, options: { memberships: boolean }): Promise<string[]> {
    const holding = db
      .select({ organizationId: sshCertificates.organizationId })
      .from(sshCertificates)
      .where(and(eq(sshCertificates.userId, userId), isNull(sshCertificates.revokedAt), gt(sshCertificates.validBefore, now)));
    const rows = options.memberships
      ? await holding.union(db.select({ organizationId: orgMemberships.organizationId }).from(orgMemberships).where(and(eq(orgMemberships.userId, userId), live(orgMemberships))))
      : await holding.groupBy(sshCertificates.organizationId);
    return rows.map((r) => r.organizationId);
  },

  /** The next serial: one sequence for every CA, so concurrent signers never collide. */
  async nextSerial(db: Executor): Promise<bigint> {
    const [row] = resultRows<{ n: string | number | bigint }>(await db.execute(sql`select nextval('ssh_cert_serial_seq') as n`));
    return BigInt(String(row!.n));
  },

  async find(db: Executor, id: string): Promise<CertRow | undefined> {
    const [row] = await db.select(certColumns).from(sshCertificates).where(eq(sshCertificates.id, id));
    return row;
  },

  async findBySerial(db: Executor, orgId: string, serial: bigint): Promise<CertRow | undefined> {
    const [row] = await db.select(certColumns).from(sshCertificates).where(and(eq(sshCertificates.organizationId, orgId), eq(sshCertificates.serial, serial)));
    return row;
  },

  listForUser: (db: Executor, userId: string, limit: number, offset: number): Promise<CertRow[]> =>
    db.select(certColumns).from(sshCertificates).where(eq(sshCertificates.userId, userId)).orderBy(desc(sshCertificates.createdAt)).limit(limit).offset(offset),

  async count(db: Executor, where: { userId?: string; orgId?: string }): Promise<number> {
    const [row] = await db
      .select({ n: count() })
      .from(sshCertificates)
      .where(and(where.userId ? eq(sshCertificates.userId, where.userId) : undefined, where.orgId ? eq(sshCertificates.organizationId, where.orgId) : undefined));
    return row?.n ?? 0;
  },

  listForOrg: (db: Executor, orgId: string, filter: OrgCertFilter, limit: number, offset: number): Promise<CertRow[]> =>
    db.select(certColumns).from(sshCertificates).where(orgCertWhere(orgId, filter)).orderBy(desc(sshCertificates.createdAt)).limit(limit).offset(offset),

  async countForOrg(db: Executor, orgId: string, filter: OrgCertFilter): Promise<number> {
    const [row] = await db.select({ n: count() }).from(sshCertificates).where(orgCertWhere(orgId, filter));
    return row?.n ?? 0;
  },

  /** Marks certificates revoked (only those not yet revoked); returns what changed. */
  async revoke(db: Executor, where: { id?: string; orgId: string; userId?: string }, v: { now: Date; reason: string; by: string | null }): Promise<CertRow[]> {
    return db
      .update(sshCertificates)
      .set({ revokedAt: v.now, revokeReason: v.reason, revokedBy: v.by })
      .where(
        and(
          eq(sshCertificates.organizationId, where.orgId),
          where.id ? eq(sshCertificates.id, where.id) : undefined,
          where.userId ? eq(sshCertificates.userId, where.userId) : undefined,
          isNull(sshCertificates.revokedAt),
        ),
      )
      .returning(certColumns);
  },

  /** Revokes a person's still valid certificates, in one organization or in all of them. */
  async revokeValidOfUser(db: Executor, userId: string, organizationId: string | undefined, v: { now: Date; reason: string; by: string | null }): Promise<CertRow[]> {
    return db
      .update(sshCertificates)
      .set({ revokedAt: v.now, revokeReason: v.reason, revokedBy: v.by })
      .where(
        and(
          eq(sshCertificates.userId, userId),
          organizationId ? eq(sshCertificates.organizationId, organizationId) : undefined,
          isNull(sshCertificates.revokedAt),
          gt(sshCertificates.validBefore, v.now),
        ),
      )
      .returning(certColumns);
  },

  /** Revokes every still valid certificate an organization issued. */
  async revokeValidOfOrg(db: Executor, organizationId: string, v: { now: Date; reason: string; by: string | null }): Promise<CertRow[]> {
    return db
      .update(sshCertificates)
      .set({ revokedAt: v.now, revokeReason: v.reason, revokedBy: v.by })
      .where(and(eq(sshCertificates.organizationId, organizationId), isNull(sshCertificates.revokedAt), gt(sshCertificates.validBefore, v.now)))
      .returning(certColumns);
  },

  /** Still valid host certificates of an organization for these host keys (a retired host's). */
  async revokeValidHostKeys(db: Executor, organizationId: string, fingerprints: string[], v: { now: Date; reason: string; by: string | null }): Promise<CertRow[]> {
    if (fingerprints.length === 0) return [];
    return db
      .update(sshCertificates)
      .set({ revokedAt: v.now, revokeReason: v.reason, revokedBy: v.by })
      .where(
        and(
          eq(sshCertificates.organizationId, organizationId),
          eq(sshCertificates.certType, "host"),
          inArray(sshCertificates.publicKeyFingerprint, fingerprints),
          isNull(sshCertificates.revokedAt),
          gt(sshCertificates.validBefore, v.now),
        ),
      )
      .returning(certColumns);
  },

  /** Host certificates signed for an enrolled host (no signing account: the host's token or key proved it), in the caller's transaction. */
  async insertHostCertificates(db: Executor, rows: Array<typeof sshCertificates.$inferInsert>): Promise<CertRow[]> {
    return db.insert(sshCertificates).values(rows).returning(certColumns);
  },

  /** Revoked, still unexpired certificates of an organization, with the public key of the CA key that signed each. */
  revokedForKrl: (db: Executor, orgId: string, now: Date) =>
    db
      .select({ serial: sshCertificates.serial, caPublicKey: caKeys.publicKey })
      .from(sshCertificates)
      .innerJoin(caKeys, eq(caKeys.id, sshCertificates.caKeyId))
      .where(and(eq(sshCertificates.organizationId, orgId), isNotNull(sshCertificates.revokedAt), gt(sshCertificates.validBefore, now))),

  async saveKrl(db: Executor, orgId: string, krl: Buffer, now: Date): Promise<bigint> {
    const [row] = await db
      .insert(orgKrls)
      .values({ organizationId: orgId, version: 1n, krl, generatedAt: now })
      .onConflictDoUpdate({ target: orgKrls.organizationId, set: { version: sql`${orgKrls.version} + 1`, krl, generatedAt: now } })
      .returning({ version: orgKrls.version });
    return row!.version;
  },

  async currentKrlVersion(db: Executor, orgId: string): Promise<bigint> {
    const [row] = await db.select({ version: orgKrls.version }).from(orgKrls).where(eq(orgKrls.organizationId, orgId));
    return row?.version ?? 0n;
  },

  async loadKrl(db: Executor, orgId: string) {
    const [row] = await db.select({ krl: orgKrls.krl, version: orgKrls.version, generatedAt: orgKrls.generatedAt }).from(orgKrls).where(eq(orgKrls.organizationId, orgId));
    return row;
  },

  async audit(db: Executor, v: typeof certificateAuditLogs.$inferInsert) {
    await db.insert(certificateAuditLogs).values(v);
  },

  listAudit: (db: Executor, orgId: string, action: string | undefined, limit: number, offset: number) =>
    db
      .select(pickColumns(certificateAuditLogs, ["id", "createdAt", "organizationId", "certificateId", "userId", "action", "success", "message", "ipAddress", "userAgent", "requestId", "metadata"]))
      .from(certificateAuditLogs)
      .where(and(eq(certificateAuditLogs.organizationId, orgId), action ? eq(certificateAuditLogs.action, action) : undefined))
      .orderBy(desc(certificateAuditLogs.createdAt), desc(certificateAuditLogs.id))
      .limit(limit)
      .offset(offset),
};
