import { createPublicKey, verify as verifySignature, type JsonWebKey } from "node:crypto";
import { sql } from "drizzle-orm";
import * as oc from "openid-client";
import { resultRows } from "../../src/infra/db.js";
import { countRows } from "../helpers/db.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { discover as discoverAt, oauthError } from "../helpers/oidc-rp.js";
import { addMember, newOrg, orgWithRoles } from "../factories/orgs.js";
import { POST_LOGOUT, REDIRECT, registerClient, type RegisteredClient } from "../factories/oidc.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * openid-client (a certified relying-party library) against a running Keyward: every flow the
 * provider offers, and the ways each one must refuse.
 */
let app: TestApp;
let org: { id: string; name: string };
let owner: TestUser;
let admin: TestUser;
let member: TestUser;
let confidential: RegisteredClient;
let publicClient: RegisteredClient;

const discover = (client: RegisteredClient) => discoverAt(app.url, client);

/** The authorization code flow with PKCE for `user`, in a cookie-keeping agent. */
async function authorize(config: oc.Configuration, user: TestUser, params: Record<string, string> = {}, agent?: OidcAgent) {
  if (!agent) {
    agent = new OidcAgent(app.url);
    await agent.signIn(user.email, user.password);
  }
  const verifier = oc.randomPKCECodeVerifier();
  const state = oc.randomState();
  const nonce = oc.randomNonce();
  const url = oc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: "openid email profile organizations offline_access",
    code_challenge: await oc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
    prompt: "consent",
    ...params,
  });
  const stop = await agent.follow(url.toString(), REDIRECT);
  return { agent, stop, verifier, state, nonce };
}

async function signInAndGetTokens(config: oc.Configuration, user: TestUser, params: Record<string, string> = {}) {
  const flow = await authorize(config, user, params);
  const tokens = await oc.authorizationCodeGrant(config, new URL(flow.stop.url), { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce });
  return { ...flow, tokens };
}

const queryOf = (url: string) => Object.fromEntries(new URL(url).searchParams);

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  const roles = await orgWithRoles(app);
  ({ org, owner, admin, member } = roles);
  confidential = await registerClient(app, org.id, admin, {
    grant_types: ["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"],
    cors_origins: ["https://app.example.com"],
  });
  publicClient = await registerClient(app, org.id, admin, { name: "CLI", public: true, grant_types: ["authorization_code", "refresh_token"] });
});
afterAll(() => app?.close());

describe("discovery and keys", () => {
  it("serves discovery at the root with the issuer at the public origin and endpoints under /api/v1/oidc", async () => {
    const config = await discover(confidential);
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(app.url);
    expect(meta.authorization_endpoint).toBe(`${app.url}/api/v1/oidc/authorize`);
    expect(meta.token_endpoint).toBe(`${app.url}/api/v1/oidc/token`);
    expect(meta.userinfo_endpoint).toBe(`${app.url}/api/v1/oidc/userinfo`);
    expect(meta.revocation_endpoint).toBe(`${app.url}/api/v1/oidc/revoke`);
    expect(meta.introspection_endpoint).toBe(`${app.url}/api/v1/oidc/introspect`);
    expect(meta.end_session_endpoint).toBe(`${app.url}/api/v1/oidc/logout`);
    expect(meta.device_authorization_endpoint).toBe(`${app.url}/api/v1/oidc/device/auth`);
    expect(meta.code_challenge_methods_supported).toEqual(["S256"]);
    expect(meta.scopes_supported).toEqual(expect.arrayContaining(["openid", "email", "profile", "organizations", "offline_access"]));
    const res = await fetch(`${app.url}/.well-known/openid-configuration`);
    expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
  });

  it("publishes one RS256 and one ES256 key, without private parts", async () => {
    const jwks = (await (await fetch(`${app.url}/api/v1/oidc/jwks`)).json()) as { keys: Record<string, string>[] };
    expect(jwks.keys.map((k) => k.alg).sort()).toEqual(["ES256", "RS256"]);
    for (const key of jwks.keys) expect(key.d).toBeUndefined();
  });
});

