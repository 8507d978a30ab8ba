import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { auditRows } from "../../helpers/db.js";
import { linkIn, tokenFrom } from "../../helpers/smtp-sink.js";
import { enrollTotp } from "../../factories/mfa.js";
import { newSuperadmin, newUser, PASSWORD, type TestUser } from "../../factories/users.js";

/**
 * Issue 12, items 4, 6 and 14 (backup codes): password guesses are counted before they are checked,
 * per account and client address with a short account-wide limit; every re-authentication spends
 * the same budget; a pending sign-in takes one second-factor attempt at a time.
 */
let app: TestApp;
let ipSeq = 0;
/** A fresh client address (the app trusts X-Forwarded-For in this suite). */
const newIp = () => `10.12.${Math.floor(++ipSeq / 250)}.${(ipSeq % 250) + 1}`;
const from = (ip: string, extra: Record<string, string> = {}) => ({ headers: { "x-forwarded-for": ip, ...extra } });

beforeAll(async () => {
  app = await startTestApp({ TRUST_PROXY: "true" });
});
afterAll(() => app?.close());

const restLogin = (email: string, password: string, ip: string) => app.http.post("/api/v1/auth/login", { email, password }, from(ip));
const gqlLogin = (email: string, password: string, ip: string) =>
  app.http.gql("mutation($i: LoginInput!) { login(input: $i) { mfaRequired } }", { i: { email, password } }, from(ip));
const gqlCode = (r: { status: number; errors?: Array<{ extensions?: { code?: string } }> }) => r.errors?.[0]?.extensions?.code ?? (r.status === 200 ? "OK" : String(r.status));

async function failedLoginAudits(user: TestUser): Promise<number> {
  return (await auditRows(app, user.id)).filter((r) => r.action === "user.login.failed").length;
}

describe("40 parallel wrong passwords from one address", () => {
  it("REST: 5 are checked, 35 are refused before hashing, and the owner elsewhere still signs in", async () => {
    const victim = await newUser(app);
    const attacker = newIp();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => restLogin(victim.email, `wrong guess ${i}`, attacker)));
    expect(answers.filter((r) => r.status === 401)).toHaveLength(5);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused).toHaveLength(35);
    expect(refused.every((r) => r.body.error.type === "RATE_LIMIT_EXCEEDED" && Number(r.headers.get("retry-after")) >= 1)).toBe(true);
    expect(await failedLoginAudits(victim)).toBe(5);

    // The guesser's address stays locked, even with the right password…
    expect((await restLogin(victim.email, PASSWORD, attacker)).status).toBe(429);
    // …but the owner, from their own address, is not kept out.
    expect((await restLogin(victim.email, PASSWORD, newIp())).status).toBe(200);
  });

  it("GraphQL: the same budget, the same answers", async () => {
    const victim = await newUser(app);
    const attacker = newIp();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => gqlLogin(victim.email, `wrong guess ${i}`, attacker)));
    const codes = answers.map(gqlCode);
    expect(codes.filter((c) => c === "AUTHENTICATION_ERROR")).toHaveLength(5);
    expect(codes.filter((c) => c === "RATE_LIMIT_EXCEEDED")).toHaveLength(35);
    expect(await failedLoginAudits(victim)).toBe(5);
    expect(gqlCode(await gqlLogin(victim.email, PASSWORD, newIp()))).toBe("OK");
  });

  it("an unknown address is throttled exactly like a real one (no enumeration through the limiter)", async () => {
    const ghost = `ghost.${Date.now()}@example.com`;
    const attacker = newIp();
    const answers = await Promise.all(Array.from({ length: 12 }, () => restLogin(ghost, "some guess 123", attacker)));
    expect(answers.filter((r) => r.status === 401)).toHaveLength(5);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(7);
  });
});

describe("guesses spread over many addresses", () => {
  /**
   * 20 failures from 20 addresses, then one more: the account-wide limit trips. Its windows are
   * fixed (aligned on the clock, every 15 minutes): 21 sign-ins that straddle a window's end count
   * in two windows and trip nothing (it failed so once in CI), so they start in a fresh window.
   */
  async function tripAccountLimit(email: string) {
    const windowMs = app.container.config.rateLimits.loginAccountWide.duration * 1000;
    const left = windowMs - (app.clock.now().getTime() % windowMs);
    if (left < windowMs / 2) app.clock.advance(Math.ceil(left / 1000) + 1);
    for (let i = 0; i < 20; i++) expect((await restLogin(email, `spread guess ${i}`, newIp())).status).toBe(401);
    const tripped = await restLogin(email, "one guess too many", newIp());
    expect(tripped.status).toBe(429);
    return tripped;
  }

  it("pause everyone for a short time only (minutes, not an hour)", async () => {
    const victim = await newUser(app);
    const tripped = await tripAccountLimit(victim.email);
    expect(Number(tripped.headers.get("retry-after"))).toBeLessThanOrEqual(120);
    const owner = await restLogin(victim.email, PASSWORD, newIp());
    expect(owner.status).toBe(429);
    expect(Number(owner.headers.get("retry-after"))).toBeLessThanOrEqual(120);
  });

  it("a completed password reset lets the owner straight back in", async () => {
    const victim = await newUser(app);
    await tripAccountLimit(victim.email);
    const home = newIp();
    await app.http.post("/api/v1/auth/forgot-password", { email: victim.email }, from(home));
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.last(victim.email), "/reset-password"));
    const reset = await app.http.post("/api/v1/auth/reset-password", { token, password: "a brand new passphrase" }, from(home));
    expect(reset.status).toBe(200);
    expect((await restLogin(victim.email, "a brand new passphrase", home)).status).toBe(200);
  });

  it("a password set by an administrator ends the lock too", async () => {
    const admin = await newSuperadmin(app);
    const victim = await newUser(app);
    await tripAccountLimit(victim.email);
    const set = await app.http.post(`/api/v1/admin/users/${victim.id}/password`, { password: "issued by the helpdesk" }, { token: admin.token });
    expect(set.status).toBe(200);
    expect((await restLogin(victim.email, "issued by the helpdesk", newIp())).status).toBe(200);
  });
});

