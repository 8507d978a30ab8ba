import { uuid } from "../../lib/crypto/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import { toPage, type Page } from "../../lib/pagination.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AccessErrors, getActiveMembership } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { SessionsService } from "../auth/index.js";
import { memberStanding, OrgErrors } from "../orgs/index.js";
import { UserErrors, userAccounts } from "../users/index.js";
import { assertMayGrant, reachMember, requireManager, requireReader } from "./offboarding.access.js";
import { OffboardingErrors } from "./offboarding.errors.js";
import { offboardSchema, receiptsQuerySchema, type OffboardInput, type ReceiptsQueryInput } from "./offboarding.schemas.js";
import { cutList, receiptView, type OffboardingReceipt, type ReceiptFacts } from "./receipt.js";

/** What offboarding uses of the other modules (each through its door, wired in the container). */
export interface OffboardingDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  audit: AuditService;
  sessions: Pick<SessionsService, "list" | "revokeAll">;
  delegatedTokens: { revokeForUser(userId: string): Promise<number> };
  apiKeys: { revokeCreatedBy(tx: Executor, ctx: RequestContext, orgId: string, userId: string, reason: string): Promise<string[]> };
  certificates: {
    lockForRevocation(tx: Executor, v: { organizationIds?: string[]; userId?: string }): Promise<void>;
    revokeListed(tx: Executor, ctx: RequestContext, v: { userId: string; organizationId?: string; reason: string }): Promise<Array<{ id: string; serial: string }>>;
  };
  networks: {
    personLeft(tx: Executor, ctx: RequestContext, v: { userId: string; organizationId?: string; why: "left" | "suspended" | "deleted" }): Promise<string[]>;
    applyListed(membershipIds: string[]): Promise<{ pendingIds: string[] }>;
  };
}

export interface ReinstateResult {
  organizationId: string;
  userId: string;
  role: ReceiptFacts["role"];
  /** The receipt of the suspension lifted. */
  receiptId: string;
  accountReactivated: boolean;
}

/**
 * Offboarding as one action (issue 36): everything a person holds through one organization is cut
 * in one transaction (membership, departments, principals, SSH certificates into the KRL, network
 * access, the API keys they created; for an account this organization manages also its sessions
 * and delegated CLI tokens), the network controller is told after the commit (what it misses is
 * left to reconciliation), and one audit record, the receipt, lists what was cut and what is
 * pending. Nothing of any other organization is touched.
 */
export class OffboardingService {
  constructor(private readonly deps: OffboardingDeps) {}

  async offboard(ctx: RequestContext, orgId: string, userId: string, input: OffboardInput): Promise<OffboardingReceipt> {
    const { db, clock } = this.deps;
    const id = parseId(orgId, AccessErrors.orgNotFound);
    const target = parseId(userId, OrgErrors.memberNotFound);
    // Tenancy first: an outsider learns nothing from how its body is refused.
    await requireManager(db, ctx, id);
    const { mode, reason } = parseInput(offboardSchema, input);
    const cut = await db.transaction(async (tx) => {
      // Organization first, then its certificates, then the person (the order every offboarding takes).
      if (!(await memberStanding.lockOrganization(tx, id))) throw AccessErrors.orgNotFound();
      await this.deps.certificates.lockForRevocation(tx, { organizationIds: [id] });
      // The caller's standing as of now, under the lock (a concurrent demotion has taken effect).
      const caller = await requireManager(tx, ctx, id);
      const { member, user, managed } = await reachMember(tx, ctx, caller, id, target);
      if (member.role === "owner" && (await memberStanding.countOwners(tx, id)) <= 1) throw OrgErrors.lastOwner();
      const now = clock.now();
      const standing = await memberStanding.cut(tx, id, target, now, { keepManagement: managed && mode === "suspend" });
      const why = `Offboarded (${mode}): ${reason}`;
      const certificates = await this.deps.certificates.revokeListed(tx, ctx, { userId: target, organizationId: id, reason: why });
      const devices = await this.deps.networks.personLeft(tx, ctx, { userId: target, organizationId: id, why: mode === "suspend" ? "suspended" : "left" });
      const keys = await this.deps.apiKeys.revokeCreatedBy(tx, ctx, id, target, why);
      // A managed account is this organization's: suspending it here refuses its sign-in too.
      const accountSuspended = managed && mode === "suspend" && user.status !== "suspended" && (await userAccounts.suspend(tx, target, reason, now)) !== undefined;
      return { role: member.role, managed, accountSuspended, standing, certificates, devices, keys };
    });
    // After the commit: sessions and tokens (a store of their own), then the controller.
    const sessionIds = cut.managed ? await this.endSessions(target) : { ids: [], cli: 0 };
    const pending = await this.deauthorize(cut.devices);
    const facts: ReceiptFacts = {
      mode,
      reason,
      role: cut.role,
      managed: cut.managed,
      accountSuspended: cut.accountSuspended,
      sessions: cutList(sessionIds.ids),
      cliGrants: { count: sessionIds.cli },
      orgKeys: cutList(cut.keys),
      certificates: { ...cutList(cut.certificates.map((c) => c.id)), serials: cut.certificates.map((c) => c.serial) },
      devices: cutList(cut.devices),
      departments: cutList(cut.standing.departmentIds),
      principals: cutList(cut.standing.principalIds),
      pending: { devices: pending },
    };
    const receiptId = uuid();
    await this.deps.audit.record(db, ctx, AuditAction.orgMemberOffboarded, { organizationId: id, userId: target, resourceType: "offboarding", resourceId: receiptId, metadata: { ...facts } });
    return this.receipt(ctx, id, receiptId);
  }

