import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { auditRows, countRows } from "../helpers/db.js";
import {
  callbackUrlFor,
  githubAccount,
  googleAccount,
  newBrowser,
  runExternalFlow,
  startFakeIdps,
  visitCallback,
  type FakeIdps,
} from "../helpers/external-idp.js";
import { enrollTotp } from "../factories/mfa.js";
import { newSuperadmin, newUser, uniqueEmail } from "../factories/users.js";
import type { OidcAgent } from "../helpers/oidc-agent.js";

let app: TestApp;
let idps: FakeIdps;

beforeAll(async () => {
  idps = await startFakeIdps();
  app = await startTestApp({ ...idps.env, RATE_LIMIT_ENABLED: "false" });
  idps.register(app);
});
afterAll(async () => {
  await app?.close();
  await idps?.close();
});

const me = async (browser: OidcAgent) => browser.fetch(`${app.url}/api/v1/auth/me`);
const errorOf = (landing: URL | undefined) => landing?.searchParams.get("error_type");
const usersNamed = (email: string) => countRows(app, "users", `email = '${email}'`);
/** Metadata of the failure audits with this action and error code. */
async function auditFailures(action: string, code: string): Promise<Array<Record<string, unknown>>> {
  const result = await app.container.db.execute(sql`select metadata, user_id from audit_logs where action = ${action} and metadata->>'code' = ${code} order by created_at desc`);
  return resultRows<{ metadata: Record<string, unknown>; user_id: string | null }>(result).map((r) => ({ ...r.metadata, user_id: r.user_id }));
}

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
    expect(errorOf((await runExternalFlow(app, newBrowser(app), "github")).landing)).toBe("OAUTH_ERROR");
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
    expect(errorOf((await runExternalFlow(app, newBrowser(app), "google")).landing)).toBe("OAUTH_ERROR");
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

