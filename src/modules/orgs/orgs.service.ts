import type { Clock } from "../../infra/clock.js";
import type { Db, Executor, Tx } from "../../infra/db.js";
import { isUniqueViolation, uniqueOr } from "../../infra/db-errors.js";
import type { Logger } from "../../infra/logger.js";
import { randomHex } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { userAccounts } from "../users/index.js";
import { membershipsRepository } from "./memberships.repository.js";
import { type Offboarding, getActiveMemberships, requireOrgAccess, requireUser } from "../access/index.js";
import { admitMember, type AdmissionConfig } from "./admission.js";
import { OrgErrors } from "./orgs.errors.js";
import { orgsRepository } from "./orgs.repository.js";
import { createOrgSchema, deleteOrgSchema, transferSchema, updateOrgSchema, type CreateOrgInput, type UpdateOrgInput, type DeleteOrgInput, type TransferInput } from "./orgs.schemas.js";
import { OWNER, toOrgView, type OrganizationView, type SimpleOrgView } from "./orgs.views.js";

export interface OrgsDeps extends Offboarding {
  db: Db;
  clock: Clock;
  audit: AuditService;
  logger: Logger;
  limit: AdmissionConfig;
}

/** "Acme Corp." → "acme-corp" */
export function slugify(name: string): string {
  const s = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 50)
    .replace(/-+$/g, "");
  return s.length >= 2 ? s : `org-${s}`.replace(/-$/, "") + (s.length === 0 ? randomHex(3) : "");
}

const SLUG_UQ = "organizations_slug_live_uq";

/** A base slug and two random-suffixed fallbacks. */
const slugCandidates = (base: string) => [base, `${base}-${randomHex(2)}`, `${base}-${randomHex(4)}`];

/**
 * Runs `attempt` with each candidate slug until one is free: a unique violation on the slug moves
 * on to the next (`skipFirst` says the first is known taken); the last candidate's failure, like
 * any other, is the caller's.
 */
async function withFreeSlug<T>(candidates: string[], attempt: (slug: string) => Promise<T>, skipFirst?: (slug: string) => Promise<boolean>): Promise<T> {
  for (const [i, slug] of candidates.entries()) {
    if (i === 0 && skipFirst && (await skipFirst(slug))) continue;
    try {
      return await attempt(slug);
    } catch (e) {
      if (!isUniqueViolation(e, SLUG_UQ) || i === candidates.length - 1) throw e;
    }
  }
  throw OrgErrors.slugTaken();
}

export class OrgsService {
  constructor(private readonly deps: OrgsDeps) {}

  /**
   * Creates an organization owned by the caller. The slug is derived from the name when absent
   * (with a short suffix if taken); an explicit slug that is taken is a 409.
   */
  async create(ctx: RequestContext, input: CreateOrgInput): Promise<OrganizationView> {
    const { db, logger, limit } = this.deps;
    const actor = requireUser(ctx);
    const data = parseInput(createOrgSchema, input);
    const attempt = (slug: string) =>
      db.transaction(async (tx) => {
        // One creation per user at a time, so the limit cannot be raced past.
        await userAccounts.lock(tx, actor.userId);
        await admitMember(tx, actor.userId, limit, logger);
        return this.insertOwned(tx, ctx, actor.userId, { ...data, slug });
      });

    const slug = data.slug;
    if (slug) return uniqueOr(() => attempt(slug), { [SLUG_UQ]: OrgErrors.slugTaken });
    return withFreeSlug(slugCandidates(slugify(data.name)), attempt, (s) => orgsRepository.slugExists(db, s));
  }

  /**
   * The organization a user gets when an external sign-in creates their account, inside the
   * caller's transaction. The limit keeps its fallback rule: a failed count does not block it.
   */
  async createPersonal(tx: Tx, ctx: RequestContext, owner: { id: string; email: string; fullName: string | null }): Promise<OrganizationView> {
    const { limit, logger } = this.deps;
    await admitMember(tx, owner.id, limit, logger);
    const handle = owner.email.split("@")[0]!;
    const name = `${owner.fullName?.trim() || handle}'s organization`.slice(0, 255);
    // A savepoint per attempt: a taken slug must not abort the caller's transaction.
    return withFreeSlug(slugCandidates(slugify(handle)), (slug) => tx.transaction((sp) => this.insertOwned(sp, ctx, owner.id, { name, slug })));
  }

  private async insertOwned(tx: Executor, ctx: RequestContext, ownerId: string, data: { name: string; slug: string; description?: string; logoUrl?: string }): Promise<OrganizationView> {
    const now = this.deps.clock.now();
    const org = await orgsRepository.insert(tx, { ...data, createdBy: ownerId, now });
    await membershipsRepository.insert(tx, { organizationId: org.id, userId: ownerId, role: "owner", invitedBy: null, now });
    await this.deps.audit.record(tx, ctx, AuditAction.orgCreate, { userId: ownerId, organizationId: org.id, resourceType: "organization", resourceId: org.id, metadata: { name: org.name, slug: data.slug } });
    return toOrgView(org, OWNER);
  }

