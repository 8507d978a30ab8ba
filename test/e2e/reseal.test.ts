import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { sealContexts, totpCode, totpStep } from "../../src/lib/crypto/index.js";
import { systemContext } from "../../src/lib/request-context.js";
import { connectPostgres, resultRows } from "../../src/infra/db.js";
import { SEALED_KINDS } from "../../src/modules/keys/sealed-values.repository.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startFakeZtCentral, type FakeZtCentral } from "../helpers/fake-zt-central.js";
import { withDatabase } from "../helpers/global-setup.js";
import { enrollTotp } from "../factories/mfa.js";
import { CLI_CLIENT, registerClient, type RegisteredClient } from "../factories/oidc.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../factories/ssh.js";
import { login, newSuperadmin, newUser, type TestUser } from "../factories/users.js";

/**
 * Key rotation without downtime, end to end: data of every sealed kind is written under k1; the
 * keys become k2,k1 and `npm run admin -- reseal` re-encrypts everything under k2 (an interrupted
 * run loses nothing and the next one carries on; a second run has nothing to do); then k1 is
 * removed and everything still opens: the CA signs, the authenticator app's code is accepted, the
 * queued email is sent, the OIDC client authenticates with its secret, the provider signs with its
 * keys, the GitHub configuration and the ZeroTier token are usable, and a pending device code is
 * found by its user code.
 */
const key = () => randomBytes(32).toString("base64");
const K1 = `k1:${key()}`;
const K2 = `k2:${key()}`;
const CENTRAL_TOKEN = "reseal-central-token-0123456789";

let central: FakeZtCentral;
let storage: Record<string, string>;
let dropDatabase: () => Promise<void> = async () => {};

