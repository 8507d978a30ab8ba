import type { Redis } from "ioredis";
import type { Clock } from "../../infra/clock.js";
import { CommonErrors } from "../../lib/errors.js";
import { createMemoryRateStore } from "./memory.store.js";
import type { RateLimitStore, RateWindow } from "./rate-limit.store.js";
import { createRedisRateStore } from "./redis.store.js";

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
// A lock is a window whose count is above 1; taking the gate is the one hit a window allows.
const LOCKED = 2;
const GATE_MS = 1000;

export interface RateLimitOptions {
  enabled: boolean;
  redis?: Redis;
  prefix: string;
  /** Windows and locks run on this clock (tests advance it instead of sleeping). */
  clock: Clock;
}

/**
 * The one limiter: every security limit (login, register, reset, resend, contact, MFA) goes through
 * it. On Redis the counters are shared by every instance; in the embedded mode they live in memory.
 * Either way the windows are measured on the injected clock.
 */
export class RateLimitService {
  private readonly store: RateLimitStore;

  constructor(private readonly options: RateLimitOptions) {
    this.store = options.redis ? createRedisRateStore(options.redis, options.prefix) : createMemoryRateStore();
  }

  /** Spends `points`; throws 429 RATE_LIMIT_EXCEEDED (with Retry-After) when the rule is exhausted. */
  async consume(name: string, rule: RateRule, key: string, points = 1): Promise<void> {
    if (!this.options.enabled) return;
    const now = this.now();
    const w = await this.store.add(`${name}:${key}`, points, rule.duration * 1000, now);
    if (w.count > rule.points) throw limited(w, now);
  }

  async reset(name: string, _rule: RateRule, key: string): Promise<void> {
    await this.store.delete(`${name}:${key}`);
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
    const pair = `${account}|${client}`;
    const pairGate = `${name}:pair:lock:${pair}`;
    const accountGate = `${name}:account:lock:${account}`;
    const pairFailures = `${name}:pair-fail:${pair}`;
    const accountFailures = `${name}:account-fail:${account}`;
    await this.assertOpen(pairGate, now);
    await this.assertOpen(accountGate, now);

    const n = (await store.add(pairFailures, 1, DAY_MS, now)).count;
    if (n >= rule.failures) {
      // The last attempt of the budget (or the first after a lock) must win the gate: only one passes.
      const gate = await store.add(pairGate, 1, GATE_MS, now);
      if (gate.count > 1) {
        await store.add(pairFailures, -1, DAY_MS, now);
        throw limited(gate, now);
      }
      await store.set(pairGate, LOCKED, Math.min(rule.maxSeconds, rule.baseSeconds * 2 ** Math.min(n - rule.failures, 30)) * 1000, now);
    }

    const m = (await store.add(accountFailures, 1, rule.account.duration * 1000, now)).count;
    if (m > rule.account.points) {
      // A short pause for everyone, after which the count starts again.
      await store.set(accountGate, LOCKED, rule.accountLockSeconds * 1000, now);
      await store.delete(accountFailures);
      await store.add(pairFailures, -1, DAY_MS, now);
      if (n >= rule.failures) await store.delete(pairGate);
      throw CommonErrors.rateLimited(rule.accountLockSeconds);
    }

    return {
      succeeded: async () => {
        await store.delete(pairFailures);
        await store.delete(pairGate);
        await store.add(accountFailures, -1, rule.account.duration * 1000, this.now());
      },
    };
  }

  /**
   * Someone proved control of the account (a reset link, an administrator set the password): its
   * account-wide lock ends, and so does the lock of the client that proved it.
   */
  async clearLocks(name: string, _rule: LockoutRule, account: string, client?: string): Promise<void> {
    if (!this.options.enabled) return;
    await this.store.delete(`${name}:account-fail:${account}`);
    await this.store.delete(`${name}:account:lock:${account}`);
    if (client === undefined) return;
    await this.store.delete(`${name}:pair-fail:${account}|${client}`);
    await this.store.delete(`${name}:pair:lock:${account}|${client}`);
  }

  private async assertOpen(gate: string, now: number): Promise<void> {
    const w = await this.store.get(gate, now);
    if (w && w.count > 1) throw limited(w, now);
  }

  private now(): number {
    return this.options.clock.now().getTime();
  }
}

const limited = (w: RateWindow, now: number) => CommonErrors.rateLimited(Math.max(1, Math.ceil((w.resetAt - now) / 1000)));