describe("ID token signing algorithm", () => {
  /** A relying party that expects `alg` and checks every ID token's signature against the provider's JWKS. */
  const verifyingRp = (c: RegisteredClient, alg: string) =>
    oc.discovery(new URL(app.url), c.clientId, { client_secret: c.clientSecret!, id_token_signed_response_alg: alg }, oc.ClientSecretBasic(c.clientSecret!), {
      execute: [oc.allowInsecureRequests, oc.enableNonRepudiationChecks],
    });
  const jwks = async () => ((await (await fetch(`${app.url}/api/v1/oidc/jwks`)).json()) as { keys: (JsonWebKey & { kid: string; alg: string })[] }).keys;
  const headerOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[0]!, "base64url").toString()) as { alg: string; kid: string };

  it("signs with ES256 for a client registered with it, verified by openid-client against the JWKS", async () => {
    const es = await registerClient(app, org.id, admin, { id_token_signed_response_alg: "ES256" });
    const { tokens } = await signInAndGetTokens(await verifyingRp(es, "ES256"), member);
    expect(tokens.claims()).toMatchObject({ iss: app.url, aud: es.clientId, sub: member.id });
    const idToken = tokens.id_token!;
    const header = headerOf(idToken);
    expect(header.alg).toBe("ES256");
    // The published key with that kid verifies the signature (independently of openid-client).
    const key = (await jwks()).find((k) => k.kid === header.kid);
    expect(key).toMatchObject({ alg: "ES256", kty: "EC", crv: "P-256" });
    const [h, p, sig] = idToken.split(".");
    expect(verifySignature("sha256", Buffer.from(`${h}.${p}`), { key: createPublicKey({ key: key!, format: "jwk" }), dsaEncoding: "ieee-p1363" }, Buffer.from(sig!, "base64url"))).toBe(true);
  });

  it("keeps RS256 as the default, and a relying party expecting ES256 refuses an RS256 token", async () => {
    const { tokens } = await signInAndGetTokens(await verifyingRp(confidential, "RS256"), member);
    const header = headerOf(tokens.id_token!);
    expect(header.alg).toBe("RS256");
    expect((await jwks()).find((k) => k.kid === header.kid)).toMatchObject({ alg: "RS256", kty: "RSA" });
    const expectsEs256 = await verifyingRp(confidential, "ES256");
    const flow = await authorize(expectsEs256, member);
    const err = await oc.authorizationCodeGrant(expectsEs256, new URL(flow.stop.url), { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce }).catch((e: Error & { cause?: Error & { cause?: unknown } }) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error & { cause: Error }).cause.message).toBe('unexpected JWT "alg" header parameter');
    expect((err as Error & { cause: { cause: unknown } }).cause.cause).toMatchObject({ header: { alg: "RS256" }, expected: "ES256" });
  });

  it("switches a client to ES256 by update, and refuses an algorithm it does not offer", async () => {
    const c = await registerClient(app, org.id, admin);
    const refused = await app.http.patch(`/api/v1/organizations/${org.id}/clients/${c.clientId}`, { id_token_signed_response_alg: "HS256" }, { token: admin.token });
    expect(refused.status).toBe(400);
    expect(refused.body.error.type).toBe("VALIDATION_ERROR");
    const patched = await app.http.patch(`/api/v1/organizations/${org.id}/clients/${c.clientId}`, { id_token_signed_response_alg: "ES256" }, { token: admin.token });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.client.id_token_signed_response_alg).toBe("ES256");
    const { tokens } = await signInAndGetTokens(await verifyingRp(c, "ES256"), member);
    expect(headerOf(tokens.id_token!).alg).toBe("ES256");
  });
});

