import type { z } from "zod";
import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { uniqueOr } from "../../infra/db-errors.js";
import { uuid, type SecretBox, sealContexts } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import { generateCaKey, type GeneratedCaKey, type SshKeyType } from "../../lib/ssh/index.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { caRepository, type CaKeyRow, type CaRow } from "./ca.repository.js";
import { orgOf } from "./authority.js";
import { chooseOrganization } from "./choose-organization.js";
import { CaErrors } from "./ssh-ca.errors.js";
import { hostPatternProblems, knownHostsLine } from "./host-patterns.js";
import { createCaSchema, rotateCaSchema, updateCaSchema, type CreateCaInput, type UpdateCaInput, type RotateCaInput } from "./ssh-ca.schemas.js";
import { can, getActiveMemberships, requireOrgAccess, requireUser } from "../access/index.js";
import { AppError } from "../../lib/errors.js";

export interface CaView extends CaRow {
  keyType: string;
  publicKey: string;
  fingerprint: string;
  /** Retired keys still trusted during the rotation overlap. */
  previousKeys: Array<{ publicKey: string; fingerprint: string; trustedUntil: Date | null }>;
}

/** One organization in `GET /ssh/client-config`. */
export interface ClientOrgConfig {
  id: string;
  name: string;
  slug: string;
  hasUserCa: boolean;
  hostCa: { id: string; name: string; hostPatterns: string[] | null; knownHosts: string[] } | null;
}

const keyComment = (orgId: string, type: string) => `keyward-${type}-ca-${orgId.slice(0, 8)}`;

/** Host patterns only on a host CA, and only patterns that pass the checks between them. */
function checkHostPatterns(caType: "user" | "host", patterns: string[] | null | undefined, allowAnyHost: boolean | undefined): void {
  if (!patterns) return;
  if (caType !== "host") throw CaErrors.hostPatternsOnUserCa();
  const problems = hostPatternProblems(patterns, allowAnyHost === true);
  if (problems.length) throw CaErrors.hostPatterns(problems);
}

/** AAD for sealed CA keys: a ciphertext cannot be moved to another key row. */
export const caKeyContext = sealContexts.caKey;

