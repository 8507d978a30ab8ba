import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectPostgres, resultRows } from "../../../src/infra/db.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { holdRows } from "../../helpers/row-lock.js";
import { OidcAgent } from "../../helpers/oidc-agent.js";
import { CLI_CLIENT, delegatedCode, delegatedToken, refreshDelegated } from "../../factories/oidc.js";
import { newUser, PASSWORD } from "../../factories/users.js";

/**
 * Refresh-token rotation under concurrency (issue 18 item 0): several chains of one grant (one
 * browser session signing the same client in again and again) rotate at the same moment, round
 * after round. On PostgreSQL this used to end in `deadlock detected` (500 server_error): the
 * access-token save updated every live refresh token of the grant, in whatever order each
 * statement met them. Now each save touches its own rows only.
 */
let app: TestApp;
beforeAll(async () => {
  // Many sign-ins from one address in a few seconds: the per-address limits are not what is tested here.
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(async () => {
  await app?.close();
});

const CHAINS = 8;
const ROUNDS = 12;

describe("refresh grants of one grant, at once", () => {
  it("never answer 5xx, every chain keeps rotating, and each record names the access token issued with it", async () => {
    const user = await newUser(app);
    const agent = new OidcAgent(app.url);
    await agent.signIn(user.email, PASSWORD);
    const chains: string[] = [];
    for (let i = 0; i < CHAINS; i++) {
      const t = await delegatedToken(app, { email: user.email, password: PASSWORD }, { agent, prompt: i === 0 ? "consent" : null });
      expect(t.refreshToken, JSON.stringify(t.raw.body)).toBeTruthy();
      chains.push(t.refreshToken!);
    }
    const db = app.container.db;
    const grants = resultRows<{ n: string | number }>(await db.execute(sql`select count(distinct grant_id) as n from oidc_refresh_tokens`));
    expect(Number(grants[0]!.n)).toBe(1);

    const statuses: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(chains.map((token) => refreshDelegated(app, token)));
      answers.forEach((a, i) => {
        statuses.push(a.status);
        if (a.status === 200) chains[i] = String(a.body.refresh_token);
      });
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);

    // Each live refresh token record names an access token of its own that exists.
    const live = resultRows<{ access_token_id: string | null; found: boolean }>(
      await db.execute(
        sql`select r.access_token_id, exists (select 1 from oidc_payloads p where p.type = 'AccessToken' and p.id = r.access_token_id) as found from oidc_refresh_tokens r where r.consumed_at is null`,
      ),
    );
    expect(live).toHaveLength(CHAINS);
    expect(live.every((r) => r.found)).toBe(true);
    expect(new Set(live.map((r) => r.access_token_id)).size).toBe(CHAINS);
  }, 120_000);
});

describe("a refresh refused after the provider began rotating", () => {
  it("spends nothing: the same refresh token still works, and no reuse is suspected", async () => {
    const user = await newUser(app);
    const t = await delegatedToken(app, { email: user.email, password: PASSWORD });
    // A resource the grant does not cover is refused only after the old token was marked spent.
    const refused = await fetch(`${app.url}/api/v1/oidc/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: t.refreshToken!, client_id: CLI_CLIENT, resource: "https://elsewhere.example/api" }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe("invalid_target");
    const again = await refreshDelegated(app, t.refreshToken!);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((await refreshDelegated(app, String(again.body.refresh_token))).status).toBe(200);
  });
});

/** The reuse records of a grant's account, as the audit log keeps them. */
async function reuseRecords(userId: string): Promise<Array<{ metadata: Record<string, unknown> }>> {
  return resultRows<{ metadata: Record<string, unknown> }>(
    await app.container.db.execute(sql`select metadata from audit_logs where action = 'oidc.refresh_token.reuse' and user_id = ${userId}`),
  );
}

/** The account's refresh-token records neither spent nor retired, by row key. */
async function liveRecords(userId: string): Promise<string[]> {
  return resultRows<{ id: string }>(await app.container.db.execute(sql`select id from oidc_refresh_tokens where account_id = ${userId} and consumed_at is null`)).map((r) => r.id);
}
const keyOf = (token: string) => createHash("sha256").update(token).digest("hex");

// Within OIDC_REFRESH_RETRY_GRACE a token presented again while its successor is unused is a retry
// (a lost answer, src/oidc/adapter.ts): each is answered, and each retires the successor before it.
// With the grace period off, the same burst is a reuse that revokes the grant (oidc-refresh-grace.test.ts).
describe("one refresh token presented several times at once", () => {
  it("answers every one, and leaves exactly one live successor, whose chain goes on; nothing is half-written", async () => {
    const user = await newUser(app);
    const t = await delegatedToken(app, { email: user.email, password: PASSWORD });
    const answers = await Promise.all(Array.from({ length: 4 }, () => refreshDelegated(app, t.refreshToken!)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const live = await liveRecords(user.id);
    expect(live).toHaveLength(1);
    const winner = answers.find((a) => keyOf(String(a.body.refresh_token)) === live[0])!;
    expect(winner).toBeDefined();
    // The others' tokens were retired: their access tokens are gone, and the live record names a stored one.
    for (const a of answers.filter((x) => x !== winner)) expect((await app.http.get("/api/v1/auth/me", { token: String(a.body.access_token) })).status).toBe(401);
    const named = resultRows<{ found: boolean }>(
      await app.container.db.execute(
        sql`select exists (select 1 from oidc_payloads p where p.type = 'AccessToken' and p.id = r.access_token_id) as found from oidc_refresh_tokens r where r.account_id = ${user.id} and r.consumed_at is null`,
      ),
    );
    expect(named).toEqual([{ found: true }]);
    expect((await refreshDelegated(app, String(winner.body.refresh_token))).status).toBe(200);
    expect(await reuseRecords(user.id)).toEqual([]);
  });
});

// Two requests holding the same unspent token at their last write at once needs two connections:
// only PostgreSQL (the embedded database runs one statement at a time).
if (process.env.DATABASE_URL) describe("two refreshes of one token that both read it unspent (PostgreSQL)", () => {
  it("write one rotation each in turn: the second finds the token spent and retries it, retiring the first's successor", async () => {
    const user = await newUser(app);
    const t = await delegatedToken(app, { email: user.email, password: PASSWORD });
    const key = createHash("sha256").update(t.refreshToken!).digest("hex");
    const db = connectPostgres(app.container.config.db.url!, { max: 2, onnotice: () => {} });
    try {
      // Another transaction holds the token's row: both refreshes read it unspent, then wait to spend it.
      const held = await holdRows(db, (tx) => tx`select id from oidc_payloads where type = 'RefreshToken' and id = ${key} for update`);
      const answers = Promise.all([refreshDelegated(app, t.refreshToken!), refreshDelegated(app, t.refreshToken!)]);
      expect(await held.waiting(2)).toBe(2);
      await held.release();
      const [a, b] = await answers;
      expect([a!.status, b!.status]).toEqual([200, 200]);
      // Of the token's two successors, exactly one is live: the second writer retired the first's.
      const live = await liveRecords(user.id);
      expect(live).toHaveLength(1);
      const winner = [a!, b!].find((x) => keyOf(String(x.body.refresh_token)) === live[0])!;
      expect(winner).toBeDefined();
      expect((await refreshDelegated(app, String(winner.body.refresh_token))).status).toBe(200);
      expect(await reuseRecords(user.id)).toEqual([]);
    } finally {
      await db.end();
    }
  });
});

describe("one authorization code redeemed several times at once", () => {
  it("gives tokens once: the other redemptions are refused, the grant is revoked and nothing they got works", async () => {
    const user = await newUser(app);
    const { redeem } = await delegatedCode(app, { email: user.email, password: PASSWORD });
    const answers = await Promise.all(Array.from({ length: 4 }, () => redeem()));
    // The first to write wins; on the embedded database the four may also run one after another.
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length, JSON.stringify(answers)).toBe(1);
    for (const a of answers.filter((x) => x.status !== 200)) expect(a).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    // A code used twice revokes what was issued from it (RFC 6749 4.1.2): nothing it gave works.
    for (const a of ok) {
      expect((await refreshDelegated(app, String(a.body.refresh_token))).status).toBe(400);
      expect((await app.http.get("/api/v1/auth/me", { token: String(a.body.access_token) })).status).toBe(401);
    }
  });
});

if (process.env.DATABASE_URL) describe("two redemptions of one code that both read it unused (PostgreSQL)", () => {
  it("issue nothing to the second: it finds the code used, answers invalid_grant and the grant is revoked", async () => {
    const user = await newUser(app);
    const { code, redeem } = await delegatedCode(app, { email: user.email, password: PASSWORD });
    const key = createHash("sha256").update(code).digest("hex");
    const db = connectPostgres(app.container.config.db.url!, { max: 2, onnotice: () => {} });
    try {
      const held = await holdRows(db, (tx) => tx`select id from oidc_payloads where type = 'AuthorizationCode' and id = ${key} for update`);
      const answers = Promise.all([redeem(), redeem()]);
      expect(await held.waiting(2)).toBe(2);
      await held.release();
      const [a, b] = await answers;
      expect([a!.status, b!.status].sort()).toEqual([200, 400]);
      expect([a!, b!].find((x) => x.status === 400)!.body.error).toBe("invalid_grant");
      // What the first was issued dies with the grant, whichever finished first: its refresh token
      // and its access token on the API it was issued for.
      const winner = [a!, b!].find((x) => x.status === 200)!;
      expect((await refreshDelegated(app, String(winner.body.refresh_token))).status).toBe(400);
      expect((await app.http.get("/api/v1/auth/me", { token: String(winner.body.access_token) })).status).toBe(401);
    } finally {
      await db.end();
    }
  });
});

describe("tokens saved after their grant was revoked", () => {
  it("are purged by the housekeeping job, while a live grant's tokens stay and keep working", async () => {
    const grantOf = async (refreshToken: string) => {
      const key = createHash("sha256").update(refreshToken).digest("hex");
      const [row] = resultRows<{ grant_id: string }>(await app.container.db.execute(sql`select grant_id from oidc_payloads where type = 'RefreshToken' and id = ${key}`));
      return row!.grant_id;
    };
    const issued = async (grantId: string) =>
      resultRows<{ type: string }>(await app.container.db.execute(sql`select type from oidc_payloads where grant_id = ${grantId} and type <> 'Grant' order by type`)).map((r) => r.type);
    const unspentRecords = async (grantId: string) =>
      resultRows<{ n: number }>(await app.container.db.execute(sql`select count(*)::int as n from oidc_refresh_tokens where grant_id = ${grantId} and consumed_at is null`))[0]!.n;
    const kept = await delegatedToken(app, { email: (await newUser(app)).email, password: PASSWORD });
    const orphaned = await delegatedToken(app, { email: (await newUser(app)).email, password: PASSWORD });
    const [keptGrant, orphanedGrant] = [await grantOf(kept.refreshToken!), await grantOf(orphaned.refreshToken!)];
    const keptIssued = await issued(keptGrant);
    // The state a replay leaves when it revokes the grant just before the winner saves its
    // tokens: the grant's row gone, what was issued from it still stored.
    await app.container.db.execute(sql`delete from oidc_payloads where type = 'Grant' and id = ${createHash("sha256").update(orphanedGrant).digest("hex")}`);
    // The code it was redeemed from stays stored (spent) with the tokens.
    expect(await issued(orphanedGrant)).toEqual(["AccessToken", "AuthorizationCode", "RefreshToken"]);
    expect(await unspentRecords(orphanedGrant)).toBe(1);

    expect(await app.services.oidcClients.purgeExpired()).toBeGreaterThanOrEqual(3);
    expect(await issued(orphanedGrant)).toEqual([]);
    expect(await unspentRecords(orphanedGrant)).toBe(0);
    expect(keptIssued).toEqual(["AccessToken", "AuthorizationCode", "RefreshToken"]);
    expect(await issued(keptGrant)).toEqual(keptIssued);
    expect((await refreshDelegated(app, kept.refreshToken!)).status).toBe(200);
  });
});
