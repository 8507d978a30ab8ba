import * as oc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { discover } from "../helpers/oidc-rp.js";
import { ALL_API_SCOPES, CLI_CLIENT, CLI_REDIRECT, registerClient } from "../factories/oidc.js";
import { newOrg } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * The built-in `keyward-cli` client signs in two ways, on the loopback redirect (authorization
 * code) and with the device grant, and gets a refresh token either way. Whichever way a person
 * signs in first, the consent page says the same (staying signed in included), and the consent
 * covers the other way: the person is asked once, not again at every `keyward login`.
 * openid-client plays the CLI; OidcAgent plays the browser.
 */
let app: TestApp;
let cli: oc.Configuration;
const SCOPE = ["openid", "offline_access", ...ALL_API_SCOPES].join(" ");

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  cli = await discover(app.url, { clientId: CLI_CLIENT, clientSecret: null });
});
afterAll(() => app?.close());

interface Login {
  /** The consent page as shown, or null when the person was not asked. */
  consentPage: string | null;
  tokens: oc.TokenEndpointResponse;
}

/** A browser already signed in to Keyward, as the person's own. */
async function browserOf(person: TestUser): Promise<OidcAgent> {
  const agent = new OidcAgent(app.url);
  await agent.signIn(person.email, person.password);
  return agent;
}

/** Follows `start` to the consent page (keeping it) and allows, or through without one. */
async function throughConsent(agent: OidcAgent, start: string, stopAt: string) {
  const first = await agent.follow(start, stopAt, "stop");
  if (first.url.startsWith(stopAt) || !first.body.includes('id="allow"')) return { stop: first, consentPage: null };
  return { stop: await agent.follow(first.url, stopAt, "allow"), consentPage: first.body };
}

/** `keyward login`: the code flow with PKCE on a loopback redirect, no prompt parameter, as src/cli/login-browser.ts asks. */
async function loopbackLogin(agent: OidcAgent, extra: Record<string, string> = {}): Promise<Login> {
  const verifier = oc.randomPKCECodeVerifier();
  const state = oc.randomState();
  const url = oc.buildAuthorizationUrl(cli, {
    redirect_uri: CLI_REDIRECT,
    scope: SCOPE,
    resource: `${app.url}/api/v1`,
    code_challenge: await oc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    ...extra,
  });
  const { stop, consentPage } = await throughConsent(agent, url.toString(), CLI_REDIRECT);
  const tokens = await oc.authorizationCodeGrant(cli, new URL(stop.url), { pkceCodeVerifier: verifier, expectedState: state }, { resource: `${app.url}/api/v1` });
  return { consentPage, tokens };
}

/** `keyward login --device`: the device grant, the code entered and confirmed in the browser. */
async function deviceLogin(agent: OidcAgent): Promise<Login> {
  const device = await oc.initiateDeviceAuthorization(cli, { scope: SCOPE, resource: `${app.url}/api/v1` });
  const input = await agent.follow(device.verification_uri, "never");
  const entered = await agent.submitForm(device.verification_uri, input.body, "op.deviceInputForm", { user_code: device.user_code });
  const confirmed = await agent.submitForm(device.verification_uri, await entered.text(), "op.deviceConfirmForm");
  const { stop, consentPage } = await throughConsent(agent, new URL(confirmed.headers.get("location")!, app.url).toString(), "never");
  expect(stop.body).toContain("is now signed in");
  const tokens = await oc.pollDeviceAuthorizationGrant(cli, device, { resource: `${app.url}/api/v1` });
  return { consentPage, tokens };
}

/** What a consent page says, without what differs between two visits (the interaction, the person). */
const said = (page: string, person: TestUser) =>
  page
    .replace(/[\s\S]*<main>/, "")
    .replace(/<\/main>[\s\S]*/, "")
    .replace(/\/interaction\/[^/"]+\//g, "/interaction/UID/")
    .replaceAll(person.email, "EMAIL");

describe("the CLI's consent, on the loopback redirect and with the device grant", () => {
  it("says the same on both pages, staying signed in included, and is asked once whichever way comes first", async () => {
    const viaLoopback = await newUser(app, { fullName: "Loopback First" });
    const viaDevice = await newUser(app, { fullName: "Device First" });

    const a1 = await loopbackLogin(await browserOf(viaLoopback));
    const b1 = await deviceLogin(await browserOf(viaDevice));
    expect(a1.consentPage).not.toBeNull();
    expect(b1.consentPage).not.toBeNull();
    // Both flows give the CLI a refresh token, and both pages say so.
    expect(a1.tokens.refresh_token).toBeTruthy();
    expect(b1.tokens.refresh_token).toBeTruthy();
    expect(a1.consentPage).toContain("Stay connected when you are not using it");
    expect(said(a1.consentPage!, viaLoopback)).toBe(said(b1.consentPage!, viaDevice));

    // The other way, later, in another browser: no second question.
    const a2 = await deviceLogin(await browserOf(viaLoopback));
    const b2 = await loopbackLogin(await browserOf(viaDevice));
    expect(a2.consentPage).toBeNull();
    expect(b2.consentPage).toBeNull();
    expect(a2.tokens.refresh_token).toBeTruthy();
    expect(b2.tokens.refresh_token).toBeTruthy();
    // And the same way again.
    expect((await loopbackLogin(await browserOf(viaLoopback))).consentPage).toBeNull();
    expect((await deviceLogin(await browserOf(viaDevice))).consentPage).toBeNull();
  });

  it("asks again after the person withdrew the consent, or when the CLI asks with prompt=consent", async () => {
    const person = await newUser(app, { fullName: "Withdrawer" });
    expect((await loopbackLogin(await browserOf(person))).consentPage).not.toBeNull();
    expect((await app.http.delete(`/api/v1/users/me/consents/${CLI_CLIENT}`, { token: person.token })).status).toBe(200);
    expect((await deviceLogin(await browserOf(person))).consentPage).not.toBeNull();
    expect((await loopbackLogin(await browserOf(person), { prompt: "consent" })).consentPage).not.toBeNull();
  });

  it("leaves other clients to OpenID Connect's rule: offline_access only with prompt=consent, and not on their page without it", async () => {
    const owner = await newUser(app, { fullName: "App Owner" });
    const org = await newOrg(app, owner);
    const rp = await registerClient(app, org.id, owner, { token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] });
    const config = await discover(app.url, rp);
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const url = oc.buildAuthorizationUrl(config, {
      redirect_uri: "http://127.0.0.1:47999/cb",
      scope: "openid offline_access",
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
    });
    const { stop, consentPage } = await throughConsent(await browserOf(owner), url.toString(), "http://127.0.0.1:47999/cb");
    expect(consentPage).not.toBeNull();
    expect(consentPage).not.toContain("Stay connected");
    const tokens = await oc.authorizationCodeGrant(config, new URL(stop.url), { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.refresh_token).toBeUndefined();
  });
});
