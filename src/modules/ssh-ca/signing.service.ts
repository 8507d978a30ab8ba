import type { KeyObject } from "node:crypto";
import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import type { SecretBox } from "../../lib/crypto/index.js";
import { isAppError } from "../../lib/errors.js";
import type { RequestContext, UserActor } from "../../lib/request-context.js";
import { loadPrivateKey, parseCertificate, parsePublicKey, signCertificate, SshKeyError, type ParsedPublicKey } from "../../lib/ssh/index.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";
import { requireUser } from "../auth/guards.js";
import { directoryRepository } from "../orgs/directory.repository.js";
import { isAdminRole } from "../orgs/permissions.js";
import { SshKeyErrors } from "../ssh-keys/ssh-keys.errors.js";
import { sshKeysRepository, type SshKeyRow } from "../ssh-keys/ssh-keys.repository.js";
import { readCaPrivateKeyPrivileged } from "./ca-private-key.repository.js";
import { caKeyContext } from "./cas.service.js";
import { hostAuthority, userAuthority, type Authority } from "./authority.js";
import { chooseOrganization } from "./choose-organization.js";
import { certificatesRepository, type CertRow } from "./certificates.repository.js";
import { toCertificateView, type CertificateView } from "./certificates.views.js";
import { DEFAULT_CERT_POLICY, mergePolicies, resolveLifetimeHours, resolvePrincipals, type EffectivePolicy, type StoredPolicy } from "./policy.js";
import { CaErrors } from "./ssh-ca.errors.js";
import { signHostSchema, signUserSchema } from "./ssh-ca.schemas.js";

export interface SigningConfig {
  requireVerifiedKeys: boolean;
  backdateSeconds: number;
}

export interface SignedCertificate extends CertificateView {
  certId: string;
  organizationName: string;
}

const KEY_CACHE_MAX = 64;

/** A registered key, checked again at signing: one stored before today's checks may be unsound. */
function storedKey(line: string): ParsedPublicKey {
  try {
    return parsePublicKey(line);
  } catch (e) {
    if (e instanceof SshKeyError) throw SshKeyErrors.invalid("SSH_KEY_ERROR", `This registered key cannot be certified: ${e.message}. Register a new key.`);
    throw e;
  }
}

/**
 * Issues SSH certificates. Each request runs the same ordered pipeline (smallstep's): validate the
 * key → choose the organization and its CA → resolve the department policy → apply modifiers
 * (validity, key id, extensions, principals) → check them against the policy → sign → verify the
 * result → persist certificate, serial and audit entries in one transaction.
 */
