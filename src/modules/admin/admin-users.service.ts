import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { uniqueOr } from "../../infra/db-errors.js";
import { AppError, CommonErrors } from "../../lib/errors.js";
import { toPage, type Page } from "../../lib/pagination.js";
import type { RequestContext, UserActor } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { z } from "zod";
import { AuditAction, type AuditEntryView, type AuditService } from "../audit/index.js";
import type { MfaService, CredentialsService, SessionsService } from "../auth/index.js";
import type { EmailService } from "../email/index.js";
import { adminDeleteSchema, adminPasswordSchema, adminUsersQuerySchema } from "../orgs/index.js";
import { assertReach, type Offboarding, getActiveMemberships, getActiveMembershipsOfUsers, soleOwnedOrganizations, isAdminRole, type OrgRole, requirePersonalUser, requireSuperadmin } from "../access/index.js";
import { UserErrors, userAccounts, type UserRow, auditQuerySchema, suspendSchema, toUserView, type UserView } from "../users/index.js";
import { AdminErrors, reachUser } from "./admin-reach.js";
import { sshKeysOfUser, type SshKeyView } from "../ssh-keys/index.js";


export interface AdminUserView extends UserView {
  /** The organization that manages the account, if any. */
  managedBy: { id: string; name: string } | null;
  organizations: Array<{ id: string; name: string; role: OrgRole }>;
}

export interface AdminUsersDeps extends Offboarding {
  db: Db;
  clock: Clock;
  credentials: Pick<CredentialsService, "hashNewPassword" | "setPassword" | "clearLocks">;
  mfa: Pick<MfaService, "methodsOf" | "removeMethods">;
  audit: AuditService;
  sessions: SessionsService;
  email: EmailService;
}

// `method` is a path segment on REST and a String on GraphQL: any string reaches the enum.
const removeMfaSchema = z.object({ method: z.string().pipe(z.enum(["totp", "webauthn", "all"])), credentialId: z.uuid().optional() });
export type RemoveMfaInput = z.input<typeof removeMfaSchema>;
/** Ids that are not UUIDs name nothing: they are dropped rather than refused (a record may hold anything). */

/**
 * Administration of other people's accounts, under the admin-reach rule (admin-reach.ts):
 * superadmins reach every account; the owners and admins of the organization that manages an
 * account reach it while their role there is above its role; sharing an organization reaches
 * nothing. Anyone else finds no such account.
 */
export class AdminUsersService {
  constructor(private readonly deps: AdminUsersDeps) {}

  async search(ctx: RequestContext, input: z.input<typeof adminUsersQuerySchema>): Promise<Page<AdminUserView>> {
    const { db } = this.deps;
    const actor = requirePersonalUser(ctx);
    const q = parseInput(adminUsersQuerySchema, input);
    let managedBy: string[] | undefined;
    if (!actor.isSuperadmin) {
      // Organization admins administer the accounts their organizations manage, and no others.
      managedBy = (await getActiveMemberships(db, actor.userId)).filter((m) => isAdminRole(m.role)).map((m) => m.organizationId);
      if (managedBy.length === 0) throw AdminErrors.notAllowed();
    }
    // Deleted accounts are an operator's to list (and restore).
    if (q.show === "deleted" && !actor.isSuperadmin) throw CommonErrors.forbidden("Only superadmins list deleted accounts");
    const { rows, total } = await userAccounts.search(db, { text: q.q, managedBy, show: q.show, limit: q.perPage, offset: (q.page - 1) * q.perPage });
    return toPage(await this.withOrgsOfMany(actor, rows), total, q.page, q.perPage);
  }

  /** Superadmins: every account, whatever organization it is in. */
  async searchAll(ctx: RequestContext, input: z.input<typeof adminUsersQuerySchema>): Promise<Page<AdminUserView>> {
    requireSuperadmin(ctx);
    return this.search(ctx, input);
  }

  async get(ctx: RequestContext, userId: string): Promise<AdminUserView> {
    const actor = requirePersonalUser(ctx);
    const target = await reachUser(this.deps.db, actor, userId, { allowSelf: true });
    return this.withOrgs(actor, target);
  }

  /** The account with its SSH public keys (GET /admin/users/{id}, as the original API answered it). */
  async getWithSshKeys(ctx: RequestContext, userId: string): Promise<{ user: AdminUserView; sshKeys: SshKeyView[] }> {
    const actor = requirePersonalUser(ctx);
    const target = await reachUser(this.deps.db, actor, userId, { allowSelf: true });
    const [user, sshKeys] = await Promise.all([this.withOrgs(actor, target), sshKeysOfUser(this.deps.db, target.id)]);
    return { user, sshKeys };
  }