describe("authorization code with PKCE", () => {
  it("issues a validated ID token, userinfo with the organizations claim, and a refresh token", async () => {
    const config = await discover(confidential);
    const { tokens, stop } = await signInAndGetTokens(config, member);
    expect(stop.consentShown).toBe(true);
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: app.url, aud: confidential.clientId, sub: member.id, email: member.email, email_verified: true, name: "Member" });
    expect(claims.amr).toEqual(["pwd"]);
    expect(tokens.refresh_token).toBeTruthy();
    const info = await oc.fetchUserInfo(config, tokens.access_token, member.id);
    expect(info.organizations).toEqual([{ id: org.id, name: org.name, role: "member" }]);
  });

  // Issue 12 item 14: the claim used to list every organization of the user to any client.
  it("shows a client only the user's membership in the organization that registered it", async () => {
    const multi = await newUser(app, { fullName: "Two Orgs" });
    await addMember(app, org.id, owner, multi, "member");
    const elsewhere = await newOrg(app, multi, "Elsewhere Inc");
    const otherAdmin = await newUser(app, { fullName: "Other Admin" });
    await addMember(app, elsewhere.id, multi, otherAdmin, "admin");
    const otherClient = await registerClient(app, elsewhere.id, otherAdmin, { name: "Elsewhere RP" });
    const scope = "openid organizations";

    for (const [client, expected] of [
      [confidential, [{ id: org.id, name: org.name, role: "member" }]],
      [otherClient, [{ id: elsewhere.id, name: "Elsewhere Inc", role: "owner" }]],
    ] as const) {
      const config = await discover(client);
      const { tokens } = await signInAndGetTokens(config, multi, { scope });
      expect(tokens.claims()!.organizations).toEqual(expected);
      expect((await oc.fetchUserInfo(config, tokens.access_token, multi.id)).organizations).toEqual(expected);
    }

    // Not a member of the client's organization at all: an empty list, nothing about other organizations.
    const config = await discover(otherClient);
    const { tokens } = await signInAndGetTokens(config, member, { scope });
    expect(tokens.claims()!.organizations).toEqual([]);
    expect((await oc.fetchUserInfo(config, tokens.access_token, member.id)).organizations).toEqual([]);
  });

  it("remembers consent for the same client and scopes, and asks again for new scopes", async () => {
    const config = await discover(publicClient);
    const agent = new OidcAgent(app.url);
    await agent.signIn(owner.email, owner.password);
    const first = await authorize(config, owner, { scope: "openid email", prompt: "" }, agent);
    expect(first.stop.consentShown).toBe(true);
    const again = await authorize(config, owner, { scope: "openid email", prompt: "" }, agent);
    expect(again.stop.consentShown).toBe(false);
    expect(again.stop.url.startsWith(REDIRECT)).toBe(true);
    const wider = await authorize(config, owner, { scope: "openid email organizations", prompt: "" }, agent);
    expect(wider.stop.consentShown).toBe(true);
    // Another browser, same user: the remembered consent still counts.
    const elsewhere = await authorize(config, owner, { scope: "openid email", prompt: "" });
    expect(elsewhere.stop.consentShown).toBe(false);
    const consents = await app.http.get("/api/v1/users/me/consents", { token: owner.token });
    expect(consents.body.data.consents).toEqual([expect.objectContaining({ client_id: publicClient.clientId, scopes: ["email", "openid", "organizations"] })]);
  });

  it("sends access_denied to the client when the user denies", async () => {
    const config = await discover(confidential);
    const agent = new OidcAgent(app.url);
    await agent.signIn(admin.email, admin.password);
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid", code_challenge: await oc.calculatePKCECodeChallenge(oc.randomPKCECodeVerifier()), code_challenge_method: "S256", state: "s1" });
    const stop = await agent.follow(url.toString(), REDIRECT, "deny");
    expect(queryOf(stop.url)).toMatchObject({ error: "access_denied", state: "s1" });
  });

  it("sends a browser without a Keyward session to the hosted sign-in page, and back after it", async () => {
    const config = await discover(confidential);
    const agent = new OidcAgent(app.url);
    const verifier = oc.randomPKCECodeVerifier();
    const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid", code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", state: "s2" });
    const stop = await agent.follow(url.toString(), REDIRECT);
    expect(stop.url).toMatch(new RegExp(`^${app.url}/login\\?next=%2Fapi%2Fv1%2Foidc%2Finteraction%2F`));
    await agent.signIn(member.email, member.password);
    const resumed = await agent.follow(`${app.url}${decodeURIComponent(new URL(stop.url).searchParams.get("next")!)}`, REDIRECT);
    expect(queryOf(resumed.url)).toMatchObject({ state: "s2", code: expect.any(String) });
    const none = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid", code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", prompt: "none", state: "s3" });
    const anonymous = await new OidcAgent(app.url).follow(none.toString(), REDIRECT);
    expect(queryOf(anonymous.url)).toMatchObject({ error: "login_required", state: "s3" });
  });
});

