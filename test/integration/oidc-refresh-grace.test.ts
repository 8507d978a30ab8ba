import { createHash } from "node:crypto";
import { connect } from "node:net";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { CLI_CLIENT, delegatedToken, refreshDelegated, registerClient } from "../factories/oidc.js";
import { orgWithRoles } from "../factories/orgs.js";
import { newUser, PASSWORD, type TestUser } from "../factories/users.js";

/**
 * Refresh rotation with a lost answer (issue 31; src/oidc/adapter.ts, "a lost answer"): within
 * OIDC_REFRESH_RETRY_GRACE of a rotation, the same client presenting the token it just spent, while
 * the successor it was given is unused, is rotated again and that successor retired; every other
 * reuse still revokes the grant.
 */
const GRACE = 30;
let app: TestApp;
beforeAll(async () => {
  // Many sign-ins from one address in a few seconds: the per-address limits are not what is tested here.
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(async () => {
  await app?.close();
});
afterEach(() => app.clock.reset());

const keyOf = (token: string) => createHash("sha256").update(token).digest("hex");
type Answer = { status: number; body: Record<string, unknown> };
const refreshOf = (a: Answer) => String(a.body.refresh_token);
const accessOf = (a: Answer) => String(a.body.access_token);

/** Whether a delegated access token still acts on Keyward's API. */
async function accessWorks(target: TestApp, accessToken: string): Promise<boolean> {
  const status = (await target.http.get("/api/v1/auth/me", { token: accessToken })).status;
  expect([200, 401]).toContain(status);
  return status === 200;
}

async function auditOf(target: TestApp, userId: string, action: string): Promise<Array<{ metadata: Record<string, unknown> }>> {
  return resultRows<{ metadata: Record<string, unknown> }>(
    await target.container.db.execute(sql`select metadata from audit_logs where action = ${action} and user_id = ${userId} order by created_at`),
  );
}

/** The account's refresh tokens that are neither spent nor retired. */
async function liveRecords(target: TestApp, userId: string): Promise<string[]> {
  const rows = resultRows<{ id: string }>(await target.container.db.execute(sql`select id from oidc_refresh_tokens where account_id = ${userId} and consumed_at is null`));
  return rows.map((r) => r.id);
}

async function signedIn(target: TestApp): Promise<{ user: TestUser; refreshToken: string; accessToken: string }> {
  const user = await newUser(target);
  const t = await delegatedToken(target, { email: user.email, password: PASSWORD });
  expect(t.refreshToken, JSON.stringify(t.raw.body)).toBeTruthy();
  return { user, refreshToken: t.refreshToken!, accessToken: t.accessToken };
}

/** The grant is revoked: none of these tokens works any more, and a reuse that revoked it was audited. */
async function expectRevoked(target: TestApp, userId: string, tokens: { refresh: string[]; access: string[] }): Promise<void> {
  for (const token of tokens.refresh) expect((await refreshDelegated(target, token)).body.error).toBe("invalid_grant");
  for (const token of tokens.access) expect(await accessWorks(target, token)).toBe(false);
  expect(await liveRecords(target, userId)).toEqual([]);
  const reuse = await auditOf(target, userId, "oidc.refresh_token.reuse");
  expect(reuse.length).toBeGreaterThanOrEqual(1);
  expect(reuse[0]!.metadata).toMatchObject({ error: "invalid_grant", grant_revoked: true, grant_type: "refresh_token", client_id: CLI_CLIENT });
}

describe("a refresh whose answer was lost", () => {
  it("is retried with the same token within the grace period: new tokens, the chain goes on, the lost ones are retired", async () => {
    const { user, refreshToken: spent } = await signedIn(app);
    const lost = await refreshDelegated(app, spent);
    expect(lost.status).toBe(200);
    // The client never read `lost`: it presents the token it still holds.
    const retry = await refreshDelegated(app, spent);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(refreshOf(retry)).not.toBe(refreshOf(lost));
    expect(await accessWorks(app, accessOf(retry))).toBe(true);
    // One live successor: the retry's. The lost access token is gone with its refresh token.
    expect(await liveRecords(app, user.id)).toEqual([keyOf(refreshOf(retry))]);
    expect(await accessWorks(app, accessOf(lost))).toBe(false);

    // The client continues from the answer it got.
    const next = await refreshDelegated(app, refreshOf(retry));
    expect(next.status).toBe(200);
    expect(await accessWorks(app, accessOf(next))).toBe(true);
    expect((await refreshDelegated(app, refreshOf(next))).status).toBe(200);

    // Audited as issued, the retry marked; no reuse was suspected.
    const issued = await auditOf(app, user.id, "oidc.token.issued");
    expect(issued.filter((r) => r.metadata.grant_type === "refresh_token").map((r) => r.metadata.rotation_retry ?? false)).toEqual([false, true, false, false]);
    expect(await auditOf(app, user.id, "oidc.refresh_token.reuse")).toEqual([]);
  });

  it("survives several lost answers in a row, and the token spent is not retried once its chain moved on", async () => {
    const { user, refreshToken: spent } = await signedIn(app);
    const answers: Answer[] = [];
    for (let i = 0; i < 3; i++) answers.push(await refreshDelegated(app, spent));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map(refreshOf)).size).toBe(3);
    const last = answers.at(-1)!;
    expect(await liveRecords(app, user.id)).toEqual([keyOf(refreshOf(last))]);
    const next = await refreshDelegated(app, refreshOf(last));
    expect(next.status).toBe(200);
    // The successor was used: the token spent first is now a plain reuse.
    expect((await refreshDelegated(app, spent)).body.error).toBe("invalid_grant");
    await expectRevoked(app, user.id, { refresh: [refreshOf(next)], access: [accessOf(next)] });
  });

  it("treats a retired successor presented later as a reuse: the lost answer reached someone, the grant is revoked", async () => {
    const { user, refreshToken: spent } = await signedIn(app);
    const lost = await refreshDelegated(app, spent);
    const retry = await refreshDelegated(app, spent);
    expect([lost.status, retry.status]).toEqual([200, 200]);
    const refused = await refreshDelegated(app, refreshOf(lost));
    expect(refused.body.error).toBe("invalid_grant");
    await expectRevoked(app, user.id, { refresh: [refreshOf(retry)], access: [accessOf(retry)] });
  });

  it("is refused to another client, which revokes nothing", async () => {
    const { org, admin } = await orgWithRoles(app);
    const other = await registerClient(app, org.id, admin, { public: true, grant_types: ["authorization_code", "refresh_token"] });
    const { user, refreshToken: spent } = await signedIn(app);
    const rotated = await refreshDelegated(app, spent);
    expect(rotated.status).toBe(200);
    const foreign = await refreshDelegated(app, spent, other.clientId);
    expect(foreign).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect(foreign.body.refresh_token).toBeUndefined();
    // The client's own chain is untouched.
    expect(await liveRecords(app, user.id)).toEqual([keyOf(refreshOf(rotated))]);
    expect(await accessWorks(app, accessOf(rotated))).toBe(true);
    expect((await refreshDelegated(app, refreshOf(rotated))).status).toBe(200);
  });
});

