import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { hmacSha256Hex, randomHex, safeEqual, sha256Hex } from "../../lib/crypto/index.js";
import { isAppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parsePublicKey, verifySshSignature } from "../../lib/ssh/index.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { requireOrgAccess } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { organizationExists } from "../orgs/index.js";
import { hostsRepository } from "./hosts.repository.js";
import { hostCredentials, hostView, LIST_LIMIT, renewAfter, saveCertificates, type HostCredentials, type HostsCa, type HostsSettings, type HostView } from "./hosts.views.js";
import { HostErrors } from "./ssh-hosts.errors.js";
import { renewChallengeSchema, renewHostSchema, retireHostSchema, type RenewChallengeInput, type RenewHostInput, type RetireHostInput } from "./ssh-hosts.schemas.js";

/** The SSHSIG namespace a host signs its renewal challenge in (never "file": a signature for one purpose is no proof for another). */
export const RENEW_NAMESPACE = "keyward-host-renew";
const CHALLENGE_TTL_MS = 5 * 60_000;

/**
 * Enrolled hosts after enrollment: they renew by signing a challenge with one of their host keys
 * (no stored credential); admins list and retire them (retiring revokes their certificates
 * through the KRL).
 */
export class HostRenewalService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly ca: HostsCa,
    private readonly settings: HostsSettings,
  ) {}

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
        const saved = await saveCertificates(tx, locked.id, issued, now);
        await this.audit.record(tx, ctx, AuditAction.hostRenewed, {
          organizationId: locked.organizationId,
          userId: null,
          resourceType: "ssh_host",
          resourceId: locked.id,
          metadata: { proof_key: signer.fingerprint, forced: req.force === true, serials: issued.map((c) => c.serial), previous_serials: locked.certificates.map((c) => c.serial) },
        });
        return { host: saved, certs: issued };
      });
      return await hostCredentials(this.db, this.ca, this.clock, result.host, result.certs, result.certs !== null);
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

  /** The challenge is ours, for this host, unexpired; its expiry (later challenges expire later). */
  private checkChallenge(challenge: string, hostId: string, now: Date): Date {
    const m = /^kwhr1\.([0-9a-f-]{36})\.(\d{1,15})\.([0-9a-f]{32})\.([0-9a-f]{64})$/.exec(challenge);
    if (!m) throw HostErrors.challengeInvalid();
    const [, id, expires, nonce, mac] = m;
    if (!safeEqual(mac!, hmacSha256Hex(this.settings.challengeKey, `${id}.${expires}.${nonce}`))) throw HostErrors.challengeInvalid();
    if (id !== hostId || Number(expires) <= now.getTime()) throw HostErrors.challengeInvalid();
    return new Date(Number(expires));
  }
}
