import { and, count, eq, ilike, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import { users } from "../../../schema/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { isUniqueViolation } from "../../infra/db-errors.js";
import type { PasswordHasher } from "../../lib/crypto/index.js";
import { AppError } from "../../lib/errors.js";
import { toPage, type Page } from "../../lib/pagination.js";
import type { RequestContext, UserActor } from "../../lib/request-context.js";
import type { NetworkOffboarding } from "../networks/offboarding.js";
import type { PasswordVerifier } from "../auth/password-verifier.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { z } from "zod";
import { AuditAction } from "../audit/audit.actions.js";
import { mfaRepository } from "../auth/mfa/mfa.repository.js";
import type { MfaHooks } from "../auth/mfa/mfa.service.js";
import type { AuditEntryView, AuditService } from "../audit/audit.service.js";
import { credentialsRepository } from "../auth/credentials.repository.js";
import { requirePersonalUser, requireSuperadmin } from "../auth/guards.js";
import { assertPasswordAcceptable } from "../auth/password-policy.js";
import type { SessionsService } from "../auth/sessions/sessions.service.js";
import type { EmailService } from "../email/email.service.js";
import type { CertificatesService } from "../ssh-ca/certificates.service.js";
import { getActiveMemberships } from "../orgs/memberships.repository.js";
import { adminDeleteSchema, adminPasswordSchema, adminUsersQuerySchema } from "../orgs/orgs.schemas.js";
import { isAdminRole, type OrgRole } from "../orgs/permissions.js";
import { UserErrors } from "../users/users.errors.js";
import { userColumns, usersRepository, type UserRow } from "../users/users.repository.js";
import { auditQuerySchema, suspendSchema } from "../users/users.schemas.js";
import { toUserView, type UserView } from "../users/users.views.js";
import { soleOwnedOrganizations } from "../orgs/sole-owner.js";
import { AdminErrors, assertReach, reachUser } from "./admin-reach.js";


export interface AdminUserView extends UserView {
  /** The organization that manages the account, if any. */
  managedBy: { id: string; name: string } | null;
  organizations: Array<{ id: string; name: string; role: OrgRole }>;
}

export interface AdminUsersDeps {
  db: Db;
  clock: Clock;
  hasher: PasswordHasher;
  passwords: Pick<PasswordVerifier, "clearLocks">;
  audit: AuditService;
  sessions: SessionsService;
  email: EmailService;
  certificates: Pick<CertificatesService, "revokeForOffboarding">;
  networks: Pick<NetworkOffboarding, "personLeft" | "organizationDeleted" | "apply">;
  mfaHooks: MfaHooks;
}

const removeMfaSchema = z.object({ method: z.enum(["totp", "webauthn", "all"]), credentialId: z.uuid().optional() });

/**
 * Administration of other people's accounts, under the admin-reach rule (admin-reach.ts):
 * superadmins reach every account; the owners and admins of the organization that manages an
 * account reach it while their role there is above its role; sharing an organization reaches
 * nothing. Anyone else finds no such account.
 */
export class AdminUsersService {
  constructor(private readonly deps: AdminUsersDeps) {}

  async search(ctx: RequestContext, input: unknown): Promise<Page<AdminUserView>> {
    const { db } = this.deps;
    const actor = requirePersonalUser(ctx);
    const q = parseInput(adminUsersQuerySchema, input);
    const where: SQL[] = [isNull(users.deletedAt)];
    if (q.q) where.push(or(ilike(users.email, `%${escapeLike(q.q)}%`), ilike(users.fullName, `%${escapeLike(q.q)}%`))!);
    if (!actor.isSuperadmin) {
      // Organization admins administer the accounts their organizations manage, and no others.
      const adminOrgs = (await getActiveMemberships(db, actor.userId)).filter((m) => isAdminRole(m.role)).map((m) => m.organizationId);
      if (adminOrgs.length === 0) throw AdminErrors.notAllowed();
      where.push(inArray(users.managedByOrganizationId, adminOrgs));
    }
    const [rows, [total]] = await Promise.all([
      db.select(userColumns).from(users).where(and(...where)).orderBy(users.email).limit(q.perPage).offset((q.page - 1) * q.perPage),
      db.select({ n: count() }).from(users).where(and(...where)),
    ]);
    const items = await Promise.all(rows.map((u) => this.withOrgs(actor, u)));
    return toPage(items, total?.n ?? 0, q.page, q.perPage);
  }

  /** Superadmins: every account, whatever organization it is in. */
  async searchAll(ctx: RequestContext, input: unknown): Promise<Page<AdminUserView>> {
    requireSuperadmin(ctx);
    return this.search(ctx, input);
  }

  async get(ctx: RequestContext, userId: string): Promise<AdminUserView> {
    const actor = requirePersonalUser(ctx);
    const target = await reachUser(this.deps.db, actor, userId, { allowSelf: true });
    return this.withOrgs(actor, target);
  }

  /** Suspends an account: its sessions end at once, sign-in is refused, and its owner is told why. */
  async suspend(ctx: RequestContext, userId: string, input: unknown): Promise<UserView> {
    const { db, clock, audit, sessions, email } = this.deps;
    const actor = requirePersonalUser(ctx);
    const { reason } = parseInput(suspendSchema, input);
    const { view, offboarded } = await db.transaction(async (tx) => {
      const user = await reachUser(tx, actor, userId, { allowSelf: false, what: "suspend" });
      if (user.status === "suspended") throw UserErrors.alreadySuspended();
      const now = clock.now();
      const updated = await usersRepository.update(tx, user.id, { status: "suspended", suspendedAt: now, suspendedReason: reason ?? null, updatedAt: now });
      // A suspended person's certificates stop working everywhere (sshd trusts certificates, not sessions).
      await this.deps.certificates.revokeForOffboarding(tx, ctx, { userId: user.id, reason: "Account suspended" });
      const offboarded = await this.deps.networks.personLeft(tx, ctx, { userId: user.id, why: "suspended" });
      await email.enqueue(tx, "account-suspended", user.email, { name: user.fullName ?? user.email, email: user.email, reason: reason ?? "not given" });
      await audit.record(tx, ctx, AuditAction.userSuspend, { userId: user.id, resourceType: "user", resourceId: user.id, metadata: { reason } });
      return { view: toUserView(updated!), offboarded };
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
      const updated = await usersRepository.update(tx, user.id, { status: "active", suspendedAt: null, suspendedReason: null, updatedAt: clock.now() });
      await audit.record(tx, ctx, AuditAction.userUnsuspend, { userId: user.id, resourceType: "user", resourceId: user.id });
      return toUserView(updated!);
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
      const updated = await usersRepository.markEmailVerified(tx, user, "superadmin", clock.now());
      await audit.record(tx, ctx, AuditAction.userVerifyEmailByAdmin, { userId: user.id, resourceType: "user", resourceId: user.id, metadata: { via: "superadmin" } });
      return toUserView(updated);
    });
  }

  /** Sets a new password for the account; every session of it ends. */
  async setPassword(ctx: RequestContext, userId: string, input: unknown): Promise<void> {
    const { db, clock, hasher, audit, sessions } = this.deps;
    const actor = requirePersonalUser(ctx);
    const { password } = parseInput(adminPasswordSchema, input);
    const target = await reachUser(db, actor, userId, { allowSelf: false, what: "set a password for" });
    assertPasswordAcceptable(password, target.email);
    const hash = await hasher.hash(password);
    await db.transaction(async (tx) => {
      // Still within reach after the slow hash (the account may have left the organization meanwhile).
      await reachUser(tx, actor, target.id, { allowSelf: false, what: "set a password for" });
      const now = clock.now();
      await credentialsRepository.setPasswordHash(tx, target.id, hash, now);
      // A pending account becomes usable once an administrator sets its password.
      if (target.status === "pending_activation") await usersRepository.update(tx, target.id, { status: "active", updatedAt: now });
      await audit.record(tx, ctx, AuditAction.userPasswordSetByAdmin, { userId: target.id, resourceType: "user", resourceId: target.id });
    });
    await sessions.revokeAll(target.id);
    // The owner gets the new password from an administrator: a guesser's lock must not keep them out.
    await this.deps.passwords.clearLocks(target.email);
  }

  /** Soft-deletes an account (`confirm: true` required); refused while it is an organization's only owner. */
  async delete(ctx: RequestContext, userId: string, input: unknown): Promise<void> {
    const { db, clock, audit, sessions } = this.deps;
    const actor = requirePersonalUser(ctx);
    parseInput(adminDeleteSchema, input);
    const { id, offboarded } = await db.transaction(async (tx) => {
      const user = await reachUser(tx, actor, userId, { allowSelf: false, what: "delete" });
      const sole = await soleOwnedOrganizations(tx, user.id);
      if (sole.withOthers.length > 0) throw new AppError("USER_IS_SOLE_OWNER", 409, `The user is the only owner of ${sole.withOthers.map((o) => o.name).join(", ")}: transfer ownership first`, { transfer_ownership: sole.withOthers.map((o) => o.name) });
      const now = clock.now();
      await usersRepository.update(tx, user.id, { deletedAt: now, updatedAt: now });
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
    try {
      return await db.transaction(async (tx) => {
        const [deleted] = await tx.select(userColumns).from(users).where(and(eq(users.id, id), sql`${users.deletedAt} is not null`));
        if (!deleted) {
          if (await usersRepository.findById(tx, id)) throw AdminErrors.notDeleted();
          throw UserErrors.notFound();
        }
        await assertReach(tx, actor, deleted, { allowSelf: false, what: "restore" });
        const [restored] = await tx.update(users).set({ deletedAt: null, updatedAt: clock.now() }).where(eq(users.id, id)).returning(userColumns);
        await audit.record(tx, ctx, AuditAction.userRestore, { userId: id, resourceType: "user", resourceId: id });
        return toUserView(restored!);
      });
    } catch (e) {
      if (isUniqueViolation(e, "users_email_live_uq")) throw AdminErrors.emailTaken();
      throw e;
    }
  }

  /** An administered user's MFA methods, without any secret. */
  async mfaMethods(ctx: RequestContext, userId: string) {
    const actor = requirePersonalUser(ctx);
    const target = await reachUser(this.deps.db, actor, userId, { allowSelf: true });
    const m = await mfaRepository.methods(this.deps.db, target.id);
    return { webauthn: await mfaRepository.listCredentials(this.deps.db, target.id), totpEnabled: m.totp, backupCodesRemaining: m.backupCodes };
  }

  /**
   * Removes MFA from an administered account (one WebAuthn credential, all of them, TOTP, or
   * everything), audited, and tells the account's owner by email.
   */
  async removeMfa(ctx: RequestContext, userId: string, input: unknown): Promise<void> {
    const { db, clock, audit, email, mfaHooks } = this.deps;
    const actor = requirePersonalUser(ctx);
    const data = parseInput(removeMfaSchema, input);
    await db.transaction(async (tx) => {
      const target = await reachUser(tx, actor, userId, { allowSelf: false, what: "remove MFA from" });
      const now = clock.now();
      let removed: string;
      if (data.method === "webauthn" && data.credentialId) {
        if (!(await mfaRepository.deleteCredential(tx, target.id, data.credentialId, now))) throw UserErrors.notFound();
        removed = "one passkey or security key";
      } else {
        const webauthn = data.method !== "totp" ? await mfaRepository.deleteAllCredentials(tx, target.id, now) : 0;
        const totp = data.method !== "webauthn" ? await mfaRepository.deleteTotp(tx, target.id) : false;
        if (data.method === "all") await mfaRepository.replaceBackupCodes(tx, target.id, [], now);
        removed = data.method === "all" ? "every method and the backup codes" : data.method === "totp" ? "the authenticator app" : "every passkey and security key";
        if (webauthn === 0 && !totp && data.method !== "all") throw UserErrors.notFound();
      }
      await mfaHooks.removed(tx, target.id);
      await email.enqueue(tx, "mfa-removed", target.email, { name: target.fullName ?? target.email, adminEmail: actor.email, removed });
      await audit.record(tx, ctx, AuditAction.adminMfaRemoved, { userId: target.id, resourceType: "user", resourceId: target.id, metadata: data });
    });
  }

  /** Superadmin: every audit record about one user. */
  async userAudit(ctx: RequestContext, userId: string, input: unknown): Promise<Page<AuditEntryView>> {
    requireSuperadmin(ctx);
    const id = parseId(userId, UserErrors.notFound);
    const q = parseInput(auditQuerySchema, input);
    const { items, total } = await this.deps.audit.listForUser(this.deps.db, id, q);
    return toPage(items, total, q.page, q.perPage);
  }

  /** Grants or revokes superadmin (used by `npm run admin -- promote|demote <email>`). */
  async setSuperadmin(ctx: RequestContext, email: string, value: boolean): Promise<UserView> {
    return this.deps.db.transaction(async (tx) => {
      const user = await usersRepository.findByEmail(tx, normalizeEmail(email));
      if (!user) throw UserErrors.notFound();
      const updated = await usersRepository.update(tx, user.id, { isSuperadmin: value, updatedAt: this.deps.clock.now() });
      await this.deps.audit.record(tx, ctx, value ? AuditAction.userPromoted : AuditAction.userDemoted, { userId: user.id });
      return toUserView(updated!);
    });
  }

  /**
   * At start: promotes the accounts whose address is in SUPERADMIN_EMAILS once their owner proved it
   * through the mailed link. A provider's claim or anyone's word is not enough for operator power;
   * such accounts wait (or are promoted with `npm run admin -- promote`).
   */
  async bootstrapSuperadmins(ctx: RequestContext, emails: readonly string[]): Promise<number> {
    let promoted = 0;
    for (const email of emails) {
      const user = await usersRepository.findByEmail(this.deps.db, normalizeEmail(email));
      if (!user || user.isSuperadmin || user.emailVerifiedVia !== "email_link") continue;
      await this.setSuperadmin(ctx, user.email, true);
      promoted++;
    }
    return promoted;
  }

  /** The account with the organizations the actor may see it in (all of them for superadmins). */
  private async withOrgs(actor: UserActor, user: UserRow): Promise<AdminUserView> {
    const theirs = await getActiveMemberships(this.deps.db, user.id);
    const mine = actor.isSuperadmin ? null : new Set((await getActiveMemberships(this.deps.db, actor.userId)).map((m) => m.organizationId));
    const managing = theirs.find((m) => m.organizationId === user.managedByOrganizationId);
    return {
      ...toUserView(user),
      managedBy: managing ? { id: managing.organizationId, name: managing.organizationName } : null,
      organizations: theirs.filter((m) => !mine || mine.has(m.organizationId)).map((m) => ({ id: m.organizationId, name: m.organizationName, role: m.role })),
    };
  }
}

const escapeLike = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);
