import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { hmacSha256Hex, randomHex, randomToken, safeEqual, sha256Hex } from "../../lib/crypto/index.js";
import { isAppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parsePublicKey, SshKeyError, verifySshSignature, type ParsedPublicKey } from "../../lib/ssh/index.js";
import { parseId, parseInput } from "../../lib/validation.js";
import type { HostCertEntry, HostKeyEntry } from "../../../schema/index.js";
import { requireOrgAccess } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { organizationExists } from "../orgs/index.js";
import type { HostCertificateIssued, SshCaModule } from "../ssh-ca/index.js";
import { hostsRepository, type EnrollmentTokenRow, type HostRow } from "./hosts.repository.js";
import { HostErrors } from "./ssh-hosts.errors.js";
import {
  createEnrollmentTokenSchema,
  enrollHostSchema,
  renewChallengeSchema,
  renewHostSchema,
  retireHostSchema,
  type CreateEnrollmentTokenInput,
  type EnrollHostInput,
  type RenewChallengeInput,
  type RenewHostInput,
  type RetireHostInput,
} from "./ssh-hosts.schemas.js";

/** Recognisable by secret scanners: a host enrollment token. */
export const ENROLLMENT_TOKEN_PREFIX = "kwh_";
/** The SSHSIG namespace a host signs its renewal challenge in (never "file": a signature for one purpose is no proof for another). */
export const RENEW_NAMESPACE = "keyward-host-renew";
const CHALLENGE_TTL_MS = 5 * 60_000;
const LIST_LIMIT = 500;

export interface HostsSettings {
  /** Host certificates may name patterns (`*`, `?`): SSH_HOST_PRINCIPAL_PATTERNS. */
  hostPrincipalPatterns: boolean;
  /** Keys the stateless renewal challenges (derived from the encryption key). */
  challengeKey: Buffer;
}

/** What the hosts module needs of the SSH CA module (the container wires it). */
export interface HostsCa {
  signing: Pick<SshCaModule["signing"], "issueForHost">;
  certificates: Pick<SshCaModule["certificates"], "revokeHostKeys">;
  cas: Pick<SshCaModule["cas"], "trustedUserCaKeysFor">;
}

export type TokenStatus = "active" | "used" | "expired" | "revoked";
export interface EnrollmentTokenView extends EnrollmentTokenRow {
  status: TokenStatus;
}
export type HostView = HostRow & { status: "active" | "expired" | "retired" };

/** What a host writes: its certificates, what its sshd trusts and where the KRL is. */
export interface HostCredentials {
  host: HostView;
  renewed: boolean;
  renewAfter: Date | null;
  certificates: Array<{ fingerprint: string; keyType: string; publicKey: string; serial: string; certificate: string; validBefore: Date }>;
  trustedUserCaKeys: string;
  krlPath: string;
}

const tokenStatus = (t: EnrollmentTokenRow, now: Date): TokenStatus => (t.revokedAt ? "revoked" : t.usedAt ? "used" : t.expiresAt <= now ? "expired" : "active");
const hostView = (h: HostRow, now: Date): HostView => ({ ...h, status: h.retiredAt ? "retired" : h.certValidBefore && h.certValidBefore > now ? "active" : "expired" });
const isPattern = (n: string) => /[*?]/.test(n);
/**
 * When a renewal is due: the last third of the certificates' lifetime, counted from when they were
 * issued (their validity starts earlier, SSH_CERT_BACKDATE_SECONDS, for clock skew).
 */
function renewAfter(h: HostRow): Date | null {
  if (!h.certValidBefore) return null;
  const issued = (h.lastRenewedAt ?? h.enrolledAt).getTime();
  return new Date(h.certValidBefore.getTime() - (h.certValidBefore.getTime() - issued) / 3);
}

/**
 * Server enrollment and renewal. An admin creates a one-time token for a host's names; the host
 * spends it to have its host keys certified by the organization's host CA; afterwards it renews
 * by signing a challenge with one of those host keys (no stored credential). Admins list and
 * retire hosts (retiring revokes their certificates through the KRL).
 */