describe("linking", () => {
  it("links with a matching email, refuses a mismatch, and allows an address GitHub lists as verified", async () => {
    const user = await newUser(app);
    const browser = newBrowser(app);
    idps.github.signIn(githubAccount(uniqueEmail("other"), { emails: [{ email: uniqueEmail("other"), primary: true, verified: true, visibility: null }, { email: user.email, primary: false, verified: false, visibility: null }] }));
    const refused = await runExternalFlow(app, browser, "github", { flow: "link" }, user.token);
    expect(refused.landing?.pathname).toBe("/account");
    expect(errorOf(refused.landing)).toBe("EMAIL_MISMATCH");
    expect(refused.landing?.searchParams.get("error")).toMatch(/does not list your account's email address as verified/);
    expect(await countRows(app, "external_identities", `user_id = '${user.id}'`)).toBe(0);

    idps.github.signIn(githubAccount(uniqueEmail("personal"), { emails: [{ email: uniqueEmail("personal"), primary: true, verified: true, visibility: null }, { email: user.email, primary: false, verified: true, visibility: null }] }));
    const allowed = await runExternalFlow(app, browser, "github", { flow: "link" }, user.token);
    expect(allowed.landing?.searchParams.get("linked")).toBe("github");

    idps.google.signIn(googleAccount(user.email));
    expect((await runExternalFlow(app, browser, "google", { flow: "link" }, user.token)).landing?.searchParams.get("linked")).toBe("google");

    const list = await app.http.get("/api/v1/auth/external/linked-accounts", { token: user.token });
    expect(list.body.data.linked_accounts.map((a: { provider: string }) => a.provider)).toEqual(["github", "google"]);
    expect(list.body.data.unlink_available).toBe(true);
    const actions = (await auditRows(app, user.id)).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(["external_auth.link.initiated", "external_auth.link.failed", "external_auth.link.completed"]));
  });

  it("refuses to link an identity that only claims the account's address without verifying it", async () => {
    const user = await newUser(app);
    const browser = newBrowser(app);
    // Google: the same address, not verified.
    idps.google.signIn(googleAccount(user.email, { email_verified: false }));
    expect(errorOf((await runExternalFlow(app, browser, "google", { flow: "link" }, user.token)).landing)).toBe("EMAIL_MISMATCH");
    // Google: another (verified) address.
    idps.google.signIn(googleAccount(uniqueEmail("elsewhere")));
    expect(errorOf((await runExternalFlow(app, browser, "google", { flow: "link" }, user.token)).landing)).toBe("EMAIL_MISMATCH");
    // GitHub: the same address as an unverified primary.
    idps.github.signIn(githubAccount(user.email, { emails: [{ email: user.email, primary: true, verified: false, visibility: null }] }));
    expect(errorOf((await runExternalFlow(app, browser, "github", { flow: "link" }, user.token)).landing)).toBe("EMAIL_MISMATCH");
    // GitHub: the same address as the public profile email only, with the emails API unavailable.
    idps.github.signIn(githubAccount(uniqueEmail("public"), { email: user.email }));
    idps.github.failNext("emails_forbidden");
    expect(errorOf((await runExternalFlow(app, browser, "github", { flow: "link" }, user.token)).landing)).toBe("EMAIL_MISMATCH");
    expect(await countRows(app, "external_identities", `user_id = '${user.id}'`)).toBe(0);
    // The failure message does not carry the account's address into URLs and logs.
    const failure = await runExternalFlow(app, browser, "github", { flow: "link" }, user.token);
    expect(failure.landing?.toString()).not.toContain(encodeURIComponent(user.email));
  });

  it("refuses to complete a link in a browser where someone else has signed in since", async () => {
    const owner = await newUser(app);
    const other = await newUser(app);
    idps.github.signIn(githubAccount(owner.email));
    const browser = newBrowser(app);
    const start = await browser.fetch(`${app.url}/api/v1/auth/external/github/authorize?flow=link`, { headers: { authorization: `Bearer ${owner.token}` } });
    const authorizationUrl = (await start.json()).data.authorization_url as string;
    await browser.signIn(other.email, other.password);
    const atProvider = await browser.fetch(authorizationUrl);
    const landing = await visitCallback(browser, new URL(atProvider.headers.get("location")!, authorizationUrl).toString());
    expect(errorOf(landing)).toBe("OAUTH_STATE_INVALID");
    expect(await countRows(app, "external_identities", `user_id in ('${owner.id}', '${other.id}')`)).toBe(0);
  });

  it("starts the same flows through GraphQL", async () => {
    const user = await newUser(app);
    idps.github.signIn(githubAccount(user.email));
    const browser = newBrowser(app);
    const res = await browser.fetch(`${app.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ query: 'mutation { startExternalAuth(provider: "github", flow: "link") { authorizationUrl state } }' }),
    });
    const started = (await res.json()).data.startExternalAuth;
    expect(new URL(started.authorizationUrl).searchParams.get("state")).toBe(started.state);
    const atProvider = await browser.fetch(started.authorizationUrl);
    const landing = await visitCallback(browser, new URL(atProvider.headers.get("location")!, started.authorizationUrl).toString());
    expect(landing.searchParams.get("linked")).toBe("github");
    const refused = await app.http.gql('mutation { startExternalAuth(provider: "github", flow: "login", next: "https://evil.example") { state } }');
    expect(refused.errors[0].extensions.code).toBe("VALIDATION_ERROR");
  });

  it("links one identity to one account only, and a link flow needs a signed-in user", async () => {
    const first = await newUser(app);
    const second = await newUser(app);
    const identity = githubAccount(first.email, { emails: [{ email: first.email, primary: true, verified: true, visibility: null }, { email: second.email, primary: false, verified: true, visibility: null }] });
    idps.github.signIn(identity);
    await runExternalFlow(app, newBrowser(app), "github", { flow: "link" }, first.token);
    const again = await runExternalFlow(app, newBrowser(app), "github", { flow: "link" }, second.token);
    expect(errorOf(again.landing)).toBe("IDENTITY_ALREADY_LINKED");
    expect((await app.http.get("/api/v1/auth/external/github/authorize?flow=link")).status).toBe(401);
  });

  it("refuses to unlink the last way to sign in, and unlinks once another exists", async () => {
    const email = uniqueEmail("only");
    idps.github.signIn(githubAccount(email));
    const browser = newBrowser(app);
    await runExternalFlow(app, browser, "github");
    const token = (await (await browser.fetch(`${app.url}/api/v1/auth/token`)).json()).data.token as string;
    expect((await app.http.get("/api/v1/auth/external/linked-accounts", { token })).body.data.unlink_available).toBe(false);
    const refused = await app.http.delete("/api/v1/auth/external/github/unlink", { token });
    expect(refused.status).toBe(409);
    expect(refused.body.error.type).toBe("LAST_SIGN_IN_METHOD");
    expect(await countRows(app, "external_identities", `email = '${email}'`)).toBe(1);
    expect((await auditFailures("external_auth.unlink", "LAST_SIGN_IN_METHOD")).length).toBeGreaterThan(0);

    idps.google.signIn(googleAccount(email));
    await runExternalFlow(app, browser, "google", { flow: "link" }, token);
    const gql = await app.http.gql("mutation { unlinkExternalAccount(provider: \"github\") }", {}, { token });
    expect(gql.data.unlinkExternalAccount).toBe(true);
    const left = await app.http.gql("{ linkedAccounts { unlinkAvailable linkedAccounts { provider } } }", {}, { token });
    expect(left.data.linkedAccounts).toEqual({ unlinkAvailable: false, linkedAccounts: [{ provider: "google" }] });
    expect((await app.http.delete("/api/v1/auth/external/github/unlink", { token })).body.error.type).toBe("NOT_LINKED");
  });
});

describe("administration", () => {
  it("lets superadmins configure providers with the secret sealed and never shown, and uses the stored credentials", async () => {
    const admin = await newSuperadmin(app);
    const member = await newUser(app);
    const before = await app.http.get("/api/v1/auth/external/providers");
    expect(before.body.data.providers).toEqual([
      expect.objectContaining({ id: "github", is_configured: true, is_active: true }),
      expect.objectContaining({ id: "google", type: "oidc", is_active: true }),
    ]);
    expect((await app.http.put("/api/v1/admin/oauth/providers/github", { client_id: "x", client_secret: "y" }, { token: member.token })).status).toBe(403);

    // A wrong stored secret is what GitHub sees: the stored configuration wins over the environment.
    const created = await app.http.put("/api/v1/admin/oauth/providers/github", { client_id: "Iv1.keyward-test", client_secret: "not-the-secret", scopes: "read:user user:email" }, { token: admin.token });
    expect(created.status).toBe(201);
    expect(created.body.data.provider).toMatchObject({ source: "database", has_client_secret: true, scopes: ["read:user", "user:email"] });
    expect(JSON.stringify(created.body)).not.toContain("not-the-secret");
    expect(await countRows(app, "oauth_provider_configs", "client_secret_sealed like '%not-the-secret%'")).toBe(0);
    idps.github.signIn(githubAccount(uniqueEmail("stored")));
    expect(errorOf((await runExternalFlow(app, newBrowser(app), "github")).landing)).toBe("OAUTH_ERROR");

    const fixed = await app.http.post("/api/v1/auth/external/providers/github/config", { client_id: "Iv1.keyward-test", client_secret: "github-test-secret" }, { token: admin.token });
    expect(fixed.status).toBe(200);
    expect((await runExternalFlow(app, newBrowser(app), "github")).landing?.pathname).toBe("/account");

    // Disabled: no flow starts; the public list says so.
    await app.http.put("/api/v1/admin/oauth/providers/github", { client_id: "Iv1.keyward-test", is_enabled: false }, { token: admin.token });
    const off = await app.http.get("/api/v1/auth/external/github/authorize");
    expect(off.body.error.type).toBe("PROVIDER_NOT_CONFIGURED");
    expect((await app.http.get("/api/v1/auth/external/providers")).body.data.providers[0].is_active).toBe(false);

    const noOpenid = await app.http.put("/api/v1/admin/oauth/providers/google", { client_id: "g", client_secret: "s", scopes: ["email"] }, { token: admin.token });
    expect(noOpenid.body.error.type).toBe("VALIDATION_ERROR");

    const gql = await app.http.gql("{ oauthProviderConfigs { provider source isEnabled hasClientSecret callbackUrl } }", {}, { token: admin.token });
    expect(gql.data.oauthProviderConfigs[0]).toEqual({ provider: "github", source: "database", isEnabled: false, hasClientSecret: true, callbackUrl: `${app.url}/api/v1/auth/external/github/callback` });

    // Removing the stored configuration brings the environment's back.
    expect((await app.http.delete("/api/v1/admin/oauth/providers/github", { token: admin.token })).status).toBe(200);
    expect((await app.http.get("/api/v1/admin/oauth/providers/github", { token: admin.token })).body.data.provider.source).toBe("environment");
    const actions = (await auditRows(app, admin.id)).map((r) => r.action);
    expect(actions).toEqual(expect.arrayContaining(["external_auth.config.create", "external_auth.config.update", "external_auth.config.delete"]));
  });

  it("lets an administrator see and remove a user's link, audited", async () => {
    const admin = await newSuperadmin(app);
    const user = await newUser(app);
    idps.github.signIn(githubAccount(user.email));
    await runExternalFlow(app, newBrowser(app), "github", { flow: "link" }, user.token);
    const stranger = await newUser(app);
    expect((await app.http.get(`/api/v1/admin/users/${user.id}/linked-accounts`, { token: stranger.token })).status).toBe(404);

    const listed = await app.http.get(`/api/v1/admin/users/${user.id}/linked-accounts`, { token: admin.token });
    expect(listed.body.data.linked_accounts).toEqual([expect.objectContaining({ provider: "github", email: user.email })]);
    expect((await app.http.delete(`/api/v1/admin/users/${user.id}/linked-accounts/github`, { token: admin.token })).status).toBe(200);
    expect(await countRows(app, "external_identities", `user_id = '${user.id}'`)).toBe(0);
    // A removed identity may be compromised: the user's sessions end.
    expect((await app.http.get("/api/v1/auth/me", { token: user.token })).status).toBe(401);
    expect((await auditRows(app, user.id)).map((r) => r.action)).toContain("admin.oauth.unlink");
  });
});