  /** Suspends an account: its sessions end at once, sign-in is refused, and its owner is told why. */
  async suspend(ctx: RequestContext, userId: string, input: z.input<typeof suspendSchema>): Promise<UserView> {
    const { db, clock, audit, sessions, email } = this.deps;
    const actor = requirePersonalUser(ctx);
    const { reason } = parseInput(suspendSchema, input);
    const { view, offboarded } = await db.transaction(async (tx) => {
      const user = await reachUser(tx, actor, userId, { allowSelf: false, what: "suspend" });
      if (user.status === "suspended") throw UserErrors.alreadySuspended();
      const now = clock.now();
      // Organizations before the account: the order every offboarding locks in.
      await this.deps.certificates.lockForRevocation(tx, { userId: user.id });
      const updated = await userAccounts.suspend(tx, user.id, reason ?? null, now);
      // Deleted since it was read.
      if (!updated) throw UserErrors.notFound();
      // A suspended person's certificates stop working everywhere (sshd trusts certificates, not sessions).
      await this.deps.certificates.revokeForOffboarding(tx, ctx, { userId: user.id, reason: "Account suspended" });
      const offboarded = await this.deps.networks.personLeft(tx, ctx, { userId: user.id, why: "suspended" });
      await email.enqueue(tx, "account-suspended", user.email, { name: user.fullName ?? user.email, email: user.email, reason: reason ?? "not given" });
      await audit.record(tx, ctx, AuditAction.userSuspend, { userId: user.id, resourceType: "user", resourceId: user.id, metadata: { reason } });
      return { view: toUserView(updated), offboarded };
    });
    await sessions.revokeAll(view.id);
    await this.deps.networks.apply(offboarded);
    return view;
  }

  async unsuspend(ctx: RequestContext, userId: string): Promise<UserView> {
    const { db, clock, audit } = this.deps;
    const actor = requirePersonalUser(ctx);
    return db.transaction(async (tx) => {
      const user = await reachUser(tx, actor, userId, { allowSelf: false, what: "unsuspend" });
      if (user.status !== "suspended") throw UserErrors.notSuspended();
      const updated = await userAccounts.unsuspend(tx, user.id, clock.now());
      if (!updated) throw UserErrors.notFound();
      await audit.record(tx, ctx, AuditAction.userUnsuspend, { userId: user.id, resourceType: "user", resourceId: user.id });
      return toUserView(updated);
    });
  }

  /**
   * Marks an address verified without its owner's proof: superadmins only (an operator who checked
   * it another way), audited. No organization admin can: a verified address receives the
   * invitations meant for it and is vouched for to relying parties.
   */
  async verifyEmail(ctx: RequestContext, userId: string): Promise<UserView> {
    const { db, clock, audit } = this.deps;
    const actor = requireSuperadmin(ctx);
    return db.transaction(async (tx) => {
      const user = await reachUser(tx, actor, userId, { allowSelf: false, what: "verify" });
      const updated = await userAccounts.markEmailVerified(tx, user, "superadmin", clock.now());
      await audit.record(tx, ctx, AuditAction.userVerifyEmailByAdmin, { userId: user.id, resourceType: "user", resourceId: user.id, metadata: { via: "superadmin" } });
      return toUserView(updated);
    });
  }

  /** Sets a new password for the account; every session of it ends. */
  async setPassword(ctx: RequestContext, userId: string, input: z.input<typeof adminPasswordSchema>): Promise<void> {
    const { db, clock, credentials, audit, sessions } = this.deps;
    const actor = requirePersonalUser(ctx);
    const { password } = parseInput(adminPasswordSchema, input);
    const target = await reachUser(db, actor, userId, { allowSelf: false, what: "set a password for" });
    const newPassword = await credentials.hashNewPassword(password, target.email);
    await db.transaction(async (tx) => {
      // Still within reach after the slow hash (the account may have left the organization meanwhile).
      await reachUser(tx, actor, target.id, { allowSelf: false, what: "set a password for" });
      await credentials.setPassword(tx, target.id, newPassword);
      // A pending account becomes usable once an administrator sets its password.
      if (target.status === "pending_activation") await userAccounts.activate(tx, target.id, clock.now());
      await audit.record(tx, ctx, AuditAction.userPasswordSetByAdmin, { userId: target.id, resourceType: "user", resourceId: target.id });
    });
    await sessions.revokeAll(target.id);
    // The owner gets the new password from an administrator: a guesser's lock must not keep them out.
    await credentials.clearLocks(target.email);
  }

  /** Soft-deletes an account (`confirm: true` required); refused while it is an organization's only owner. */
  async delete(ctx: RequestContext, userId: string, input: z.input<typeof adminDeleteSchema>): Promise<void> {
    const { db, clock, audit, sessions } = this.deps;
    const actor = requirePersonalUser(ctx);
    parseInput(adminDeleteSchema, input);
    const { id, offboarded } = await db.transaction(async (tx) => {
      const user = await reachUser(tx, actor, userId, { allowSelf: false, what: "delete" });
      // Organizations before the account: the order every offboarding locks in. Whether the
      // account is an only owner is decided under those locks (an acceptance or a departure waits).
      await this.deps.certificates.lockForRevocation(tx, { userId: user.id });
      const sole = await soleOwnedOrganizations(tx, user.id);
      if (sole.withOthers.length > 0) throw new AppError("USER_IS_SOLE_OWNER", 409, `The user is the only owner of ${sole.withOthers.map((o) => o.name).join(", ")}: transfer ownership first`, { transfer_ownership: sole.withOthers.map((o) => o.name) });
      const now = clock.now();
      await userAccounts.softDelete(tx, user.id, now);
      await this.deps.certificates.revokeForOffboarding(tx, ctx, { userId: user.id, reason: "Account deleted" });
      const offboarded = await this.deps.networks.personLeft(tx, ctx, { userId: user.id, why: "deleted" });
      await audit.record(tx, ctx, AuditAction.userDelete, { userId: user.id, resourceType: "user", resourceId: user.id, metadata: { by_admin: true } });
      return { id: user.id, offboarded };
    });
    await sessions.revokeAll(id);
    await this.deps.networks.apply(offboarded);
  }

