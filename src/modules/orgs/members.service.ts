import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { memberStanding } from "./member-standing.js";
import { membershipsRepository } from "./memberships.repository.js";
import { type Offboarding, accessCan, getActiveMembership, type OrgRole, requireOrgAccess, requireOrgCaller, requireUser } from "../access/index.js";
import { OrgErrors } from "./orgs.errors.js";
import { changeRoleSchema, type ChangeRoleInput } from "./orgs.schemas.js";

export interface MemberView {
  userId: string;
  email: string;
  fullName: string | null;
  avatarUrl: string | null;
  status: string;
  role: OrgRole;
  joinedAt: Date;
  /** When the member last signed in: shown to the organization's admins only (null for anyone else). */
  lastLoginAt: Date | null;
  /** The account is managed by this organization: its admins may suspend it, reset its password, remove its MFA. */
  managed: boolean;
}

type MemberRow = Awaited<ReturnType<typeof membershipsRepository.listMembers>>[number];

/** A member as listed: the last sign-in for admins only; whether this organization manages the account. */
function memberView({ managedByOrganizationId, lastLoginAt, ...m }: MemberRow, orgId: string, admin: boolean): MemberView {
  return { ...m, lastLoginAt: admin ? lastLoginAt : null, managed: managedByOrganizationId === orgId };
}

/**
 * Removing someone else is offboarding (mode remove, one receipt): the offboarding module above
 * this one does it inside the caller's transaction (a port, wired in the container).
 */
export interface MemberRemovalPort {
  removeInTransaction(
    tx: Executor,
    ctx: RequestContext,
    orgId: string,
    userId: string,
    v: { reason: string; revocationReason: string; authorize: (tx: Executor) => Promise<{ kind: "member"; role: OrgRole }> },
  ): Promise<{ receiptId: string; role: OrgRole; afterCommit(): Promise<void> }>;
}

export interface MembersDeps extends Offboarding {
  db: Db;
  clock: Clock;
  audit: AuditService;
  removal: MemberRemovalPort;
}

export class MembersService {
  constructor(private readonly deps: MembersDeps) {}

  async list(ctx: RequestContext, orgId: string): Promise<MemberView[]> {
    // Also the organization's API keys with members:read (rule 17).
    const access = await requireOrgCaller(this.deps.db, ctx, orgId, "members.read");
    const rows = await membershipsRepository.listMembers(this.deps.db, access.orgId);
    // Who signs in when is for the organization's admins (who is active, which account sits idle),
    // not for every member and guest (nor for a key that reads members).
    const admin = accessCan(access, "members.manage");
    return rows.map((m) => memberView(m, access.orgId, admin));
  }

  /**
   * Removes a member (admins) — or oneself, which is leaving. Never the last owner.
   *
   * Removing someone else is offboarding with mode `remove` (issue 36): the same cuts as an
   * admin's Offboard (sessions and CLI tokens of an account this organization manages, the API
   * keys they created, certificates, devices) and its receipt, plus the `org.member.remove`
   * record as before. The rules are offboarding's, decided once: a member who may manage members
   * (a superadmin who is not a member still uses Offboard), owners only by owners, never the last
   * owner, and an account this organization manages by the admin-reach rule (an admin never
   * removes another admin of it). Leaving is not offboarding: the person's own sessions and keys
   * are theirs, nothing is listed on a receipt.
   *
   * The answer names the receipt (null when leaving: there is none), for the caller to show it.
   */
  async remove(ctx: RequestContext, orgId: string, userId: string): Promise<{ receiptId: string | null }> {
    const target = parseId(userId, OrgErrors.memberNotFound);
    const self = ctx.actor.kind === "user" && ctx.actor.userId === target;
    if (self) {
      await this.leaveLocked(ctx, orgId, target);
      return { receiptId: null };
    }
    const { db, audit } = this.deps;
    const { orgId: id } = await requireOrgAccess(db, ctx, orgId, "members.manage");
    const cut = await db.transaction(async (tx) => {
      const done = await this.deps.removal.removeInTransaction(tx, ctx, id, target, {
        reason: "Removed from the organization",
        revocationReason: "Removed from the organization",
        // The caller's role as of now, under the lock: a concurrent demotion has taken effect.
        authorize: async (t) => ({ kind: "member", role: (await requireOrgAccess(t, ctx, id, "members.manage")).membership.role }),
      });
      await audit.record(tx, ctx, AuditAction.orgMemberRemove, { organizationId: id, userId: target, resourceType: "membership", resourceId: target, metadata: { role: done.role, receiptId: done.receiptId } });
      return done;
    });
    await cut.afterCommit();
    return { receiptId: cut.receiptId };
  }

