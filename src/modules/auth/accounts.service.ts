import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { uniqueOr } from "../../infra/db-errors.js";
import { sha256Hex } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { EmailService } from "../email/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { userAccounts, type UserRow, toUserView, type UserView } from "../users/index.js";
import type { AccountLinks } from "./account-links.js";
import { AuthErrors } from "./auth.errors.js";
import {
  activateSchema,
  changeEmailSchema,
  changePasswordSchema,
  emailOnlySchema,
  registerSchema,
  resetPasswordSchema,
  tokenSchema,
  type ActivateInput,
  type ChangeEmailInput,
  type ChangePasswordInput,
  type EmailOnlyInput,
  type RegisterInput,
  type ResetPasswordInput,
  type TokenInput,
} from "./auth.schemas.js";
import type { CredentialsService } from "./credentials.service.js";
import type { SessionsService } from "./sessions/sessions.service.js";
import { userTokensRepository } from "./user-tokens.repository.js";
import { requirePersonalUser } from "../access/index.js";

export interface AccountsConfig {
  appUrl: string;
  emailVerificationTtl: number;
  passwordResetTtl: number;
  activationTtl: number;
  superadminEmails: readonly string[];
  limits: { register: RateRule; forgotPassword: RateRule; resetPassword: RateRule; resendVerification: RateRule };
}

export interface AccountsDeps {
  db: Db;
  clock: Clock;
  audit: AuditService;
  email: EmailService;
  limits: RateLimitService;
  credentials: CredentialsService;
  sessions: SessionsService;
  links: AccountLinks;
  config: AccountsConfig;
}

/** The same words whether or not the address has an account (no enumeration). */
export const REGISTER_ACCEPTED = "Check your inbox: we sent a link to verify your email address.";
export const FORGOT_ACCEPTED = "If an account exists for this address, we sent a link to reset its password.";
export const RESEND_ACCEPTED = "If this address belongs to an unverified account, we sent a new verification link.";

/** Registration, email verification and passwords: everything an account does without a session. */
export class AccountsService {
  constructor(private readonly deps: AccountsDeps) {}

  /**
   * Creates an account and emails a verification link. An address that already has an account gets
   * the same answer, and its owner gets an email saying someone tried: the response reveals nothing.
   */
  async register(ctx: RequestContext, input: RegisterInput): Promise<{ email: string; message: string }> {
    const { db, audit, limits, credentials, config } = this.deps;
    await limits.consume("register", config.limits.register, ctx.ip ?? "unknown");
    const data = parseInput(registerSchema, input);
    const email = normalizeEmail(data.email);
    // Hash before looking the address up, so both branches take the same time.
    const password = await credentials.hashNewPassword(data.password, email);

    await db.transaction(async (tx) => {
      const existing = await userAccounts.findByEmail(tx, email);
      if (existing) {
        await this.deps.email.enqueue(tx, "account-exists", existing.email, {
          name: existing.fullName ?? existing.email,
          email: existing.email,
          resetUrl: `${config.appUrl}/forgot-password`,
        });
        return;
      }
      const user = await credentials.createAccount(tx, { email, fullName: data.fullName ?? null, password });
      await this.deps.links.sendVerification(tx, user);
      await audit.record(tx, ctx, AuditAction.userRegister, { userId: user.id, resourceType: "user", resourceId: user.id });
    });
    return { email, message: REGISTER_ACCEPTED };
  }

  /**
   * Consumes a verification link: one that proves the account's address, or one sent to a new
   * address (email change), which becomes the account's address now that it is proven. A
   * superadmin address is promoted once it is proven.
   */
  async verifyEmail(ctx: RequestContext, input: TokenInput): Promise<UserView> {
    const { db, clock, audit, config } = this.deps;
    const { token } = parseInput(tokenSchema, input);
    const verify = () =>
      db.transaction(async (tx) => {
        const now = clock.now();
        await this.deps.links.lockAccountOf(tx, ["email_verification", "email_change"], sha256Hex(token), now);
        const link = await userTokensRepository.consumeEmailLink(tx, sha256Hex(token), now);
        const found = link ? await userAccounts.find(tx, link.userId) : undefined;
        if (!link || !found) throw AuthErrors.invalidLink();
        const user = link.purpose === "email_change" && link.newEmail ? await this.switchAddress(tx, ctx, found, link.newEmail, now) : found;
        const promote = config.superadminEmails.includes(user.email) && !user.isSuperadmin;
        let updated = await userAccounts.markEmailVerified(tx, user, "email_link", now);
        if (promote) updated = (await userAccounts.setSuperadmin(tx, user.id, true, now))!;
        await audit.record(tx, ctx, AuditAction.userEmailVerified, { userId: user.id, resourceType: "user", resourceId: user.id });
        if (promote) {
          await audit.record(tx, ctx, AuditAction.userPromoted, { userId: user.id, metadata: { source: "SUPERADMIN_EMAILS" } });
        }
        return toUserView(updated);
      });
    // Another account took the address between the request and the click.
    return uniqueOr(verify, { users_email_live_uq: AuthErrors.emailTaken });
  }

