import * as oc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { oauthError } from "../helpers/oidc-rp.js";
import { orgWithRoles } from "../factories/orgs.js";
import { REDIRECT, registerClient, type RegisteredClient } from "../factories/oidc.js";
import type { TestUser } from "../factories/users.js";

/**
 * Issue 33: the OpenID Foundation's Basic OP certification plan (oidcc-basic-certification-test-plan,
 * static client, discovery) and the Config OP checks, module by module, against a running Keyward
 * through openid-client (which validates every ID token, its signature included). The server runs
 * as docs/oidc-provider.md "OpenID certification" says to run it for the suite: OIDC_REQUIRE_PKCE=false (the suite
 * sends PKCE in its PKCE module only). Modules that do not apply are named with why.
 */
let app: TestApp;
let user: TestUser;
let basic: RegisteredClient;
let post: RegisteredClient;
/** The relying party as the suite's static client: client_secret_basic, signatures checked against the JWKS. */
let rp: oc.Configuration;
/** A browser stand-in signed in to Keyward, with the consents the walk gave. */
let browser: OidcAgent;

const withChecks = (client: RegisteredClient, auth: oc.ClientAuth) =>
  oc.discovery(new URL(app.url), client.clientId, client.clientSecret!, auth, { execute: [oc.allowInsecureRequests, oc.enableNonRepudiationChecks] });

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false", OIDC_REQUIRE_PKCE: "false" });
  const roles = await orgWithRoles(app);
  user = roles.member;
  basic = await registerClient(app, roles.org.id, roles.admin, { name: "Conformance", grant_types: ["authorization_code", "refresh_token"] });
  post = await registerClient(app, roles.org.id, roles.admin, { name: "Conformance (post)", grant_types: ["authorization_code"] });
  // Registered for the secret in the form body.
  await app.container.db.execute((await import("drizzle-orm")).sql`update oidc_clients set token_endpoint_auth_method = 'client_secret_post' where client_id = ${post.clientId}`);
  rp = await withChecks(basic, oc.ClientSecretBasic(basic.clientSecret!));
  browser = new OidcAgent(app.url);
  await browser.signIn(user.email, user.password);
});
afterAll(() => app?.close());

/** One authorization request as the suite sends it (no PKCE unless asked), followed in `agent`. */
async function authorize(params: Record<string, string> = {}, agent = browser, config = rp) {
  const state = oc.randomState();
  const nonce = oc.randomNonce();
  const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid", state, nonce, ...params });
  const stop = await agent.follow(url.toString(), REDIRECT);
  return { stop, state, nonce: params.nonce === undefined ? nonce : params.nonce };
}

/** A code flow to tokens, the ID token validated (nonce, state, signature, and auth_time against max_age when given). */
async function codeFlow(params: Record<string, string> = {}, options: { agent?: OidcAgent; config?: oc.Configuration; maxAge?: number } = {}) {
  const config = options.config ?? rp;
  const { stop, state, nonce } = await authorize(params, options.agent, config);
  expect(stop.url.startsWith(REDIRECT), `stopped at ${stop.url}`).toBe(true);
  const tokens = await oc.authorizationCodeGrant(config, new URL(stop.url), { expectedState: state, expectedNonce: nonce || undefined, ...(options.maxAge !== undefined ? { maxAge: options.maxAge } : {}) });
  return { tokens, claims: tokens.claims()!, stop };
}

const redirectQuery = (url: string) => Object.fromEntries(new URL(url).searchParams);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the settings a certification run changes", () => {
  it("keeps PKCE required by default (the run turns it off) and registration off (the Dynamic OP run turns it on)", () => {
    const defaults = loadConfig({}).oidc;
    expect(defaults.requirePkce).toBe(true);
    expect(defaults.dynamicRegistration).toBe(false);
  });
});