export class SigningService {
  // Unsealed CA keys, by CA key id: a PEM parse and an AES-GCM open per signature add up.
  private readonly keyCache = new Map<string, KeyObject>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly box: SecretBox,
    private readonly config: SigningConfig,
  ) {}

  async signUserCertificate(ctx: RequestContext, input: unknown): Promise<SignedCertificate> {
    const actor = requireUser(ctx);
    const req = parseInput(signUserSchema, input);
    // 1–2. The key (the caller's own, verified when verification is required), and the
    // organization with its active user CA: independent reads, so they run together. A key
    // error wins over an organization error, as when they ran one after the other.
    const [keyRead, authorityRead] = await Promise.allSettled([this.resolveKey(actor, req.keyId ?? req.certId), userAuthority(this.db, ctx, req.orgId)]);
    if (keyRead.status === "rejected") throw keyRead.reason;
    if (authorityRead.status === "rejected") throw authorityRead.reason;
    const [key, authority] = [keyRead.value, authorityRead.value];
    try {
      // 3. The department policy, merged over the caller's departments in that organization, and
      // 4–5. the modifiers, each checked against the policy.
      const admin = isAdminRole(authority.membership.role);
      const [policy, allowed] = await Promise.all([this.policyFor(actor.userId, authority.orgId, admin), this.allowedPrincipals(actor.userId, authority.orgId, admin)]);
      const principals = resolvePrincipals(allowed, req.principals);
      const hours = resolveLifetimeHours(policy, authority.ca.maxValidityHours, req.expiryHours);
      const subject = storedKey(key.publicKey);
      return await this.issue(ctx, authority, {
        subject,
        sshKeyId: key.id,
        userId: actor.userId,
        type: "user",
        keyId: `${actor.email} [org:${authority.orgSlug}]`,
        principals,
        hours,
        extensions: policy.extensions,
      });
    } catch (e) {
      await this.recordFailure(ctx, authority.orgId, actor.userId, e);
      throw e;
    }
  }

  /** Host certificates: an organization admin certifies a server's host key for its names. */
  async signHostCertificate(ctx: RequestContext, input: unknown): Promise<SignedCertificate> {
    const actor = requireUser(ctx);
    const req = parseInput(signHostSchema, input);
    let subject: ParsedPublicKey;
    try {
      subject = parsePublicKey(req.hostPublicKey);
    } catch (e) {
      if (e instanceof SshKeyError) throw SshKeyErrors.invalid("WRONG_KEY_MATERIAL", e.message);
      throw e;
    }
    const authority = await hostAuthority(this.db, ctx, req.orgId, req.caId);
    const hours = Math.min(req.validityHours ?? authority.ca.defaultValidityHours, authority.ca.maxValidityHours);
    if (req.validityHours && req.validityHours > authority.ca.maxValidityHours) throw CaErrors.expiryTooLong(authority.ca.maxValidityHours);
    return this.issue(ctx, authority, {
      subject,
      sshKeyId: null,
      userId: actor.userId,
      type: "host",
      keyId: `host:${req.principals[0]} [signed-by:${actor.email}]`,
      principals: [...new Set(req.principals)],
      hours,
      extensions: [],
    });
  }

  /** The policy a member would sign under in an organization (GET /ssh/dept-cert-policy). */
  async effectivePolicy(ctx: RequestContext, orgId?: string): Promise<EffectivePolicy & { organizationId: string }> {
    const actor = requireUser(ctx);
    // The policy does not depend on a CA: any organization the caller may sign in counts.
    const membership = await chooseOrganization(this.db, ctx, { orgId, capability: "ssh.sign", none: CaErrors.noSigningOrganization });
    return { organizationId: membership.organizationId, ...(await this.policyFor(actor.userId, membership.organizationId, isAdminRole(membership.role))) };
  }

  private async resolveKey(actor: UserActor, keyId: string | undefined): Promise<SshKeyRow> {
    if (!keyId) {
      // No key named: the newest verified key (the original API's behaviour).
      const key = (await sshKeysRepository.listForUser(this.db, actor.userId)).find((k) => k.verifiedAt);
      if (!key) throw CaErrors.noVerifiedKeys();
      return key;
    }
    const key = await sshKeysRepository.findOwned(this.db, actor.userId, keyId);
    // Another user's key is reported like a missing one.
    if (!key) throw SshKeyErrors.notFound();
    if (this.config.requireVerifiedKeys && !key.verifiedAt) throw CaErrors.keyNotVerified();
    return key;
  }

  private async policyFor(userId: string, orgId: string, admin: boolean): Promise<EffectivePolicy> {
    // A department without a stored policy has the default one: it counts in the merge.
    const stored: StoredPolicy[] = (await directoryRepository.userDepartmentPolicies(this.db, userId, orgId)).map((p) => p ?? DEFAULT_CERT_POLICY);
    return mergePolicies(stored, admin);
  }

  /** Members: direct principals and those of their departments. Admins and owners: any of the org. */
  private async allowedPrincipals(userId: string, orgId: string, admin: boolean): Promise<string[]> {
    if (admin) return (await directoryRepository.listPrincipals(this.db, orgId)).map((p) => p.name);
    const [direct, viaDept] = await Promise.all([
      directoryRepository.userDirectPrincipals(this.db, userId, [orgId]),
      directoryRepository.userDepartmentPrincipals(this.db, userId, [orgId]),
    ]);
    return [...new Set([...direct, ...viaDept].map((p) => p.name))];
  }

  private async issue(
    ctx: RequestContext,
    authority: Authority,
    r: { subject: ParsedPublicKey; sshKeyId: string | null; userId: string; type: "user" | "host"; keyId: string; principals: string[]; hours: number; extensions: string[] },
  ): Promise<SignedCertificate> {
    const now = this.clock.now();
    const validAfter = new Date(now.getTime() - this.config.backdateSeconds * 1000);
    const validBefore = new Date(now.getTime() + r.hours * 3600_000);
    const caPrivate = await this.caPrivateKeyPrivileged(authority.caKey.id);
    const caBlob = Buffer.from(authority.caKey.publicKey.split(" ")[1]!, "base64");

    const row = await this.db.transaction(async (tx) => {
      const serial = await certificatesRepository.nextSerial(tx);
      // 6. Sign.
      const certificate = signCertificate(caPrivate, caBlob, {
        publicKey: r.subject.blob,
        serial,
        type: r.type,
        keyId: r.keyId,
        principals: r.principals,
        validAfter,
        validBefore,
        extensions: r.extensions,
      });
      // 7. Verify what was produced before anyone sees it.
      const check = parseCertificate(certificate);
      if (!check.signatureValid || check.serial !== serial || !check.caKey.equals(caBlob)) throw CaErrors.signingFailed();
      // 8. Persist the certificate and its audit entries together.
      const cert = await certificatesRepository.insert(tx, {
        organizationId: authority.orgId,
        caId: authority.ca.id,
        caKeyId: authority.caKey.id,
        userId: r.type === "user" ? r.userId : null,
        sshKeyId: r.sshKeyId,
        certType: r.type,
        serial,
        keyId: r.keyId,
        principals: r.principals,
        extensions: r.extensions,
        criticalOptions: {},
        validAfter,
        validBefore,
        publicKeyFingerprint: r.subject.fingerprint,
        certificate,
        requestIp: ctx.ip?.slice(0, 45),
        requestUserAgent: ctx.userAgent,
        createdAt: now,
      });
      await this.recordIssued(tx, ctx, cert);
      return cert;
    });
    return { ...toCertificateView(row, now), certId: row.id, organizationName: authority.orgName };
  }

  private async recordIssued(tx: Executor, ctx: RequestContext, cert: CertRow): Promise<void> {
    const metadata = { serial: cert.serial.toString(), principals: cert.principals, cert_type: cert.certType, key_id: cert.keyId, valid_before: cert.validBefore.toISOString() };
    await certificatesRepository.audit(tx, {
      organizationId: cert.organizationId,
      certificateId: cert.id,
      userId: ctx.actor.kind === "user" ? ctx.actor.userId : null,
      action: "issued",
      ipAddress: ctx.ip?.slice(0, 45),
      userAgent: ctx.userAgent,
      requestId: ctx.requestId,
      metadata,
      createdAt: cert.createdAt,
    });
    await this.audit.record(tx, ctx, AuditAction.certIssued, { organizationId: cert.organizationId, resourceType: "ssh_certificate", resourceId: cert.id, metadata });
  }

  private async recordFailure(ctx: RequestContext, orgId: string, userId: string, error: unknown): Promise<void> {
    const message = isAppError(error) ? `${error.code}: ${error.message}` : "internal error";
    await certificatesRepository.audit(this.db, {
      organizationId: orgId,
      userId,
      action: "failed",
      success: false,
      message,
      ipAddress: ctx.ip?.slice(0, 45),
      userAgent: ctx.userAgent,
      requestId: ctx.requestId,
      createdAt: this.clock.now(),
    });
    await this.audit.record(this.db, ctx, AuditAction.certFailed, { organizationId: orgId, success: false, errorMessage: message });
  }

  /** Privileged: the CA's private key, unsealed in memory for signing and kept in the cache, never returned. */
  private async caPrivateKeyPrivileged(caKeyId: string): Promise<KeyObject> {
    const cached = this.keyCache.get(caKeyId);
    if (cached) return cached;
    const sealed = await readCaPrivateKeyPrivileged(this.db, caKeyId);
    if (!sealed) throw CaErrors.signingFailed();
    const key = loadPrivateKey(this.box.decryptString(sealed, caKeyContext(caKeyId)));
    if (this.keyCache.size >= KEY_CACHE_MAX) this.keyCache.delete(this.keyCache.keys().next().value!);
    this.keyCache.set(caKeyId, key);
    return key;
  }
}
