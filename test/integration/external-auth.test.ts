import { beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import type { TestApp } from "../helpers/app.js";
import { auditRows, countRows } from "../helpers/db.js";
import {
  auditFailures as auditFailuresOf,
  callbackUrlFor,
  errorOf,
  githubAccount,
  googleAccount,
  newBrowser,
  runExternalFlow,
  externalIdpSuite,
  visitCallback,
  type FakeIdps,
} from "../helpers/external-idp.js";
import type { OidcAgent } from "../helpers/oidc-agent.js";
import { enrollTotp } from "../factories/mfa.js";
import { newSuperadmin, newUser, uniqueEmail } from "../factories/users.js";

/** Sign-in and registration with GitHub and Google, and the flow state that protects them. Local GitHub and Google stand-ins play the providers. */
const suite = externalIdpSuite();
let app: TestApp;
let idps: FakeIdps;
beforeAll(() => ({ app, idps } = suite));

const me = async (browser: OidcAgent) => browser.fetch(`${app.url}/api/v1/auth/me`);
const usersNamed = (email: string) => countRows(app, "users", `email = '${email}'`);
const auditFailures = (action: string, code: string) => auditFailuresOf(app, action, code);

describe("sign-in with GitHub", () => {
  it("creates the account and a personal organization on first sign-in, then signs the same account in again", async () => {
    const email = uniqueEmail("octo");
    idps.github.signIn(githubAccount(email, { name: "Octo Cat" }));
    const browser = newBrowser(app);
    const first = await runExternalFlow(app, browser, "github");
    expect(first.landing?.pathname).toBe("/account");
    const who = await me(browser);
    expect(who.status).toBe(200);
    const user = (await who.json()).data.user;
    expect(user).toMatchObject({ email, full_name: "Octo Cat", email_verified: true });

    const orgs = await browser.fetch(`${app.url}/api/v1/users/me/organizations/simple`);
    expect((await orgs.json()).data.organizations).toEqual([expect.objectContaining({ name: "Octo Cat's organization", role: "owner" })]);
    const actions = (await auditRows(app, user.id)).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(["external_auth.register", "org.create", "user.login", "external_auth.login"]));

    // PKCE S256 towards GitHub, and the verifier at the token exchange.
    const authz = idps.github.authorizeRequests.at(-1)!;
    expect(authz.code_challenge_method).toBe("S256");
    expect(idps.github.tokenRequests.at(-1)!.code_verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);

    const again = await runExternalFlow(app, newBrowser(app), "github");
    expect(again.landing?.pathname).toBe("/account");
    expect(await usersNamed(email)).toBe(1);
    expect(await countRows(app, "org_memberships", `user_id = '${user.id}'`)).toBe(1);
    expect(await countRows(app, "external_identities", `user_id = '${user.id}'`)).toBe(1);
  });

  it("does not merge into an existing account with the same email: the owner is told to sign in and link", async () => {
    const owner = await newUser(app);
    idps.github.signIn(githubAccount(owner.email));
    const browser = newBrowser(app);
    const flow = await runExternalFlow(app, browser, "github");
    expect(flow.landing?.pathname).toBe("/login");
    expect(errorOf(flow.landing)).toBe("ACCOUNT_EXISTS");
    expect(flow.landing?.searchParams.get("error")).toMatch(/sign in .* then link GitHub/i);
    expect((await me(browser)).status).toBe(401);
    expect(await countRows(app, "external_identities", `user_id = '${owner.id}'`)).toBe(0);
  });

  it("stops an MFA-enabled user at the second factor, which then opens the session", async () => {
    const user = await newUser(app);
    const { secret } = await enrollTotp(app, user);
    idps.github.signIn(githubAccount(user.email));
    const linkBrowser = newBrowser(app);
    const linked = await runExternalFlow(app, linkBrowser, "github", { flow: "link" }, user.token);
    expect(linked.landing?.searchParams.get("linked")).toBe("github");

    const browser = newBrowser(app);
    const flow = await runExternalFlow(app, browser, "github");
    expect(flow.landing?.pathname).toBe("/login");
    expect(flow.landing?.searchParams.get("mfa")?.split(",")).toEqual(["totp", "backup_code"]);
    expect((await me(browser)).status).toBe(401);

    const verify = await browser.fetch(`${app.url}/api/v1/auth/totp/verify`, {
      method: "POST",
      body: JSON.stringify({ code: totpCode(secret, totpStep(app.clock.now())) }),
      headers: { "content-type": "application/json", origin: app.url },
    });
    expect(verify.status).toBe(200);
    expect((await (await me(browser)).json()).data.user.id).toBe(user.id);
  });

  it("refuses a suspended user", async () => {
    const admin = await newSuperadmin(app);
    const email = uniqueEmail("suspended");
    idps.github.signIn(githubAccount(email));
    await runExternalFlow(app, newBrowser(app), "github");
    const [{ id }] = (await app.http.get(`/api/v1/superadmin/users?q=${encodeURIComponent(email)}`, { token: admin.token })).body.data.users;
    expect((await app.http.post(`/api/v1/admin/users/${id}/suspend`, { reason: "test" }, { token: admin.token })).status).toBe(200);

    const browser = newBrowser(app);
    const flow = await runExternalFlow(app, browser, "github");
    expect(errorOf(flow.landing)).toBe("ACCOUNT_SUSPENDED");
    expect((await me(browser)).status).toBe(401);
    // The refusal is attributed to the account and the identity.
    const [failure] = await auditFailures("external_auth.login.failed", "ACCOUNT_SUSPENDED");
    expect(failure).toMatchObject({ user_id: id, provider: "github", subject: expect.any(String) });
  });

  it("answers cleanly when GitHub refuses or fails, and creates nothing", async () => {
    const email = uniqueEmail("failing");
    idps.github.signIn(githubAccount(email));
    idps.github.denyNext();
    expect(errorOf((await runExternalFlow(app, newBrowser(app), "github")).landing)).toBe("OAUTH_CANCELLED");
    for (const failure of ["incorrect_client_credentials", "bad_verification_code", "user_unauthorized", "rate_limited", "server_error"] as const) {
      idps.github.failNext(failure);
      const flow = await runExternalFlow(app, newBrowser(app), "github");
      expect(errorOf(flow.landing), failure).toBe("OAUTH_ERROR");
    }
    idps.github.signIn(githubAccount(email, { emails: [{ email, primary: true, verified: false, visibility: null }] }));
    expect(errorOf((await runExternalFlow(app, newBrowser(app), "github")).landing)).toBe("OAUTH_EMAIL_UNVERIFIED");
    idps.github.signIn(githubAccount(email, { email: null, emails: [] }));
    expect(errorOf((await runExternalFlow(app, newBrowser(app), "github")).landing)).toBe("OAUTH_EMAIL_REQUIRED");
    expect(await usersNamed(email)).toBe(0);
    expect(await countRows(app, "external_identities", `email = '${email}'`)).toBe(0);
  });
});