  /**
   * Asks to change the signed-in user's address: a link goes to the new address, and the account
   * keeps its current one until the link is opened (a typo cannot lock the owner out). The answer
   * is the same whether or not the new address has an account of its own.
   */
  async requestEmailChange(ctx: RequestContext, input: ChangeEmailInput): Promise<{ message: string }> {
    const { db, clock, audit, limits, credentials, config } = this.deps;
    const actor = requirePersonalUser(ctx);
    const data = parseInput(changeEmailSchema, input);
    const newEmail = normalizeEmail(data.newEmail);
    // Each request mails an address the caller names: capped like verification resends.
    await limits.consume("email-change", config.limits.resendVerification, actor.userId);
    // The address is how the account is recovered: a borrowed session alone must not move it
    // (passkey or linked-provider accounts confirm with a fresh sign-in instead).
    await credentials.confirmCurrentPassword(ctx, actor, data.password, "recent-sign-in");
    if (newEmail === actor.email) throw AuthErrors.sameEmail();
    await db.transaction(async (tx) => {
      const user = await userAccounts.find(tx, actor.userId);
      if (!user) throw AuthErrors.invalidLink();
      const now = clock.now();
      // Only the latest request counts.
      await userTokensRepository.voidAll(tx, user.id, "email_change", now);
      const token = await this.deps.links.issue(tx, user.id, "email_change", config.emailVerificationTtl, now, newEmail);
      await this.deps.email.enqueue(tx, "email-change", newEmail, {
        name: user.fullName ?? user.email,
        email: newEmail,
        verifyUrl: `${config.appUrl}/verify-email?token=${encodeURIComponent(token)}`,
        expiresInHours: Math.round(config.emailVerificationTtl / 3600),
      });
      await audit.record(tx, ctx, AuditAction.userEmailChangeRequested, { userId: user.id, metadata: { new_email: newEmail } });
    });
    return { message: `We sent a link to ${newEmail}. Your address changes when you open it; until then, sign in with ${actor.email}.` };
  }

  /** The proven new address replaces the old one, and the old address is told. */
  private async switchAddress(tx: Executor, ctx: RequestContext, user: UserRow, newEmail: string, now: Date): Promise<UserRow> {
    if (newEmail === user.email) return user;
    // Another account took the address since the request.
    if (await userAccounts.findByEmail(tx, newEmail)) throw AuthErrors.emailTaken();
    const updated = await userAccounts.changeEmail(tx, user.id, newEmail, now);
    if (!updated) throw AuthErrors.invalidLink();
    // Links mailed to the old address no longer speak for this account.
    // A reset link mailed to the old address would let that mailbox take the account back.
    await userTokensRepository.voidAll(tx, user.id, "email_verification", now);
    await userTokensRepository.voidAll(tx, user.id, "email_change", now);
    await userTokensRepository.voidAll(tx, user.id, "password_reset", now);
    await this.deps.email.enqueue(tx, "email-changed", user.email, { name: user.fullName ?? user.email, oldEmail: user.email, newEmail });
    await this.deps.audit.record(tx, ctx, AuditAction.userEmailChanged, { userId: user.id, metadata: { old_email: user.email, new_email: newEmail } });
    return updated;
  }

  /** A new verification link for the signed-in user (rate limited per user). */
  async resendVerificationForMe(ctx: RequestContext): Promise<{ message: string }> {
    const { db, audit, limits, config } = this.deps;
    const actor = requirePersonalUser(ctx);
    await limits.consume("resend-verification", config.limits.resendVerification, actor.userId);
    await db.transaction(async (tx) => {
      const user = await userAccounts.find(tx, actor.userId);
      if (!user) throw AuthErrors.invalidLink();
      if (user.emailVerifiedAt) throw AuthErrors.emailAlreadyVerified();
      await this.deps.links.sendVerification(tx, user);
      await audit.record(tx, ctx, AuditAction.userVerificationResent, { userId: user.id });
    });
    return { message: `We sent a new verification link to ${actor.email}.` };
  }

  /** Public variant by address: same answer for every address. */
  async resendVerificationByEmail(ctx: RequestContext, input: EmailOnlyInput): Promise<{ message: string }> {
    const { db, limits, config } = this.deps;
    await limits.consume("resend-verification-ip", config.limits.forgotPassword, ctx.ip ?? "unknown");
    const email = normalizeEmail(parseInput(emailOnlySchema, input).email);
    await limits.consume("resend-verification", config.limits.resendVerification, `email:${email}`);
    await db.transaction(async (tx) => {
      const user = await userAccounts.findByEmail(tx, email);
      if (user && !user.emailVerifiedAt && user.status === "active") await this.deps.links.sendVerification(tx, user);
    });
    return { message: RESEND_ACCEPTED };
  }

