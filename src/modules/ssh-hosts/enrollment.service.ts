import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { randomHex, randomToken, sha256Hex } from "../../lib/crypto/index.js";
import { isAppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parsePublicKey, SshKeyError, type ParsedPublicKey } from "../../lib/ssh/index.js";
import { parseId, parseInput } from "../../lib/validation.js";
import type { HostKeyEntry } from "../../../schema/index.js";
import { can, getActiveMembership, requireOrgAccess, requireStoredRole } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { memberStanding, organizationExists } from "../orgs/index.js";
import { userAccounts } from "../users/index.js";
import { hostsRepository, type EnrollmentTokenRow, type HostRow } from "./hosts.repository.js";
import { hostCredentials, LIST_LIMIT, saveCertificates, tokenStatus, type EnrollmentTokenView, type HostCredentials, type HostsCa, type HostsSettings } from "./hosts.views.js";
import { HostErrors } from "./ssh-hosts.errors.js";
import { createEnrollmentTokenSchema, enrollHostSchema, type CreateEnrollmentTokenInput, type EnrollHostInput } from "./ssh-hosts.schemas.js";

/** Recognisable by secret scanners: a host enrollment token. */
export const ENROLLMENT_TOKEN_PREFIX = "kwh_";
const isPattern = (n: string) => /[*?]/.test(n);

/**
 * Server enrollment. An admin creates a one-time token for a host's names; the host spends it to
 * have its host keys certified by the organization's host CA.
 */