describe("refresh tokens, revocation, introspection", () => {
  it("rotates refresh tokens; reusing an old one fails and revokes the whole grant", async () => {
    const config = await discover(confidential);
    const { tokens } = await signInAndGetTokens(config, member);
    const rotated = await oc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(rotated.refresh_token).toBeTruthy();
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect((await oc.tokenIntrospection(config, rotated.access_token)).active).toBe(true);
    // The chain moves on: the old token is no retry of a lost answer any more (README, OpenID Connect).
    const latest = await oc.refreshTokenGrant(config, rotated.refresh_token!);

    expect(await oauthError(oc.refreshTokenGrant(config, tokens.refresh_token!))).toBe("invalid_grant");
    // The whole grant is gone: the newest refresh token and its access token too.
    expect(await oauthError(oc.refreshTokenGrant(config, latest.refresh_token!))).toBe("invalid_grant");
    expect((await oc.tokenIntrospection(config, latest.access_token)).active).toBe(false);

    const reuse = await app.http.get(`/api/v1/organizations/${org.id}/audit-logs?action=oidc.refresh_token.reuse`, { token: admin.token });
    expect(reuse.body.data.audit_logs[0]).toMatchObject({ action: "oidc.refresh_token.reuse", user_id: member.id, success: false });
  });

  it("keeps refresh-token records naming their access token, with no foreign key", async () => {
    const column = resultRows<{ data_type: string; character_maximum_length: number }>(
      await app.container.db.execute(sql`select data_type, character_maximum_length from information_schema.columns where table_name = 'oidc_refresh_tokens' and column_name = 'access_token_id'`),
    );
    expect(column[0]).toEqual({ data_type: "character varying", character_maximum_length: 255 });
    expect(await countRows(app, "information_schema.table_constraints", "table_name = 'oidc_refresh_tokens' and constraint_type = 'FOREIGN KEY'")).toBe(0);
    expect(await countRows(app, "oidc_refresh_tokens", "access_token_id is not null")).toBeGreaterThan(0);
  });

  it("revokes a refresh token; introspection reports it inactive", async () => {
    const config = await discover(confidential);
    const { tokens } = await signInAndGetTokens(config, member);
    const before = await oc.tokenIntrospection(config, tokens.refresh_token!);
    expect(before).toMatchObject({ active: true, sub: member.id, client_id: confidential.clientId });
    await oc.tokenRevocation(config, tokens.refresh_token!);
    expect((await oc.tokenIntrospection(config, tokens.refresh_token!)).active).toBe(false);
    expect(await oauthError(oc.refreshTokenGrant(config, tokens.refresh_token!))).toBe("invalid_grant");
  });

  it("stores no token in a form that works: ids are hashed, secrets sealed", async () => {
    const config = await discover(confidential);
    const { tokens } = await signInAndGetTokens(config, member);
    const hits = resultRows<{ n: number }>(
      await app.container.db.execute(
        sql`select count(*)::int as n from oidc_payloads where id in (${tokens.access_token}, ${tokens.refresh_token!}) or strpos(payload::text, ${tokens.access_token}) > 0 or strpos(payload::text, ${tokens.refresh_token!}) > 0`,
      ),
    );
    expect(hits[0]!.n).toBe(0);
    expect(await countRows(app, "oidc_refresh_tokens", "true")).toBeGreaterThan(0);
    const sealed = resultRows<{ n: number }>(await app.container.db.execute(sql`select count(*)::int as n from oidc_clients where strpos(client_secret_sealed, ${confidential.clientSecret!}) > 0`));
    expect(sealed[0]!.n).toBe(0);
  });
});

