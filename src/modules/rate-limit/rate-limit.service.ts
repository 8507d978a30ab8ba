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

export interface LockoutRule {
  /** Consecutive failures allowed before the account locks. */
  failures: number;
  /** First lock in seconds; it doubles with every further failure. */
  baseSeconds: number;
  maxSeconds: number;
}

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

  /** Throws 429 while the key is locked out after repeated failures. */
  async assertNotLocked(name: string, key: string): Promise<void> {
    if (!this.options.enabled) return;
    const res = await this.lockLimiter(name).get(key);
    if (res && res.consumedPoints > 1) throw CommonErrors.rateLimited(Math.max(1, Math.ceil(res.msBeforeNext / 1000)));
  }

  /**
   * Records a failure. From the `failures`-th consecutive failure on, the key is locked for
   * base × 2^(n − failures) seconds, capped at `maxSeconds`. Returns the lock length (0 = none).
   */
  async recordFailure(name: string, rule: LockoutRule, key: string): Promise<number> {
    if (!this.options.enabled) return 0;
    const counter = this.limiter(`${name}:fail`, { points: Number.MAX_SAFE_INTEGER, duration: 24 * 3600 });
    const res = await counter.penalty(key, 1);
    const excess = res.consumedPoints - rule.failures;
    if (excess < 0) return 0;
    const seconds = Math.min(rule.maxSeconds, rule.baseSeconds * 2 ** Math.min(excess, 30));
    await this.lockLimiter(name).block(key, seconds);
    return seconds;
  }

  async clearFailures(name: string, key: string): Promise<void> {
    if (!this.options.enabled) return;
    await this.limiter(`${name}:fail`, { points: Number.MAX_SAFE_INTEGER, duration: 24 * 3600 }).delete(key);
  }

  private lockLimiter(name: string): RateLimiterAbstract {
    return this.limiter(`${name}:lock`, { points: 1, duration: 1 });
  }
}
