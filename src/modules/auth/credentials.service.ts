import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { uniqueOr } from "../../infra/db-errors.js";
import { sha256Hex, type PasswordHasher } from "../../lib/crypto/index.js";
import type { RequestContext, UserActor } from "../../lib/request-context.js";
import type { LockoutRule, RateLimitService } from "../rate-limit/index.js";
import { userAccounts, type EmailVerifiedVia, type UserRow } from "../users/index.js";
import { AuthErrors } from "./auth.errors.js";
import { credentialsRepository } from "./credentials.repository.js";
import { credentialsSecretsRepository } from "./credentials.secrets.repository.js";
import type { MfaMethods } from "./mfa/mfa.repository.js";
import { assertPasswordAcceptable } from "./password-policy.js";

/** A password that passed the policy, hashed: the only form `createAccount` and `setPassword` accept. */
export interface NewPassword {
  readonly hash: string;
  readonly __brand: "NewPassword";
}

export interface NewAccount {
  email: string;
  fullName: string | null;
  password?: NewPassword;
  /** The organization whose admins administer the account (an "add member" invitation). */
  managedBy?: string | null;
  /** The address is proven at creation (a mailed link was followed, or a provider vouched for it). */
  verifiedVia?: EmailVerifiedVia;
}

/** What re-authentication asks of an account without a password (passkey or linked provider only). */
export type WithoutPassword = "pass" | "recent-sign-in" | "refuse";

export interface CredentialsDeps {
  db: Db;
  clock: Clock;
  hasher: PasswordHasher;
  limits: RateLimitService;
  lockout: LockoutRule;
}

/** How long a sign-in counts as recent enough to stand in for a password (sudo mode). */
export const RECENT_SIGN_IN_MS = 10 * 60 * 1000;

/**
 * The one owner of credentials: creates accounts, sets and checks passwords, and is the only reader
 * of password hashes (ARCHITECTURE rule 7; the linter keeps credentials.secrets.repository private to it).
 * Every check of a typed password is counted against the same failure budget (per account and
 * client, keyed by the normalized address) before the hash is computed.
 */
export class CredentialsService {
  constructor(private readonly deps: CredentialsDeps) {}

  /**
   * Creates an account in the caller's transaction: every way an account comes to exist
   * (registration, an invitation, an external sign-up) goes through here. A concurrent account with
   * the same address fails with `emailTaken()` when given.
   */
  createAccount(tx: Executor, v: NewAccount, opts: { emailTaken?: () => Error } = {}): Promise<UserRow> {
    const now = this.deps.clock.now();
    const insert = async () => {
      const user = await userAccounts.create(tx, {
        email: v.email,
        fullName: v.fullName,
        isSuperadmin: false,
        managedByOrganizationId: v.managedBy ?? null,
        emailVerifiedAt: v.verifiedVia ? now : null,
        emailVerifiedVia: v.verifiedVia ?? null,
        now,
      });
      if (v.password) await credentialsRepository.setPasswordHash(tx, user.id, v.password.hash, now);
      return user;
    };
    return opts.emailTaken ? uniqueOr(insert, { users_email_live_uq: opts.emailTaken }) : insert();
  }

  /** Checks the policy (throws VALIDATION_ERROR on `field`) and hashes: slow, so outside transactions where possible. */
  async hashNewPassword(password: string, email: string, field = "password"): Promise<NewPassword> {
    assertPasswordAcceptable(password, email, field);
    return { hash: await this.deps.hasher.hash(password) } as NewPassword;
  }

  async setPassword(tx: Executor, userId: string, password: NewPassword): Promise<void> {
    await credentialsRepository.setPasswordHash(tx, userId, password.hash, this.deps.clock.now());
  }

  /** Whether the account can sign in with a password (without reading the hash out). */
  hasPassword(db: Executor, userId: string): Promise<boolean> {
    return credentialsRepository.hasPassword(db, userId);
  }