describe("client credentials and device flow", () => {
  it("issues a client-credentials token that introspects as the client's", async () => {
    const config = await discover(confidential);
    const tokens = await oc.clientCredentialsGrant(config);
    const info = await oc.tokenIntrospection(config, tokens.access_token);
    expect(info).toMatchObject({ active: true, client_id: confidential.clientId });
    expect(info.sub).toBeUndefined();
  });

  it("completes the device authorization grant once a signed-in user confirms the code", async () => {
    const config = await discover(confidential);
    const device = await oc.initiateDeviceAuthorization(config, { scope: "openid email" });
    expect(device.verification_uri).toBe(`${app.url}/api/v1/oidc/device`);
    const user = await newUser(app, { fullName: "Device Owner" });
    const agent = new OidcAgent(app.url);
    await agent.signIn(user.email, user.password);
    const page = await agent.follow(device.verification_uri, "never");
    expect(page.body).toContain("Enter the code shown on your device");
    const entered = await agent.submitForm(device.verification_uri, page.body, "op.deviceInputForm", { user_code: device.user_code });
    const confirmHtml = await entered.text();
    expect(confirmHtml).toContain(device.user_code);
    const confirmed = await agent.submitForm(device.verification_uri, confirmHtml, "op.deviceConfirmForm");
    const done = await agent.follow(new URL(confirmed.headers.get("location")!, app.url).toString(), "never");
    expect(done.consentShown).toBe(true);
    expect(done.body).toContain("Device connected");
    const tokens = await oc.pollDeviceAuthorizationGrant(config, device);
    expect(tokens.claims()!.sub).toBe(user.id);
  }, 30_000);

  it("refuses a wrong user code on the device page", async () => {
    const agent = new OidcAgent(app.url);
    await agent.signIn(member.email, member.password);
    const page = await agent.follow(`${app.url}/api/v1/oidc/device`, "never");
    const res = await agent.submitForm(`${app.url}/api/v1/oidc/device`, page.body, "op.deviceInputForm", { user_code: "BCDF-GHJK" });
    expect(await res.text()).toContain("That code is not valid");
  });
});

