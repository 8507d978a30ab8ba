import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";
import { login, newUser, PASSWORD, registerUser, uniqueEmail } from "../factories/users.js";
import { auditRows, countRows } from "../helpers/db.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe("registration and email verification", () => {
  it("registers, emails a verification link, and verifies the address once", async () => {
    const email = uniqueEmail("reg");
    const res = await app.http.post("/api/v1/auth/register", { email, password: PASSWORD, full_name: "Reg User" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ success: true, code: 201, data: { email } });

    await app.flushEmails();
    const mail = app.mail.last(email)!;
    expect(mail.subject).toBe("Verify your Keyward email address");
    expect(mail.html).toContain("Reg User");
    const token = tokenFrom(linkIn(mail, "/verify-email"));

    const first = await app.http.post("/api/v1/auth/verify-email", { token });
    expect(first.status).toBe(200);
    expect(first.body.data.user).toMatchObject({ email, email_verified: true });

    const again = await app.http.post("/api/v1/auth/verify-email", { token });
    expect(again.status).toBe(400);
    expect(again.body.error.type).toBe("INVALID_LINK");
  });

  it("answers an existing address exactly like a new one and writes no second account", async () => {
    const { email } = await registerUser(app);
    const before = await countRows(app, "users");
    const res = await app.http.post("/api/v1/auth/register", { email, password: "another fine password" });
    expect(res.status).toBe(201);
    expect(res.body.message).toBe("Check your inbox: we sent a link to verify your email address.");
    expect(await countRows(app, "users")).toBe(before);
    await app.flushEmails();
    expect(app.mail.last(email)!.subject).toBe("Sign-up attempt with your Keyward address");
  });

  it("refuses passwords that break the NIST rules with field-level errors", async () => {
    const email = uniqueEmail("weak");
    const cases: Array<[string, string]> = [
      ["short", "at least 8"],
      ["x".repeat(129), "at most 128"],
      [email, "email"],
      ["password123", "too common"],
    ];
    for (const [password, fragment] of cases) {
      const res = await app.http.post("/api/v1/auth/register", { email, password });
      expect(res.status).toBe(400);
      expect(res.body.error.type).toBe("VALIDATION_ERROR");
      expect(res.body.error.details.errors[0].path).toBe("password");
      expect(res.body.message).toContain(fragment);
    }
    const mismatch = await app.http.post("/api/v1/auth/register", { email, password: "long enough words", password_confirm: "other words here" });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.details.errors[0]).toEqual({ path: "password_confirm", message: "does not match the password" });
    // No composition rules: a long passphrase of lower-case words is fine.
    expect((await app.http.post("/api/v1/auth/register", { email, password: "lower case words only" })).status).toBe(201);
  });

  it("rate limits resend-verification per user (3 per hour by default)", async () => {
    const { email, password } = await registerUser(app, { verify: false });
    const token = (await login(app, email, password)).body.data.token;
    for (let i = 0; i < 3; i++) {
      expect((await app.http.post("/api/v1/auth/me/resend-verification", {}, { token })).status).toBe(200);
    }
    const limited = await app.http.post("/api/v1/auth/me/resend-verification", {}, { token });
    expect(limited.status).toBe(429);
    expect(limited.body.error.type).toBe("RATE_LIMIT_EXCEEDED");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("only the newest verification link works after a resend", async () => {
    const { email, password } = await registerUser(app, { verify: false });
    await app.flushEmails();
    const oldToken = tokenFrom(linkIn(app.mail.last(email), "/verify-email"));
    const token = (await login(app, email, password)).body.data.token;
    await app.http.post("/api/v1/auth/me/resend-verification", {}, { token });
    await app.flushEmails();
    const newToken = tokenFrom(linkIn(app.mail.last(email), "/verify-email"));
    expect((await app.http.post("/api/v1/auth/verify-email", { token: oldToken })).status).toBe(400);
    expect((await app.http.post("/api/v1/auth/verify-email", { token: newToken })).status).toBe(200);
    const again = await app.http.post("/api/v1/auth/me/resend-verification", {}, { token });
    expect(again.status).toBe(409);
    expect(again.body.error.type).toBe("EMAIL_ALREADY_VERIFIED");
  });

  it("expires verification links after 24 hours", async () => {
    const { email } = await registerUser(app, { verify: false });
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.last(email), "/verify-email"));
    app.clock.advance(24 * 3600 + 1);
    try {
      expect((await app.http.post("/api/v1/auth/verify-email", { token })).status).toBe(400);
    } finally {
      app.clock.reset();
    }
  });
});

