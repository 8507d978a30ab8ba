import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { auditRows } from "../helpers/db.js";
import { SoftAuthenticator } from "../helpers/soft-authenticator.js";
import { login, newSuperadmin, newUser, PASSWORD, type TestUser } from "../factories/users.js";
import { previousTotpStep } from "../factories/mfa.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_MFA: "1000/900" });
});
afterAll(() => app?.close());

async function enrollPasskey(user: TestUser, authenticator = new SoftAuthenticator(app.url, "localhost")) {
  const begin = await app.http.post("/api/v1/auth/webauthn/register/begin", {}, { token: user.token });
  expect(begin.status).toBe(200);
  const complete = await app.http.post("/api/v1/auth/webauthn/register/complete", { challenge_id: begin.body.data.challenge_id, response: authenticator.register(begin.body.data.options), name: "Laptop" }, { token: user.token });
  expect(complete.status, complete.text).toBe(201);
  return { authenticator, backupCodes: complete.body.data.backup_codes as string[] | null, credentialId: complete.body.data.credential_id as string };
}

async function enrollTotp(user: TestUser) {
  const enroll = await app.http.post("/api/v1/auth/totp/enroll", {}, { token: user.token });
  const secret = enroll.body.data.secret as string;
  expect(enroll.body.data.provisioning_uri).toMatch(/^otpauth:\/\/totp\/Keyward:.*secret=/);
  expect(enroll.body.data.qr_code).toMatch(/^data:image\/png;base64,/);
  // Codes of the previous step: the next sign-in can then use the current one.
  const step = await previousTotpStep(app);
  const verified = await app.http.post("/api/v1/auth/totp/verify-enrollment", { code: totpCode(secret, step) }, { token: user.token });
  expect(verified.status, verified.text).toBe(200);
  return { secret, backupCodes: verified.body.data.backup_codes as string[] | null };
}

describe("enforcement at sign-in", () => {
  it("never opens a session from the password alone once MFA is enrolled (REST and GraphQL)", async () => {
    const user = await newUser(app);
    await enrollTotp(user);
    const res = await login(app, user.email);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ requires_mfa: true, requires_totp: true, mfa_methods: ["totp", "backup_code"] });
    expect(res.body.data.token).toBeUndefined();
    expect(res.headers.getSetCookie().some((c) => c.startsWith("keyward.sid="))).toBe(false);
    const gql = await app.http.gql("mutation($i: LoginInput!) { login(input: $i) { mfaRequired mfaMethods user { id } sessionId } }", { i: { email: user.email, password: PASSWORD } });
    expect(gql.data.login).toEqual({ mfaRequired: true, mfaMethods: ["totp", "backup_code"], user: null, sessionId: null });
    expect(gql.headers.getSetCookie().some((c) => c.startsWith("keyward.sid="))).toBe(false);
    expect(gql.headers.getSetCookie().some((c) => c.startsWith("keyward.mfa=") && /HttpOnly/i.test(c))).toBe(true);
  });

  it("opens the session after a TOTP code, and refuses the same code twice", async () => {
    const user = await newUser(app);
    const { secret } = await enrollTotp(user);
    const code = totpCode(secret, totpStep(app.clock.now()));
    const first = (await login(app, user.email)).body.data.mfa_token;
    const ok = await app.http.post("/api/v1/auth/totp/verify", { mfa_token: first, code });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data.token).toMatch(/^kws_/);
    expect((await app.http.get("/api/v1/auth/me", { token: ok.body.data.token })).status).toBe(200);
    // The token is spent, and the code too.
    expect((await app.http.post("/api/v1/auth/totp/verify", { mfa_token: first, code })).body.error.type).toBe("MFA_SESSION_EXPIRED");
    const second = (await login(app, user.email)).body.data.mfa_token;
    const replay = await app.http.post("/api/v1/auth/totp/verify", { mfa_token: second, code });
    expect(replay.status).toBe(401);
    expect(replay.body.error.type).toBe("INVALID_MFA_CODE");
    expect((await auditRows(app, user.id)).some((r) => r.action === "mfa.verify.failed")).toBe(true);
  });

  it("does not finish a sign-in whose password was changed between its two steps", async () => {
    const user = await newUser(app);
    const { secret } = await enrollTotp(user);
    const pending = (await login(app, user.email)).body.data.mfa_token;
    // The owner changes the password (ending every other session) while the first step waits for its code.
    const changed = await app.http.post("/api/v1/users/me/password", { current_password: PASSWORD, new_password: "a brand new passphrase 42" }, { token: user.token });
    expect(changed.status, changed.text).toBe(200);
    const finish = await app.http.post("/api/v1/auth/totp/verify", { mfa_token: pending, code: totpCode(secret, totpStep(app.clock.now())) });
    expect(finish.status, finish.text).toBe(401);
    const rows = await auditRows(app, user.id);
    expect(rows.filter((r) => r.action === "user.login.failed").map((r) => r.metadata)).toEqual([{ method: "password+totp", reason: "account_unavailable" }]);
    // The new password signs in as usual.
    expect((await login(app, user.email, "a brand new passphrase 42")).body.data.requires_mfa).toBe(true);
  });

  it("spends a backup code exactly once under parallel attempts", async () => {
    const user = await newUser(app);
    const { backupCodes } = await enrollTotp(user);
    expect(backupCodes).toHaveLength(10);
    // Eight pending sign-ins, started one after another (parallel password checks share one budget).
    const tokens: string[] = [];
    for (let i = 0; i < 8; i++) tokens.push((await login(app, user.email)).body.data.mfa_token as string);
    const results = await Promise.all(tokens.map((t) => app.http.post("/api/v1/auth/mfa/backup-code", { mfa_token: t, code: backupCodes![0]!.toUpperCase() })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401 && r.body.error.type === "INVALID_MFA_CODE")).toHaveLength(7);
    const status = await app.http.get("/api/v1/auth/totp/status", { token: user.token });
    expect(status.body.data.backup_codes_remaining).toBe(9);
  });

  it("refuses a suspended account at the second step", async () => {
    const admin = await newSuperadmin(app);
    const user = await newUser(app);
    const { secret } = await enrollTotp(user);
    const pending = (await login(app, user.email)).body.data.mfa_token;
    await app.http.post(`/api/v1/admin/users/${user.id}/suspend`, {}, { token: admin.token });
    const res = await app.http.post("/api/v1/auth/totp/verify", { mfa_token: pending, code: totpCode(secret, totpStep(app.clock.now())) });
    expect(res.status).toBe(403);
    expect(res.body.error.type).toBe("ACCOUNT_SUSPENDED");
  });

  it("binds the pending sign-in to the client that passed the password", async () => {
    const user = await newUser(app);
    const { secret } = await enrollTotp(user);
    const pending = (await app.http.post("/api/v1/auth/login", { email: user.email, password: PASSWORD }, { headers: { "user-agent": "laptop-browser" } })).body.data.mfa_token;
    const elsewhere = await app.http.post("/api/v1/auth/totp/verify", { mfa_token: pending, code: totpCode(secret, totpStep(app.clock.now())) }, { headers: { "user-agent": "attacker-tool" } });
    expect(elsewhere.body.error.type).toBe("MFA_SESSION_EXPIRED");
  });
});