describe("RP-initiated logout", () => {
  const logoutUrl = (config: oc.Configuration, params: Record<string, string> = {}) => oc.buildEndSessionUrl(config, params).toString();
  const keywardStatus = async (agent: OidcAgent) => (await agent.fetch(`${app.url}/api/v1/auth/me`)).status;
  const isConfirmation = (body: string) => body.includes('id="op.logoutForm"') && body.includes('id="logout"') && !body.includes("data-auto-submit") && !body.includes("document.forms[0].submit()");

  it("ends the Keyward session without asking when a valid id_token_hint for this sign-in names a registered post-logout URI", async () => {
    const config = await discover(confidential);
    const { tokens, agent } = await signInAndGetTokens(config, member);
    const end = await agent.follow(logoutUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: POST_LOGOUT, state: "bye" }), POST_LOGOUT);
    expect(queryOf(end.url)).toEqual({ state: "bye" });
    expect(await keywardStatus(agent)).toBe(401);
    // The next authorization needs a sign-in again.
    const next = await authorize(config, member, {}, agent);
    expect(next.stop.url).toContain("/login?next=");
  });

  // Issue 12 item 11: any site could send the browser to /logout and end the Keyward session.
  it("asks before ending anything when a site sends a signed-in browser to the logout endpoint", async () => {
    // Signed in to Keyward only (no provider session yet): oidc-provider used to post logout=yes by itself.
    const agent = new OidcAgent(app.url);
    await agent.signIn(member.email, member.password);
    const bare = await agent.follow(`${app.url}/api/v1/oidc/logout`, "never");
    expect(bare.status).toBe(200);
    expect(isConfirmation(bare.body)).toBe(true);
    expect(await keywardStatus(agent)).toBe(200);

    // Signed in to a client too; a client_id (or any hint short of a valid one) does not skip the question.
    const config = await discover(confidential);
    const { agent: withClient } = await signInAndGetTokens(config, member);
    const asked = await withClient.follow(logoutUrl(config, { client_id: confidential.clientId, post_logout_redirect_uri: POST_LOGOUT }), POST_LOGOUT);
    expect(isConfirmation(asked.body)).toBe(true);
    expect(await keywardStatus(withClient)).toBe(200);
    // "Stay signed in" keeps the Keyward session.
    const stay = await withClient.submitForm(asked.url, asked.body, "op.logoutForm");
    expect(stay.status).toBe(303);
    expect(await keywardStatus(withClient)).toBe(200);
  });

  it("ends both sessions when the user confirms on the provider's page (same-origin POST)", async () => {
    const agent = new OidcAgent(app.url);
    await agent.signIn(member.email, member.password);
    const page = await agent.follow(`${app.url}/api/v1/oidc/logout`, "never");
    const res = await agent.submitForm(page.url, page.body, "op.logoutForm", { logout: "yes" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`${app.url}/api/v1/oidc/logout/success`);
    expect(await keywardStatus(agent)).toBe(401);
  });

  it("refuses a cross-site confirmation POST, and a confirmation the provider rejects ends nothing", async () => {
    const agent = new OidcAgent(app.url);
    await agent.signIn(member.email, member.password);
    const page = await agent.follow(`${app.url}/api/v1/oidc/logout`, "never");
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.body)![1]!;
    const post = (body: string, headers: Record<string, string>) =>
      agent.fetch(`${app.url}/api/v1/oidc/logout/confirm`, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });
    const crossSite = await post(`xsrf=${xsrf}&logout=yes`, { origin: "https://evil.example.com", "sec-fetch-site": "cross-site" });
    expect(crossSite.status).toBe(400);
    expect(await crossSite.text()).toContain("cross-site form submission refused");
    expect(await keywardStatus(agent)).toBe(200);
    const forged = await post("xsrf=forged&logout=yes", { origin: app.url });
    expect(forged.status).toBe(400);
    expect(await keywardStatus(agent)).toBe(200);
  });

  it("asks when the id_token_hint is another user's, has no registered post-logout URI, or comes from an earlier sign-in", async () => {
    const config = await discover(confidential);
    const { tokens: adminTokens } = await signInAndGetTokens(config, admin);
    const { tokens, agent } = await signInAndGetTokens(config, member);
    const asks = async (params: Record<string, string>) => {
      const page = await agent.follow(logoutUrl(config, params), POST_LOGOUT);
      expect(isConfirmation(page.body), JSON.stringify(Object.keys(params))).toBe(true);
      expect(await keywardStatus(agent)).toBe(200);
    };
    await asks({ id_token_hint: adminTokens.id_token!, post_logout_redirect_uri: POST_LOGOUT });
    await asks({ id_token_hint: tokens.id_token! });
    // A later sign-in in the same browser: the old ID token no longer speaks for it.
    app.clock.advance(5);
    try {
      await agent.signIn(member.email, member.password);
      await asks({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: POST_LOGOUT });
    } finally {
      app.clock.reset();
    }
    // An unregistered post-logout URI is an error, never a redirect.
    const bad = await agent.follow(logoutUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: "http://127.0.0.1:47999/elsewhere" }), "http://127.0.0.1:47999/elsewhere");
    expect(bad.status).toBe(400);
    expect(bad.body).toContain("post_logout_redirect_uri not registered");
    expect(await keywardStatus(agent)).toBe(200);
  });

  it("ends single sign-on when the user signs out of Keyward", async () => {
    const config = await discover(confidential);
    const { agent } = await signInAndGetTokens(config, member);
    const out = await agent.fetch(`${app.url}/api/v1/auth/logout`, { method: "POST", body: "{}", headers: { "content-type": "application/json", origin: app.url } });
    expect(out.status).toBe(200);
    const next = await authorize(config, member, { prompt: "" }, agent);
    expect(next.stop.url).toContain("/login?next=");
  });
});