  async forgotPassword(ctx: RequestContext, input: EmailOnlyInput): Promise<{ message: string }> {
    const { db, clock, audit, limits, config } = this.deps;
    await limits.consume("forgot-password", config.limits.forgotPassword, ctx.ip ?? "unknown");
    const email = normalizeEmail(parseInput(emailOnlySchema, input).email);
    await limits.consume("forgot-password-email", config.limits.forgotPassword, email);
    await db.transaction(async (tx) => {
      const user = await userAccounts.findByEmail(tx, email);
      if (!user || user.status !== "active") return;
      const token = await this.deps.links.issue(tx, user.id, "password_reset", config.passwordResetTtl, clock.now());
      await this.deps.email.enqueue(tx, "reset-password", user.email, {
        name: user.fullName ?? user.email,
        resetUrl: `${config.appUrl}/reset-password?token=${encodeURIComponent(token)}`,
        expiresInHours: Math.round(config.passwordResetTtl / 3600),
      });
      await audit.record(tx, ctx, AuditAction.userPasswordResetRequested, { userId: user.id });
    });
    return { message: FORGOT_ACCEPTED };
  }

  /** Sets a new password from a reset link; the link dies and every session of the account ends. */
  async resetPassword(ctx: RequestContext, input: ResetPasswordInput): Promise<{ message: string }> {
    const { db, clock, credentials, audit, limits, sessions, config } = this.deps;
    await limits.consume("reset-password", config.limits.resetPassword, ctx.ip ?? "unknown");
    const data = parseInput(resetPasswordSchema, input);
    const tokenHash = sha256Hex(data.token);
    // A policy failure throws inside the transaction, so the link is not spent by a rejected password.
    const user = await db.transaction(async (tx) => {
      const now = clock.now();
      await this.deps.links.lockAccountOf(tx, ["password_reset"], tokenHash, now);
      const userId = await userTokensRepository.consume(tx, "password_reset", tokenHash, now);
      const found = userId ? await userAccounts.find(tx, userId) : undefined;
      if (!found || found.status !== "active") throw AuthErrors.invalidLink();
      await credentials.setPassword(tx, found.id, await credentials.hashNewPassword(data.password, found.email));
      // Following the link proved control of the address.
      await userAccounts.markEmailVerified(tx, found, "email_link", now);
      await userTokensRepository.voidAll(tx, found.id, "password_reset", now);
      await audit.record(tx, ctx, AuditAction.userPasswordReset, { userId: found.id });
      return found;
    });
    await sessions.revokeAll(user.id);
    // The link proved control of the address: a guesser's lock no longer keeps the owner out.
    await credentials.clearLocks(user.email, ctx);
    return { message: "Your password was reset. Sign in with the new password." };
  }

  /** Changes the signed-in user's password; other sessions end, this one stays. */
  async changePassword(ctx: RequestContext, input: ChangePasswordInput): Promise<{ message: string }> {
    const { db, audit, sessions, credentials } = this.deps;
    const actor = requirePersonalUser(ctx);
    const data = parseInput(changePasswordSchema, input);
    // Without a current password there is nothing to change (a reset link sets the first one).
    await credentials.confirmCurrentPassword(ctx, actor, data.currentPassword, "refuse");
    const password = await credentials.hashNewPassword(data.newPassword, actor.email, "newPassword");
    await db.transaction(async (tx) => {
      await credentials.setPassword(tx, actor.userId, password);
      await audit.record(tx, ctx, AuditAction.userPasswordChange, { userId: actor.userId });
    });
    await sessions.revokeAll(actor.userId, actor.sessionId);
    return { message: "Password changed. Your other sessions were signed out." };
  }

  /** Sets the first password of a pending account from its activation link; the address is proven. */
  async activate(ctx: RequestContext, input: ActivateInput): Promise<{ message: string }> {
    const { db, clock, credentials, audit, limits, config } = this.deps;
    await limits.consume("reset-password", config.limits.resetPassword, ctx.ip ?? "unknown");
    const data = parseInput(activateSchema, input);
    await db.transaction(async (tx) => {
      const now = clock.now();
      const userId = await userTokensRepository.consume(tx, "activation", sha256Hex(data.code), now);
      const user = userId ? await userAccounts.find(tx, userId) : undefined;
      if (!user || user.status !== "pending_activation") throw AuthErrors.invalidLink();
      await credentials.setPassword(tx, user.id, await credentials.hashNewPassword(data.password, user.email));
      await userAccounts.activate(tx, user.id, now, data.fullName ?? user.fullName);
      await userAccounts.markEmailVerified(tx, user, "email_link", now);
      await audit.record(tx, ctx, AuditAction.userActivate, { userId: user.id });
    });
    return { message: "Your account is active. Sign in with your new password." };
  }

  /** A new activation link for a pending account; the same answer for every address. */
  async resendActivation(ctx: RequestContext, input: EmailOnlyInput): Promise<{ message: string }> {
    const { db, limits, config } = this.deps;
    await limits.consume("resend-activation-ip", config.limits.forgotPassword, ctx.ip ?? "unknown");
    const email = normalizeEmail(parseInput(emailOnlySchema, input).email);
    await limits.consume("resend-verification", config.limits.resendVerification, `activation:${email}`);
    await db.transaction(async (tx) => {
      const user = await userAccounts.findByEmail(tx, email);
      if (user?.status === "pending_activation") await this.deps.links.sendActivation(tx, user, "An administrator", "your organization");
    });
    return { message: "If this address has an account waiting for activation, we sent a new link." };
  }
}