export class HostsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly ca: HostsCa,
    private readonly settings: HostsSettings,
  ) {}

  /** A token for one host; the returned `token` is the only time the secret is ever seen. */
  async createToken(ctx: RequestContext, orgId: string, input: CreateEnrollmentTokenInput): Promise<EnrollmentTokenView & { token: string }> {
    const { orgId: id, actor } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
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
      const { host, certs } = await this.db.transaction(async (tx) => {
        const token = await hostsRepository.spendToken(tx, tokenHash, now);
        if (!token) throw await this.whyRefused(tx, tokenHash, now);
        if (req.organizationId && req.organizationId.toLowerCase() !== token.organizationId) throw HostErrors.tokenForeign();
        if (!(await organizationExists(tx, token.organizationId))) throw HostErrors.tokenInvalid();
        const wanted = req.names ? [...new Set(req.names.map((n) => n.toLowerCase()))] : token.names;
        const refused = wanted.filter((n) => !token.names.includes(n));
        if (refused.length > 0) throw HostErrors.nameNotAllowed(refused);
        const hostKeys: HostKeyEntry[] = keys.map((k) => ({ publicKey: k.line, fingerprint: k.fingerprint, keyType: k.algorithm }));
        const inserted = await hostsRepository.insertHost(tx, { organizationId: token.organizationId, name: wanted[0]!, names: wanted, hostKeys, enrollmentTokenId: token.id, enrolledBy: token.createdBy, now });
        await hostsRepository.setTokenHost(tx, token.id, inserted.id);
        const issued = await this.ca.signing.issueForHost(tx, ctx, { organizationId: token.organizationId, hostId: inserted.id, names: wanted, hostKeys: hostKeys.map((k) => k.publicKey), signerId: null });
        const host = await this.saveCertificates(tx, inserted.id, issued, null);
        await this.audit.record(tx, ctx, AuditAction.hostEnrolled, {
          organizationId: token.organizationId,
          userId: token.createdBy,
          resourceType: "ssh_host",
          resourceId: host.id,
          metadata: { names: wanted, token_id: token.id, token_prefix: token.prefix, fingerprints: hostKeys.map((k) => k.fingerprint), serials: issued.map((c) => c.serial) },
        });
        return { host, certs: issued };
      });
      return await this.credentials(host, certs, true);
    } catch (e) {
      await this.recordEnrollFailure(ctx, tokenHash, e);
      throw e;
    }
  }

  /** A fresh challenge for a host to sign with one of its host keys (stateless: keyed, short-lived). */
  async renewChallenge(_ctx: RequestContext, input: RenewChallengeInput): Promise<{ challenge: string; namespace: string; expiresAt: Date; hostKeys: string[] }> {
    const { hostId } = parseInput(renewChallengeSchema, input);
    const host = await hostsRepository.findHost(this.db, hostId.toLowerCase());
    if (!host) throw HostErrors.hostNotFound();
    if (host.retiredAt) throw HostErrors.hostRetired();
    const expiresAt = new Date(this.clock.now().getTime() + CHALLENGE_TTL_MS);
    const body = `${host.id}.${expiresAt.getTime()}.${randomHex(16)}`;
    return { challenge: `kwhr1.${body}.${hmacSha256Hex(this.settings.challengeKey, body)}`, namespace: RENEW_NAMESPACE, expiresAt, hostKeys: host.hostKeys.map((k) => k.publicKey) };
  }

  /**
   * Renewal: the signature of a fresh challenge by one of the host's enrolled keys proves the
   * caller holds it. Inside the renewal window (or with `force`) the keys are certified again;
   * either way the answer carries what the host trusts now, so it refreshes its files.
   */
  async renew(ctx: RequestContext, input: RenewHostInput): Promise<HostCredentials> {
    const req = parseInput(renewHostSchema, input);
    const hostId = req.hostId.toLowerCase();
    const now = this.clock.now();
    const expiresAt = this.checkChallenge(req.challenge, hostId, now);
    const host = await hostsRepository.findHost(this.db, hostId);
    if (!host) throw HostErrors.hostNotFound();
    try {
      if (host.retiredAt) throw HostErrors.hostRetired();
      const signer = host.hostKeys.find((k) => [`${req.challenge}\n`, req.challenge].some((m) => verifySshSignature(req.signature, Buffer.from(m), parsePublicKey(k.publicKey).blob, RENEW_NAMESPACE)));
      if (!signer) throw HostErrors.signatureInvalid();
      const due = renewAfter(host);
      const renewing = req.force === true || !due || due <= now;
      const result = await this.db.transaction(async (tx) => {
        const locked = await hostsRepository.useChallenge(tx, host.id, { challengeHash: sha256Hex(req.challenge), expiresAt });
        if (!locked) throw HostErrors.challengeInvalid();
        // A deleted organization's hosts renew nothing (its certificates were revoked with it).
        if (!(await organizationExists(tx, locked.organizationId))) throw HostErrors.hostNotFound();
        if (!renewing) return { host: locked, certs: null };
        const issued = await this.ca.signing.issueForHost(tx, ctx, { organizationId: locked.organizationId, hostId: locked.id, names: locked.names, hostKeys: locked.hostKeys.map((k) => k.publicKey), signerId: null });
        const saved = await this.saveCertificates(tx, locked.id, issued, now);
        await this.audit.record(tx, ctx, AuditAction.hostRenewed, {
          organizationId: locked.organizationId,
          userId: null,
          resourceType: "ssh_host",
          resourceId: locked.id,
          metadata: { proof_key: signer.fingerprint, forced: req.force === true, serials: issued.map((c) => c.serial), previous_serials: locked.certificates.map((c) => c.serial) },
        });
        return { host: saved, certs: issued };
      });
      return await this.credentials(result.host, result.certs, result.certs !== null);
    } catch (e) {
      if (isAppError(e) && e.status < 500) {
        await this.audit.record(this.db, ctx, AuditAction.hostRenewFailed, { organizationId: host.organizationId, userId: null, resourceType: "ssh_host", resourceId: host.id, success: false, errorMessage: `${e.code}: ${e.message}` });
      }
      throw e;
    }
  }

  async list(ctx: RequestContext, orgId: string, options: { includeRetired?: boolean } = {}): Promise<HostView[]> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const now = this.clock.now();
    return (await hostsRepository.listHosts(this.db, id, options.includeRetired === true, LIST_LIMIT)).map((h) => hostView(h, now));
  }

  /** Retires a host: it can no longer renew, and every still valid host certificate for its keys is revoked (the KRL with it). */
  async retire(ctx: RequestContext, orgId: string, hostId: string, input: RetireHostInput = {}): Promise<HostView & { revokedSerials: string[] }> {
    const { orgId: id, actor } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const hid = parseId(hostId, HostErrors.hostNotFound);
    const { reason } = parseInput(retireHostSchema, input ?? {});
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const host = await hostsRepository.retire(tx, id, hid, actor.userId, now);
      if (!host) throw (await hostsRepository.findHostInOrg(tx, id, hid)) ? HostErrors.alreadyRetired() : HostErrors.hostNotFound();
      const why = reason || `Host ${host.name} retired`;
      const revoked = await this.ca.certificates.revokeHostKeys(tx, ctx, { organizationId: id, fingerprints: host.hostKeys.map((k) => k.fingerprint), reason: why });
      await this.audit.record(tx, ctx, AuditAction.hostRetired, { organizationId: id, resourceType: "ssh_host", resourceId: host.id, metadata: { name: host.name, reason: why, revoked_serials: revoked.map((r) => r.serial) } });
      return { ...hostView(host, now), revokedSerials: revoked.map((r) => r.serial) };
    });
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
    await this.audit.record(this.db, ctx, AuditAction.hostEnrollFailed, {
      organizationId: token.organizationId,
      userId: null,
      resourceType: "host_enrollment_token",
      resourceId: token.id,
      success: false,
      errorMessage: `${error.code}: ${error.message}`,
    });
  }

  /** The challenge is ours, for this host, unexpired; its expiry (later challenges expire later). */
  private checkChallenge(challenge: string, hostId: string, now: Date): Date {
    const m = /^kwhr1\.([0-9a-f-]{36})\.(\d{1,15})\.([0-9a-f]{32})\.([0-9a-f]{64})$/.exec(challenge);
    if (!m) throw HostErrors.challengeInvalid();
    const [, id, expires, nonce, mac] = m;
    if (!safeEqual(mac!, hmacSha256Hex(this.settings.challengeKey, `${id}.${expires}.${nonce}`))) throw HostErrors.challengeInvalid();
    if (id !== hostId || Number(expires) <= now.getTime()) throw HostErrors.challengeInvalid();
    return new Date(Number(expires));
  }

  private async saveCertificates(tx: Executor, hostId: string, issued: HostCertificateIssued[], renewedAt: Date | null): Promise<HostRow> {
    const certificates: HostCertEntry[] = issued.map((c) => ({ fingerprint: c.fingerprint, certificateId: c.certificateId, serial: c.serial, validBefore: c.validBefore.toISOString(), certificate: c.certificate }));
    return hostsRepository.setCertificates(tx, hostId, { certificates, validAfter: issued[0]!.validAfter, validBefore: issued[0]!.validBefore, renewedAt });
  }

  private async credentials(host: HostRow, issued: HostCertificateIssued[] | null, renewed: boolean): Promise<HostCredentials> {
    const keys = await this.ca.cas.trustedUserCaKeysFor(host.organizationId);
    const byFingerprint = new Map(host.hostKeys.map((k) => [k.fingerprint, k]));
    const certificates = issued
      ? issued.map((c) => ({ fingerprint: c.fingerprint, keyType: c.keyType, publicKey: c.publicKey, serial: c.serial, certificate: c.certificate, validBefore: c.validBefore }))
      : host.certificates.map((c) => {
          const key = byFingerprint.get(c.fingerprint);
          return { fingerprint: c.fingerprint, keyType: key?.keyType ?? "", publicKey: key?.publicKey ?? "", serial: c.serial, certificate: c.certificate, validBefore: new Date(c.validBefore) };
        });
    return {
      host: hostView(host, this.clock.now()),
      renewed,
      renewAfter: renewAfter(host),
      certificates,
      trustedUserCaKeys: keys.join("\n") + (keys.length ? "\n" : ""),
      krlPath: `/api/v1/organizations/${host.organizationId}/ssh/krl`,
    };
  }
}