describe("refusals, with OAuth error codes", () => {
  it("refuses an unregistered redirect URI on an error page, never redirecting to it", async () => {
    const config = await discover(confidential);
    const { stop } = await authorize(config, member, { redirect_uri: "http://127.0.0.1:47999/other" });
    expect(stop.status).toBe(400);
    expect(stop.body).toContain("invalid_redirect_uri");
  });

  it("requires PKCE for a public client and accepts only S256", async () => {
    const config = await discover(publicClient);
    const agent = new OidcAgent(app.url);
    await agent.signIn(member.email, member.password);
    const missing = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid", state: "p1" });
    expect(queryOf((await agent.follow(missing.toString(), REDIRECT)).url)).toMatchObject({ error: "invalid_request", state: "p1" });
    const plain = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid", state: "p2", code_challenge: "a".repeat(43), code_challenge_method: "plain" });
    expect(queryOf((await agent.follow(plain.toString(), REDIRECT)).url)).toMatchObject({ error: "invalid_request", state: "p2" });
  });

  it("refuses a reused code and revokes what the first exchange issued", async () => {
    const config = await discover(confidential);
    const flow = await authorize(config, member);
    const checks = { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce };
    const tokens = await oc.authorizationCodeGrant(config, new URL(flow.stop.url), checks);
    expect(await oauthError(oc.authorizationCodeGrant(config, new URL(flow.stop.url), checks))).toBe("invalid_grant");
    expect((await oc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });

  it("refuses an expired code", async () => {
    const config = await discover(confidential);
    const flow = await authorize(config, member);
    app.clock.advance(601);
    try {
      const error = await oauthError(oc.authorizationCodeGrant(config, new URL(flow.stop.url), { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce }));
      expect(error).toBe("invalid_grant");
    } finally {
      app.clock.reset();
    }
  });

  it("refuses a wrong PKCE verifier and a wrong client secret", async () => {
    const config = await discover(confidential);
    const flow = await authorize(config, member);
    expect(await oauthError(oc.authorizationCodeGrant(config, new URL(flow.stop.url), { pkceCodeVerifier: oc.randomPKCECodeVerifier(), expectedState: flow.state }))).toBe("invalid_grant");
    const wrong = await discover({ clientId: confidential.clientId, clientSecret: "not-the-secret" });
    expect(await oauthError(oc.clientCredentialsGrant(wrong))).toBe("invalid_client");
  });

  it("stops a suspended user's tokens and refuses them new ones", async () => {
    const user = await newUser(app, { fullName: "Soon Suspended" });
    const config = await discover(confidential);
    const { tokens } = await signInAndGetTokens(config, user);
    const superadmin = await newUser(app);
    await app.services.operators.setSuperadmin({ actor: { kind: "anonymous" }, requestId: "t", ip: null, userAgent: null }, superadmin.email, true);
    const suspended = await app.http.post(`/api/v1/admin/users/${user.id}/suspend`, { reason: "test" }, { token: superadmin.token });
    expect(suspended.status, suspended.text).toBe(200);
    expect(await oauthError(oc.refreshTokenGrant(config, tokens.refresh_token!))).toBe("invalid_grant");
    expect(await oauthError(oc.fetchUserInfo(config, tokens.access_token, user.id))).toBe("invalid_token");
    expect((await oc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });
});

describe("CORS for browser clients", () => {
  it("answers the registered origin on token and userinfo, and no other", async () => {
    const config = await discover(confidential);
    const { tokens } = await signInAndGetTokens(config, member);
    const userinfo = (origin: string) => fetch(`${app.url}/api/v1/oidc/userinfo`, { headers: { origin, authorization: `Bearer ${tokens.access_token}` } });
    expect((await userinfo("https://app.example.com")).headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect((await userinfo("https://evil.example.com")).headers.get("access-control-allow-origin")).toBeNull();

    const token = (origin: string) =>
      fetch(`${app.url}/api/v1/oidc/token`, {
        method: "POST",
        headers: { origin, "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${confidential.clientId}:${confidential.clientSecret}`).toString("base64")}` },
        body: "grant_type=client_credentials",
      });
    const allowed = await token("https://app.example.com");
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    const refused = await token("https://evil.example.com");
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
  });
});
