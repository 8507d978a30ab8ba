import { uuid } from "../../lib/crypto/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import { AppError } from "../../lib/errors.js";
import { toPage, type Page } from "../../lib/pagination.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AccessErrors, getActiveMembership, getActiveMemberships, type OrgRole } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { SessionsService } from "../auth/index.js";
import { assertBelowOrgLimit, memberStanding, OrgErrors, type OrgLimitConfig } from "../orgs/index.js";
import { UserErrors, userAccounts } from "../users/index.js";
import { assertMayGrant, type Caller, reachMember, reachSuspended, requireManager, requireReader } from "./offboarding.access.js";
import { OffboardingErrors } from "./offboarding.errors.js";
import { offboardSchema, receiptsQuerySchema, type OffboardInput, type OffboardMode, type ReceiptsQueryInput } from "./offboarding.schemas.js";
import { cutList, type DevicesOutcome, receiptView, type OffboardingReceipt, type ReceiptFacts } from "./receipt.js";

/** What offboarding uses of the other modules (each through its door, wired in the container). */
export interface OffboardingDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  audit: AuditService;
  /** The organizations-per-user limit (MAX_ORGS_PER_USER): a reinstatement gives a membership back. */
  orgLimit: OrgLimitConfig;
  sessions: Pick<SessionsService, "list" | "revoke">;
  delegatedTokens: { revokeForUserIn(tx: Executor, userId: string): Promise<number> };
  apiKeys: { revokeCreatedBy(tx: Executor, ctx: RequestContext, orgId: string, userId: string, reason: string): Promise<string[]> };
  /** Host enrollment tokens the person created here (unused ones), revoked. */
  enrollmentTokens: { revokeCreatedBy(tx: Executor, ctx: RequestContext, orgId: string, userId: string, reason: string): Promise<string[]> };
  certificates: {
    lockForRevocation(tx: Executor, v: { organizationIds?: string[]; userId?: string }): Promise<void>;
    revokeListed(tx: Executor, ctx: RequestContext, v: { userId: string; organizationId?: string; reason: string }): Promise<Array<{ id: string; serial: string }>>;
  };
  networks: {
    personLeft(tx: Executor, ctx: RequestContext, v: { userId: string; organizationId?: string; why: "left" | "suspended" | "deleted" }): Promise<string[]>;
    applyListed(membershipIds: string[]): Promise<{ pendingIds: string[] }>;
  };
}

/** Decides the caller's standing under the organization's lock (a manager, or SCIM's key). */
export type Authorize = (tx: Executor) => Promise<Caller>;

export interface CutOptions {
  /** Decides the caller's standing under the lock (default: a manager of the organization). */
  authorize?: Authorize;
  /** The reason written on revoked credentials (default: "Offboarded (<mode>): <reason>"). */
  revocationReason?: string;
}

/** One offboarding done inside a transaction: its receipt's id, and what runs once it has committed. */
export interface Cut {
  receiptId: string;
  /** The role the person held here. */
  role: OrgRole;
  afterCommit: () => Promise<void>;
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
 * access, the API keys and host enrollment tokens they created; for an account this organization manages also its sessions
 * and delegated CLI tokens) and one audit record, the receipt, written in that same transaction,
 * lists what was cut; the network controller is told after the commit (what it misses is left to
 * reconciliation) and a follow-up record says what is still pending. Nothing of any other
 * organization is touched.
 */
export class OffboardingService {
  constructor(private readonly deps: OffboardingDeps) {}

  async offboard(ctx: RequestContext, orgId: string, userId: string, input: OffboardInput): Promise<OffboardingReceipt> {
    const { db } = this.deps;
    const id = parseId(orgId, AccessErrors.orgNotFound);
    const target = parseId(userId, OrgErrors.memberNotFound);
    // Tenancy first: an outsider learns nothing from how its body is refused.
    await requireManager(db, ctx, id);
    const { mode, reason } = parseInput(offboardSchema, input);
    const cut = await db.transaction((tx) => this.cutInTransaction(tx, ctx, id, target, mode, reason));
    await cut.afterCommit();
    return this.receipt(ctx, id, cut.receiptId);
  }

