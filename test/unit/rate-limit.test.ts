import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/infra/clock.js";
import { RateLimitService, type LockoutRule } from "../../src/modules/rate-limit/rate-limit.service.js";
import { createRateStore } from "../../src/modules/rate-limit/rate-limit.store.js";

/**
 * The limiter's windows and locks run on the injected clock, with rate-limiter-flexible underneath:
 * nothing here sleeps. RateLimiterRedis is used when REDIS_URL is set (the PostgreSQL + Redis pass),
 * RateLimiterMemory otherwise.
 */
const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined;
const prefix = `kwtest:rl:${Math.random().toString(36).slice(2, 10)}:`;
afterAll(async () => {
  if (!redis) return;
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

const limiter = (clock: ManualClock) => new RateLimitService({ enabled: true, redis, prefix, clock, keySecret: Buffer.alloc(32, 3) });
const retryAfter = async (work: Promise<unknown>): Promise<number> => {
  const e = await work.then(() => null, (err: unknown) => err);
  expect(e).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", status: 429 });
  return (e as { details: { retry_after: number } }).details.retry_after;
};
let seq = 0;
const key = () => `k${seq++}`;
/** A clock at the start of a window of `seconds` (windows are aligned to the clock). */
const atWindowStart = (seconds: number): ManualClock => {
  const clock = new ManualClock();
  const ms = seconds * 1000;
  clock.advance((ms - (clock.now().getTime() % ms)) / 1000);
  return clock;
};
const DAY = 24 * 3600;

describe(`rate limiter on the injected clock (${redis ? "Redis" : "memory"} store)`, () => {
  it("refuses past the window's points and lets through again once the clock passes the window", async () => {
    const clock = atWindowStart(3600);
    const limits = limiter(clock);
    const rule = { points: 2, duration: 3600 };
    const k = key();
    await limits.consume("test", rule, k);
    await limits.consume("test", rule, k);
    expect(await retryAfter(limits.consume("test", rule, k))).toBeGreaterThan(3590);
    clock.advance(3599);
    await expect(limits.consume("test", rule, k)).rejects.toMatchObject({ status: 429 });
    clock.advance(2);
    await expect(limits.consume("test", rule, k)).resolves.toBeUndefined();
  });

  it("aligns windows to the clock: a window that began before the first hit ends on time, and Retry-After says when", async () => {
    const clock = atWindowStart(3600);
    const limits = limiter(clock);
    const rule = { points: 2, duration: 3600 };
    const k = key();
    clock.advance(3000);
    await limits.consume("test", rule, k);
    await limits.consume("test", rule, k);
    expect(await retryAfter(limits.consume("test", rule, k))).toBe(600);
    clock.advance(599);
    await expect(limits.consume("test", rule, k)).rejects.toMatchObject({ status: 429 });
    clock.advance(2);
    await expect(limits.consume("test", rule, k)).resolves.toBeUndefined();
    await limits.consume("test", rule, k);
    await expect(limits.consume("test", rule, k)).rejects.toMatchObject({ status: 429 });
    await limits.reset("test", rule, k);
    await expect(limits.consume("test", rule, k)).resolves.toBeUndefined();
  });

  it("locks a password guesser for base × 2^k seconds, measured on the clock, and a success gives the budget back", async () => {
    const clock = atWindowStart(DAY); // the pair's failures are counted per day
    const limits = limiter(clock);
    const rule: LockoutRule = { failures: 2, baseSeconds: 600, maxSeconds: 3600, account: { points: 100, duration: 3600 }, accountLockSeconds: 30 };
    const account = `${key()}@example.com`;
    await limits.beginAttempt("pw", rule, account, "1.2.3.4");
    await limits.beginAttempt("pw", rule, account, "1.2.3.4"); // the last of the budget: checked, then locked
    expect(await retryAfter(limits.beginAttempt("pw", rule, account, "1.2.3.4"))).toBe(600);
    // Another client of the same account is not locked out by the guesser.
    await (await limits.beginAttempt("pw", rule, account, "5.6.7.8")).succeeded();
    clock.advance(600);
    await limits.beginAttempt("pw", rule, account, "1.2.3.4"); // one attempt after the lock, which starts a longer one
    expect(await retryAfter(limits.beginAttempt("pw", rule, account, "1.2.3.4"))).toBe(1200);
    clock.advance(1200);
    const attempt = await limits.beginAttempt("pw", rule, account, "1.2.3.4");
    await attempt.succeeded();
    // The right password: the whole budget is back.
    await limits.beginAttempt("pw", rule, account, "1.2.3.4");
    await limits.beginAttempt("pw", rule, account, "1.2.3.4");
    await expect(limits.beginAttempt("pw", rule, account, "1.2.3.4")).rejects.toMatchObject({ status: 429 });
  });

  it("of 40 parallel guesses only `failures` are let through, and one at a time after the lock", async () => {
    const clock = atWindowStart(DAY);
    const limits = limiter(clock);
    const rule: LockoutRule = { failures: 5, baseSeconds: 30, maxSeconds: 3600, account: { points: 100, duration: 900 }, accountLockSeconds: 120 };
    const account = `${key()}@example.com`;
    const burst = () => Promise.allSettled(Array.from({ length: 40 }, () => limits.beginAttempt("pw", rule, account, "6.6.6.6")));
    let answers = await burst();
    expect(answers.filter((a) => a.status === "fulfilled")).toHaveLength(5);
    expect(answers.filter((a) => a.status === "rejected" && a.reason.status === 429)).toHaveLength(35);
    clock.advance(30);
    answers = await burst();
    expect(answers.filter((a) => a.status === "fulfilled")).toHaveLength(1);
    expect(await retryAfter(limits.beginAttempt("pw", rule, account, "6.6.6.6"))).toBe(60);
  });

  it("a claim that loses after the winner locked leaves the lock's end as it was", async () => {
    // The race CI once lost: the winner's new lock lands before a slower loser's claim. The loser
    // must not move the lock, or at its end the clock still sees it running and nobody passes.
    const store = createRateStore({ redis, prefix });
    const lock = `claim:${key()}`;
    const now = Date.UTC(2026, 10, 27);
    expect(await store.claim(lock, 0)).toBe(true);
    await store.lock(lock, now + 30_000, now);
    expect(await store.claim(lock, 0)).toBe(false);
    expect(await store.claim(lock, 0)).toBe(false);
    expect(await store.lockOf(lock)).toBe(now + 30_000);
    // Once it has run out, exactly one of those who read its end passes, and the lifted lock opens again.
    const claims = await Promise.all(Array.from({ length: 20 }, () => store.claim(lock, now + 30_000)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    await store.unlock(lock);
    expect(await store.lockOf(lock)).toBe(0);
    expect(await store.claim(lock, 0)).toBe(true);
  });

  it("pauses the whole account briefly past the account-wide budget, and clearLocks ends it", async () => {
    const clock = atWindowStart(3600);
    const limits = limiter(clock);
    const rule: LockoutRule = { failures: 100, baseSeconds: 1, maxSeconds: 1, account: { points: 3, duration: 3600 }, accountLockSeconds: 120 };
    const account = `${key()}@example.com`;
    for (let i = 0; i < 3; i++) await limits.beginAttempt("pw", rule, account, `10.0.0.${i}`);
    expect(await retryAfter(limits.beginAttempt("pw", rule, account, "10.0.0.9"))).toBe(120);
    await expect(limits.beginAttempt("pw", rule, account, "10.0.0.10")).rejects.toMatchObject({ status: 429 });
    clock.advance(121);
    await expect(limits.beginAttempt("pw", rule, account, "10.0.0.10")).resolves.toBeDefined();
    for (let i = 0; i < 3; i++) await limits.beginAttempt("pw", rule, account, `10.0.1.${i}`).catch(() => undefined);
    await expect(limits.beginAttempt("pw", rule, account, "10.0.0.11")).rejects.toMatchObject({ status: 429 });
    await limits.clearLocks("pw", rule, account);
    await expect(limits.beginAttempt("pw", rule, account, "10.0.0.11")).resolves.toBeDefined();
  });

  // Sharing between instances is a property of the Redis store, so this test exists only in the
  // PostgreSQL + Redis pass (the in-process store belongs to one process by design).
  if (redis) it("is shared by every instance on Redis", async () => {
    const clock = atWindowStart(3600);
    const [a, b] = [limiter(clock), limiter(clock)];
    const rule = { points: 2, duration: 3600 };
    const k = key();
    await a.consume("test", rule, k);
    await b.consume("test", rule, k);
    await expect(a.consume("test", rule, k)).rejects.toMatchObject({ status: 429 });
    const lockout: LockoutRule = { failures: 1, baseSeconds: 60, maxSeconds: 60, account: { points: 100, duration: 3600 }, accountLockSeconds: 30 };
    await a.beginAttempt("pw", lockout, `${k}@example.com`, "1.1.1.1");
    expect(await retryAfter(b.beginAttempt("pw", lockout, `${k}@example.com`, "1.1.1.1"))).toBe(60);
  });
});
