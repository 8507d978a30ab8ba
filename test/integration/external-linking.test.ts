import { beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { auditRows, countRows } from "../helpers/db.js";
import {
  auditFailures as auditFailuresOf,
  errorOf,
  githubAccount,
  googleAccount,
  newBrowser,
  runExternalFlow,
  externalIdpSuite,
  visitCallback,
  type FakeIdps,
} from "../helpers/external-idp.js";
import { newSuperadmin, newUser, uniqueEmail } from "../factories/users.js";

/** Linking, unlinking and administration of external identities. Local GitHub and Google stand-ins play the providers. */
const suite = externalIdpSuite();
let app: TestApp;
let idps: FakeIdps;
beforeAll(() => ({ app, idps } = suite));

const auditFailures = (action: string, code: string) => auditFailuresOf(app, action, code);

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
    expect((await app.http.get("/api/v1/users/me", { token: user.token })).body.data.user.linked_providers).toEqual(["github", "google"]);
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

    // An update without a secret keeps the stored one; a first configuration without one is refused.
    expect((await app.http.put("/api/v1/admin/oauth/providers/github", { client_id: "Iv1.keyward-test", is_enabled: true }, { token: admin.token })).status).toBe(200);
    expect((await runExternalFlow(app, newBrowser(app), "github")).landing?.pathname).toBe("/account");
    const noSecret = await app.http.put("/api/v1/admin/oauth/providers/google", { client_id: "g" }, { token: admin.token });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error.details.errors).toEqual([expect.objectContaining({ path: "client_secret" })]);
    await app.http.put("/api/v1/admin/oauth/providers/github", { client_id: "Iv1.keyward-test", is_enabled: false }, { token: admin.token });

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