beforeAll(async () => {
  central = await startFakeZtCentral();
  central.addToken(CENTRAL_TOKEN);
  const template = inject("pgTemplate");
  const baseUrl = process.env.DATABASE_URL;
  if (baseUrl && template) {
    // One database for every instance of this test (startTestApp gives each app a fresh one).
    const name = `keyward_reseal_${process.pid}`;
    const admin = connectPostgres(baseUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${name}"`);
    await admin.unsafe(`create database "${name}" template "${template}"`);
    await admin.end();
    storage = { DATABASE_URL: withDatabase(baseUrl, name) };
    dropDatabase = async () => {
      const a = connectPostgres(baseUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists "${name}" with (force)`);
      await a.end();
    };
  } else {
    storage = { DATA_DIR: join(mkdtempSync(join(tmpdir(), "kw-reseal-")), "data") };
  }
});
afterAll(async () => {
  await central?.close();
  await dropDatabase();
});

const instance = (keys: string): Promise<TestApp> => startTestApp({ ...storage, ENCRYPTION_KEYS: keys, ZEROTIER_CENTRAL_URL: central.url, NETWORK_CONTROLLER_RETRIES: "0" });

function adminCommand(args: string[], keys: string): Promise<{ code: number | null; out: string }> {
  const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: "test", LOG_LEVEL: "silent", ENCRYPTION_KEYS: keys, SESSION_SECRET: "x".repeat(40) };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  const child = spawn(process.execPath, ["--import", "tsx", "src/tasks/admin.ts", ...args], { env: { ...env, ...storage }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, out })));
}

describe("re-sealing every sealed value under a new key", () => {
  let owner: TestUser;
  let member: TestUser;
  let mfaUser: TestUser;
  let totpSecret: string;
  let orgId: string;
  let keyId: string;
  let client: RegisteredClient;
  let userCode: string;
  let queuedTo: string;

  it("writes data of every sealed kind under k1", async () => {
    const app = await instance(K1);
    try {
      owner = await newUser(app);
      member = await newUser(app);
      orgId = (await newOrg(app, owner)).id;
      await createCa(app, orgId, owner);
      await addMember(app, orgId, owner, member, "member");
      await grantPrincipal(app, orgId, owner, member, "deploy");
      keyId = (await addVerifiedKey(app, member)).id;
      mfaUser = await newUser(app);
      totpSecret = (await enrollTotp(app, mfaUser)).secret;
      client = await registerClient(app, orgId, owner, { grant_types: ["client_credentials"] });
      const superadmin = await newSuperadmin(app);
      expect((await app.http.put("/api/v1/admin/oauth/providers/github", { client_id: "Iv1.reseal", client_secret: "gh-secret" }, { token: superadmin.token })).status).toBeLessThan(300);
      const zt = await app.http.put(`/api/v1/organizations/${orgId}/zerotier-config`, { zt_api_mode: "central", zt_api_token: CENTRAL_TOKEN }, { token: owner.token });
      expect(zt.status).toBe(200);
      // An SSO connection's client secret (written as the connections service seals it).
      const ssoId = "6b0c3f52-7e0a-4c8e-9d1f-5a2b3c4d5e6f";
      const ssoSealed = app.container.box.encrypt("sso-client-secret", sealContexts.ssoConnectionSecret(ssoId));
      await app.container.db.execute(
        sql`insert into sso_connections (id, organization_id, kind, name, config, secret_sealed) values (${ssoId}, ${orgId}, 'oidc', 'Reseal IdP', ${JSON.stringify({ issuer: "https://idp.example.org" })}::jsonb, ${ssoSealed})`,
      );
      // The audit chain's first signed head creates its signing key, sealed under k1.
      expect(await app.services.auditChain.chainAll()).toBeGreaterThan(0);
      const device = await fetch(`${app.url}/api/v1/oidc/device/auth`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ client_id: CLI_CLIENT, scope: "openid" }) });
      expect(device.status).toBe(200);
      userCode = ((await device.json()) as { user_code: string }).user_code;
      // An email left in the outbox (not sent yet) for the instance after the rotation.
      queuedTo = `queued.${Date.now()}@example.com`;
      expect((await app.http.post("/api/v1/auth/register", { email: queuedTo, password: "correct horse battery staple", full_name: "Queued" })).status).toBe(201);
    } finally {
      await app.close();
    }
  }, 120_000);

  it("re-seals in batches that can stop anywhere: the next run carries on", async () => {
    const app = await instance(`${K2},${K1}`);
    try {
      const before = await app.services.reseal.report();
      const kinds = before.filter((r) => r.stale > 0).map((r) => r.kind).sort();
      expect(kinds).toEqual(["audit-signing-key", "email-outbox-payload", "network-controller-token", "oauth-provider-secret", "oidc-client-secret", "oidc-payload-id", "oidc-signing-key", "ssh-ca-private-key", "sso-connection-secret", "totp-seed"]);
      expect(before.every((r) => r.currentKeyId === "k2" && Object.keys(r.byKey).every((id) => id === "k1" || id === "k2"))).toBe(true);
      const staleBefore = before.reduce((n, r) => n + r.stale, 0);
      // Every sealed column in the schema is known to the re-sealing (a new one must be added there).
      const columns = resultRows<{ c: string }>(
        await app.container.db.execute(sql`select table_name || '.' || column_name as c from information_schema.columns where table_schema = current_schema() and column_name like '%sealed%' order by 1`),
      ).map((r) => r.c);
      const known = Object.values(SEALED_KINDS).flatMap((k) => ("column" in k ? [`${k.table}.${k.column}`] : []));
      expect(columns).toEqual([...known].sort());

      let batches = 0;
      const interrupted = app.services.reseal.reseal(systemContext("test"), {
        batchSize: 1,
        onBatch: () => {
          if (++batches === 3) throw new Error("interrupted");
        },
      });
      await expect(interrupted).rejects.toThrow("interrupted");
      const midway = (await app.services.reseal.report()).reduce((n, r) => n + r.stale, 0);
      expect(midway).toBe(staleBefore - 3);
    } finally {
      await app.close();
    }
  }, 120_000);

  it("npm run admin -- reseal finishes the job, reports what each key seals, and is idempotent", async () => {
    const check = await adminCommand(["reseal", "--check"], `${K2},${K1}`);
    expect(check.code).toBe(3);
    // The interrupted run re-sealed the first three values (the CA key, the TOTP seed, one payload).
    expect(check.out).toMatch(/ssh-ca-private-key +k2: 1\n/);
    expect(check.out).toMatch(/oidc-signing-key +k1: 2 {2}\(2 under an older key than k2\)/);

    const first = await adminCommand(["reseal"], `${K2},${K1}`);
    expect(first.out).toContain("Nothing is sealed under an older key: the older keys can be removed from the configuration.");
    expect(first.code).toBe(0);
    expect(first.out).not.toMatch(/\bk1: \d/);

    const again = await adminCommand(["reseal"], `${K2},${K1}`);
    expect(again.code).toBe(0);
    expect(again.out).toContain("Re-sealed 0 value(s).");
  }, 120_000);

  it("with k1 removed, everything still opens", async () => {
    const app = await instance(K2);
    try {
      expect((await app.services.reseal.report()).every((r) => r.stale === 0)).toBe(true);
      // The audit signing key opens under k2: the heads it signed under k1 still verify.
      await app.services.auditChain.chainAll();
      expect((await app.services.auditVerify.verifyAsOperator(systemContext("reseal-test"))).firstBreak).toBeNull();
      // The CA's private key: a certificate is signed.
      const signed = await app.http.post("/api/v1/ssh/sign", { key_id: keyId }, { token: (await login(app, member.email)).body.data.token });
      expect(signed.status, signed.text).toBe(201);
      // The TOTP seed: the authenticator app's current code completes a sign-in.
      const mfaToken = (await login(app, mfaUser.email)).body.data.mfa_token;
      expect((await app.http.post("/api/v1/auth/totp/verify", { mfa_token: mfaToken, code: totpCode(totpSecret, totpStep(app.clock.now())) })).status).toBe(200);
      // The outbox payload: the queued verification email is rendered and sent.
      await app.flushEmails();
      expect(app.mail.to(queuedTo).length).toBe(1);
      // The OIDC client secret (and the provider's signing keys, loaded at start).
      const token = await fetch(`${app.url}/api/v1/oidc/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString("base64")}` },
        body: new URLSearchParams({ grant_type: "client_credentials" }),
      });
      expect(token.status).toBe(200);
      expect((await (await fetch(`${app.url}/api/v1/oidc/jwks`)).json()).keys.length).toBeGreaterThan(0);
      // The GitHub client secret: the provider is configured and usable.
      expect(await app.services.oauthProviders.settings("github")).toMatchObject({ clientId: "Iv1.reseal", clientSecret: "gh-secret" });
      // The ZeroTier token: Central is called with it.
      const ownerToken = (await login(app, owner.email)).body.data.token as string;
      const calls = central.requests.length;
      expect((await app.http.get(`/api/v1/organizations/${orgId}/zerotier/available-networks`, { token: ownerToken })).status).toBe(200);
      expect(central.requests.slice(calls).some((r) => r.authorization?.includes(CENTRAL_TOKEN))).toBe(true);
      // The pending device code's sealed id: found by its user code.
      const normalized = userCode.toUpperCase().replace(/\W/g, "");
      expect((await app.oidc.provider.DeviceCode.findByUserCode(normalized))?.jti).toBeTruthy();
    } finally {
      await app.close();
    }
  }, 120_000);
});
