import type { Clock } from "../../infra/clock.js";
import type { Executor } from "../../infra/db.js";
import { randomToken, sha256Hex } from "../../lib/crypto/index.js";
import type { EmailService } from "../email/index.js";
import { userAccounts, type UserRow } from "../users/index.js";
import { userTokensRepository, type UserTokenPurpose } from "./user-tokens.repository.js";

export interface AccountLinksDeps {
  clock: Clock;
  email: EmailService;
  config: { appUrl: string; emailVerificationTtl: number; activationTtl: number };
}

/**
 * The single-use links an account is mailed (verification, email change, password reset,
 * activation): issued as random tokens stored only as hashes, one live link per kind, and opened
 * under the account's lock.
 */
export class AccountLinks {
  constructor(private readonly deps: AccountLinksDeps) {}

  /** A new link token of this kind; the caller mails it. */
  async issue(tx: Executor, userId: string, purpose: UserTokenPurpose, ttl: number, now: Date, newEmail?: string): Promise<string> {
    const token = randomToken(32);
    await userTokensRepository.insert(tx, {
      userId,
      purpose,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(now.getTime() + ttl * 1000),
      now,
      ...(newEmail ? { newEmail } : {}),
    });
    return token;
  }

  /** Voids the account's earlier verification links and mails a new one. */
  async sendVerification(tx: Executor, user: UserRow): Promise<void> {
    const { config } = this.deps;
    const token = await this.replace(tx, user.id, "email_verification", config.emailVerificationTtl);
    await this.deps.email.enqueue(tx, "verify-email", user.email, {
      name: user.fullName ?? user.email,
      email: user.email,
      verifyUrl: `${config.appUrl}/verify-email?token=${encodeURIComponent(token)}`,
      expiresInHours: Math.round(config.emailVerificationTtl / 3600),
    });
  }

  /** Voids the pending account's earlier activation links and mails a new one. */
  async sendActivation(tx: Executor, user: UserRow, inviterName: string, organizationName: string): Promise<void> {
    const { config } = this.deps;
    const code = await this.replace(tx, user.id, "activation", config.activationTtl);
    await this.deps.email.enqueue(tx, "account-activation", user.email, {
      name: user.fullName ?? user.email,
      email: user.email,
      inviterName,
      organizationName,
      activateUrl: `${config.appUrl}/activate?code=${encodeURIComponent(code)}`,
      expiresInHours: Math.round(config.activationTtl / 3600),
      managedNotice: "",
    });
  }

  /** One live link per kind: the account's earlier links of this kind die with the new one. */
  private async replace(tx: Executor, userId: string, purpose: UserTokenPurpose, ttl: number): Promise<string> {
    const now = this.deps.clock.now();
    await userTokensRepository.voidAll(tx, userId, purpose, now);
    return this.issue(tx, userId, purpose, ttl, now);
  }

  /**
   * Opening a link voids the account's other links of its kind. Two links of one account opened at
   * once would each hold its own token and wait for the other's (a deadlock on PostgreSQL): the
   * account row is locked first, so they queue, and the second finds its link voided.
   */
  async lockAccountOf(tx: Executor, purposes: UserTokenPurpose[], tokenHash: string, now: Date): Promise<void> {
    const userId = await userTokensRepository.findUsableOwner(tx, purposes, tokenHash, now);
    if (userId) await userAccounts.lock(tx, userId);
  }
}
