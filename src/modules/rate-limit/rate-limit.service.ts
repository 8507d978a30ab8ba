import type { Redis } from "ioredis";
import type { Clock } from "../../infra/clock.js";
import { hmacSha256Hex } from "../../lib/crypto/index.js";
import { CommonErrors } from "../../lib/errors.js";
import { createRateStore, type RateLimitStore } from "./rate-limit.store.js";

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

const DAY_MS = 24 * 3600 * 1000;
const SETTLED: GuardedAttempt = { succeeded: async () => {} };

export interface RateLimitOptions {
  enabled: boolean;
  redis?: Redis;
  prefix: string;
  /** Windows and locks run on this clock (tests advance it instead of sleeping). */
  clock: Clock;
  /**
   * Keys the HMAC that names each counter: what a limit is keyed by (an email address, a client
   * address, an account id) never reaches Redis in clear, as the database keeps no token in clear.
   * Every instance must have the same (it is derived from ENCRYPTION_KEYS' current key).
   */
  keySecret: Buffer;
}

/**
 * The one limiter: every security limit (login, register, reset, resend, contact, MFA) goes through
 * it. rate-limiter-flexible keeps the counters and locks (RateLimiterRedis, shared by every instance,
 * when Redis is configured; RateLimiterMemory in the embedded mode), and they are measured on the
 * injected clock: see rate-limit.store.ts.
 *
 * Windows are aligned to the clock (a rule of `duration` seconds counts from one multiple of it to
 * the next, and Retry-After is the time to the next), not started by their first hit; the failures
 * that set the back-off of a (account, client) pair are counted per UTC day.
 */
export class RateLimitService {
  private readonly store: RateLimitStore;

  constructor(private readonly options: RateLimitOptions) {
    this.store = createRateStore(options);
  }

  /** Spends `points`; throws 429 RATE_LIMIT_EXCEEDED (with Retry-After) when the rule is exhausted. */
  async consume(name: string, rule: RateRule, key: string, points = 1): Promise<void> {
    if (!this.options.enabled) return;
    const now = this.now();
    const w = await this.store.add(`${name}:${this.pseudonym(key)}`, points, rule.duration * 1000, now);
    if (w.count > rule.points) throw limited(w.resetAt, now);
  }

  async reset(name: string, rule: RateRule, key: string): Promise<void> {
    await this.store.clear(`${name}:${this.pseudonym(key)}`, rule.duration * 1000, this.now());
  }

  /**
   * Counts a password attempt BEFORE the password is checked, so parallel guesses each take their
   * own place in the budget: of 40 simultaneous guesses, `failures` are checked and the rest get
   * 429 without hashing. Past the budget, one attempt at a time passes once a lock has run out, and
   * it starts the next, longer lock before it is checked.
   */
  async beginAttempt(name: string, rule: LockoutRule, account: string, client: string): Promise<GuardedAttempt> {
    if (!this.options.enabled) return SETTLED;
    const { store } = this;
    const now = this.now();
    const accountMs = rule.account.duration * 1000;
    const { pairLock, accountLock, pairFailures, accountFailures } = keys(name, this.pseudonym(account), this.pseudonym(client));
    const seen = await this.assertOpen(pairLock, now);
    await this.assertOpen(accountLock, now);

    const n = (await store.add(pairFailures, 1, DAY_MS, now)).count;
    if (n >= rule.failures) {
      // The last attempt of the budget (or the first after a lock) must win the gate: only one passes.
      if (!(await store.claim(pairLock, seen))) {
        await store.add(pairFailures, -1, DAY_MS, now);
        throw limited(await store.lockOf(pairLock), now);
      }
      await store.lock(pairLock, now + Math.min(rule.maxSeconds, rule.baseSeconds * 2 ** Math.min(n - rule.failures, 30)) * 1000, now);
    }

    const m = (await store.add(accountFailures, 1, accountMs, now)).count;
    if (m > rule.account.points) {
      // A short pause for everyone, after which the count starts again.
      await store.lock(accountLock, now + rule.accountLockSeconds * 1000, now);
      await store.clear(accountFailures, accountMs, now);
      await store.add(pairFailures, -1, DAY_MS, now);
      if (n >= rule.failures) await store.unlock(pairLock);
      throw CommonErrors.rateLimited(rule.accountLockSeconds);
    }

    return {
      succeeded: async () => {
        await store.clear(pairFailures, DAY_MS, this.now());
        await store.unlock(pairLock);
        // Given back to the window it was taken from (if that one is over, nothing changes).
        await store.add(accountFailures, -1, accountMs, now);
      },
    };
  }

  /**
   * Someone proved control of the account (a reset link, an administrator set the password): its
   * account-wide lock ends, and so does the lock of the client that proved it.
   */
  async clearLocks(name: string, rule: LockoutRule, account: string, client?: string): Promise<void> {
    if (!this.options.enabled) return;
    const now = this.now();
    const { pairLock, accountLock, pairFailures, accountFailures } = keys(name, this.pseudonym(account), this.pseudonym(client ?? ""));
    await this.store.clear(accountFailures, rule.account.duration * 1000, now);
    await this.store.unlock(accountLock);
    if (client === undefined) return;
    await this.store.clear(pairFailures, DAY_MS, now);
    await this.store.unlock(pairLock);
  }

  /** Throws 429 while the lock runs; otherwise returns what it holds, for a later claim of its gate. */
  private async assertOpen(lock: string, now: number): Promise<number> {
    const until = await this.store.lockOf(lock);
    if (until > now) throw limited(until, now);
    return until;
  }

  /** What a counter is named after, as it is stored: an HMAC (128 bits), never the address or id itself. */
  private pseudonym(value: string): string {
    return hmacSha256Hex(this.options.keySecret, value).slice(0, 32);
  }

  private now(): number {
    return Math.floor(this.options.clock.now().getTime());
  }
}

const keys = (name: string, account: string, client: string) => ({
  pairLock: `${name}:pair:lock:${account}|${client}`,
  accountLock: `${name}:account:lock:${account}`,
  pairFailures: `${name}:pair-fail:${account}|${client}`,
  accountFailures: `${name}:account-fail:${account}`,
});

/** 429 with the seconds until `until` (at least one). */
const limited = (until: number, now: number) => CommonErrors.rateLimited(Math.max(1, Math.ceil((until - now) / 1000)));