  /** Leaving: the membership and what it granted end; the person's sessions and keys are their own. */
  private async leaveLocked(ctx: RequestContext, orgId: string, target: string): Promise<void> {
    const { db } = this.deps;
    const { orgId: id } = await requireOrgAccess(db, ctx, orgId, "org.read");
    const offboarded = await db.transaction(async (tx) => {
      await membershipsRepository.lockOrganization(tx, id);
      await requireOrgAccess(tx, ctx, id, "org.read");
      const member = await getActiveMembership(tx, target, id);
      if (!member) throw OrgErrors.memberNotFound();
      await this.assertOwnerRemains(tx, id, member.role);
      await this.removeLocked(tx, id, target);
      // Access granted by this organization ends with the membership, SSH certificates included.
      await this.deps.certificates.revokeForOffboarding(tx, ctx, { userId: target, organizationId: id, reason: "Left the organization" });
      const networkMemberships = await this.deps.networks.personLeft(tx, ctx, { userId: target, organizationId: id, why: "left" });
      await this.deps.audit.record(tx, ctx, AuditAction.orgMemberLeave, { organizationId: id, userId: target, resourceType: "membership", resourceId: target, metadata: { role: member.role } });
      return networkMemberships;
    });
    await this.deps.networks.apply(offboarded);
  }

  async leave(ctx: RequestContext, orgId: string): Promise<void> {
    // Anonymous: 401 like every organization route (not 404, which would answer before sign-in).
    await this.remove(ctx, orgId, requireUser(ctx).userId);
  }

  async changeRole(ctx: RequestContext, orgId: string, userId: string, input: ChangeRoleInput): Promise<MemberView> {
    const { db, clock, audit } = this.deps;
    const target = parseId(userId, OrgErrors.memberNotFound);
    const { orgId: id } = await requireOrgAccess(db, ctx, orgId, "members.manage");
    const { role } = parseInput(changeRoleSchema, input);
    return db.transaction(async (tx) => {
      await membershipsRepository.lockOrganization(tx, id);
      // The caller's role as of now, under the lock: a demoted owner's concurrent grant must not commit.
      const { membership } = await requireOrgAccess(tx, ctx, id, "members.manage");
      const member = await getActiveMembership(tx, target, id);
      // A deleted account's membership is listed nowhere: not found, before anything is written.
      const listed = async () => (await membershipsRepository.listMembers(tx, id)).find((m) => m.userId === target);
      if (!member || !(await listed())) throw OrgErrors.memberNotFound();
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
      // The caller manages members (checked above): the admins' view.
      return memberView((await listed())!, id, true);
    });
  }

  /** Refuses a change that would take away the organization's last owner (row lock held by the caller). */
  private async assertOwnerRemains(tx: Executor, orgId: string, roleLeaving: OrgRole): Promise<void> {
    if (roleLeaving !== "owner") return;
    if ((await membershipsRepository.countOwners(tx, orgId)) <= 1) throw OrgErrors.lastOwner();
  }

  /**
   * Ends a membership and the department and principal grants that came with it. An account this
   * organization managed becomes its owner's alone: management never outlives membership.
   */
  async removeLocked(tx: Executor, orgId: string, userId: string): Promise<void> {
    await memberStanding.cut(tx, orgId, userId, this.deps.clock.now(), { keepManagement: false });
  }
}