describe("password reset", () => {
  it("gives the same answer for unknown and known addresses and emails only the real one", async () => {
    const user = await newUser(app);
    const unknown = await app.http.post("/api/v1/auth/forgot-password", { email: uniqueEmail("ghost") });
    const known = await app.http.post("/api/v1/auth/forgot-password", { email: user.email });
    expect(unknown.status).toBe(200);
    expect(known.status).toBe(200);
    expect(unknown.body.message).toBe(known.body.message);
    await app.flushEmails();
    expect(app.mail.last(user.email)!.subject).toBe("Reset your Keyward password");
  });

  it("resets once, revokes every session, and refuses the link's reuse", async () => {
    const user = await newUser(app);
    const otherSession = (await login(app, user.email)).body.data.token;
    await app.http.post("/api/v1/auth/forgot-password", { email: user.email });
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.last(user.email), "/reset-password"));

    const reset = await app.http.post("/api/v1/auth/reset-password", { token, password: "a brand new passphrase", password_confirm: "a brand new passphrase" });
    expect(reset.status).toBe(200);
    for (const t of [user.token, otherSession]) {
      const me = await app.http.get("/api/v1/auth/me", { token: t });
      expect(me.status).toBe(401);
      expect(me.body.error.type).toBe("INVALID_TOKEN");
    }
    const reuse = await app.http.post("/api/v1/auth/reset-password", { token, password: "yet another passphrase" });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error.type).toBe("INVALID_LINK");
    expect((await login(app, user.email, PASSWORD)).status).toBe(401);
    expect((await login(app, user.email, "a brand new passphrase")).status).toBe(200);
    expect((await auditRows(app, user.id)).map((r) => r.action)).toContain("user.password_reset");
  });

  it("keeps the link usable when the new password is refused", async () => {
    const user = await newUser(app);
    await app.http.post("/api/v1/auth/forgot-password", { email: user.email });
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.last(user.email), "/reset-password"));
    const weak = await app.http.post("/api/v1/auth/reset-password", { token, password: "short" });
    expect(weak.status).toBe(400);
    expect((await app.http.post("/api/v1/auth/reset-password", { token, password: "long enough passphrase" })).status).toBe(200);
  });

  it("expires reset links after 2 hours", async () => {
    const user = await newUser(app);
    await app.http.post("/api/v1/auth/forgot-password", { email: user.email });
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.last(user.email), "/reset-password"));
    app.clock.advance(2 * 3600 + 1);
    try {
      expect((await app.http.post("/api/v1/auth/reset-password", { token, password: "long enough passphrase" })).status).toBe(400);
    } finally {
      app.clock.reset();
    }
  });
});

describe("change password, profile and account deletion", () => {
  it("changes the password only with the current one and signs out the other sessions", async () => {
    const user = await newUser(app);
    const other = (await login(app, user.email)).body.data.token;
    const wrong = await app.http.post("/api/v1/users/me/password", { current_password: "not it at all", new_password: "fresh passphrase here" }, { token: user.token });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.type).toBe("CURRENT_PASSWORD_INCORRECT");
    const ok = await app.http.post("/api/v1/users/me/password", { current_password: PASSWORD, new_password: "fresh passphrase here" }, { token: user.token });
    expect(ok.status).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { token: other })).status).toBe(401);
  });

  it("reads and updates the profile", async () => {
    const user = await newUser(app, { fullName: "Before" });
    const me = await app.http.get("/api/v1/users/me", { token: user.token });
    expect(me.body.data.user).toMatchObject({ email: user.email, full_name: "Before", has_password: true, email_verified: true, totp_enabled: false, linked_providers: [] });
    // An authenticator app turned on shows in the profile on the next read.
    const enroll = await app.http.post("/api/v1/auth/totp/enroll", {}, { token: user.token });
    expect((await app.http.post("/api/v1/auth/totp/verify-enrollment", { code: totpCode(enroll.body.data.secret, totpStep(app.clock.now())) }, { token: user.token })).status).toBe(200);
    expect((await app.http.get("/api/v1/users/me", { token: user.token })).body.data.user.totp_enabled).toBe(true);
    const patched = await app.http.patch("/api/v1/users/me", { full_name: "After", avatar_url: "https://example.com/a.png" }, { token: user.token });
    expect(patched.status).toBe(200);
    expect(patched.body.data.user).toMatchObject({ full_name: "After", avatar_url: "https://example.com/a.png" });
    const bad = await app.http.patch("/api/v1/users/me", { avatar_url: "javascript:alert(1)" }, { token: user.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.errors[0].path).toBe("avatar_url");
  });

  it("soft-deletes the account: no sign-in, no session, the address can be registered again", async () => {
    const user = await newUser(app);
    const noPassword = await app.http.delete("/api/v1/users/me", { token: user.token });
    expect(noPassword.status).toBe(400);
    expect(noPassword.body.error.type).toBe("PASSWORD_REQUIRED");
    const res = await app.http.request("DELETE", "/api/v1/users/me", { token: user.token, body: { password: PASSWORD } });
    expect(res.status).toBe(200);
    expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(401);
    expect((await login(app, user.email)).status).toBe(401);
    expect(await countRows(app, "users", `id = '${user.id}' and deleted_at is not null`)).toBe(1);
    const again = await newUser(app, { email: user.email });
    expect(again.id).not.toBe(user.id);
  });
});