describe("WebAuthn", () => {
  it("registers a credential (with backup codes), then signs in with it as a second factor and as a passkey", async () => {
    const user = await newUser(app);
    const { authenticator, backupCodes } = await enrollPasskey(user);
    expect(backupCodes).toHaveLength(10);
    const creds = await app.http.get("/api/v1/auth/webauthn/credentials", { token: user.token });
    expect(creds.body.data.credentials[0]).toMatchObject({ name: "Laptop", device_type: "singleDevice" });
    expect(JSON.stringify(creds.body)).not.toMatch(/public_key|counter/);

    const pending = await login(app, user.email);
    expect(pending.body.data).toMatchObject({ requires_mfa: true, requires_webauthn: true });
    const begin = await app.http.post("/api/v1/auth/webauthn/mfa/begin", { mfa_token: pending.body.data.mfa_token });
    expect(begin.body.data.options.allowCredentials).toHaveLength(1);
    const done = await app.http.post("/api/v1/auth/webauthn/mfa/complete", { mfa_token: pending.body.data.mfa_token, challenge_id: begin.body.data.challenge_id, response: authenticator.assert(begin.body.data.options) });
    expect(done.status, done.text).toBe(200);
    expect(done.body.data.user.id).toBe(user.id);

    const passkeyBegin = await app.http.post("/api/v1/auth/webauthn/login/begin", {});
    expect(passkeyBegin.body.data.options.allowCredentials ?? []).toEqual([]);
    const passkey = await app.http.post("/api/v1/auth/webauthn/login/complete", { challenge_id: passkeyBegin.body.data.challenge_id, response: authenticator.assert(passkeyBegin.body.data.options) });
    expect(passkey.status, passkey.text).toBe(200);
    expect(passkey.body.data.user.id).toBe(user.id);
  });

  it("refuses a wrong origin, a wrong RP ID, a wrong or replayed challenge, and a counter that went backwards", async () => {
    const user = await newUser(app);
    const { authenticator } = await enrollPasskey(user);
    const begin = () => app.http.post("/api/v1/auth/webauthn/login/begin", {}).then((r) => r.body.data as { challenge_id: string; options: { challenge: string } });
    const complete = (challengeId: string, response: unknown) => app.http.post("/api/v1/auth/webauthn/login/complete", { challenge_id: challengeId, response });

    let b = await begin();
    expect((await complete(b.challenge_id, authenticator.assert(b.options, { origin: "https://evil.test" }))).body.error.type).toBe("WEBAUTHN_VERIFICATION_FAILED");
    b = await begin();
    expect((await complete(b.challenge_id, authenticator.assert(b.options, { rpId: "evil.test" }))).body.error.type).toBe("WEBAUTHN_VERIFICATION_FAILED");
    b = await begin();
    expect((await complete(b.challenge_id, authenticator.assert({ challenge: Buffer.from("not the challenge").toString("base64url") }))).body.error.type).toBe("WEBAUTHN_VERIFICATION_FAILED");
    b = await begin();
    const good = authenticator.assert(b.options);
    expect((await complete(b.challenge_id, good)).status).toBe(200);
    expect((await complete(b.challenge_id, good)).body.error.type).toBe("WEBAUTHN_CHALLENGE_EXPIRED");
    b = await begin();
    const regressed = await complete(b.challenge_id, authenticator.assert(b.options, { counter: 1 }));
    expect(regressed.body.error.type).toBe("WEBAUTHN_COUNTER_REGRESSION");
    expect((await auditRows(app, user.id)).some((r) => r.action === "webauthn.counter_regression")).toBe(true);

    const regBegin = await app.http.post("/api/v1/auth/webauthn/register/begin", {}, { token: user.token });
    const other = new SoftAuthenticator(app.url, "localhost");
    const wrongOrigin = await app.http.post(
      "/api/v1/auth/webauthn/register/complete",
      { challenge_id: regBegin.body.data.challenge_id, response: other.register(regBegin.body.data.options, { origin: "https://evil.test" }) },
      { token: user.token },
    );
    expect(wrongOrigin.body.error.type).toBe("WEBAUTHN_REGISTRATION_FAILED");
  });

  it("refuses a challenge answered after its five minutes, measured on the service clock", async () => {
    const user = await newUser(app);
    const { authenticator } = await enrollPasskey(user);
    const begin = await app.http.post("/api/v1/auth/webauthn/login/begin", {});
    const regBegin = await app.http.post("/api/v1/auth/webauthn/register/begin", {}, { token: user.token });
    app.clock.advance(301);
    const late = await app.http.post("/api/v1/auth/webauthn/login/complete", { challenge_id: begin.body.data.challenge_id, response: authenticator.assert(begin.body.data.options) });
    expect(late.body.error.type).toBe("WEBAUTHN_CHALLENGE_EXPIRED");
    const response = new SoftAuthenticator(app.url, "localhost").register(regBegin.body.data.options);
    const lateRegistration = await app.http.post("/api/v1/auth/webauthn/register/complete", { challenge_id: regBegin.body.data.challenge_id, response }, { token: user.token });
    expect(lateRegistration.body.error.type).toBe("WEBAUTHN_CHALLENGE_EXPIRED");
  });

  it("works through GraphQL too", async () => {
    const user = await newUser(app);
    const authenticator = new SoftAuthenticator(app.url, "localhost");
    const begin = await app.http.gql("mutation { beginWebauthnRegistration { challengeId options } }", {}, { token: user.token });
    const done = await app.http.gql(
      "mutation($c: String!, $r: JSON!) { completeWebauthnRegistration(challengeId: $c, response: $r, name: \"Key\") { credential { name } backupCodes } }",
      { c: begin.data.beginWebauthnRegistration.challengeId, r: authenticator.register(begin.data.beginWebauthnRegistration.options) },
      { token: user.token },
    );
    expect(done.data.completeWebauthnRegistration.credential.name).toBe("Key");
    expect(done.data.completeWebauthnRegistration.backupCodes).toHaveLength(10);
    const pb = await app.http.gql("mutation { beginPasskeyLogin { challengeId options } }");
    const signedIn = await app.http.gql("mutation($c: String!, $r: JSON!) { completePasskeyLogin(challengeId: $c, response: $r) { user { id } mfaRequired } }", {
      c: pb.data.beginPasskeyLogin.challengeId,
      r: authenticator.assert(pb.data.beginPasskeyLogin.options),
    });
    expect(signedIn.data.completePasskeyLogin).toEqual({ user: { id: user.id }, mfaRequired: false });
  });
});

describe("rate limits on second factors", () => {
  it("limits attempts per account", async () => {
    const limited = await startTestApp({ RATE_LIMIT_MFA: "3/900" });
    try {
      const user = await newUser(limited);
      const enroll = await limited.http.post("/api/v1/auth/totp/enroll", {}, { token: user.token });
      await limited.http.post("/api/v1/auth/totp/verify-enrollment", { code: totpCode(enroll.body.data.secret, totpStep(new Date())) }, { token: user.token });
      const pending = (await login(limited, user.email)).body.data.mfa_token;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await limited.http.post("/api/v1/auth/totp/verify", { mfa_token: pending, code: "000000" })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await limited.close();
    }
  });
});