  async restore(ctx: RequestContext, userId: string): Promise<UserView> {
    const { db, clock, audit } = this.deps;
    const actor = requirePersonalUser(ctx);
    const id = parseId(userId, UserErrors.notFound);
    const restore = () =>
      db.transaction(async (tx) => {
        const deleted = await userAccounts.findDeleted(tx, id);
        if (!deleted) {
          if (await userAccounts.find(tx, id)) throw AdminErrors.notDeleted();
          throw UserErrors.notFound();
        }
        await assertReach(tx, actor, deleted, { allowSelf: false, what: "restore" });
        const restored = await userAccounts.restore(tx, id, clock.now());
        // A concurrent restore got there first.
        if (!restored) throw AdminErrors.notDeleted();
        await audit.record(tx, ctx, AuditAction.userRestore, { userId: id, resourceType: "user", resourceId: id });
        return toUserView(restored);
      });
    // Another account took the address while this one was deleted.
    return uniqueOr(restore, { users_email_live_uq: AdminErrors.emailTaken });
  }

  /** An administered user's MFA methods, without any secret. */
  /** An administered account's SSH public keys (the same reach as the account itself). */
  async sshKeysOf(ctx: RequestContext, userId: string): Promise<SshKeyView[]> {
    const actor = requirePersonalUser(ctx);
    const target = await reachUser(this.deps.db, actor, userId, { allowSelf: true });
    return sshKeysOfUser(this.deps.db, target.id);
  }

  async mfaMethods(ctx: RequestContext, userId: string) {
    const actor = requirePersonalUser(ctx);
    const target = await reachUser(this.deps.db, actor, userId, { allowSelf: true });
    return this.deps.mfa.methodsOf(target.id);
  }

  /**
   * Removes MFA from an administered account (one WebAuthn credential, all of them, TOTP, or
   * everything), audited, and tells the account's owner by email.
   */
  async removeMfa(ctx: RequestContext, userId: string, input: RemoveMfaInput): Promise<void> {
    const { db, audit, email, mfa } = this.deps;
    const actor = requirePersonalUser(ctx);
    const data = parseInput(removeMfaSchema, input);
    await db.transaction(async (tx) => {
      const target = await reachUser(tx, actor, userId, { allowSelf: false, what: "remove MFA from" });
      const removed = await mfa.removeMethods(tx, target.id, data);
      if (!removed) throw UserErrors.notFound();
      await email.enqueue(tx, "mfa-removed", target.email, { name: target.fullName ?? target.email, adminEmail: actor.email, removed });
      await audit.record(tx, ctx, AuditAction.adminMfaRemoved, { userId: target.id, resourceType: "user", resourceId: target.id, metadata: data });
    });
  }

  /** Superadmin: every audit record about one user. */
  async userAudit(ctx: RequestContext, userId: string, input: z.input<typeof auditQuerySchema>): Promise<Page<AuditEntryView>> {
    requireSuperadmin(ctx);
    const id = parseId(userId, UserErrors.notFound);
    const q = parseInput(auditQuerySchema, input);
    const { items, total } = await this.deps.audit.listForUser(this.deps.db, id, q);
    return toPage(items, total, q.page, q.perPage);
  }

  /** The account with the organizations the actor may see it in (all of them for superadmins). */
  private async withOrgs(actor: UserActor, user: UserRow): Promise<AdminUserView> {
    const [view] = await this.withOrgsOfMany(actor, [user]);
    return view!;
  }

  /**
   * A page of accounts with their organizations: one statement for all their memberships (and one
   * for the actor's own, unless a superadmin), whatever the page's size.
   */
  private async withOrgsOfMany(actor: UserActor, users: UserRow[]): Promise<AdminUserView[]> {
    const { db } = this.deps;
    const [theirs, mine] = await Promise.all([
      getActiveMembershipsOfUsers(db, users.map((u) => u.id)),
      actor.isSuperadmin ? null : getActiveMemberships(db, actor.userId).then((ms) => new Set(ms.map((m) => m.organizationId))),
    ]);
    return users.map((user) => {
      const own = theirs.filter((m) => m.userId === user.id);
      const managing = own.find((m) => m.organizationId === user.managedByOrganizationId);
      return {
        ...toUserView(user),
        managedBy: managing ? { id: managing.organizationId, name: managing.organizationName } : null,
        organizations: own.filter((m) => !mine || mine.has(m.organizationId)).map((m) => ({ id: m.organizationId, name: m.organizationName, role: m.role })),
      };
    });
  }
}
