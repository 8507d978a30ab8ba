import type { PasswordHasher } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import type { LockoutRule, RateLimitService } from "../rate-limit/rate-limit.service.js";

/**
 * Every check of a password someone typed (sign-in, and each re-authentication: password change,
 * TOTP removal, account deletion) goes through here, so each one is counted against the same
 * failure budget before the hash is computed. Keyed by the account's normalized address.
 */
export class PasswordVerifier {
  constructor(
    private readonly hasher: PasswordHasher,
    private readonly limits: RateLimitService,
    private readonly rule: LockoutRule,
  ) {}

  /**
   * True when `password` matches `hash`. With no hash (unknown account, or one without a password)
   * a dummy hash is checked instead, so the answer takes the same time. Throws 429 while locked.
   */
  async verify(ctx: RequestContext, account: string, hash: string | undefined, password: string): Promise<boolean> {
    const attempt = await this.limits.beginAttempt("login", this.rule, account, clientOf(ctx));
    const valid = hash ? await this.hasher.verify(hash, password) : (await this.hasher.verifyDummy(password), false);
    if (valid) await attempt.succeeded();
    return valid;
  }

  /** A new password was set by someone entitled to (reset link, administrator): the account's locks end. */
  clearLocks(account: string, ctx?: RequestContext): Promise<void> {
    return this.limits.clearLocks("login", this.rule, account, ctx ? clientOf(ctx) : undefined);
  }
}

const clientOf = (ctx: RequestContext): string => ctx.ip ?? "unknown";
