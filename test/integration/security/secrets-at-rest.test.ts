import { Writable } from "node:stream";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../../src/infra/db.js";
import { createLogger } from "../../../src/infra/logger.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { delegatedToken, registerClient } from "../../factories/oidc.js";
import { enrollTotp } from "../../factories/mfa.js";
import { invite, newOrg } from "../../factories/orgs.js";
import { createCa } from "../../factories/ssh.js";
import { login, newSuperadmin, newUser, PASSWORD } from "../../factories/users.js";

/**
 * Secrets at rest (issue 18 item 6): after a scenario that mints one of every secret Keyward hands
 * out or is handed (passwords, session and API tokens, TOTP seeds, backup codes, emailed link
 * tokens, OIDC access and refresh tokens, client and provider secrets, CA private keys), a dump of
 * every table, every Redis key and every log line (at debug level, requests included) contain
 * none of them in clear.
 */
const lines: string[] = [];
let app: TestApp;
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  app = await startTestApp({ LOG_LEVEL: "debug" }, { logger: createLogger("debug", sink) });
});
afterAll(async () => {
  await app?.close();
});

/** Every row of every table, as JSON text: what a logical dump holds. */
async function databaseDump(): Promise<string> {
  const db = app.container.db;
  const tables = resultRows<{ t: string }>(
    await db.execute(sql`select table_name as t from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1`),
  ).map((r) => r.t);
  expect(tables.length).toBeGreaterThan(30);
  const parts: string[] = [];
  for (const t of tables) {
    const rows = resultRows<{ j: string }>(await db.execute(sql`select row_to_json(x)::text as j from ${sql.identifier(t)} x`));
    parts.push(...rows.map((r) => `${t}: ${r.j}`));
  }
  return parts.join("\n");
}

/** Every key and value the service keeps in Redis (sessions, limits, flows), or in its in-process stores. */
async function storeDump(): Promise<string> {
  const redis = app.container.redis;
  const prefix = app.container.config.redis.keyPrefix;
  if (!redis) {
    const store = app.container.sessionStore as unknown as { sessions?: Record<string, string> };
    return JSON.stringify(store.sessions ?? {});
  }
  const out: string[] = [];
  for (const key of await redis.keys(`${prefix}*`)) {
    const type = await redis.type(key);
    const value = type === "string" ? await redis.get(key) : type === "hash" ? JSON.stringify(await redis.hgetall(key)) : type === "set" ? (await redis.smembers(key)).join(",") : type === "zset" ? (await redis.zrange(key, "0", "-1")).join(",") : "";
    out.push(`${key} ${value}`);
  }
  return out.join("\n");
}

const linkTokens = (text: string): string[] => [...text.matchAll(/[?&]token=([A-Za-z0-9_\-.~%]+)/g)].map((m) => decodeURIComponent(m[1]!)).concat([...text.matchAll(/\/invite(?:s|ation)?\/([A-Za-z0-9_-]{20,})/g)].map((m) => m[1]!));

describe("secrets at rest", () => {
  it("appear in no table, no Redis key and no log line after a scenario that mints every kind", async () => {
    const secrets = new Map<string, string>();
    const owner = await newUser(app);
    secrets.set("password", PASSWORD);
    secrets.set("session token", owner.token);
    const org = await newOrg(app, owner);
    await createCa(app, org.id, owner);

    const apiKey = await app.http.post(`/api/v1/organizations/${org.id}/api-keys`, { name: "bastion" }, { token: owner.token });
    expect(apiKey.status).toBe(201);
    secrets.set("API key", apiKey.body.data.api_key.key);

    const mfaUser = await newUser(app);
    const totp = await enrollTotp(app, mfaUser);
    secrets.set("TOTP seed", totp.secret);
    (totp.backupCodes ?? []).forEach((c, i) => secrets.set(`backup code ${i}`, c));

    const client = await registerClient(app, org.id, owner, { grant_types: ["authorization_code", "refresh_token", "client_credentials"] });
    secrets.set("OIDC client secret", client.clientSecret!);
    const delegated = await delegatedToken(app, owner);
    secrets.set("OIDC access token", delegated.accessToken);
    secrets.set("OIDC refresh token", delegated.refreshToken!);

    const operator = await newSuperadmin(app);
    secrets.set("operator session", operator.token);
    const providerSecret = "gh-provider-secret-0123456789abcdef";
    expect((await app.http.put("/api/v1/admin/oauth/providers/github", { client_id: "Iv1.secrets", client_secret: providerSecret }, { token: operator.token })).status).toBeLessThan(300);
    secrets.set("provider secret", providerSecret);

    const invitee = `invitee.${Date.now()}@example.com`;
    secrets.set("invitation token", await invite(app, org.id, owner, invitee));
    expect((await app.http.post("/api/v1/auth/forgot-password", { email: owner.email })).status).toBe(200);
    await app.flushEmails();
    const mailTokens = [owner.email, mfaUser.email, invitee].flatMap((to) => app.mail.to(to).flatMap((m) => linkTokens(`${m.text}\n${m.html}`)));
    expect(mailTokens.length).toBeGreaterThanOrEqual(4);
    mailTokens.forEach((t, i) => secrets.set(`emailed link token ${i}`, t));
    // A sign-in after the reset mail, so request logs of every door are in the log too.
    expect((await login(app, owner.email)).status).toBe(200);

    const dump = await databaseDump();
    const stores = await storeDump();
    const log = lines.join("");
    expect(log.length).toBeGreaterThan(1000);
    const found = [...secrets].flatMap(([what, value]) => {
      expect(value.length, what).toBeGreaterThanOrEqual(8);
      return [dump.includes(value) && `${what} in the database`, stores.includes(value) && `${what} in the session store`, log.includes(value) && `${what} in the log`].filter(Boolean);
    });
    expect(found).toEqual([]);
    // CA private keys are only ever sealed.
    for (const text of [dump, stores, log]) expect(text).not.toMatch(/PRIVATE KEY-----|"d":"[A-Za-z0-9_-]{20,}"/);
  }, 120_000);
});
