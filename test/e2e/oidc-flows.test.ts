import * as oc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { orgWithRoles } from "../factories/orgs.js";
import { REDIRECT, registerClient, type RegisteredClient } from "../factories/oidc.js";
import type { TestUser } from "../factories/users.js";

let app: TestApp;
let org: { id: string; name: string };
let admin: TestUser;
let member: TestUser;
let confidential: RegisteredClient;

const insecure = { execute: [oc.allowInsecureRequests] };

async function discover(client: RegisteredClient): Promise<oc.Configuration> {
  const auth = client.clientSecret ? oc.ClientSecretBasic(client.clientSecret) : oc.None();
  return oc.discovery(new URL(app.url), client.clientId, client.clientSecret ?? undefined, auth, insecure);
}

/** Runs the authorization code flow with PKCE for `user` in a cookie-keeping agent. */
async function authorize(config: oc.Configuration, user: TestUser, params: Record<string, string> = {}) {
  const agent = new OidcAgent(app.url);
  await agent.signIn(user.email, user.password);
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

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  const roles = await orgWithRoles(app);
  org = roles.org;
  admin = roles.admin;
  member = roles.member;
  confidential = await registerClient(app, org.id, admin, { grant_types: ["authorization_code", "refresh_token", "client_credentials"] });
});
afterAll(() => app?.close());

describe("OpenID Connect with openid-client as the relying party", () => {
  it("discovers the issuer at the public origin, with every endpoint under /api/v1/oidc", async () => {
    const config = await discover(confidential);
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(app.url);
    expect(meta.authorization_endpoint).toBe(`${app.url}/api/v1/oidc/authorize`);
    expect(meta.token_endpoint).toBe(`${app.url}/api/v1/oidc/token`);
    expect(meta.code_challenge_methods_supported).toEqual(["S256"]);
    const res = await fetch(`${app.url}/.well-known/openid-configuration`);
    expect(res.headers.get("cache-control")).toContain("max-age=86400");
  });

  it("completes code + PKCE with a validated ID token, userinfo and the organizations claim", async () => {
    const config = await discover(confidential);
    const { stop, verifier, state, nonce } = await authorize(config, member);
    expect(stop.url.startsWith(REDIRECT)).toBe(true);
    const tokens = await oc.authorizationCodeGrant(config, new URL(stop.url), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(member.id);
    expect(claims.email).toBe(member.email);
    expect(tokens.refresh_token).toBeTruthy();
    const info = await oc.fetchUserInfo(config, tokens.access_token, member.id);
    expect(info.email_verified).toBe(true);
    expect(info.organizations).toEqual([{ id: org.id, name: org.name, role: "member" }]);
  });
});
