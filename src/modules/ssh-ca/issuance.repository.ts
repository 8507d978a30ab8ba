import { sql } from "drizzle-orm";
import { certificateAuditLogs, organizations, orgMemberships, sshCertificates, users } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { placeholdersFor, placeholderValues, preparedQuery } from "../../infra/prepared.js";
import { auditInsertAs, auditInsertWhenAs, auditRowsJson, auditRowValues, type AuditRow } from "../audit/index.js";
import { certColumns, type CertRow } from "./certificates.repository.js";

/** Issuance's writes: a signature's certificate, certificate-audit and audit rows in one statement. */
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

export const issuanceRepository = {
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
};
