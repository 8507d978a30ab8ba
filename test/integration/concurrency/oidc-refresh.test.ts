import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../../src/infra/db.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { OidcAgent } from "../../helpers/oidc-agent.js";
import { CLI_CLIENT, delegatedToken, refreshDelegated } from "../../factories/oidc.js";
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
  app = await startTestApp();
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
