import type { Redis } from "ioredis";
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from "rate-limiter-flexible";
import { CommonErrors } from "../../lib/errors.js";

export interface RateRule {
  points: number;
  /** Window in seconds. */
  duration: number;
}

/**
 * Password guessing. Each (account, client address) pair has a budget of `failures` attempts; after
 * that the pair is locked for base × 2^k seconds (k = locks so far, capped at `maxSeconds`), so a
 * guesser is stopped but the owner elsewhere is not. Across all addresses an account tolerates
 * `account.points` failures per `account.duration` seconds, then everyone waits a short
 * `accountLockSeconds`: someone who only knows the address keeps its owner out for minutes, not hours.
 */
export interface LockoutRule {
  failures: number;
  baseSeconds: number;
  maxSeconds: number;
  account: RateRule;
  accountLockSeconds: number;
}

/** A counted attempt, settled by its outcome: a success gives the budget back. */
export interface GuardedAttempt {
  succeeded(): Promise<void>;
}

const DAY = 24 * 3600;
const SETTLED: GuardedAttempt = { succeeded: async () => {} };

export interface RateLimitOptions {
  enabled: boolean;
  redis?: Redis;
  prefix: string;
}

/**
 * The one limiter: every security limit (login, register, reset, resend, contact, MFA) goes through
 * it. On Redis the counters are shared by every instance; in the embedded mode they live in memory.
 */
export class RateLimitService {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(private readonly options: RateLimitOptions) {}

  private limiter(name: string, rule: RateRule): RateLimiterAbstract {
    const id = `${name}:${rule.points}:${rule.duration}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const base = { keyPrefix: `${this.options.prefix}rl:${name}`, points: rule.points, duration: rule.duration };
      limiter = this.options.redis
        ? new RateLimiterRedis({ ...base, storeClient: this.options.redis, useRedisPackage: false })
        : new RateLimiterMemory(base);
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  /** Spends one point; throws 429 RATE_LIMIT_EXCEEDED (with Retry-After) when the rule is exhausted. */
  async consume(name: string, rule: RateRule, key: string, points = 1): Promise<void> {
    if (!this.options.enabled) return;
    try {
      await this.limiter(name, rule).consume(key, points);
    } catch (e) {
      if (e instanceof RateLimiterRes) throw CommonErrors.rateLimited(Math.max(1, Math.ceil(e.msBeforeNext / 1000)));
      throw e;
    }
  }

  async reset(name: string, rule: RateRule, key: string): Promise<void> {
    await this.limiter(name, rule).delete(key);
  }

  /**
   * Counts a password attempt BEFORE the password is checked, so parallel guesses each take their
   * own place in the budget: of 40 simultaneous guesses, `failures` are checked and the rest get
   * 429 without hashing. Past the budget, one attempt at a time passes once a lock has run out, and
   * it starts the next, longer lock before it is checked.
   */
  async beginAttempt(name: string, rule: LockoutRule, account: string, client: string): Promise<GuardedAttempt> {
    if (!this.options.enabled) return SETTLED;
    const pair = `${account}|${client}`;
    const pairGate = this.lockLimiter(`${name}:pair`);
    const accountGate = this.lockLimiter(`${name}:account`);
    await this.assertOpen(pairGate, pair);
    await this.assertOpen(accountGate, account);

    const pairFailures = this.counter(`${name}:pair-fail`, DAY);
    const n = (await pairFailures.penalty(pair, 1)).consumedPoints;
    if (n >= rule.failures) {
      // The last attempt of the budget (or the first after a lock) must win the gate: only one passes.
      try {
        await pairGate.consume(pair);
      } catch (e) {
        await pairFailures.reward(pair, 1);
        if (e instanceof RateLimiterRes) throw CommonErrors.rateLimited(Math.max(1, Math.ceil(e.msBeforeNext / 1000)));
        throw e;
      }
      await pairGate.block(pair, Math.min(rule.maxSeconds, rule.baseSeconds * 2 ** Math.min(n - rule.failures, 30)));
    }

    const accountFailures = this.counter(`${name}:account-fail`, rule.account.duration);
    const m = (await accountFailures.penalty(account, 1)).consumedPoints;
    if (m > rule.account.points) {
      // A short pause for everyone, after which the count starts again.
      await accountGate.block(account, rule.accountLockSeconds);
      await accountFailures.delete(account);
      await pairFailures.reward(pair, 1);
      if (n >= rule.failures) await pairGate.delete(pair);
      throw CommonErrors.rateLimited(rule.accountLockSeconds);
    }

    return {
      succeeded: async () => {
        await pairFailures.delete(pair);
        await pairGate.delete(pair);
        await accountFailures.reward(account, 1);
      },
    };
  }

  /**
   * Someone proved control of the account (a reset link, an administrator set the password): its
   * account-wide lock ends, and so does the lock of the client that proved it.
   */
  async clearLocks(name: string, rule: LockoutRule, account: string, client?: string): Promise<void> {
    if (!this.options.enabled) return;
    await this.counter(`${name}:account-fail`, rule.account.duration).delete(account);
    await this.lockLimiter(`${name}:account`).delete(account);
    if (client === undefined) return;
    await this.counter(`${name}:pair-fail`, DAY).delete(`${account}|${client}`);
    await this.lockLimiter(`${name}:pair`).delete(`${account}|${client}`);
  }

  private async assertOpen(gate: RateLimiterAbstract, key: string): Promise<void> {
    const res = await gate.get(key);
    if (res && res.consumedPoints > 1) throw CommonErrors.rateLimited(Math.max(1, Math.ceil(res.msBeforeNext / 1000)));
  }

  private counter(name: string, duration: number): RateLimiterAbstract {
    return this.limiter(name, { points: Number.MAX_SAFE_INTEGER, duration });
  }

  private lockLimiter(name: string): RateLimiterAbstract {
    return this.limiter(`${name}:lock`, { points: 1, duration: 1 });
  }
}
