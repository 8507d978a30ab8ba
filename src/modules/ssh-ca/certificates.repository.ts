import { and, arrayContains, count, desc, eq, gt, inArray, isNotNull, isNull, lte, sql } from "drizzle-orm";
import { caKeys, certificateAuditLogs, organizations, orgKrls, orgMemberships, sshCertificates, users } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import { type Executor, resultRows } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import { placeholdersFor, placeholderValues, preparedQuery } from "../../infra/prepared.js";
import { auditInsertAs, auditInsertWhenAs, auditRowsJson, auditRowValues, type AuditRow } from "../audit/index.js";

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

const CERT_FIELDS = [
  "id", "organizationId", "caId", "caKeyId", "userId", "sshKeyId", "certType", "serial", "keyId", "principals", "extensions", "criticalOptions", "validAfter", "validBefore",
  "publicKeyFingerprint", "certificate", "requestIp", "requestUserAgent", "createdAt",
] as const;
export type NewCertificate = Pick<typeof sshCertificates.$inferInsert, (typeof CERT_FIELDS)[number]> & { id: string };

const CERT_AUDIT_FIELDS = ["createdAt", "organizationId", "certificateId", "userId", "action", "success", "message", "ipAddress", "userAgent", "requestId", "metadata"] as const;
export type CertAuditRow = Pick<typeof certificateAuditLogs.$inferInsert, (typeof CERT_AUDIT_FIELDS)[number]> & { createdAt: Date; metadata: Record<string, unknown> };

