import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { toPage, type Page } from "../../lib/pagination.js";
import type { RequestContext } from "../../lib/request-context.js";
import { buildKrl } from "../../lib/ssh/index.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { OrgErrors, organizationExists } from "../orgs/index.js";
import { certificatesRepository, type CertRow } from "./certificates.repository.js";
import { toCertificateView, type CertificateView } from "./certificates.views.js";
import { CaErrors } from "./ssh-ca.errors.js";
import { certAuditQuerySchema, certListSchema, orgCertListSchema, revokeSchema, type CertListInput, type OrgCertListInput, type RevokeInput, type CertAuditQueryInput } from "./ssh-ca.schemas.js";
import { can, getActiveMembership, requireOrgAccess, requireUser } from "../access/index.js";

const actorId = (ctx: RequestContext): string | null => (ctx.actor.kind === "user" ? ctx.actor.userId : null);

/** Issued certificates: listing, revocation, and each organization's key revocation list. */
export class CertificatesService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async listMine(ctx: RequestContext, input: CertListInput): Promise<Page<CertificateView>> {
    const actor = requireUser(ctx);
    const q = parseInput(certListSchema, input ?? {});
    const [rows, total] = await Promise.all([
      certificatesRepository.listForUser(this.db, actor.userId, q.perPage, (q.page - 1) * q.perPage),
      certificatesRepository.count(this.db, { userId: actor.userId }),
    ]);
    return this.page(rows, total, q.page, q.perPage);
  }

  /** One certificate: yours, or one of an organization you administer. */
  async get(ctx: RequestContext, certId: string): Promise<CertificateView> {
    return toCertificateView(await this.visible(ctx, certId), this.clock.now());
  }

  async listForOrg(ctx: RequestContext, orgId: string, input: OrgCertListInput): Promise<Page<CertificateView>> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const q = parseInput(orgCertListSchema, input ?? {});
    const where = { userId: q.userId, principal: q.principal, status: q.status, certType: q.certType, now: this.clock.now() };
    const [rows, total] = await Promise.all([
      certificatesRepository.listForOrg(this.db, id, where, q.perPage, (q.page - 1) * q.perPage),
      certificatesRepository.countForOrg(this.db, id, where),
    ]);
    return this.page(rows, total, q.page, q.perPage);
  }

  /** Revokes one certificate (its holder, or an admin of its organization) and rebuilds the KRL. */
  async revoke(ctx: RequestContext, certId: string, input: RevokeInput): Promise<CertificateView> {
    const actor = requireUser(ctx);
    const { reason } = parseInput(revokeSchema, input ?? {});
    const cert = await this.visible(ctx, certId);
    if (cert.revokedAt) throw CaErrors.alreadyRevoked();
    const [revoked] = await this.revokeWhere(ctx, { id: cert.id, orgId: cert.organizationId }, reason ?? "User requested revocation", actor.userId);
    if (!revoked) throw CaErrors.alreadyRevoked();
    return toCertificateView(revoked, this.clock.now());
  }

  /** Revokes every certificate of one user in an organization (admins). */
  async revokeUser(ctx: RequestContext, orgId: string, userId: string, input: RevokeInput): Promise<{ revoked: number }> {
    const { orgId: id, actor } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const target = parseId(userId, OrgErrors.memberNotFound);
    const { reason } = parseInput(revokeSchema, input ?? {});
    const rows = await this.revokeWhere(ctx, { orgId: id, userId: target }, reason ?? "Revoked by an organization admin", actor.userId);
    return { revoked: rows.length };
  }

  /** The organization's KRL in OpenSSH format, for sshd's RevokedKeys (public: it holds no secret). */
  async krl(orgId: string): Promise<{ krl: Buffer; version: bigint; generatedAt: Date }> {
    const id = parseId(orgId, OrgErrors.notFound);
    // A deleted organization's last KRL stays published: servers that still trust its CA keep refusing what it revoked.
    const stored = await certificatesRepository.loadKrl(this.db, id);
    if (stored) return stored;
    if (!(await organizationExists(this.db, id))) throw OrgErrors.notFound();
    const now = this.clock.now();
    return { krl: buildKrl([], { version: 0n, generatedAt: now, comment: `keyward org ${id}` }), version: 0n, generatedAt: now };
  }

  async auditLog(ctx: RequestContext, orgId: string, input: CertAuditQueryInput) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const q = parseInput(certAuditQuerySchema, input ?? {});
    const rows = await certificatesRepository.listAudit(this.db, id, q.action, q.perPage, (q.page - 1) * q.perPage);
    return { items: rows, page: q.page, perPage: q.perPage };
  }

  /**
   * Offboarding: a person's still valid certificates stop working when they leave or are removed
   * from an organization (that organization's), or are suspended or deleted (everywhere). Runs in
   * the caller's transaction; each affected organization's KRL is rebuilt with it, and every
   * revocation is audited.
   */
  async revokeForOffboarding(tx: Executor, ctx: RequestContext, v: { userId: string; organizationId?: string; reason: string }): Promise<number> {
    return (await this.revokeListed(tx, ctx, v)).length;
  }

  /** The same, naming what it revoked (an offboarding's receipt lists the serials). */
  async revokeListed(tx: Executor, ctx: RequestContext, v: { userId: string; organizationId?: string; reason: string }): Promise<Array<{ id: string; serial: string }>> {
    const now = this.clock.now();
    // Normally held already (callers lock before the account). Locked here only where there is
    // something to revoke: an organization the person joined since (no certificate of theirs
    // yet) must not be locked now, after the account.
    if (v.organizationId) await this.lockForRevocation(tx, { organizationIds: [v.organizationId] });
    else await certificatesRepository.lockOrganizations(tx, await certificatesRepository.organizationsOfPerson(tx, v.userId, now, { memberships: false }));
    const rows = await certificatesRepository.revokeValidOfUser(tx, v.userId, v.organizationId, { now, reason: v.reason, by: actorId(ctx) });
    await this.recordRevocations(tx, ctx, rows, v.reason, now);
    return rows.map((r) => ({ id: r.id, serial: r.serial.toString() }));
  }

  /** An organization is deleted: everything it issued stops working (its last KRL stays published). */
  async revokeAllOfOrganization(tx: Executor, ctx: RequestContext, organizationId: string, reason: string): Promise<number> {
    const now = this.clock.now();
    await this.lockForRevocation(tx, { organizationIds: [organizationId] });
    const rows = await certificatesRepository.revokeValidOfOrg(tx, organizationId, { now, reason, by: actorId(ctx) });
    await this.recordRevocations(tx, ctx, rows, reason, now);
    return rows.length;
  }

  /**
   * A host is retired: every still valid host certificate of the organization for its keys is
   * revoked, in the caller's transaction (the KRL is rebuilt with it), each one audited.
   */
  async revokeHostKeys(tx: Executor, ctx: RequestContext, v: { organizationId: string; fingerprints: string[]; reason: string }): Promise<Array<{ id: string; serial: string }>> {
    const now = this.clock.now();
    await this.lockForRevocation(tx, { organizationIds: [v.organizationId] });
    const rows = await certificatesRepository.revokeValidHostKeys(tx, v.organizationId, v.fingerprints, { now, reason: v.reason, by: actorId(ctx) });
    await this.recordRevocations(tx, ctx, rows, v.reason, now);
    return rows.map((r) => ({ id: r.id, serial: r.serial.toString() }));
  }

  private async revokeWhere(ctx: RequestContext, where: { id?: string; orgId: string; userId?: string }, reason: string, by: string): Promise<CertRow[]> {
    return this.db.transaction(async (tx) => {
      const now = this.clock.now();
      await this.lockForRevocation(tx, { organizationIds: [where.orgId] });
      const rows = await certificatesRepository.revoke(tx, where, { now, reason, by });
      await this.recordRevocations(tx, ctx, rows, reason, now);
      return rows;
    });
  }

  /**
   * A transaction that will revoke certificates first locks the organizations involved, all at
   * once and in id order (a later call in the same transaction finds them held): the given
   * organizations, and with `userId` every one in which that person holds a still valid
   * certificate or is a member. Callers that lock accounts take these locks before them
   * (organizations, accounts, certificates: the order of membership changes and of signing too),
   * so offboardings queue instead of deadlocking. The member's organizations count because a
   * signature there may commit before the account is locked: its revocation would otherwise lock
   * that organization after the account, while the next signature there holds the organization
   * and waits for the account.
   */
  async lockForRevocation(tx: Executor, v: { organizationIds?: string[]; userId?: string }): Promise<void> {
    const ids = new Set(v.organizationIds);
    if (v.userId) for (const id of await certificatesRepository.organizationsOfPerson(tx, v.userId, this.clock.now(), { memberships: true })) ids.add(id);
    await certificatesRepository.lockOrganizations(tx, [...ids]);
  }

  /** Audits each revoked certificate and rebuilds the KRL of every organization involved. */
  private async recordRevocations(tx: Executor, ctx: RequestContext, rows: CertRow[], reason: string, now: Date): Promise<void> {
    for (const cert of rows) {
      await certificatesRepository.audit(tx, {
        organizationId: cert.organizationId,
        certificateId: cert.id,
        userId: actorId(ctx),
        action: "revoked",
        message: reason,
        ipAddress: ctx.ip?.slice(0, 45),
        userAgent: ctx.userAgent,
        requestId: ctx.requestId,
        metadata: { serial: cert.serial.toString() },
        createdAt: now,
      });
      await this.audit.record(tx, ctx, AuditAction.certRevoked, {
        organizationId: cert.organizationId,
        userId: cert.userId,
        resourceType: "ssh_certificate",
        resourceId: cert.id,
        metadata: { serial: cert.serial.toString(), reason },
      });
    }
    const orgIds = [...new Set(rows.map((r) => r.organizationId))];
    // Normally held already; a certificate signed in another organization since the locks were
    // taken is revoked too, and its KRL must not be rebuilt without that organization's lock.
    await certificatesRepository.lockOrganizations(tx, orgIds);
    for (const orgId of orgIds) await this.rebuildKrl(tx, orgId, now);
  }

  /** Rebuilds the organization's KRL inside the revoking transaction: one section per CA key. */
  private async rebuildKrl(tx: Executor, orgId: string, now: Date): Promise<void> {
    const revoked = await certificatesRepository.revokedForKrl(tx, orgId, now);
    const byCaKey = new Map<string, bigint[]>();
    for (const r of revoked) byCaKey.set(r.caPublicKey, [...(byCaKey.get(r.caPublicKey) ?? []), r.serial]);
    const version = (await certificatesRepository.currentKrlVersion(tx, orgId)) + 1n;
    const krl = buildKrl(
      [...byCaKey].map(([line, serials]) => ({ caKey: Buffer.from(line.split(" ")[1]!, "base64"), serials })),
      { version, generatedAt: now, comment: `keyward org ${orgId}` },
    );
    await certificatesRepository.saveKrl(tx, orgId, krl, now);
  }

  private async visible(ctx: RequestContext, certId: string): Promise<CertRow> {
    const actor = requireUser(ctx);
    const cert = await certificatesRepository.find(this.db, parseId(certId, CaErrors.certNotFound));
    if (!cert) throw CaErrors.certNotFound();
    if (cert.userId === actor.userId) return cert;
    const membership = await getActiveMembership(this.db, actor.userId, cert.organizationId);
    // Certificates of other people are visible only to admins of their organization.
    if (!membership || !can(membership.role, "ca.manage")) throw CaErrors.certNotFound();
    return cert;
  }

  private page(rows: CertRow[], total: number, page: number, perPage: number): Page<CertificateView> {
    const now = this.clock.now();
    return toPage(rows.map((c) => toCertificateView(c, now)), total, page, perPage);
  }
}