  /**
   * One offboarding inside the caller's transaction (an admin's Offboard, SCIM's active=false and
   * DELETE, removing a member): the organization's lock and its certificates' lock (taken here
   * unless the caller holds them already, in that order), the caller's standing decided under them
   * (`authorize`: a manager by default; SCIM passes its key), then every cut. What cannot be part
   * of the transaction is in `afterCommit`, which the caller runs once it has committed.
   *
   * Removing someone who is suspended here (SCIM's DELETE after active=false, as Okta and Entra ID
   * send it) is one step too: the suspension's receipt already cut their standing, this one ends
   * the organization's management of the account and lists anything still held.
   */
  async cutInTransaction(tx: Executor, ctx: RequestContext, orgId: string, userId: string, mode: OffboardMode, reason: string, opts: CutOptions = {}): Promise<Cut> {
    const authorize = opts.authorize ?? ((t: Executor) => requireManager(t, ctx, orgId));
    const { clock } = this.deps;
    // Organization first, then its certificates, then the person (the order every offboarding takes).
    await this.lock(tx, orgId);
    // The caller's standing as of now, under the lock (a concurrent demotion has taken effect).
    const caller = await authorize(tx);
    const now = clock.now();
    const suspended = mode === "remove" && !(await getActiveMembership(tx, userId, orgId)) ? await this.openSuspension(tx, orgId, userId) : undefined;
    const { user, managed, role } = suspended
      ? { ...(await reachSuspended(tx, ctx, caller, orgId, userId, suspended.role)), role: suspended.role }
      : await reachMember(tx, ctx, caller, orgId, userId).then((r) => ({ ...r, role: r.member.role }));
    if (!suspended && role === "owner" && (await memberStanding.countOwners(tx, orgId)) <= 1) throw OrgErrors.lastOwner();
    const standing = await memberStanding.cut(tx, orgId, userId, now, { keepManagement: managed && mode === "suspend" });
    const why = opts.revocationReason ?? `Offboarded (${mode}): ${reason}`;
    const certificates = await this.deps.certificates.revokeListed(tx, ctx, { userId, organizationId: orgId, reason: why });
    const devices = await this.deps.networks.personLeft(tx, ctx, { userId, organizationId: orgId, why: mode === "suspend" ? "suspended" : "left" });
    const keys = await this.deps.apiKeys.revokeCreatedBy(tx, ctx, orgId, userId, why);
    const enrollments = await this.deps.enrollmentTokens.revokeCreatedBy(tx, ctx, orgId, userId, why);
    let accountSuspended = false;
    if (managed && mode === "suspend" && user.status !== "suspended" && (await getActiveMemberships(tx, userId)).length === 0) {
      // A managed account is this organization's: suspending it here refuses its sign-in too, unless
      // the person is a member of another organization (that membership is not ours to take away).
      accountSuspended = (await userAccounts.suspend(tx, userId, reason, now)) !== undefined;
    }
    // The account suspension of the suspension removed now ends with the management it came from.
    if (suspended?.accountSuspended && user.status === "suspended") await userAccounts.unsuspend(tx, userId, now);
    /*
     * The receipt is part of the cutting transaction (crash-safe: there are never cuts committed
     * without their summary). Delegated CLI tokens are revoked in the transaction too. Sessions
     * live in a store of their own: they are ended now, before the commit, so the receipt can list
     * them; should the transaction then roll back, the person has to sign in again, and nothing is
     * left open that the receipt does not list (revoking more than commits is the safe direction). The network controller is the one
     * effect that must follow the commit (the intent is what reconciliation finishes): the receipt
     * lists every device as pending, and once the controller was tried a follow-up record
     * (`org.member.offboarded.devices`, same resourceId, chained like the receipt) says which are
     * still pending; the receipt as read merges it. A process that dies before the follow-up leaves
     * the receipt saying "pending" — true until reconciliation has taken them off the controller.
     */
    const sessions = managed ? await this.endSessions(tx, userId) : { ids: [], cli: 0 };
    const receiptId = uuid();
    const metadata: ReceiptFacts = {
      mode,
      reason,
      role,
      managed,
      accountSuspended,
      sessions: cutList(sessions.ids),
      cliGrants: { count: sessions.cli },
      orgKeys: cutList(keys),
      hostEnrollments: cutList(enrollments),
      certificates: { ...cutList(certificates.map((c) => c.id)), serials: certificates.map((c) => c.serial) },
      devices: cutList(devices),
      departments: cutList(standing.departmentIds),
      principals: cutList(standing.principalIds),
      pending: { devices },
    };
    await this.deps.audit.record(tx, ctx, AuditAction.orgMemberOffboarded, { organizationId: orgId, userId, resourceType: "offboarding", resourceId: receiptId, metadata: { ...metadata } });
    const afterCommit = async () => {
      if (devices.length === 0) return;
      const pending = await this.deauthorize(devices);
      const outcome: DevicesOutcome = { deauthorized: devices.filter((d) => !pending.includes(d)), pending };
      await this.deps.audit.record(this.deps.db, ctx, AuditAction.orgMemberOffboardedDevices, { organizationId: orgId, userId, resourceType: "offboarding", resourceId: receiptId, metadata: { ...outcome } });
    };
    return { receiptId, role, afterCommit };
  }

  /** The locks an offboarding takes, in its order: the organization, then its certificates (before any account row). */
  async lock(tx: Executor, orgId: string): Promise<void> {
    if (!(await memberStanding.lockOrganization(tx, orgId))) throw AccessErrors.orgNotFound();
    await this.deps.certificates.lockForRevocation(tx, { organizationIds: [orgId] });
  }