export class HostEnrollmentService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly ca: HostsCa,
    private readonly settings: HostsSettings,
  ) {}

  /** A token for one host; the returned `token` is the only time the secret is ever seen. */
  async createToken(ctx: RequestContext, orgId: string, input: CreateEnrollmentTokenInput): Promise<EnrollmentTokenView & { token: string }> {
    const access = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    // An enrolled host renews its certificates for good: not on a role held through a time-bounded grant.
    requireStoredRole(access, "ca.manage", "create host enrollment tokens");
    const { orgId: id, actor } = access;
    const data = parseInput(createEnrollmentTokenSchema, input);
    const names = [...new Set(data.names.map((n) => n.toLowerCase()))];
    const patterns = names.filter(isPattern);
    if (patterns.length > 0 && !this.settings.hostPrincipalPatterns) throw HostErrors.patternNotAllowed(patterns);
    const prefix = `${ENROLLMENT_TOKEN_PREFIX}${randomHex(4)}`;
    const token = `${prefix}_${randomToken(32)}`;
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + data.lifetimeMinutes * 60_000);
    return this.db.transaction(async (tx) => {
      const row = await hostsRepository.insertToken(tx, { organizationId: id, tokenHash: sha256Hex(token), prefix, names, description: data.description, expiresAt, createdBy: actor.userId, now });
      await this.audit.record(tx, ctx, AuditAction.hostEnrollmentTokenCreated, {
        organizationId: id,
        resourceType: "host_enrollment_token",
        resourceId: row.id,
        metadata: { prefix, names, expires_at: expiresAt.toISOString() },
      });
      return { ...row, status: "active" as const, token };
    });
  }

  async listTokens(ctx: RequestContext, orgId: string): Promise<EnrollmentTokenView[]> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const now = this.clock.now();
    return (await hostsRepository.listTokens(this.db, id, LIST_LIMIT)).map((t) => ({ ...t, status: tokenStatus(t, now) }));
  }

  async revokeToken(ctx: RequestContext, orgId: string, tokenId: string): Promise<EnrollmentTokenView> {
    const { orgId: id, actor } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const tid = parseId(tokenId, HostErrors.tokenNotFound);
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const row = await hostsRepository.revokeToken(tx, id, tid, actor.userId, now);
      if (!row) throw (await hostsRepository.findToken(tx, id, tid)) ? HostErrors.tokenClosed() : HostErrors.tokenNotFound();
      await this.audit.record(tx, ctx, AuditAction.hostEnrollmentTokenRevoked, { organizationId: id, resourceType: "host_enrollment_token", resourceId: row.id, metadata: { prefix: row.prefix } });
      return { ...row, status: "revoked" as const };
    });
  }

  /**
   * A host spends its token: the token is marked used, the host recorded and its keys certified in
   * one transaction, so a refusal anywhere (a name the token does not allow, no host CA) leaves the
   * token unspent and nothing issued; of concurrent uses exactly one enrolls.
   */
  async enroll(ctx: RequestContext, input: EnrollHostInput): Promise<HostCredentials> {
    const req = parseInput(enrollHostSchema, input);
    const keys = this.hostKeys(req.hostKeys);
    const tokenHash = sha256Hex(req.token);
    const now = this.clock.now();
    try {
      const { host, certs, replaced } = await this.db.transaction(async (tx) => {
        // The organization's lock first (offboarding's order: organization, then its tokens), which
        // also serializes enrollments of one organization, so two reinstalls never both stay.
        const seen = await hostsRepository.findTokenByHash(tx, tokenHash);
        if (seen && !(await memberStanding.lockOrganization(tx, seen.organizationId))) throw HostErrors.tokenInvalid();
        const token = await hostsRepository.spendToken(tx, tokenHash, now);
        if (!token) throw await this.whyRefused(tx, tokenHash, now);
        if (req.organizationId && req.organizationId.toLowerCase() !== token.organizationId) throw HostErrors.tokenForeign();
        if (!(await organizationExists(tx, token.organizationId))) throw HostErrors.tokenInvalid();
        // A token is worth no more than its creator: once they no longer administer the organization
        // (offboarded, removed, demoted, left, account suspended or deleted) it enrolls nothing.
        if (!(await this.creatorStillAdmin(tx, token))) throw HostErrors.tokenCreatorGone();
        const wanted = req.names ? [...new Set(req.names.map((n) => n.toLowerCase()))] : token.names;
        const refused = wanted.filter((n) => !token.names.includes(n));
        if (refused.length > 0) throw HostErrors.nameNotAllowed(refused);
        // A live host enrolled under the same name is this one reinstalled: the new enrollment
        // replaces it (a stale duplicate would keep valid certificates for keys no longer in use).
        const previous = await hostsRepository.liveHostsNamed(tx, token.organizationId, wanted[0]!);
        const hostKeys: HostKeyEntry[] = keys.map((k) => ({ publicKey: k.line, fingerprint: k.fingerprint, keyType: k.algorithm }));
        const inserted = await hostsRepository.insertHost(tx, { organizationId: token.organizationId, name: wanted[0]!, names: wanted, hostKeys, enrollmentTokenId: token.id, enrolledBy: token.createdBy, now });
        await hostsRepository.setTokenHost(tx, token.id, inserted.id);
        // The replaced hosts' certificates are revoked before any is issued (the KRL is by serial, so a reinstall that kept its keys keeps its new certificates).
        for (const old of previous) await this.replace(tx, ctx, old, inserted.id, now);
        const issued = await this.ca.signing.issueForHost(tx, ctx, { organizationId: token.organizationId, hostId: inserted.id, names: wanted, hostKeys: hostKeys.map((k) => k.publicKey), signerId: null });
        const host = await saveCertificates(tx, inserted.id, issued, null);
        await this.audit.record(tx, ctx, AuditAction.hostEnrolled, {
          organizationId: token.organizationId,
          userId: token.createdBy,
          resourceType: "ssh_host",
          resourceId: host.id,
          metadata: { names: wanted, token_id: token.id, token_prefix: token.prefix, fingerprints: hostKeys.map((k) => k.fingerprint), serials: issued.map((c) => c.serial), replaced_hosts: previous.map((h) => h.id) },
        });
        return { host, certs: issued, replaced: previous.map((h) => h.id) };
      });
      return await hostCredentials(this.db, this.ca, this.clock, host, certs, true, replaced);
    } catch (e) {
      await this.recordEnrollFailure(ctx, tokenHash, e);
      throw e;
    }
  }

  /**
   * Offboarding (suspend, remove, SCIM) revokes the tokens a person created, in its transaction and
   * on its receipt; the ids revoked, each audited.
   */
  async revokeCreatedBy(tx: Executor, ctx: RequestContext, orgId: string, userId: string, reason: string): Promise<string[]> {
    const rows = await hostsRepository.revokeCreatedBy(tx, orgId, userId, this.clock.now());
    for (const row of rows) {
      await this.audit.record(tx, ctx, AuditAction.hostEnrollmentTokenRevoked, { organizationId: orgId, resourceType: "host_enrollment_token", resourceId: row.id, metadata: { prefix: row.prefix, reason } });
    }
    return rows.map((r) => r.id);
  }

  /** Retires a host a reinstall replaces: it renews no more, and its certificates go into the KRL. */
  private async replace(tx: Executor, ctx: RequestContext, old: HostRow, by: string, now: Date): Promise<void> {
    const retired = await hostsRepository.retire(tx, old.organizationId, old.id, null, now);
    if (!retired) return;
    const reason = `Host ${old.name} replaced by a new enrollment (host ${by})`;
    const revoked = await this.ca.certificates.revokeHostKeys(tx, ctx, { organizationId: old.organizationId, fingerprints: old.hostKeys.map((k) => k.fingerprint), reason });
    await this.audit.record(tx, ctx, AuditAction.hostReplaced, {
      organizationId: old.organizationId,
      userId: null,
      resourceType: "ssh_host",
      resourceId: old.id,
      metadata: { name: old.name, names: old.names, replaced_by: by, reason, revoked_serials: revoked.map((r) => r.serial) },
    });
  }

  /** The token's creator is a live account holding ca.manage in the token's organization now. */
  private async creatorStillAdmin(tx: Executor, token: EnrollmentTokenRow): Promise<boolean> {
    const membership = await getActiveMembership(tx, token.createdBy, token.organizationId);
    if (!membership || !can(membership.role, "ca.manage")) return false;
    const account = await userAccounts.find(tx, token.createdBy);
    return account !== undefined && account.status === "active";
  }

  private hostKeys(lines: string[]): ParsedPublicKey[] {
    const keys = lines.map((line) => {
      try {
        return parsePublicKey(line);
      } catch (e) {
        if (e instanceof SshKeyError) throw HostErrors.notHostKey(e.message);
        throw e;
      }
    });
    if (new Set(keys.map((k) => k.fingerprint)).size !== keys.length) throw HostErrors.duplicateKeys();
    const sk = keys.find((k) => k.algorithm.startsWith("sk-"));
    if (sk) throw HostErrors.notHostKey(sk.algorithm);
    return keys;
  }

  /** Why a token could not be spent (read after the spend found nothing). */
  private async whyRefused(tx: Executor, tokenHash: string, now: Date): Promise<Error> {
    const token = await hostsRepository.findTokenByHash(tx, tokenHash);
    if (!token) return HostErrors.tokenInvalid();
    const status = tokenStatus(token, now);
    return status === "revoked" ? HostErrors.tokenRevoked() : status === "used" ? HostErrors.tokenUsed() : HostErrors.tokenExpired();
  }

  /** A refused enrollment with a token that exists is audited in its organization (an unknown token names none). */
  private async recordEnrollFailure(ctx: RequestContext, tokenHash: string, error: unknown): Promise<void> {
    if (!isAppError(error) || error.status >= 500) return;
    const token = await hostsRepository.findTokenByHash(this.db, tokenHash);
    if (!token) return;
    if (error.code === "ENROLLMENT_TOKEN_CREATOR_GONE") {
      // Closed for good, so the admins' list says "revoked" rather than "active" (the refusal below says why).
      const revoked = await hostsRepository.revokeToken(this.db, token.organizationId, token.id, null, this.clock.now());
      if (revoked) await this.audit.record(this.db, ctx, AuditAction.hostEnrollmentTokenRevoked, { organizationId: token.organizationId, userId: null, resourceType: "host_enrollment_token", resourceId: token.id, metadata: { prefix: token.prefix, reason: "its creator no longer administers the organization" } });
    }
    await this.audit.record(this.db, ctx, AuditAction.hostEnrollFailed, {
      organizationId: token.organizationId,
      userId: null,
      resourceType: "host_enrollment_token",
      resourceId: token.id,
      success: false,
      errorMessage: `${error.code}: ${error.message}`,
    });
  }
}