describe("Config OP: discovery and keys", () => {
  it("oidcc-discovery-endpoint-verification: publishes what a code-flow relying party needs", async () => {
    const meta = rp.serverMetadata();
    expect(meta.issuer).toBe(app.url);
    expect(meta.response_types_supported).toEqual(["code"]);
    expect(meta.scopes_supported).toEqual(expect.arrayContaining(["openid", "profile", "email", "offline_access"]));
    expect(meta.subject_types_supported).toContain("public");
    expect(meta.id_token_signing_alg_values_supported).toContain("RS256");
    expect(meta.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(["client_secret_basic", "client_secret_post"]));
    expect(meta.claims_supported).toEqual(expect.arrayContaining(["sub", "iss", "email", "name"]));
    expect(meta.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
    const jwks = (await (await fetch(meta.jwks_uri!)).json()) as { keys: Array<{ kid?: string; use?: string; kty: string; d?: string }> };
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const key of jwks.keys) expect([Boolean(key.kid), key.d]).toEqual([true, undefined]);
  });
});

describe("Basic OP", () => {
  it("oidcc-server: the code flow, its ID token validated", async () => {
    const { tokens, claims } = await codeFlow();
    expect(claims).toMatchObject({ iss: app.url, aud: basic.clientId, sub: user.id });
    expect(typeof claims.iat).toBe("number");
    expect(claims.exp).toBeGreaterThan(claims.iat);
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
  });

  it("oidcc-response-type-missing: an error to the redirect URI", async () => {
    const url = oc.buildAuthorizationUrl(rp, { redirect_uri: REDIRECT, scope: "openid", state: "rtm" });
    url.searchParams.delete("response_type");
    const stop = await browser.follow(url.toString(), REDIRECT);
    expect(redirectQuery(stop.url)).toMatchObject({ error: expect.stringMatching(/^(invalid_request|unsupported_response_type)$/), state: "rtm" });
  });

  it("oidcc-userinfo-get, -post-header, -post-body: the same subject each way", async () => {
    const { tokens } = await codeFlow();
    expect((await oc.fetchUserInfo(rp, tokens.access_token, user.id)).sub).toBe(user.id);
    const userinfo = rp.serverMetadata().userinfo_endpoint!;
    const header = await fetch(userinfo, { method: "POST", headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect([header.status, ((await header.json()) as { sub: string }).sub]).toEqual([200, user.id]);
    const body = await fetch(userinfo, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ access_token: tokens.access_token }) });
    expect([body.status, ((await body.json()) as { sub: string }).sub]).toEqual([200, user.id]);
  });

  it("oidcc-ensure-request-without-nonce-succeeds-for-code-flow", async () => {
    const { claims } = await codeFlow({ nonce: "" });
    expect(claims.nonce).toBeUndefined();
    expect(claims.sub).toBe(user.id);
  });

  it("oidcc-scope-profile, -email, -all: the scopes' claims at userinfo; -address and -phone: not offered, ignored", async () => {
    const meta = rp.serverMetadata();
    expect(meta.scopes_supported).not.toContain("address");
    expect(meta.scopes_supported).not.toContain("phone");
    for (const [scope, present] of [
      ["openid profile", ["name"]],
      ["openid email", ["email", "email_verified"]],
      ["openid profile email address phone", ["name", "email"]],
      ["openid address", []],
      ["openid phone", []],
    ] as const) {
      const { tokens } = await codeFlow({ scope });
      const info = await oc.fetchUserInfo(rp, tokens.access_token, user.id);
      for (const claim of present) expect(info[claim], `${scope}: ${claim}`).toBeDefined();
      expect(info.address).toBeUndefined();
      expect(info.phone_number).toBeUndefined();
    }
  });

  it("oidcc-ensure-other-scope-order-succeeds", async () => {
    const { tokens } = await codeFlow({ scope: "email openid" });
    expect((await oc.fetchUserInfo(rp, tokens.access_token, user.id)).email).toBe(user.email);
  });

  it("oidcc-display-page, -popup; oidcc-login-hint, -ui-locales, -claims-locales, -acr-values, unknown parameters: accepted", async () => {
    const extras: Record<string, string>[] = [{ display: "page" }, { display: "popup" }, { login_hint: user.email }, { ui_locales: "se" }, { claims_locales: "se" }, { acr_values: "1 2" }, { extra: "foobar" }];
    for (const extra of extras) {
      const { claims } = await codeFlow(extra);
      expect(claims.sub, JSON.stringify(extra)).toBe(user.id);
    }
  });

  it("oidcc-claims-essential: the claims parameter is not offered, and a request carrying one still succeeds", async () => {
    expect(rp.serverMetadata().claims_parameter_supported ?? false).toBe(false);
    const { tokens } = await codeFlow({ claims: JSON.stringify({ userinfo: { name: { essential: true } } }) });
    expect((await oc.fetchUserInfo(rp, tokens.access_token, user.id)).sub).toBe(user.id);
  });

  it("oidcc-prompt-login: a fresh sign-in even with a live session, and a newer auth_time", async () => {
    const agent = new OidcAgent(app.url);
    await agent.signIn(user.email, user.password);
    const before = (await codeFlow({}, { agent })).claims;
    const { stop, state, nonce } = await authorize({ prompt: "login" }, agent);
    expect(stop.url).toContain("/login?next=");
    await sleep(1100);
    await agent.signIn(user.email, user.password);
    const resumed = await agent.follow(`${app.url}${decodeURIComponent(new URL(stop.url).searchParams.get("next")!)}`, REDIRECT);
    const tokens = await oc.authorizationCodeGrant(rp, new URL(resumed.url), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()!.auth_time).toBeGreaterThan(before.auth_time ?? before.iat - 1);
  });

  it("oidcc-prompt-none-not-logged-in: login_required to the client", async () => {
    const { stop, state } = await authorize({ prompt: "none" }, new OidcAgent(app.url));
    expect(redirectQuery(stop.url)).toMatchObject({ error: "login_required", state });
  });

  it("oidcc-prompt-none-logged-in: a code without interaction once consent was given", async () => {
    await codeFlow();
    const { claims, stop } = await codeFlow({ prompt: "none" });
    expect(stop.consentShown).toBe(false);
    expect(claims.sub).toBe(user.id);
  });

  it("oidcc-max-age-1: an older sign-in is asked again; oidcc-max-age-10000: it is not; auth_time is in the ID token", async () => {
    const agent = new OidcAgent(app.url);
    await agent.signIn(user.email, user.password);
    const recent = await codeFlow({ max_age: "10000" }, { agent, maxAge: 10000 });
    expect(typeof recent.claims.auth_time).toBe("number");
    await sleep(2100);
    const { stop, state, nonce } = await authorize({ max_age: "1" }, agent);
    expect(stop.url).toContain("/login?next=");
    await agent.signIn(user.email, user.password);
    const resumed = await agent.follow(`${app.url}${decodeURIComponent(new URL(stop.url).searchParams.get("next")!)}`, REDIRECT);
    const tokens = await oc.authorizationCodeGrant(rp, new URL(resumed.url), { expectedState: state, expectedNonce: nonce, maxAge: 1 });
    expect(tokens.claims()!.auth_time).toBeGreaterThan(recent.claims.auth_time!);
  });

  it("oidcc-id-token-hint: prompt=none with the previous ID token answers for the same subject", async () => {
    const first = await codeFlow();
    const { claims, stop } = await codeFlow({ prompt: "none", id_token_hint: first.tokens.id_token! });
    expect(stop.consentShown).toBe(false);
    expect(claims.sub).toBe(first.claims.sub);
  });

  it("oidcc-codereuse, -30seconds: a second redemption is refused and revokes what the first issued", async () => {
    for (const wait of [0, 30]) {
      const { stop, state, nonce } = await authorize();
      const checks = { expectedState: state, expectedNonce: nonce };
      const tokens = await oc.authorizationCodeGrant(rp, new URL(stop.url), checks);
      app.clock.advance(wait);
      try {
        expect(await oauthError(oc.authorizationCodeGrant(rp, new URL(stop.url), checks))).toBe("invalid_grant");
        expect(await oauthError(oc.fetchUserInfo(rp, tokens.access_token, user.id))).toBe("invalid_token");
      } finally {
        app.clock.reset();
      }
    }
  });

  it("oidcc-ensure-registered-redirect-uri: an unregistered redirect URI is an error page, never a redirect", async () => {
    const url = oc.buildAuthorizationUrl(rp, { redirect_uri: "https://attacker.example/cb", scope: "openid", state: "rr" });
    const page = await browser.follow(url.toString(), "https://attacker.example");
    expect(page.status).toBe(400);
    expect(page.url.startsWith("https://attacker.example")).toBe(false);
    expect(page.body).toContain("redirect_uri");
  });

  it("oidcc-ensure-redirect-uri-in-authorization-request: a request without redirect_uri is refused", async () => {
    const url = oc.buildAuthorizationUrl(rp, { redirect_uri: REDIRECT, scope: "openid", state: "nr" });
    url.searchParams.delete("redirect_uri");
    const stop = await browser.follow(url.toString(), REDIRECT);
    // Shown to the user, or sent to the one registered redirect URI: either way, an error and no code.
    const answer = stop.url.startsWith(REDIRECT) ? redirectQuery(stop.url) : { error: stop.status === 400 ? "invalid_request" : `status ${stop.status}` };
    expect(answer).toMatchObject({ error: "invalid_request" });
    expect(answer).not.toHaveProperty("code");
  });

  it("oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported; -ensure-request-object-with-redirect-uri: rejected as unsupported", async () => {
    expect(rp.serverMetadata().request_parameter_supported ?? false).toBe(false);
    const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const request = `${b64({ alg: "none" })}.${b64({ iss: basic.clientId, aud: app.url, response_type: "code", client_id: basic.clientId, redirect_uri: REDIRECT, scope: "openid", state: "ro", nonce: "n" })}.`;
    const { stop, state } = await authorize({ request });
    expect(redirectQuery(stop.url)).toMatchObject({ error: "request_not_supported", state });
  });

  it("oidcc-refresh-token: a refresh gives a new ID token for the same subject; another client cannot use it", async () => {
    const { tokens, claims } = await codeFlow({ scope: "openid offline_access", prompt: "consent" });
    expect(tokens.refresh_token).toBeTruthy();
    const refreshed = await oc.refreshTokenGrant(rp, tokens.refresh_token!);
    expect(refreshed.claims()).toMatchObject({ sub: claims.sub, aud: basic.clientId, iss: app.url });
    const other = await withChecks(post, oc.ClientSecretPost(post.clientSecret!));
    expect(await oauthError(oc.refreshTokenGrant(other, refreshed.refresh_token!))).toMatch(/^(invalid_grant|unauthorized_client)$/);
  });

  it("oidcc-ensure-request-with-valid-pkce-succeeds, and a wrong verifier is refused", async () => {
    for (const right of [true, false]) {
      const verifier = oc.randomPKCECodeVerifier();
      const { stop, state, nonce } = await authorize({ code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });
      const redeem = oc.authorizationCodeGrant(rp, new URL(stop.url), { expectedState: state, expectedNonce: nonce, pkceCodeVerifier: right ? verifier : oc.randomPKCECodeVerifier() });
      if (right) expect((await redeem).claims()!.sub).toBe(user.id);
      else expect(await oauthError(redeem)).toBe("invalid_grant");
    }
  });

  it("oidcc-ensure-post-request-succeeds: the authorization request sent as a form POST", async () => {
    const state = oc.randomState();
    const nonce = oc.randomNonce();
    const params = new URLSearchParams({ client_id: basic.clientId, response_type: "code", redirect_uri: REDIRECT, scope: "openid", state, nonce });
    const posted = await browser.fetch(rp.serverMetadata().authorization_endpoint!, { method: "POST", body: params.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(posted.status).toBe(303);
    const stop = await browser.follow(new URL(posted.headers.get("location")!, app.url).toString(), REDIRECT);
    const tokens = await oc.authorizationCodeGrant(rp, new URL(stop.url), { expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()!.sub).toBe(user.id);
  });

  it("oidcc-server (client_secret_post variant), and bad client authentication refused with invalid_client", async () => {
    const config = await withChecks(post, oc.ClientSecretPost(post.clientSecret!));
    expect((await codeFlow({}, { config })).claims.aud).toBe(post.clientId);
    // The wrong secret, and no client authentication at all for a confidential client.
    const wrong = await withChecks(basic, oc.ClientSecretBasic("not-the-secret"));
    const none = await oc.discovery(new URL(app.url), basic.clientId, {}, oc.None(), { execute: [oc.allowInsecureRequests] });
    for (const config2 of [wrong, none]) {
      const { stop, state, nonce } = await authorize({}, browser, config2);
      expect(await oauthError(oc.authorizationCodeGrant(config2, new URL(stop.url), { expectedState: state, expectedNonce: nonce }))).toBe("invalid_client");
    }
  });
});
