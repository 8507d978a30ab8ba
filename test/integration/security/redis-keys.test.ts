import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { login, newUser, uniqueEmail } from "../../factories/users.js";

/**
 * What the shared stores are keyed by never names a person: rate-limit counters and locks are
 * keyed by email addresses, client addresses and account ids, and Redis (or the in-process store
 * of the embedded default) holds them under an HMAC of those, as the database holds tokens only as
 * hashes. The keys are read where they are kept: Redis's own list under the instance's prefix
 * when REDIS_URL is set, otherwise every key written into rate-limiter-flexible's in-process store.
 */
const require = createRequire(import.meta.url);
const MemoryStorage = require("rate-limiter-flexible/lib/component/MemoryStorage/MemoryStorage.js") as { prototype: Record<string, (key: string, ...rest: unknown[]) => unknown> };

let app: TestApp;
const written = new Set<string>();
beforeAll(async () => {
  // Every key the in-process store writes (counters, locks, gates); the store itself is untouched.
  for (const method of ["incrby", "set"]) {
    const original = MemoryStorage.prototype[method]!;
    vi.spyOn(MemoryStorage.prototype, method).mockImplementation(function (this: unknown, key: string, ...rest: unknown[]) {
      written.add(key);
      return original.call(this, key, ...rest);
    });
  }
  app = await startTestApp();
});
afterAll(async () => {
  vi.restoreAllMocks();
  await app?.close();
});

async function storedKeys(): Promise<string[]> {
  const redis = app.container.redis;
  if (!redis) return [...written];
  return redis.keys(`${app.container.config.redis.keyPrefix}*`);
}

describe("keys in Redis and the in-process stores", () => {
  it("carry no email address or client address in clear, and the limits no account id, whatever the limit", async () => {
    const victim = await newUser(app);
    const unknown = uniqueEmail("nobody");
    // Password guessing (per account, per account and client), resets, resends, activations.
    for (let i = 0; i < 3; i++) expect((await login(app, victim.email, "not the password")).status).toBe(401);
    for (const email of [victim.email, unknown]) {
      for (const path of ["/api/v1/auth/forgot-password", "/api/v1/auth/resend-verification", "/api/v1/auth/resend-activation"]) {
        expect((await app.http.post(path, { email })).status, path).toBe(200);
      }
    }
    expect((await app.http.post("/api/v1/auth/me/resend-verification", {}, { token: victim.token })).status).toBe(409);

    const keys = await storedKeys();
    // The limits did count (a store with nothing in it would pass the next lines vacuously).
    expect(keys.filter((k) => k.includes("rl")).length).toBeGreaterThanOrEqual(8);
    for (const key of keys) {
      const lower = key.toLowerCase();
      for (const secret of [victim.email, unknown, "@example.com", "127.0.0.1"]) expect(lower, key).not.toContain(secret.toLowerCase());
      // Sessions are indexed by account id (a random UUID, no one's name); the limits' keys name no account at all.
      if (key.includes("rl")) expect(lower, key).not.toContain(victim.id);
    }
    // Each counter is named after a pseudonym: the limit's name, then 32 hex digits.
    expect(keys.some((k) => /rl.*login[^:]*:pair[^@]*:[0-9a-f]{32}\|[0-9a-f]{32}/.test(k)), keys.join("\n")).toBe(true);
    expect(keys.some((k) => /forgot-password-email:[0-9a-f]{32}@/.test(k)), keys.join("\n")).toBe(true);
  });

  it("still limits the same person as one: the pseudonym is stable, and the lockout holds", async () => {
    const victim = await newUser(app);
    const answers: number[] = [];
    for (let i = 0; i < 7; i++) answers.push((await login(app, victim.email, "still not the password")).status);
    // The default budget is 5 failures per account and client, then a lock.
    expect(answers.slice(0, 5)).toEqual(Array(5).fill(401));
    expect(answers.slice(5)).toEqual([429, 429]);
  });
});