describe("reuse detection around the grace period", () => {
  it("a stolen token presented after its successor was used revokes the grant, within the grace period too", async () => {
    const { user, refreshToken: stolen } = await signedIn(app);
    const first = await refreshDelegated(app, stolen);
    const second = await refreshDelegated(app, refreshOf(first));
    expect([first.status, second.status]).toEqual([200, 200]);
    // Seconds later (well within the grace period), the thief presents the copy it took.
    const theft = await refreshDelegated(app, stolen);
    expect(theft).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect(theft.body.refresh_token).toBeUndefined();
    await expectRevoked(app, user.id, { refresh: [refreshOf(second)], access: [accessOf(first), accessOf(second)] });
  });

  it("a thief who retries before the client refreshes again retires the client's tokens; the client's next refresh revokes the grant, the thief's tokens with it", async () => {
    const { user, refreshToken: stolen } = await signedIn(app);
    const client = await refreshDelegated(app, stolen);
    const thief = await refreshDelegated(app, stolen);
    expect([client.status, thief.status]).toEqual([200, 200]);
    expect(await accessWorks(app, accessOf(client))).toBe(false);
    expect((await refreshDelegated(app, refreshOf(client))).body.error).toBe("invalid_grant");
    await expectRevoked(app, user.id, { refresh: [refreshOf(thief)], access: [accessOf(thief)] });
  });

  it("after the grace period, presenting the spent token revokes the grant even though its successor was never used", async () => {
    const { user, refreshToken: spent } = await signedIn(app);
    const rotated = await refreshDelegated(app, spent);
    expect(rotated.status).toBe(200);
    app.clock.advance(GRACE + 1);
    const late = await refreshDelegated(app, spent);
    expect(late).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    await expectRevoked(app, user.id, { refresh: [refreshOf(rotated)], access: [accessOf(rotated)] });
  });

  it("just inside the grace period, the retry is still allowed", async () => {
    const { refreshToken: spent } = await signedIn(app);
    expect((await refreshDelegated(app, spent)).status).toBe(200);
    app.clock.advance(GRACE - 2);
    const retry = await refreshDelegated(app, spent);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect((await refreshDelegated(app, refreshOf(retry))).status).toBe(200);
  });
});