describe("re-authentication spends the same budget", () => {
  it("password change: 10 parallel wrong current passwords are 5 checks (REST), then GraphQL is refused too", async () => {
    const user = await newUser(app);
    const ip = newIp();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        app.http.post("/api/v1/users/me/password", { current_password: `not it ${i}`, new_password: "a new passphrase here" }, { token: user.token, ...from(ip) }),
      ),
    );
    expect(answers.filter((r) => r.body.error?.type === "CURRENT_PASSWORD_INCORRECT")).toHaveLength(5);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(5);
    const gql = await app.http.gql(
      "mutation($i: ChangePasswordInput!) { changePassword(input: $i) { message } }",
      { i: { currentPassword: PASSWORD, newPassword: "a new passphrase here" } },
      { token: user.token, ...from(ip) },
    );
    expect(gqlCode(gql)).toBe("RATE_LIMIT_EXCEEDED");
    // The password did not change.
    expect((await restLogin(user.email, PASSWORD, newIp())).status).toBe(200);
  });

  it("TOTP removal and account deletion count their password checks", async () => {
    const user = await newUser(app);
    await enrollTotp(app, user);
    const ip = newIp();
    const opts = { token: user.token, ...from(ip) };
    const wrong = [
      ...(await Promise.all(Array.from({ length: 3 }, () => app.http.request("DELETE", "/api/v1/auth/totp/disable", { ...opts, body: { password: "not my password" } })))),
      ...(await Promise.all(
        Array.from({ length: 3 }, () => app.http.gql("mutation { deleteMe(input: { password: \"not my password\" }) { message } }", undefined, opts)),
      )),
    ];
    const refused = wrong.filter((r) => r.status === 429 || ("errors" in r && gqlCode(r as never) === "RATE_LIMIT_EXCEEDED"));
    expect(refused.length).toBeGreaterThanOrEqual(1);
    const disable = await app.http.request("DELETE", "/api/v1/auth/totp/disable", { ...opts, body: { password: PASSWORD } });
    expect(disable.status).toBe(429);
    // Nothing happened: TOTP is still on and the account still exists.
    const status = await app.http.get("/api/v1/auth/totp/status", { token: user.token });
    expect(status.body.data.totp_enabled).toBe(true);
  });
});

describe("backup codes on one pending sign-in", () => {
  async function pendingWithCodes() {
    const user = await newUser(app);
    const { backupCodes } = await enrollTotp(app, user);
    const ip = newIp();
    const pending = await restLogin(user.email, PASSWORD, ip);
    expect(pending.body.data.requires_mfa).toBe(true);
    return { user, codes: backupCodes!, ip, mfaToken: pending.body.data.mfa_token as string };
  }

  async function remaining(user: TestUser): Promise<number> {
    return (await app.http.get("/api/v1/auth/totp/status", { token: user.token })).body.data.backup_codes_remaining;
  }

  it("REST: 8 different codes in parallel open one session and spend one code", async () => {
    const { user, codes, ip, mfaToken } = await pendingWithCodes();
    const answers = await Promise.all(codes.slice(0, 8).map((code) => app.http.post("/api/v1/auth/mfa/backup-code", { mfa_token: mfaToken, code }, from(ip))));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.status !== 200).every((r) => ["MFA_ATTEMPT_IN_PROGRESS", "MFA_SESSION_EXPIRED"].includes(r.body.error.type))).toBe(true);
    expect(await remaining(user)).toBe(9);
    expect((await auditRows(app, user.id)).filter((r) => r.action === "totp.backup_code.used")).toHaveLength(1);
  });

  it("GraphQL: the same", async () => {
    const { user, codes, ip, mfaToken } = await pendingWithCodes();
    const answers = await Promise.all(
      codes.slice(0, 8).map((code) =>
        app.http.gql("mutation($c: String!, $t: String) { completeMfaWithCode(code: $c, isBackupCode: true, mfaToken: $t) { mfaRequired } }", { c: code, t: mfaToken }, from(ip)),
      ),
    );
    const codesSeen = answers.map(gqlCode);
    expect(codesSeen.filter((c) => c === "OK")).toHaveLength(1);
    expect(codesSeen.filter((c) => c !== "OK").every((c) => ["MFA_ATTEMPT_IN_PROGRESS", "MFA_SESSION_EXPIRED"].includes(c))).toBe(true);
    expect(await remaining(user)).toBe(9);
  });

  it("a wrong code does not end the pending sign-in: the next right one still works", async () => {
    const { user, codes, ip, mfaToken } = await pendingWithCodes();
    const wrong = await app.http.post("/api/v1/auth/mfa/backup-code", { mfa_token: mfaToken, code: "0000000000000000" }, from(ip));
    expect(wrong.body.error.type).toBe("INVALID_MFA_CODE");
    expect((await app.http.post("/api/v1/auth/mfa/backup-code", { mfa_token: mfaToken, code: codes[0] }, from(ip))).status).toBe(200);
    expect(await remaining(user)).toBe(9);
  });
});
