import { and, eq, inArray } from "drizzle-orm";
import { departmentMembers, departments, principalMembers, principals } from "../../../schema/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import type { RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";
import type { AccountsService } from "../auth/accounts.service.js";
import { usersRepository } from "../users/users.repository.js";
import { getActiveMembership, membershipsRepository } from "./memberships.repository.js";
import { requireOrgAccess } from "./org-access.js";
import { assertBelowOrgLimit, type OrgLimitConfig } from "./org-limit.js";
import { OrgErrors } from "./orgs.errors.js";
import { orgsRepository } from "./orgs.repository.js";
import { addMemberSchema, changeRoleSchema } from "./orgs.schemas.js";
import type { OrgRole } from "./permissions.js";

export interface MemberView {
  userId: string;
  email: string;
  fullName: string | null;
  avatarUrl: string | null;
  status: string;
  role: OrgRole;
  joinedAt: Date;
}

export interface MembersDeps {
  db: Db;
  clock: Clock;
  audit: AuditService;
  accounts: AccountsService;
  logger: Logger;
  limit: OrgLimitConfig;
}

export class MembersService {
  constructor(private readonly deps: MembersDeps) {}

  async list(ctx: RequestContext, orgId: string): Promise<MemberView[]> {
    const { orgId: id } = await requireOrgAccess(this.deps.db, ctx, orgId, "members.read");
    return membershipsRepository.listMembers(this.deps.db, id);
  }

  /**
   * Adds a person by email. Someone without an account gets one, inactive, with an activation
   * email whose link lets them choose a password.
   */
  async add(ctx: RequestContext, orgId: string, input: unknown): Promise<{ member: MemberView; accountCreated: boolean }> {
    const { db, clock, audit, accounts, logger, limit } = this.deps;
    const { orgId: id, membership, actor } = await requireOrgAccess(db, ctx, orgId, "members.manage");
    const data = parseInput(addMemberSchema, input);
    // Only an owner may make another owner.
    if (data.role === "owner" && membership.role !== "owner") throw OrgErrors.ownerOnly();
    const email = normalizeEmail(data.email);
    return db.transaction(async (tx) => {
      const org = await orgsRepository.findById(tx, id);
      if (!org) throw OrgErrors.notFound();
      let user = await usersRepository.findByEmail(tx, email);
      const accountCreated = !user;
      if (!user) {
        user = await accounts.createPendingAccount(tx, {
          email,
          fullName: data.fullName,
          inviterName: actor.email,
          organizationName: org.name,
        });
      } else {
        await usersRepository.lockById(tx, user.id);
        if (await getActiveMembership(tx, user.id, id)) throw OrgErrors.alreadyMember();
        await assertBelowOrgLimit(tx, user.id, limit, logger);
      }
      const now = clock.now();
      await membershipsRepository.insert(tx, { organizationId: id, userId: user.id, role: data.role, invitedBy: actor.userId, now });
      await audit.record(tx, ctx, AuditAction.orgMemberAdd, {
        organizationId: id,
        userId: user.id,
        resourceType: "membership",
        resourceId: user.id,
        metadata: { email, role: data.role, account_created: accountCreated },
      });
      return {
        member: { userId: user.id, email: user.email, fullName: user.fullName, avatarUrl: user.avatarUrl, status: user.status, role: data.role, joinedAt: now },
        accountCreated,
      };
    });
  }

  /** Removes a member (admins) — or oneself, which is leaving. Never the last owner. */
  async remove(ctx: RequestContext, orgId: string, userId: string): Promise<void> {
    const { db } = this.deps;
    const target = parseId(userId, OrgErrors.memberNotFound);
    const self = ctx.actor.kind === "user" && ctx.actor.userId === target;
    const { orgId: id, membership } = await requireOrgAccess(db, ctx, orgId, self ? "org.read" : "members.manage");
    await db.transaction(async (tx) => {
      await membershipsRepository.lockOrganization(tx, id);
      const member = await getActiveMembership(tx, target, id);
      if (!member) throw OrgErrors.memberNotFound();
      // Admins manage everyone but owners.
      if (!self && member.role === "owner" && membership.role !== "owner") throw OrgErrors.ownerOnly();
      await this.assertOwnerRemains(tx, id, member.role);
      await this.removeLocked(tx, id, target);
      await this.deps.audit.record(tx, ctx, self ? AuditAction.orgMemberLeave : AuditAction.orgMemberRemove, {
        organizationId: id,
        userId: target,
        resourceType: "membership",
        resourceId: target,
        metadata: { role: member.role },
      });
    });
  }

  async leave(ctx: RequestContext, orgId: string): Promise<void> {
    if (ctx.actor.kind !== "user") throw OrgErrors.notFound();
    return this.remove(ctx, orgId, ctx.actor.userId);
  }

  async changeRole(ctx: RequestContext, orgId: string, userId: string, input: unknown): Promise<MemberView> {
    const { db, clock, audit } = this.deps;
    const target = parseId(userId, OrgErrors.memberNotFound);
    const { orgId: id, membership } = await requireOrgAccess(db, ctx, orgId, "members.manage");
    const { role } = parseInput(changeRoleSchema, input);
    return db.transaction(async (tx) => {
      await membershipsRepository.lockOrganization(tx, id);
      const member = await getActiveMembership(tx, target, id);
      if (!member) throw OrgErrors.memberNotFound();
      // Granting or taking away the owner role is for owners.
      if ((role === "owner" || member.role === "owner") && membership.role !== "owner") throw OrgErrors.ownerOnly();
      if (member.role === "owner" && role !== "owner") await this.assertOwnerRemains(tx, id, "owner");
      await membershipsRepository.setRole(tx, id, target, role, clock.now());
      await audit.record(tx, ctx, AuditAction.orgMemberRoleChange, {
        organizationId: id,
        userId: target,
        resourceType: "membership",
        resourceId: target,
        metadata: { from: member.role, to: role },
      });
      const row = (await membershipsRepository.listMembers(tx, id)).find((m) => m.userId === target)!;
      return row;
    });
  }

  /** Refuses a change that would take away the organization's last owner (row lock held by the caller). */
  private async assertOwnerRemains(tx: Executor, orgId: string, roleLeaving: OrgRole): Promise<void> {
    if (roleLeaving !== "owner") return;
    if ((await membershipsRepository.countOwners(tx, orgId)) <= 1) throw OrgErrors.lastOwner();
  }

  /** Ends a membership and the department and principal grants that came with it. */
  async removeLocked(tx: Executor, orgId: string, userId: string): Promise<void> {
    const now = this.deps.clock.now();
    await membershipsRepository.softDelete(tx, orgId, userId, now);
    const deptIds = tx.select({ id: departments.id }).from(departments).where(eq(departments.organizationId, orgId));
    await tx.delete(departmentMembers).where(and(eq(departmentMembers.userId, userId), inArray(departmentMembers.departmentId, deptIds)));
    const principalIds = tx.select({ id: principals.id }).from(principals).where(eq(principals.organizationId, orgId));
    await tx.delete(principalMembers).where(and(eq(principalMembers.userId, userId), inArray(principalMembers.principalId, principalIds)));
  }
}