// Two requests that both read the token unspent, then write: the first rotates, the second finds
// it spent and retries. The embedded database runs one statement at a time, so a transaction held
// open lines both requests up behind it (on PostgreSQL, concurrency/oidc-refresh.test.ts holds the
// token's row instead).
if (!process.env.DATABASE_URL) describe("two refreshes that both read before either writes (embedded database)", () => {
  /** Runs `requests` with the database held until both have reached it and wait there, in turn. */
  async function linedUp<T>(requests: () => Promise<T>): Promise<T> {
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const held = app.container.db.transaction(async () => {
      entered();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await inside;
    const answers = requests();
    await new Promise((resolve) => setTimeout(resolve, 500));
    release();
    await held;
    return answers;
  }

  it("of one token: both get an answer; the second retires the first's successor, so exactly one is live", async () => {
    const { user, refreshToken: spent } = await signedIn(app);
    const [a, b] = await linedUp(() => Promise.all([refreshDelegated(app, spent), refreshDelegated(app, spent)]));
    expect([a!.status, b!.status]).toEqual([200, 200]);
    const live = await liveRecords(app, user.id);
    expect(live).toHaveLength(1);
    const winner = [a!, b!].find((x) => keyOf(refreshOf(x)) === live[0])!;
    const loser = [a!, b!].find((x) => x !== winner)!;
    expect(await accessWorks(app, accessOf(loser))).toBe(false);
    expect(await accessWorks(app, accessOf(winner))).toBe(true);
    expect((await refreshDelegated(app, refreshOf(winner))).status).toBe(200);
    expect(await auditOf(app, user.id, "oidc.refresh_token.reuse")).toEqual([]);
  });

  it("the client's next refresh and a thief's retry of the spent token: the grant is revoked, whichever writes first", async () => {
    const { user, refreshToken: stolen } = await signedIn(app);
    const first = await refreshDelegated(app, stolen);
    expect(first.status).toBe(200);
    const [client, thief] = await linedUp(() => Promise.all([refreshDelegated(app, refreshOf(first)), refreshDelegated(app, stolen)]));
    expect([client!.status, thief!.status].sort()).toEqual([200, 400]);
    const answered = [client!, thief!].find((x) => x.status === 200)!;
    await expectRevoked(app, user.id, { refresh: [refreshOf(answered)], access: [accessOf(answered), accessOf(first)] });
  });
});

describe("an answer cut in flight", () => {
  it("leaves the client able to continue: it retries with the same token and goes on from that answer", async () => {
    const { user, refreshToken: spent } = await signedIn(app);
    const { port } = new URL(app.url);
    const body = new URLSearchParams({ grant_type: "refresh_token", refresh_token: spent, client_id: CLI_CLIENT }).toString();
    // A raw HTTP request whose connection is destroyed as soon as it is sent: the answer is never read.
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        const request = [
          "POST /api/v1/oidc/token HTTP/1.1",
          `Host: localhost:${port}`,
          "Content-Type: application/x-www-form-urlencoded",
          `Content-Length: ${Buffer.byteLength(body)}`,
          "",
          body,
        ].join("\r\n");
        socket.write(request, () => {
          socket.destroy();
          resolve();
        });
      });
      socket.on("error", reject);
    });
    // The server carried on and rotated the token: the client holds only the spent one.
    await expect.poll(async () => (await auditOf(app, user.id, "oidc.token.issued")).filter((r) => r.metadata.grant_type === "refresh_token").length, { timeout: 5000 }).toBe(1);
    const spentRecord = resultRows<{ spent: boolean; successor: string | null }>(
      await app.container.db.execute(sql`select consumed_at is not null as spent, successor_id as successor from oidc_refresh_tokens where id = ${keyOf(spent)}`),
    );
    expect(spentRecord).toEqual([{ spent: true, successor: expect.any(String) }]);
    const lostSuccessor = spentRecord[0]!.successor!;

    const retry = await refreshDelegated(app, spent);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(keyOf(refreshOf(retry))).not.toBe(lostSuccessor);
    expect(await liveRecords(app, user.id)).toEqual([keyOf(refreshOf(retry))]);
    let current = retry;
    for (let i = 0; i < 2; i++) {
      expect(await accessWorks(app, accessOf(current))).toBe(true);
      current = await refreshDelegated(app, refreshOf(current));
      expect(current.status).toBe(200);
    }
    expect(await auditOf(app, user.id, "oidc.refresh_token.reuse")).toEqual([]);
  });
});

describe("with OIDC_REFRESH_RETRY_GRACE=0", () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp({ RATE_LIMIT_ENABLED: "false", OIDC_REFRESH_RETRY_GRACE: "0" });
  });
  afterAll(async () => {
    await strict?.close();
  });

  it("any presentation of a spent token is a reuse that revokes the grant, as before", async () => {
    const { user, refreshToken: spent } = await signedIn(strict);
    const rotated = await refreshDelegated(strict, spent);
    expect(rotated.status).toBe(200);
    expect((await refreshDelegated(strict, spent)).body.error).toBe("invalid_grant");
    await expectRevoked(strict, user.id, { refresh: [refreshOf(rotated)], access: [accessOf(rotated)] });
  });

  it("of several presentations at once, one rotates and the others are refused as a reuse that revokes the grant", async () => {
    const { user, refreshToken: spent } = await signedIn(strict);
    const answers = await Promise.all(Array.from({ length: 4 }, () => refreshDelegated(strict, spent)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400]);
    for (const a of answers.filter((x) => x.status === 400)) expect(a.body.error).toBe("invalid_grant");
    const winner = answers.find((a) => a.status === 200)!;
    await expectRevoked(strict, user.id, { refresh: [refreshOf(winner)], access: [accessOf(winner)] });
  });
});