  async get(ctx: RequestContext, orgId: string): Promise<OrganizationView & { memberCount: number }> {
    const { db } = this.deps;
    const { orgId: id, membership } = await requireOrgAccess(db, ctx, orgId, "org.read");
    const org = await orgsRepository.findById(db, id);
    if (!org) throw OrgErrors.notFound();
    return { ...toOrgView(org, membership), memberCount: await membershipsRepository.countMembers(db, id) };
  }

  async update(ctx: RequestContext, orgId: string, input: UpdateOrgInput): Promise<OrganizationView> {
    const { db, clock, audit } = this.deps;
    const { orgId: id, membership } = await requireOrgAccess(db, ctx, orgId, "org.update");
    const data = parseInput(updateOrgSchema, input);
    return db.transaction(async (tx) => {
      const org = await orgsRepository.update(tx, id, { ...data, updatedAt: clock.now() });
      if (!org) throw OrgErrors.notFound();
      await audit.record(tx, ctx, AuditAction.orgUpdate, { organizationId: id, resourceType: "organization", resourceId: id, metadata: { fields: Object.keys(data) } });
      return toOrgView(org, membership);
    });
  }

  /** Soft-deletes the organization (owners only); with other members it needs `confirm: true`. */
  async delete(ctx: RequestContext, orgId: string, input: DeleteOrgInput): Promise<void> {
    const { db, clock, audit } = this.deps;
    const { orgId: id } = await requireOrgAccess(db, ctx, orgId, "org.delete");
    const { confirm } = parseInput(deleteOrgSchema, input);
    const offboarded = await db.transaction(async (tx) => {
      if (!(await membershipsRepository.lockOrganization(tx, id))) throw OrgErrors.notFound();
      // Still an owner as of now, under the lock.
      await requireOrgAccess(tx, ctx, id, "org.delete");
      const members = await membershipsRepository.countMembers(tx, id);
      if (members > 1 && confirm !== true) throw OrgErrors.confirmationRequired(members);
      await orgsRepository.softDelete(tx, id, clock.now());
      await this.deps.networks.lockNetworksOf(tx, [id]);
      // Its managed accounts become their owners' alone. The order in which every offboarding
      // takes its locks: organization, its networks, accounts, certificates.
      await userAccounts.releaseAllFromOrganization(tx, id);
      // Nothing the organization issued keeps working; its last KRL stays published.
      await this.deps.certificates.revokeAllOfOrganization(tx, ctx, id, "Organization deleted");
      const offboarded = await this.deps.networks.organizationDeleted(tx, ctx, id);
      await audit.record(tx, ctx, AuditAction.orgDelete, { organizationId: id, resourceType: "organization", resourceId: id, metadata: { member_count: members } });
      return offboarded;
    });
    await this.deps.networks.apply(offboarded);
  }

  /**
   * Soft-deletes an organization nobody else is in, in the caller's transaction: its only member's
   * account is being deleted (the account's service revokes and audits around it).
   */
  async removeWithLastMember(tx: Executor, organizationId: string, now: Date): Promise<void> {
    await orgsRepository.softDelete(tx, organizationId, now);
  }

  /** Hands ownership to another member; the previous owner stays on as admin. */
  async transferOwnership(ctx: RequestContext, orgId: string, input: TransferInput) {
    const { db, clock, audit } = this.deps;
    const { orgId: id, actor } = await requireOrgAccess(db, ctx, orgId, "org.transfer");
    const { newOwnerUserId } = parseInput(transferSchema, input);
    if (newOwnerUserId === actor.userId) throw OrgErrors.transferToSelf();
    return db.transaction(async (tx) => {
      await membershipsRepository.lockOrganization(tx, id);
      // Still an owner as of now, under the lock: a concurrent demotion has taken effect.
      await requireOrgAccess(tx, ctx, id, "org.transfer");
      const target = (await getActiveMemberships(tx, newOwnerUserId)).find((m) => m.organizationId === id);
      if (!target) throw OrgErrors.memberNotFound();
      if (target.role === "owner") throw OrgErrors.transferToSelf();
      const now = clock.now();
      await membershipsRepository.setRole(tx, id, newOwnerUserId, "owner", now);
      await membershipsRepository.setRole(tx, id, actor.userId, "admin", now);
      await audit.record(tx, ctx, AuditAction.orgOwnershipTransferred, {
        organizationId: id,
        resourceType: "organization",
        resourceId: id,
        metadata: { previous_owner: actor.userId, new_owner: newOwnerUserId },
      });
      return { previousOwner: { userId: actor.userId, role: "admin" as const }, newOwner: { userId: newOwnerUserId, role: "owner" as const } };
    });
  }

  async listMine(ctx: RequestContext): Promise<OrganizationView[]> {
    const { db } = this.deps;
    const actor = requireUser(ctx);
    const memberships = await getActiveMemberships(db, actor.userId);
    const orgs = new Map((await orgsRepository.findByIds(db, memberships.map((m) => m.organizationId))).map((o) => [o.id, o]));
    return memberships.flatMap((m) => {
      const org = orgs.get(m.organizationId);
      return org ? [toOrgView(org, m)] : [];
    });
  }

  async listMineSimple(ctx: RequestContext): Promise<SimpleOrgView[]> {
    const actor = requireUser(ctx);
    return (await getActiveMemberships(this.deps.db, actor.userId)).map((m) => ({
      id: m.organizationId,
      name: m.organizationName,
      slug: m.organizationSlug,
      role: m.role,
    }));
  }
}

