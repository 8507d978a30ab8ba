import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from "rate-limiter-flexible";

/** A counter in its window: the count so far and when the window ends, on the service clock. */
export interface RateWindow {
  count: number;
  resetAt: number;
}

/**
 * Where the limiter keeps its counters and locks. Every time is the injected clock's milliseconds,
 * passed in by the limiter, so a test moves past a window or a lock by advancing its clock.
 *
 * Windows are aligned to the clock: a counter of `windowMs` counts in [k·windowMs, (k+1)·windowMs),
 * whatever time its first hit came. (The hand-written store this replaces started a window at its
 * first hit; rate-limiter-flexible cannot restart a window on a clock it does not read, but a key
 * named after the clock's window starts afresh by itself.)
 */
export interface RateLimitStore {
  /** Adds `by` (negative gives points back) to the key's counter in the window holding `now`. */
  add(key: string, by: number, windowMs: number, now: number): Promise<RateWindow>;
  /** Forgets the key's counter in the window holding `now` (earlier windows are over anyway). */
  clear(key: string, windowMs: number, now: number): Promise<void>;
  /** What the key's lock holds: its end on the clock (past when it has run out), 0 when there is none. */
  lockOf(key: string): Promise<number>;
  /** Locks the key until `until` on the clock. */
  lock(key: string, until: number, now: number): Promise<void>;
  /**
   * Takes the lock's gate: true for exactly one of the callers that read `seen` from `lockOf`, false
   * for the rest and for anyone whose `seen` is out of date (the lock moved since).
   */
  claim(key: string, seen: number): Promise<boolean>;
  unlock(key: string): Promise<void>;
}

// The longest a key is kept: RateLimiterMemory collects keys with setTimeout, which fires at once past 2^31 ms.
const MAX_TTL_SECONDS = 24 * 24 * 3600;

/**
 * The store on rate-limiter-flexible: RateLimiterMemory in the embedded mode, RateLimiterRedis (one
 * set of keys shared by every instance) when Redis is configured. rate-limiter-flexible does every
 * write atomically (penalty/reward are INCRBY in Redis); the clock only chooses the keys and the values:
 *
 * - a counter is RLF points on `<key>@<window number>`, so the clock moving into the next window moves
 *   to a new, empty key. Its RLF duration is the time left in the window, which only collects the key
 *   once it cannot matter: the clock never runs slower than real time.
 * - a lock is RLF points holding the lock's end on the clock, set with `set(key, end, seconds left)`;
 *   `lockOf` reads it and the limiter compares it with its clock.
 * - a claim takes a gate of its own per value read, `<key>#gate@<seen>`: the first to add 1 wins.
 *   (Claims once added to the lock itself; a loser arriving after the winner's new lock pushed that
 *   lock's end past the clock by a few milliseconds, and when it ran out nobody passed.) A gate lives
 *   a second: the winner replaces the lock at once, so its `seen` is not read again, except 0 (no
 *   lock), which comes back when a lock is lifted or collected; `unlock` opens that gate too.
 */
export function createRateStore(options: { redis?: Redis; prefix: string }): RateLimitStore {
  // `points` and `duration` are not used: every call gives its own duration and the limiter decides.
  const base = { keyPrefix: `${options.prefix}rl`, points: Number.MAX_SAFE_INTEGER, duration: 1 };
  const rlf: RateLimiterAbstract = options.redis
    ? new RateLimiterRedis({ ...base, storeClient: options.redis, useRedisPackage: false })
    : new RateLimiterMemory(base);
  const window = (key: string, windowMs: number, now: number) => {
    const n = Math.floor(now / windowMs);
    return { key: `${key}@${n}`, resetAt: (n + 1) * windowMs };
  };
  const gate = (key: string, seen: number) => `${key}#gate@${seen}`;
  const ttl = (until: number, now: number) => Math.min(MAX_TTL_SECONDS, Math.max(1, Math.ceil((until - now) / 1000)));

  return {
    async add(key, by, windowMs, now) {
      const w = window(key, windowMs, now);
      const opts = { customDuration: ttl(w.resetAt, now) };
      const res = by >= 0 ? await rlf.penalty(w.key, by, opts) : await rlf.reward(w.key, -by, opts);
      return { count: res.consumedPoints, resetAt: w.resetAt };
    },
    async clear(key, windowMs, now) {
      await rlf.delete(window(key, windowMs, now).key);
    },
    async lockOf(key) {
      return (await rlf.get(key))?.consumedPoints ?? 0;
    },
    async lock(key, until, now) {
      await rlf.set(key, until, ttl(until, now));
    },
    async claim(key, seen) {
      return (await rlf.penalty(gate(key, seen), 1, { customDuration: 1 })).consumedPoints === 1;
    },
    async unlock(key) {
      await Promise.all([rlf.delete(key), rlf.delete(gate(key, 0))]);
    },
  };
}