  /**
   * The password sign-in check, by address, in one read with what the sign-in needs next: the
   * account (undefined when there is none), whether the password is right, and the account's MFA
   * methods. An unknown account (or one without a password) checks a dummy hash, so the answer
   * takes the same time; a hash made with older parameters is upgraded on success. The MFA methods
   * are those enrolled when the sign-in began (as when they were read after the hash, a sign-in
   * that starts before an enrollment ends may finish without it).
   */
  async verifySignIn(
    ctx: RequestContext,
    email: string,
    password: string,
  ): Promise<{ user: UserRow | undefined; valid: boolean; mfa: MfaMethods | undefined; passwordFingerprint?: string }> {
    const found = await credentialsSecretsRepository.findSignIn(this.deps.db, email);
    const hash = found?.hash;
    const valid = await this.verifyCounted(ctx, email, hash, password);
    if (!valid || !found || !hash) return { user: found?.user, valid, mfa: found?.mfa };
    let current = hash;
    // Parameters were raised since this hash was made: upgrade it while we hold the password.
    if (this.deps.hasher.needsRehash(hash)) {
      const upgraded = await this.deps.hasher.hash(password);
      if (await credentialsRepository.replacePasswordHash(this.deps.db, found.user.id, hash, upgraded, this.deps.clock.now())) current = upgraded;
    }
    // The sign-in stands only while the password it checked is the account's (see SessionIssuer).
    return { user: found.user, valid, mfa: found.mfa, passwordFingerprint: passwordFingerprint(current) };
  }

  /**
   * Re-authentication of the signed-in user before a sensitive change (password or email change,
   * MFA removal, deleting the account). With a password: it must be given and right. Without one,
   * `withoutPassword` decides: let it pass, ask for a recent sign-in, or refuse.
   */
  async confirmCurrentPassword(ctx: RequestContext, actor: Pick<UserActor, "userId" | "email" | "signedInAt">, password: string | undefined, withoutPassword: WithoutPassword): Promise<void> {
    const hash = await credentialsSecretsRepository.findPasswordHash(this.deps.db, actor.userId);
    if (!hash && withoutPassword === "pass") return;
    if (!hash && withoutPassword === "recent-sign-in") {
      // No password to confirm with: a fresh sign-in stands in for it.
      const now = this.deps.clock.now().getTime();
      if (actor.signedInAt === undefined || now - actor.signedInAt > RECENT_SIGN_IN_MS) throw AuthErrors.recentSignInRequired();
      return;
    }
    if (!password) throw AuthErrors.passwordRequired();
    // Counted like a sign-in: a stolen session cannot guess the password here.
    if (!(await this.verifyCounted(ctx, actor.email, hash, password))) throw AuthErrors.currentPasswordIncorrect();
  }

  /** A new password was set by someone entitled to (reset link, administrator): the account's locks end. */
  clearLocks(account: string, ctx?: RequestContext): Promise<void> {
    return this.deps.limits.clearLocks("login", this.deps.lockout, account, ctx ? clientOf(ctx) : undefined);
  }

  /** True when `password` matches `hash` (a dummy when there is none); throws 429 while locked. */
  private async verifyCounted(ctx: RequestContext, account: string, hash: string | undefined, password: string): Promise<boolean> {
    const { hasher, limits, lockout } = this.deps;
    const attempt = await limits.beginAttempt("login", lockout, account, clientOf(ctx));
    const valid = hash ? await hasher.verify(hash, password) : (await hasher.verifyDummy(password), false);
    if (valid) await attempt.succeeded();
    return valid;
  }
}

const clientOf = (ctx: RequestContext): string => ctx.ip ?? "unknown";

/**
 * What a sign-in remembers of the password it checked, to be sure at its end that it is still the
 * account's: a digest of the stored hash (the hash itself stays in the database). The SQL side is
 * signInRepository's `encode(sha256(...))` of the same text.
 */
export const passwordFingerprint = (hash: string): string => sha256Hex(hash);