  /** Lifts a suspension: the membership comes back with its role, departments and principals; revoked credentials stay revoked. */
  async reinstate(ctx: RequestContext, orgId: string, userId: string): Promise<ReinstateResult> {
    const { db } = this.deps;
    const id = parseId(orgId, AccessErrors.orgNotFound);
    const target = parseId(userId, OrgErrors.memberNotFound);
    await requireManager(db, ctx, id);
    return db.transaction((tx) => this.reinstateInTransaction(tx, ctx, id, target));
  }

  /** The same inside the caller's transaction (SCIM's active=true), with the caller decided by `authorize` under the lock. */
  async reinstateInTransaction(tx: Executor, ctx: RequestContext, orgId: string, userId: string, authorize: Authorize = (t) => requireManager(t, ctx, orgId)): Promise<ReinstateResult> {
    const { clock, audit } = this.deps;
    if (!(await memberStanding.lockOrganization(tx, orgId))) throw AccessErrors.orgNotFound();
    const caller = await authorize(tx);
    if (ctx.actor.kind === "user" && ctx.actor.userId === userId) throw AccessErrors.reachSelf("reinstate");
    const suspension = await this.openSuspension(tx, orgId, userId);
    if (!suspension) throw OffboardingErrors.notSuspended();
    assertMayGrant(caller, suspension.role);
    // Under the person's row lock, as adding a member counts: the limit holds for a membership given back.
    await userAccounts.lock(tx, userId);
    const user = await userAccounts.find(tx, userId);
    if (!user) throw UserErrors.notFound();
    await assertBelowOrgLimit(tx, userId, this.deps.orgLimit, this.deps.logger).catch((e: unknown) => {
      throw e instanceof AppError && e.code === "ORG_LIMIT_REACHED" ? OffboardingErrors.orgLimit(this.deps.orgLimit.maxOrgsPerUser) : e;
    });
    const now = clock.now();
    await memberStanding.restore(tx, { organizationId: orgId, userId, role: suspension.role, departmentIds: suspension.departments.ids, principalIds: suspension.principals.ids, now });
    const accountReactivated = suspension.accountSuspended && user.status === "suspended" && user.managedByOrganizationId === orgId && (await userAccounts.unsuspend(tx, userId, now)) !== undefined;
    await audit.record(tx, ctx, AuditAction.orgMemberReinstated, { organizationId: orgId, userId, resourceType: "offboarding", resourceId: suspension.id, metadata: { role: suspension.role, accountReactivated } });
    return { organizationId: orgId, userId, role: suspension.role, receiptId: suspension.id, accountReactivated };
  }

  /** Whether the person is suspended here (not a member, and a suspension no reinstatement lifted). */
  async isSuspended(tx: Executor, orgId: string, userId: string): Promise<boolean> {
    return (await this.openSuspension(tx, orgId, userId)) !== undefined;
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
    return this.withDevicesOutcome(db, id, receiptView(row));
  }

  /** The organization's receipts, newest first (optionally one person's). */
  async receipts(ctx: RequestContext, orgId: string, input: ReceiptsQueryInput = {}): Promise<Page<OffboardingReceipt>> {
    const { db, audit } = this.deps;
    const id = parseId(orgId, AccessErrors.orgNotFound);
    const q = parseInput(receiptsQuerySchema, input);
    await requireReader(db, ctx, id);
    const { items, total } = await audit.listForOrganization(db, id, { action: AuditAction.orgMemberOffboarded, userId: q.userId, page: q.page, perPage: q.perPage });
    const receipts = await Promise.all(items.map((row) => this.withDevicesOutcome(db, id, receiptView(row))));
    return toPage(receipts, total, q.page, q.perPage);
  }

  /** The receipt with what the controller did with its devices after the commit (when it was tried). */
  private async withDevicesOutcome(db: Executor, orgId: string, receipt: OffboardingReceipt): Promise<OffboardingReceipt> {
    if (receipt.devices.count === 0) return receipt;
    const { items } = await this.deps.audit.listForOrganization(db, orgId, { action: AuditAction.orgMemberOffboardedDevices, resourceId: receipt.id, page: 1, perPage: 1 });
    const outcome = items[0]?.metadata as DevicesOutcome | undefined;
    return outcome ? { ...receipt, pending: { devices: outcome.pending } } : receipt;
  }

  /**
   * Every session of the account (ended now, in their own store) and the delegated tokens acting
   * for it (in the transaction); the sessions' public ids. Sessions one by one, not `revokeAll`:
   * its listeners would revoke the tokens again outside this transaction.
   */
  private async endSessions(tx: Executor, userId: string): Promise<{ ids: string[]; cli: number }> {
    const ids = (await this.deps.sessions.list(userId, null)).map((s) => s.id);
    await Promise.all(ids.map((id) => this.deps.sessions.revoke(userId, id)));
    const cli = await this.deps.delegatedTokens.revokeForUserIn(tx, userId);
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
