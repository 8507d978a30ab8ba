import * as oc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { countRows } from "../helpers/db.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { discover as discoverAt, oauthError } from "../helpers/oidc-rp.js";
import { orgWithRoles } from "../factories/orgs.js";
import { REDIRECT, registerClient, type RegisteredClient } from "../factories/oidc.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * Issue 33: token endpoint errors as RFC 6749 §5.2 names them, through openid-client. A grant the
 * client is not registered for is `unauthorized_client`; a scope Keyward does not know, asked for at
 * the token endpoint, is `invalid_scope` (every grant that takes a scope there); scopes asked for in
 * an authorization request ignore unknown ones (OpenID Connect Core §3.1.2.1) and the token
 * response names the scope granted (§5.1).
 */
let app: TestApp;
let member: TestUser;
/** Registered for the code grant only. */
let codeOnly: RegisteredClient;
/** Registered for client credentials only. */
let machine: RegisteredClient;
/** Registered for everything. */
let full: RegisteredClient;

const discover = (client: RegisteredClient) => discoverAt(app.url, client);

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  const roles = await orgWithRoles(app);
  member = roles.member;
  codeOnly = await registerClient(app, roles.org.id, roles.admin, { grant_types: ["authorization_code"] });
  machine = await registerClient(app, roles.org.id, roles.admin, { grant_types: ["client_credentials"], redirect_uris: [] });
  full = await registerClient(app, roles.org.id, roles.admin, {
    grant_types: ["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"],
  });
});
afterAll(() => app?.close());

/** A token response's scope as a sorted list (its order is the provider's). */
const scopes = (scope: string | undefined) => (scope ?? "").split(" ").filter(Boolean).sort();

/** A code for `client`, signed in as the member; the token response after redeeming it. */
async function codeTokens(config: oc.Configuration, scope: string) {
  const agent = new OidcAgent(app.url);
  await agent.signIn(member.email, member.password);
  const verifier = oc.randomPKCECodeVerifier();
  const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", state: "s", prompt: "consent" });
  const stop = await agent.follow(url.toString(), REDIRECT);
  return oc.authorizationCodeGrant(config, new URL(stop.url), { pkceCodeVerifier: verifier, expectedState: "s" });
}

describe("a grant the client is not registered for: unauthorized_client", () => {
  it("refuses client credentials, refresh and device grants to a code-only client", async () => {
    const config = await discover(codeOnly);
    expect(await oauthError(oc.clientCredentialsGrant(config))).toBe("unauthorized_client");
    expect(await oauthError(oc.refreshTokenGrant(config, "any-refresh-token"))).toBe("unauthorized_client");
    // RFC 8628 §3.2: the device authorization endpoint answers with the same codes.
    expect(await oauthError(oc.initiateDeviceAuthorization(config, { scope: "openid" }))).toBe("unauthorized_client");
  });

  it("refuses the code grant to a client-credentials client, and keeps unsupported_grant_type for grants Keyward has not", async () => {
    const config = await discover(machine);
    const code = { code: "abc", redirect_uri: REDIRECT, code_verifier: oc.randomPKCECodeVerifier() };
    expect(await oauthError(oc.genericGrantRequest(config, "authorization_code", code))).toBe("unauthorized_client");
    expect(await oauthError(oc.genericGrantRequest(config, "password", { username: "u", password: "p" }))).toBe("unsupported_grant_type");
  });

  it("records the refusal in the audit log with the standard code", async () => {
    await oauthError(oc.clientCredentialsGrant(await discover(codeOnly)));
    expect(await countRows(app, "audit_logs", `action = 'oidc.error' and metadata->>'error' = 'unauthorized_client' and metadata->>'client_id' = '${codeOnly.clientId}'`)).toBeGreaterThan(0);
  });
});

describe("unknown scopes", () => {
  it("client credentials: invalid_scope, and no token is stored", async () => {
    const config = await discover(full);
    const before = await countRows(app, "oidc_payloads", "type = 'ClientCredentials'");
    expect(await oauthError(oc.clientCredentialsGrant(config, { scope: "openid no-such-scope" }))).toBe("invalid_scope");
    expect(await countRows(app, "oidc_payloads", "type = 'ClientCredentials'")).toBe(before);
    // Known scopes are granted, and the answer says which.
    expect(scopes((await oc.clientCredentialsGrant(config, { scope: "openid email" })).scope)).toEqual(["email", "openid"]);
  });

  it("refresh token: invalid_scope for a scope it does not know; a narrower scope is granted and named", async () => {
    const config = await discover(full);
    const tokens = await codeTokens(config, "openid email offline_access");
    expect(await oauthError(oc.refreshTokenGrant(config, tokens.refresh_token!, { scope: "openid no-such-scope" }))).toBe("invalid_scope");
    const narrower = await oc.refreshTokenGrant(config, tokens.refresh_token!, { scope: "openid" });
    expect(narrower.scope).toBe("openid");
  });

  it("authorization code: the unknown scope is ignored and the token response names the scope granted", async () => {
    const tokens = await codeTokens(await discover(full), "openid no-such-scope email");
    expect(scopes(tokens.scope)).toEqual(["email", "openid"]);
  });

  it("device code: the unknown scope is ignored and the token response names the scope granted", async () => {
    const config = await discover(full);
    const device = await oc.initiateDeviceAuthorization(config, { scope: "openid no-such-scope email" });
    const user = await newUser(app, { fullName: "Device Scope" });
    const agent = new OidcAgent(app.url);
    await agent.signIn(user.email, user.password);
    const page = await agent.follow(device.verification_uri, "never");
    const entered = await agent.submitForm(device.verification_uri, page.body, "op.deviceInputForm", { user_code: device.user_code });
    const confirmed = await agent.submitForm(device.verification_uri, await entered.text(), "op.deviceConfirmForm");
    await agent.follow(new URL(confirmed.headers.get("location")!, app.url).toString(), "never");
    const tokens = await oc.pollDeviceAuthorizationGrant(config, device);
    expect(scopes(tokens.scope)).toEqual(["email", "openid"]);
  });
});