export class CasService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly box: SecretBox,
    private readonly limits: RateLimitService,
    private readonly config: { rotationOverlapHours: number; maxPreviousKeys: number; keygenRate: RateRule },
  ) {}

  async list(ctx: RequestContext, orgId: string): Promise<CaView[]> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const cas = await caRepository.listForOrg(this.db, id);
    const keys = await caRepository.trustedKeys(this.db, cas.map((c) => c.id), this.clock.now());
    return cas.map((ca) => this.view(ca, keys.filter((k) => k.caId === ca.id)));
  }

  /** Creates a CA with a key generated in-process; the private key is stored sealed only. */
  async create(ctx: RequestContext, orgId: string, input: CreateCaInput): Promise<CaView> {
    const { orgId: id, actor } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const data = parseInput(createCaSchema, input);
    checkHostPatterns(data.caType, data.hostPatterns, data.allowAnyHost);
    await this.spendKeygen(id);
    // Key generation (seconds for RSA-4096) happens before the transaction opens.
    const generated = await generateCaKey(data.keyType, keyComment(id, data.caType));
    // Two creations of the same type at once: the unique index decides, the loser gets the same answer as a later one.
    return uniqueOr(() => this.db.transaction((tx) => this.insertCa(tx, ctx, id, actor.userId, data, generated)), {
      certificate_authorities_org_type_live_uq: () => CaErrors.duplicateType(data.caType),
    });
  }

  private async insertCa(tx: Executor, ctx: RequestContext, orgId: string, userId: string, data: z.output<typeof createCaSchema>, generated: GeneratedCaKey): Promise<CaView> {
    const now = this.clock.now();
    const ca = await caRepository.insert(tx, {
      organizationId: orgId,
      name: data.name,
      description: data.description,
      caType: data.caType,
      defaultValidityHours: data.defaultCertValidityHours,
      maxValidityHours: data.maxCertValidityHours,
      hostPatterns: data.hostPatterns ?? null,
      createdBy: userId,
      createdAt: now,
      updatedAt: now,
    });
    const key = await this.addKey(tx, ca, data.keyType, generated, now);
    await this.audit.record(tx, ctx, AuditAction.caCreated, {
      organizationId: orgId,
      resourceType: "ca",
      resourceId: ca.id,
      metadata: { name: ca.name, ca_type: ca.caType, key_type: data.keyType, fingerprint: key.fingerprint, ...(ca.hostPatterns ? { host_patterns: ca.hostPatterns } : {}) },
    });
    return this.view(ca, [key]);
  }

  async update(ctx: RequestContext, orgId: string, caId: string, input: UpdateCaInput): Promise<CaView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const cid = parseId(caId, CaErrors.notFound);
    const data = parseInput(updateCaSchema, input);
    return this.db.transaction(async (tx) => {
      const current = await caRepository.find(tx, id, cid);
      if (!current) throw CaErrors.notFound();
      const def = data.defaultCertValidityHours ?? current.defaultValidityHours;
      const max = data.maxCertValidityHours ?? current.maxValidityHours;
      if (def > max) throw CaErrors.invalidValidity(`default_cert_validity_hours (${def}) must not exceed max_cert_validity_hours (${max})`);
      if (data.hostPatterns) checkHostPatterns(current.caType, data.hostPatterns, data.allowAnyHost);
      const ca = await caRepository.update(tx, id, cid, {
        name: data.name,
        description: data.description,
        defaultValidityHours: data.defaultCertValidityHours,
        maxValidityHours: data.maxCertValidityHours,
        hostPatterns: data.hostPatterns,
        updatedAt: this.clock.now(),
      });
      // Which hosts a CA vouches for is a trust decision: the audit keeps both sides of a change.
      const patterns = data.hostPatterns !== undefined ? { host_patterns: { from: current.hostPatterns, to: data.hostPatterns } } : {};
      await this.audit.record(tx, ctx, AuditAction.caUpdated, {
        organizationId: id,
        resourceType: "ca",
        resourceId: cid,
        metadata: { fields: Object.keys(data).filter((k) => k !== "allowAnyHost"), ...patterns },
      });
      return this.view(ca!, await caRepository.trustedKeys(tx, [cid], this.clock.now()));
    });
  }

  /** Soft-deletes a CA: it signs nothing more and its keys stop being trusted. */
  async delete(ctx: RequestContext, orgId: string, caId: string): Promise<void> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const cid = parseId(caId, CaErrors.notFound);
    await this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const ca = await caRepository.update(tx, id, cid, { deletedAt: now, updatedAt: now });
      if (!ca) throw CaErrors.notFound();
      await caRepository.retireAllKeys(tx, cid, now);
      await this.audit.record(tx, ctx, AuditAction.caDeleted, { organizationId: id, resourceType: "ca", resourceId: cid, metadata: { name: ca.name } });
    });
  }

  /** A new key becomes active; the old public key stays trusted for the overlap. */
  async rotate(ctx: RequestContext, orgId: string, caId: string, input: RotateCaInput): Promise<{ ca: CaView; oldFingerprint: string }> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "ca.manage");
    const cid = parseId(caId, CaErrors.notFound);
    const data = parseInput(rotateCaSchema, input ?? {});
    const current = await caRepository.find(this.db, id, cid);
    if (!current) throw CaErrors.notFound();
    const keyType = data.keyType ?? (await caRepository.activeKey(this.db, cid))?.keyType ?? "ed25519";
    await this.spendKeygen(id);
    const generated = await generateCaKey(keyType, keyComment(id, current.caType));
    return this.db.transaction(async (tx) => {
      // Locked: a concurrent rotation of the same CA goes first or after, never on the same key.
      const ca = await caRepository.lock(tx, id, cid);
      if (!ca) throw CaErrors.notFound();
      const old = await caRepository.activeKey(tx, cid);
      const now = this.clock.now();
      if (old) {
        await caRepository.retireKey(tx, old.id, { now, reason: data.reason, trustedUntil: new Date(now.getTime() + this.config.rotationOverlapHours * 3600_000) });
      }
      const key = await this.addKey(tx, ca, keyType, generated, now);
      // Servers are told to trust a bounded set: the active key and the newest retired ones.
      const untrusted = await caRepository.untrustOldest(tx, cid, this.config.maxPreviousKeys, now);
      await this.audit.record(tx, ctx, AuditAction.caKeyRotated, {
        organizationId: id,
        resourceType: "ca",
        resourceId: cid,
        metadata: { old_fingerprint: old?.fingerprint, new_fingerprint: key.fingerprint, reason: data.reason, keys_no_longer_trusted: untrusted },
      });
      return { ca: this.view(ca, await caRepository.trustedKeys(tx, [cid], now)), oldFingerprint: old?.fingerprint ?? "" };
    });
  }

  /**
   * What servers paste: every trusted user-CA key for TrustedUserCAKeys (the new and, during an
   * overlap, the old), and the `@cert-authority` line for known_hosts.
   */
  async serverConfig(ctx: RequestContext, orgId: string) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "org.read");
    const now = this.clock.now();
    const cas = await caRepository.listForOrg(this.db, id);
    const keys = await caRepository.trustedKeys(this.db, cas.map((c) => c.id), now);
    const of = (type: "user" | "host") => keys.filter((k) => cas.find((c) => c.id === k.caId)?.caType === type);
    const userKeys = of("user").map((k) => k.publicKey);
    const hostKeys = of("host").map((k) => k.publicKey);
    const hostPatterns = cas.find((c) => c.caType === "host")?.hostPatterns ?? null;
    return {
      trustedUserCaKeys: userKeys.join("\n") + (userKeys.length ? "\n" : ""),
      knownHosts: hostKeys.map((k) => knownHostsLine(hostPatterns, k)).join("\n") + (hostKeys.length ? "\n" : ""),
      userCaKeys: userKeys,
      hostCaKeys: hostKeys,
    };
  }

  /**
   * What `keyward ssh config` writes, for each organization the caller is a member of: whether it
   * has a user CA (certificates can be signed there), and its host CA's patterns and known_hosts
   * lines (every trusted key: during a rotation the previous one too). Only the caller's own
   * organizations, each behind the guard a named one passes (an organization whose MFA deadline the
   * caller missed is left out, as signing there would be refused).
   */
  async clientConfig(ctx: RequestContext): Promise<{ organizations: ClientOrgConfig[] }> {
    const actor = requireUser(ctx);
    const memberships = (await getActiveMemberships(this.db, actor.userId)).filter((m) => can(m.role, "org.read"));
    const now = this.clock.now();
    const organizations: ClientOrgConfig[] = [];
    for (const m of memberships) {
      try {
        await requireOrgAccess(this.db, ctx, m.organizationId, "org.read");
      } catch (e) {
        if (e instanceof AppError && e.status < 500) continue;
        throw e;
      }
      const cas = await caRepository.listForOrg(this.db, m.organizationId);
      const host = cas.find((c) => c.caType === "host");
      const keys = host ? await caRepository.trustedKeys(this.db, [host.id], now) : [];
      organizations.push({
        id: m.organizationId,
        name: m.organizationName,
        slug: m.organizationSlug,
        hasUserCa: cas.some((c) => c.caType === "user"),
        hostCa: host ? { id: host.id, name: host.name, hostPatterns: host.hostPatterns, knownHosts: keys.map((k) => knownHostsLine(host.hostPatterns, k.publicKey)) } : null,
      });
    }
    return { organizations };
  }

  /** The active public key of a CA type (GET /ssh/ca/public-key): in org_id, or the caller's only such org. */
  async publicKey(ctx: RequestContext, input: { caType?: string; orgId?: string }) {
    const caType = input.caType === "host" ? "host" : "user";
    const membership = await chooseOrganization(this.db, ctx, { orgId: input.orgId, capability: "org.read", withCa: caType, none: () => CaErrors.noneConfigured(caType) });
    const ca = await caRepository.findByType(this.db, membership.organizationId, caType);
    const key = ca ? await caRepository.activeKey(this.db, ca.id) : undefined;
    if (!ca || !key) throw CaErrors.notConfiguredFor(caType, orgOf(membership));
    return { publicKey: key.publicKey, fingerprint: key.fingerprint, caName: ca.name, caType, organizationId: ca.organizationId, source: "db" };
  }

  /**
   * The user-CA keys an enrolled server trusts (its TrustedUserCAKeys file): for a host that
   * proved itself (an enrollment token, its host key), not for a caller with a membership.
   */
  async trustedUserCaKeysFor(orgId: string): Promise<string[]> {
    const cas = (await caRepository.listForOrg(this.db, orgId)).filter((c) => c.caType === "user");
    return (await caRepository.trustedKeys(this.db, cas.map((c) => c.id), this.clock.now())).map((k) => k.publicKey);
  }

  /** Each CA key costs real CPU (seconds for RSA-4096): creations and rotations are limited per organization. */
  private spendKeygen(orgId: string): Promise<void> {
    return this.limits.consume("ca-keygen", this.config.keygenRate, orgId);
  }

  private async addKey(tx: Executor, ca: CaRow, keyType: SshKeyType, generated: GeneratedCaKey, now: Date): Promise<CaKeyRow> {
    // The row id is chosen here so the seal can be bound to it (AAD).
    const keyId = uuid();
    return caRepository.insertKey(tx, {
      id: keyId,
      caId: ca.id,
      keyType,
      publicKey: generated.publicLine,
      fingerprint: generated.fingerprint,
      privateKeySealed: this.box.encrypt(generated.privatePem, caKeyContext(keyId)),
      isActive: true,
      createdAt: now,
    });
  }

  private view(ca: CaRow, keys: CaKeyRow[]): CaView {
    const active = keys.find((k) => k.isActive);
    return {
      ...ca,
      keyType: active?.keyType ?? "",
      publicKey: active?.publicKey ?? "",
      fingerprint: active?.fingerprint ?? "",
      previousKeys: keys.filter((k) => !k.isActive).map((k) => ({ publicKey: k.publicKey, fingerprint: k.fingerprint, trustedUntil: k.trustedUntil })),
    };
  }
}
