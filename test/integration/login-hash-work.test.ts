import * as argon2 from "@node-rs/argon2";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPasswordHasher, type Argon2Engine } from "../../src/lib/crypto/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { login, newUser, uniqueEmail, PASSWORD } from "../factories/users.js";

/**
 * "Timing does not say which half was wrong" (ARCHITECTURE, security defaults), asserted as work
 * rather than as time: the app runs on the real argon2id hasher over an engine that records every
 * verification, so a sign-in refused for an unknown address (or an account that cannot sign in
 * with a password) must do the same argon2 work as a wrong password for a real account: one
 * verification, against a hash made with the same parameters. Removing the dummy verification
 * (in the sign-in or in the hasher) leaves the unknown address with no work and fails here.
 */
const verified: string[] = [];
const counting: Argon2Engine = {
  hash: (password, options) => argon2.hash(password, options),
  verify: (hashed, password) => {
    verified.push(hashed);
    return argon2.verify(hashed, password);
  },
};

const params = "$argon2id$v=19$m=8192,t=2,p=1$";
/** "$argon2id$v=19$m=…,t=…,p=…$": the algorithm and cost of a stored hash, without salt and digest. */
const costOf = (hashed: string) => `${hashed.split("$").slice(0, 4).join("$")}$`;

let app: TestApp;
beforeAll(async () => {
  // A high lockout threshold: no answer below may be a 429 given instead of checking the hash.
  app = await startTestApp({ RATE_LIMIT_LOGIN_ACCOUNT_FAILURES: "1000" }, { passwordHasher: createPasswordHasher({ memoryCost: 8192, timeCost: 2, parallelism: 1 }, counting) });
});
afterAll(() => app?.close());

/** The argon2 verifications one sign-in made, as the parameter prefix of the hash each checked. */
async function workOf(email: string, password: string): Promise<{ status: number; work: string[] }> {
  verified.length = 0;
  const res = await login(app, email, password);
  return { status: res.status, work: verified.map(costOf) };
}

const exec = (query: ReturnType<typeof sql>) => app.container.db.execute(query);

describe("sign-in hash work", () => {
  it("a wrong password for a real account costs one verification at the configured parameters", async () => {
    const user = await newUser(app);
    const { status, work } = await workOf(user.email, "not the password at all");
    expect(status).toBe(401);
    expect(work).toEqual([params]);
  });

  it("an unknown address does the same work as a wrong password", async () => {
    const user = await newUser(app);
    const wrong = await workOf(user.email, "not the password at all");
    const unknown = await workOf(uniqueEmail("nobody"), "not the password at all");
    expect(unknown.status).toBe(wrong.status);
    expect(unknown.work).toEqual(wrong.work);
    expect(unknown.work).toHaveLength(1);
  });

  it("so does an account without a password, a deleted one and a suspended one", async () => {
    const wrong = (await workOf((await newUser(app)).email, "not the password at all")).work;

    const passwordless = await newUser(app);
    await exec(sql`delete from password_credentials where user_id = ${passwordless.id}`);
    const deleted = await newUser(app);
    await exec(sql`update users set deleted_at = now() where id = ${deleted.id}`);
    const suspended = await newUser(app);
    await exec(sql`update users set status = 'suspended', suspended_at = now() where id = ${suspended.id}`);

    for (const [kind, email, password] of [
      ["passwordless", passwordless.email, PASSWORD],
      ["deleted", deleted.email, PASSWORD],
      ["suspended, wrong password", suspended.email, "not the password at all"],
      ["suspended, right password", suspended.email, PASSWORD],
    ] as const) {
      const { status, work } = await workOf(email, password);
      expect(status, kind).toBeGreaterThanOrEqual(400);
      expect(work, kind).toEqual(wrong);
    }
  });
});