describe("sign-in with Google", () => {
  // Google publishes its next key ahead of signing with it; Keyward's first key fetch sees both.
  beforeAll(() => idps.google.publishNextKey());

  it("registers with a verified Google address, and refuses to create an account from an unverified one", async () => {
    const unverified = uniqueEmail("gail");
    idps.google.signIn(googleAccount(unverified, { email_verified: false }));
    const refused = await runExternalFlow(app, newBrowser(app), "google", { flow: "register" });
    expect(errorOf(refused.landing)).toBe("OAUTH_EMAIL_UNVERIFIED");
    expect(await usersNamed(unverified)).toBe(0);
    const [failure] = await auditFailures("external_auth.login.failed", "OAUTH_EMAIL_UNVERIFIED");
    expect(failure).toMatchObject({ provider: "google", flow: "register", subject: expect.any(String) });

    const email = uniqueEmail("gail");
    idps.google.signIn(googleAccount(email));
    const browser = newBrowser(app);
    const flow = await runExternalFlow(app, browser, "google", { flow: "register" });
    expect(flow.landing?.pathname, flow.landing?.search).toBe("/account");
    const user = (await (await me(browser)).json()).data.user;
    expect(user).toMatchObject({ email, email_verified: true });
    const authz = idps.google.authorizeRequests.at(-1)!;
    expect(authz).toMatchObject({ code_challenge_method: "S256", response_type: "code" });
    expect(authz.nonce).toBeTruthy();
  });

  it("refuses an ID token with the wrong nonce, audience, issuer, signature or expiry, and creates nothing", async () => {
    const email = uniqueEmail("forged");
    idps.google.signIn(googleAccount(email));
    for (const tamper of [{ nonce: "someone-elses" }, { aud: "another-client" }, { iss: "https://evil.example" }, { badSignature: true }, { expired: true }, { unknownKid: true }]) {
      idps.google.tamperNextIdToken(tamper);
      const flow = await runExternalFlow(app, newBrowser(app), "google");
      expect(errorOf(flow.landing), JSON.stringify(tamper)).toBe("OAUTH_ERROR");
    }
    idps.google.failNext("invalid_grant");
    expect(errorOf((await runExternalFlow(app, newBrowser(app), "google")).landing)).toBe("OAUTH_ERROR");
    idps.google.denyNext();
    expect(errorOf((await runExternalFlow(app, newBrowser(app), "google")).landing)).toBe("OAUTH_CANCELLED");
    expect(await usersNamed(email)).toBe(0);

    // Google starts signing with the key it published earlier: no outage.
    idps.google.rotateKeys();
    expect((await runExternalFlow(app, newBrowser(app), "google")).landing?.pathname).toBe("/account");
    expect(await usersNamed(email)).toBe(1);
  });
});