/** One signature's rows: the certificate, its certificate-audit row and its audit record, and who signed it. */
export interface IssuedCertificate {
  signerId: string;
  cert: NewCertificate;
  certAudit: CertAuditRow;
  audit: AuditRow;
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
const certJson = (signer: string, c: NewCertificate) => ({
  id: c.id,
  organization_id: c.organizationId,
  signer,
  ca_id: c.caId,
  ca_key_id: c.caKeyId,
  user_id: c.userId ?? null,
  ssh_key_id: c.sshKeyId ?? null,
  cert_type: c.certType,
  serial: String(c.serial),
  key_id: c.keyId,
  principals: c.principals,
  extensions: c.extensions,
  critical_options: c.criticalOptions ?? {},
  valid_after: iso(c.validAfter),
  valid_before: iso(c.validBefore),
  public_key_fingerprint: c.publicKeyFingerprint,
  certificate: c.certificate,
  request_ip: c.requestIp ?? null,
  request_user_agent: c.requestUserAgent ?? null,
  created_at: iso(c.createdAt),
});
const certAuditJson = (a: CertAuditRow) => ({
  created_at: iso(a.createdAt),
  organization_id: a.organizationId ?? null,
  certificate_id: a.certificateId ?? null,
  user_id: a.userId ?? null,
  action: a.action,
  success: a.success ?? true,
  message: a.message ?? null,
  ip_address: a.ipAddress ?? null,
  user_agent: a.userAgent ?? null,
  request_id: a.requestId ?? null,
  metadata: a.metadata,
});

// Signatures' rows in one prepared statement (ARCHITECTURE rule 10: certificate, serial and audit
// entries together): the certificates, their certificate-audit rows and their audit-log records,
// for one signature or for several that reached their write at once (a batch of one organization,
// see issueBatcher). One statement is one transaction, without BEGIN and COMMIT round trips.
//
// What lets each signer sign is read again in the statement, FOR SHARE, in the order every
// offboarding locks (the organization, then accounts in id order, then memberships): the
// organization still live, the account active and not deleted, the membership still there. An
// offboarding (a removal or a departure, a suspension, an account's or the organization's
// deletion: each updates one of those rows) that began first makes the signature wait, then find
// nothing: its certificate and audit rows are not written (the others of the batch are). One that
// begins after waits for the statement to commit and revokes what it wrote.
const CERT_INPUT = sql.raw(`v(id uuid, organization_id uuid, signer uuid, ca_id uuid, ca_key_id uuid, user_id uuid, ssh_key_id uuid, cert_type cert_type,
  serial bigint, key_id text, principals text[], extensions text[], critical_options jsonb, valid_after timestamptz, valid_before timestamptz,
  public_key_fingerprint varchar, certificate text, request_ip varchar, request_user_agent text, created_at timestamptz)`);
const insertIssued = preparedQuery("ssh_cert_insert_issued", (db) => {
  const certs = sql`jsonb_to_recordset(${sql.placeholder("certs")}::jsonb) as ${CERT_INPUT}`;
  const allowed = db.$with("allowed", { id: sql<string>`id` }).as(
    sql`select v.id from ${certs}
          join ${organizations} o on o.id = v.organization_id and o.deleted_at is null
          join ${users} u on u.id = v.signer and u.deleted_at is null and u.status = 'active'
          join ${orgMemberships} m on m.organization_id = o.id and m.user_id = u.id and m.deleted_at is null
        order by v.organization_id, v.signer
        for share of o, u, m`,
  );
  // Every column of the table, in its order (revocation columns empty).
  const cert = db.$with("cert").as(
    db
      .insert(sshCertificates)
      .select(
        sql`select v.id, v.organization_id, v.ca_id, v.ca_key_id, v.user_id, v.ssh_key_id, v.cert_type, v.serial, v.key_id, v.principals, v.extensions,
              coalesce(v.critical_options, '{}'::jsonb), v.valid_after, v.valid_before, v.public_key_fingerprint, v.certificate, null, null, null,
              v.request_ip, v.request_user_agent, v.created_at
            from ${certs} where v.id in (select id from allowed)`,
      )
      .returning(certColumns),
  );
  const certAudit = db.$with("cert_audit").as(
    db.insert(certificateAuditLogs).select(
      sql`select gen_random_uuid(), a.created_at, a.organization_id, a.certificate_id, a.user_id, a.action, a.success, a.message, a.ip_address,
            a.user_agent, a.request_id, coalesce(a.metadata, '{}'::jsonb)
          from jsonb_to_recordset(${sql.placeholder("cert_audits")}::jsonb) as a(created_at timestamptz, organization_id uuid, certificate_id uuid,
            user_id uuid, action varchar, success boolean, message text, ip_address varchar, user_agent text, request_id varchar, metadata jsonb)
          where a.certificate_id in (select id from cert)`,
    ),
  );
  const audit = auditInsertWhenAs(db, "audit", sql`r.resource_id in (select id::text from cert)`);
  return db.with(allowed, cert, certAudit, audit).select().from(cert);
});
// A failed signature's two rows, together.
const insertFailed = preparedQuery("ssh_cert_insert_failed", (db) =>
  db.with(auditInsertAs(db, "audit")).insert(certificateAuditLogs).values(placeholdersFor("cert_audit", CERT_AUDIT_FIELDS)),
);

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

  /**
   * New certificates with their certificate-audit rows and audit records, in one statement; a
   * certificate whose signer is no longer an active member of its live organization is left out
   * with its rows. Returns the certificates written.
   */
  async insertIssued(db: Executor, issued: readonly IssuedCertificate[]): Promise<CertRow[]> {
    return insertIssued(db, {
      certs: JSON.stringify(issued.map(({ signerId, cert }) => certJson(signerId, cert))),
      cert_audits: JSON.stringify(issued.map(({ certAudit }) => certAuditJson(certAudit))),
      audit_rows: auditRowsJson(issued.map((i) => i.audit)),
    });
  },

  /** A failed signature's certificate-audit row and audit record, in one statement. */
  async insertFailed(db: Executor, certAudit: CertAuditRow, audit: AuditRow): Promise<void> {
    await insertFailed(db, auditRowValues("audit", audit, placeholderValues("cert_audit", CERT_AUDIT_FIELDS, certAudit)));
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
