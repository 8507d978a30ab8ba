import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { uuid, type KeyObject, type SecretBox } from "../../lib/crypto/index.js";
import { isAppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { loadPrivateKey, parseCertificate, signCertificate } from "../../lib/ssh/index.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { memberDepartments, OrgErrors } from "../orgs/index.js";
import { readCaPrivateKeyPrivileged } from "./ca.secrets.repository.js";
import { caKeyContext } from "./cas.service.js";
import type { HostCertificateIssued, HostIssueRequest } from "./host-issuance.js";
import { HostSigningService, type CertificateOrder } from "./host-signing.service.js";
import { userAuthority, type Authority } from "./authority.js";
import { chooseOrganization } from "./choose-organization.js";
import { issuanceRepository } from "./issuance.repository.js";
import { issueBatcher } from "./issue-batcher.js";
import { signingContextRepository } from "./signing-context.repository.js";
import { toCertificateView, type SignedCertificate } from "./certificates.views.js";
import { DEFAULT_CERT_POLICY, keyModifiers, mergePolicies, resolveLifetimeHours, resolvePrincipals, type EffectivePolicy, type StoredPolicy } from "./policy.js";
import { grantEnd, grantedPrincipals, grantsInForce, type ActiveGrantsPort } from "./signing-grants.js";
import { checkKey, keyPolicy, storedKey } from "./signing-key-policy.js";
import { CaErrors } from "./ssh-ca.errors.js";
import { signUserSchema, type SignUserInput, type SignHostInput } from "./ssh-ca.schemas.js";
import { type ActiveMembership, isAdminRole, requireUser } from "../access/index.js";

export interface SigningConfig {
  requireVerifiedKeys: boolean;
  backdateSeconds: number;
  /** Host certificates may name patterns (`*`, `?`): SSH_HOST_PRINCIPAL_PATTERNS. */
  hostPrincipalPatterns: boolean;
}

/**
 * Just-in-time grants (the access-requests module, wired by the container): the principals a person
 * holds for a bounded time in an organization, each with its end, and the department granted when
 * the principal comes with a department's grant (null: the principal itself was granted).
 */
export type { ActiveGrantsPort } from "./signing-grants.js";

/**
 * The role a signer signs with in an organization, read in this one place: admins get the admin
 * policy merge (mergePolicies) in signing and in the effective policy shown to them. The
 * membership's role is the effective one (effective_org_role: the stored role, or a role grant in force).
 */
function signsAsAdmin(membership: ActiveMembership): boolean {
  return isAdminRole(membership.role);
}

const KEY_CACHE_MAX = 64;

const earliest = (a: Date | undefined, b: Date | undefined): Date | undefined => (a && b ? (a < b ? a : b) : (a ?? b));

/**
 * Issues SSH certificates. Each request runs the same ordered pipeline (smallstep's): validate the
 * key → choose the organization and its CA → resolve the department policy → apply modifiers
 * (validity, key id, extensions, principals) → check them against the policy → sign → verify the
 * result → persist certificate, serial and audit entries in one transaction.
 */
export class SigningService {
  // Unsealed CA keys, by CA key id: a PEM parse and an AES-GCM open per signature add up.
  private readonly keyCache = new Map<string, KeyObject>();
  // Each signature's rows, written with the others of its organization that get there at once.
  private readonly write = issueBatcher((batch) => issuanceRepository.insertIssued(this.db, batch));

  // Host certificates, signed through this pipeline's last steps and its CA keys.
  private readonly hosts: HostSigningService;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly box: SecretBox,
    private readonly config: SigningConfig,
    private readonly grants?: ActiveGrantsPort,
  ) {
    this.hosts = new HostSigningService(db, clock, audit, config, {
      issue: (ctx, authority, serial, order) => this.issue(ctx, authority, serial, order),
      caPrivateKey: (caKeyId, tx) => this.caPrivateKeyPrivileged(caKeyId, tx),
    });
  }

  async signUserCertificate(ctx: RequestContext, input: SignUserInput): Promise<SignedCertificate> {
    const actor = requireUser(ctx);
    const req = parseInput(signUserSchema, input);
    // What steps 1–4 need (the serial, the key, the caller's organizations with their MFA
    // standing, user CA and key, department policies and principals), in one statement; the
    // steps then decide on it in their order.
    const keyId = req.keyId ?? req.certId;
    const at = this.clock.now();
    const context = await signingContextRepository.readUserContext(this.db, { userId: actor.userId, orgId: req.orgId ?? null, keyId: keyId ?? null, at });
    // 1. The key: the caller's own, verified when verification is required. A key error wins
    // over an organization error.
    const key = checkKey(keyId, context.key, this.config.requireVerifiedKeys);
    // 2. The organization and its active user CA.
    const { authority, organization } = userAuthority(ctx, req.orgId, context.organizations);
    try {
      // 3. The department policy, merged over the caller's departments in that organization and
      // those granted to them (signing-key-policy.ts), the key checked against it, and 4–5. the
      // modifiers, each checked against the policy. Grants in force add their principals; the
      // certificate never outlives one it carries (signing-grants.ts).
      const { grants, grantedPolicies } = await grantsInForce(this.db, this.grants, actor.userId, authority.orgId, at, organization.grantsMayApply);
      const policy = keyPolicy(organization.policies, grantedPolicies, signsAsAdmin(authority.membership), key);
      const principals = resolvePrincipals(grantedPrincipals(organization.principals, grants), req.principals);
      // A role held through a role grant (an admin signs with every principal) ends the certificate
      // with it, like a principal grant (issue 37): the earlier of the two ends.
      const notAfter = earliest(grantEnd(grants, organization.principals, principals), authority.membership.elevatedUntil ?? undefined);
      const hours = resolveLifetimeHours(policy, authority.ca.maxValidityHours, req.expiryHours);
      const subject = storedKey(key.publicKey);
      return await this.issue(ctx, authority, context.serial, {
        subject,
        sshKeyId: key.id,
        userId: actor.userId,
        type: "user",
        keyId: `${actor.email} [org:${authority.orgSlug}]`,
        principals,
        hours,
        ...keyModifiers(policy),
        notAfter,
      });
    } catch (e) {
      await this.recordFailure(ctx, authority.orgId, actor.userId, e);
      throw e;
    }
  }

  /** Host certificates: an organization admin certifies a server's host key for its names (host-signing.service.ts). */
  signHostCertificate(ctx: RequestContext, input: SignHostInput): Promise<SignedCertificate> {
    return this.hosts.signHostCertificate(ctx, input);
  }

  /** Host certificates for an enrolled host, in the caller's transaction (host-signing.service.ts). */
  issueForHost(tx: Executor, ctx: RequestContext, v: HostIssueRequest): Promise<HostCertificateIssued[]> {
    return this.hosts.issueForHost(tx, ctx, v);
  }

  /** The policy a member would sign under in an organization (GET /ssh/dept-cert-policy). */
  async effectivePolicy(ctx: RequestContext, orgId?: string): Promise<EffectivePolicy & { organizationId: string }> {
    const actor = requireUser(ctx);
    // The policy does not depend on a CA: any organization the caller may sign in counts.
    const membership = await chooseOrganization(this.db, ctx, { orgId, capability: "ssh.sign", none: CaErrors.noSigningOrganization });
    return { organizationId: membership.organizationId, ...(await this.policyFor(actor.userId, membership.organizationId, signsAsAdmin(membership))) };
  }

  private async policyFor(userId: string, orgId: string, admin: boolean): Promise<EffectivePolicy> {
    // A department without a stored policy has the default one: it counts in the merge.
    const stored: StoredPolicy[] = (await memberDepartments.policies(this.db, userId, orgId)).map((p) => p ?? DEFAULT_CERT_POLICY);
    return mergePolicies(stored, admin);
  }

  private async issue(ctx: RequestContext, authority: Authority, serial: bigint, r: CertificateOrder): Promise<SignedCertificate> {
    const now = this.clock.now();
    const validAfter = new Date(now.getTime() - this.config.backdateSeconds * 1000);
    const validBefore = new Date(Math.min(now.getTime() + r.hours * 3600_000, r.notAfter?.getTime() ?? Infinity));
    const caPrivate = await this.caPrivateKeyPrivileged(authority.caKey.id);
    const caBlob = Buffer.from(authority.caKey.publicKey.split(" ")[1]!, "base64");
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
      criticalOptions: r.criticalOptions,
    });
    // 7. Verify what was produced before anyone sees it.
    const check = parseCertificate(certificate);
    if (!check.signatureValid || check.serial !== serial || !check.caKey.equals(caBlob)) throw CaErrors.signingFailed();
    // 8. Persist the certificate and its audit entries together: one statement, so all or none
    // (shared with other signatures of the organization written at the same moment).
    const id = uuid();
    const metadata = { serial: serial.toString(), principals: r.principals, cert_type: r.type, key_id: r.keyId, valid_before: validBefore.toISOString() };
    const audit = this.audit.entry(ctx, AuditAction.certIssued, { organizationId: authority.orgId, resourceType: "ssh_certificate", resourceId: id, metadata });
    const row = await this.write({
      signerId: r.userId,
      cert: {
        id,
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
        criticalOptions: r.criticalOptions ?? {},
        validAfter,
        validBefore,
        publicKeyFingerprint: r.subject.fingerprint,
        certificate,
        requestIp: ctx.ip?.slice(0, 45),
        requestUserAgent: ctx.userAgent,
        createdAt: now,
      },
      certAudit: {
        organizationId: authority.orgId,
        certificateId: id,
        userId: ctx.actor.kind === "user" ? ctx.actor.userId : null,
        action: "issued",
        success: true,
        ipAddress: ctx.ip?.slice(0, 45),
        userAgent: ctx.userAgent,
        requestId: ctx.requestId,
        metadata,
        createdAt: now,
      },
      audit: audit.row,
    });
    // The signer left or was removed while this was signed: nothing was written.
    if (!row) throw OrgErrors.notFound();
    audit.written();
    return { ...toCertificateView(row, now), certId: row.id, organizationName: authority.orgName };
  }

  private async recordFailure(ctx: RequestContext, orgId: string, userId: string, error: unknown): Promise<void> {
    const message = isAppError(error) ? `${error.code}: ${error.message}` : "internal error";
    const audit = this.audit.entry(ctx, AuditAction.certFailed, { organizationId: orgId, success: false, errorMessage: message });
    await issuanceRepository.insertFailed(
      this.db,
      {
        organizationId: orgId,
        userId,
        action: "failed",
        success: false,
        message,
        ipAddress: ctx.ip?.slice(0, 45),
        userAgent: ctx.userAgent,
        requestId: ctx.requestId,
        metadata: {},
        createdAt: this.clock.now(),
      },
      audit.row,
    );
    audit.written();
  }

  /** Privileged: the CA's private key, unsealed in memory for signing and kept in the cache, never returned. */
  private async caPrivateKeyPrivileged(caKeyId: string, db: Executor = this.db): Promise<KeyObject> {
    const cached = this.keyCache.get(caKeyId);
    if (cached) return cached;
    const sealed = await readCaPrivateKeyPrivileged(db, caKeyId);
    if (!sealed) throw CaErrors.signingFailed();
    const key = loadPrivateKey(this.box.decryptString(sealed, caKeyContext(caKeyId)));
    if (this.keyCache.size >= KEY_CACHE_MAX) this.keyCache.delete(this.keyCache.keys().next().value!);
    this.keyCache.set(caKeyId, key);
    return key;
  }
}