describe("flow state", () => {
  it("refuses a tampered, replayed, expired or transplanted state, and creates nothing", async () => {
    const email = uniqueEmail("state");
    idps.github.signIn(githubAccount(email));

    const browser = newBrowser(app);
    const callback = await callbackUrlFor(app, browser, "github");
    const tampered = new URL(callback);
    tampered.searchParams.set("state", `${tampered.searchParams.get("state")}x`);
    expect(errorOf(await visitCallback(browser, tampered.toString()))).toBe("OAUTH_STATE_INVALID");

    // Another browser (no binding cookie) cannot complete someone's flow: login CSRF.
    const victim = newBrowser(app);
    const transplanted = await callbackUrlFor(app, browser, "github");
    expect(errorOf(await visitCallback(victim, transplanted))).toBe("OAUTH_STATE_INVALID");
    // ... and the flow is spent even for its own browser.
    expect(errorOf(await visitCallback(browser, transplanted))).toBe("OAUTH_STATE_INVALID");

    // A state answered to another provider's callback.
    const crossed = (await callbackUrlFor(app, browser, "github")).replace("/github/callback", "/google/callback");
    expect(errorOf(await visitCallback(browser, crossed))).toBe("OAUTH_STATE_INVALID");

    const late = await callbackUrlFor(app, browser, "github");
    app.clock.advance(app.container.config.externalAuth.flowTtl + 1);
    expect(errorOf(await visitCallback(browser, late))).toBe("OAUTH_STATE_INVALID");
    expect(await usersNamed(email)).toBe(0);
    // Each refusal says why in the audit log (a login CSRF attempt is not a timeout).
    const refusals = (await auditFailures("external_auth.login.failed", "OAUTH_STATE_INVALID")).map((f) => f.refusal);
    expect(refusals).toEqual(expect.arrayContaining(["unknown_or_used", "other_browser", "wrong_provider", "expired"]));

    // Replay of a completed flow.
    const good = await callbackUrlFor(app, browser, "github");
    expect((await visitCallback(browser, good)).pathname).toBe("/account");
    expect(errorOf(await visitCallback(browser, good))).toBe("OAUTH_STATE_INVALID");
    expect(await usersNamed(email)).toBe(1);
  });

  it("refuses a caller-chosen redirect_uri and only ever sends codes to the configured callback", async () => {
    const browser = newBrowser(app);
    for (const param of ["redirect_uri", "redirect_url"]) {
      const res = await app.http.get(`/api/v1/auth/external/github/authorize?flow=login&${param}=${encodeURIComponent("https://evil.example/steal")}`);
      expect(res.status).toBe(400);
      expect(res.body.error.type).toBe("REDIRECT_URI_NOT_ALLOWED");
    }
    for (const next of ["https://evil.example/", "//evil.example/x", "/\\evil.example"]) {
      const res = await app.http.get(`/api/v1/auth/external/github/authorize?next=${encodeURIComponent(next)}`);
      expect(res.status, next).toBe(400);
    }
    const direct = await app.http.get("/api/v1/auth/external/github/authorize?mode=redirect");
    expect(direct.status).toBe(303);
    expect(direct.headers.get("location")).toMatch(new RegExp(`^${idps.github.url}/login/oauth/authorize\\?`));
    expect(direct.headers.getSetCookie().some((c) => c.startsWith("keyward.oauth="))).toBe(true);

    idps.github.signIn(githubAccount(uniqueEmail("redirect")));
    const flow = await runExternalFlow(app, browser, "github", { next: "/account/security" });
    const configured = `${app.url}/api/v1/auth/external/github/callback`;
    expect(new URL(flow.body.data.authorization_url).searchParams.get("redirect_uri")).toBe(configured);
    expect(idps.github.authorizeRequests.at(-1)!.redirect_uri).toBe(configured);
    expect(flow.callback?.startsWith(`${configured}?`)).toBe(true);
    expect(flow.landing?.toString()).toBe(`${app.url}/account/security`);
  });

  it("refuses an unknown provider; a stray callback lands on the sign-in page with an error", async () => {
    expect((await app.http.get("/api/v1/auth/external/myspace/authorize")).body.error.type).toBe("PROVIDER_NOT_FOUND");
    const stray = await app.http.get("/api/v1/auth/external/github/callback?state=x&code=y");
    expect(stray.status).toBe(303);
    expect(errorOf(new URL(stray.headers.get("location")!))).toBe("OAUTH_STATE_INVALID");
  });
});