  /** Lifts a suspension: the membership comes back with its role, departments and principals; revoked credentials stay revoked. */
  async reinstate(ctx: RequestContext, orgId: string, userId: string): Promise<ReinstateResult> {
    const { db, clock, audit } = this.deps;
    const id = parseId(orgId, AccessErrors.orgNotFound);
    const target = parseId(userId, OrgErrors.memberNotFound);
    await requireManager(db, ctx, id);
    return db.transaction(async (tx) => {
      if (!(await memberStanding.lockOrganization(tx, id))) throw AccessErrors.orgNotFound();
      const caller = await requireManager(tx, ctx, id);
      if (ctx.actor.kind === "user" && ctx.actor.userId === target) throw AccessErrors.reachSelf("reinstate");
      const suspension = await this.openSuspension(tx, id, target);
      if (!suspension) throw OffboardingErrors.notSuspended();
      assertMayGrant(caller, suspension.role);
      const user = await userAccounts.find(tx, target);
      if (!user) throw UserErrors.notFound();
      const now = clock.now();
      await memberStanding.restore(tx, { organizationId: id, userId: target, role: suspension.role, departmentIds: suspension.departments.ids, principalIds: suspension.principals.ids, now });
      const accountReactivated = suspension.accountSuspended && user.status === "suspended" && user.managedByOrganizationId === id && (await userAccounts.unsuspend(tx, target, now)) !== undefined;
      await audit.record(tx, ctx, AuditAction.orgMemberReinstated, { organizationId: id, userId: target, resourceType: "offboarding", resourceId: suspension.id, metadata: { role: suspension.role, accountReactivated } });
      return { organizationId: id, userId: target, role: suspension.role, receiptId: suspension.id, accountReactivated };
    });
  }

  /** One receipt, by its id or by its audit record's id. */
  async receipt(ctx: RequestContext, orgId: string, receiptId: string): Promise<OffboardingReceipt> {
    const { db, audit } = this.deps;
    const id = parseId(orgId, AccessErrors.orgNotFound);
    const rid = parseId(receiptId, OffboardingErrors.receiptNotFound);
    await requireReader(db, ctx, id);
    const { items } = await audit.listForOrganization(db, id, { action: AuditAction.orgMemberOffboarded, resourceId: rid, page: 1, perPage: 1 });
    const row = items[0] ?? (await this.byAuditId(db, id, rid));
    if (!row) throw OffboardingErrors.receiptNotFound();
    return receiptView(row);
  }

  /** The organization's receipts, newest first (optionally one person's). */
  async receipts(ctx: RequestContext, orgId: string, input: ReceiptsQueryInput = {}): Promise<Page<OffboardingReceipt>> {
    const { db, audit } = this.deps;
    const id = parseId(orgId, AccessErrors.orgNotFound);
    const q = parseInput(receiptsQuerySchema, input);
    await requireReader(db, ctx, id);
    const { items, total } = await audit.listForOrganization(db, id, { action: AuditAction.orgMemberOffboarded, userId: q.userId, page: q.page, perPage: q.perPage });
    return toPage(items.map(receiptView), total, q.page, q.perPage);
  }

  /** Every session of the account and the delegated tokens acting for it; the sessions' public ids. */
  private async endSessions(userId: string): Promise<{ ids: string[]; cli: number }> {
    const ids = (await this.deps.sessions.list(userId, null)).map((s) => s.id);
    const cli = await this.deps.delegatedTokens.revokeForUser(userId);
    await this.deps.sessions.revokeAll(userId);
    return { ids, cli };
  }

  /** Tells the controller now; whatever it does not take is left to reconciliation (the intent is committed). */
  private async deauthorize(membershipIds: string[]): Promise<string[]> {
    try {
      return (await this.deps.networks.applyListed(membershipIds)).pendingIds;
    } catch (err) {
      this.deps.logger.warn({ err }, "offboarding: controller deauthorization left to reconciliation");
      return membershipIds;
    }
  }

  /** The newest suspension of the person here that no reinstatement has lifted, while they are not a member. */
  private async openSuspension(tx: Executor, orgId: string, userId: string): Promise<(ReceiptFacts & { id: string }) | undefined> {
    if (await getActiveMembership(tx, userId, orgId)) return undefined;
    const { items } = await this.deps.audit.listForOrganization(tx, orgId, { action: AuditAction.orgMemberOffboarded, userId, page: 1, perPage: 1 });
    const last = items[0];
    if (!last?.resourceId || (last.metadata as { mode?: string }).mode !== "suspend") return undefined;
    const lifted = await this.deps.audit.listForOrganization(tx, orgId, { action: AuditAction.orgMemberReinstated, resourceId: last.resourceId, page: 1, perPage: 1 });
    if (lifted.total > 0) return undefined;
    return { ...(last.metadata as unknown as ReceiptFacts), id: last.resourceId };
  }

  private async byAuditId(db: Executor, orgId: string, auditId: string) {
    const { items } = await this.deps.audit.listForOrganization(db, orgId, { action: AuditAction.orgMemberOffboarded, page: 1, perPage: 1, recordId: auditId });
    return items[0];
  }
}
