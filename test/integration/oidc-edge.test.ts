import * as oc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { discover } from "../helpers/oidc-rp.js";
import { orgWithRoles } from "../factories/orgs.js";
import { REDIRECT, registerClient, type RegisteredClient } from "../factories/oidc.js";
import type { TestUser } from "../factories/users.js";

/** The provider's edges: rate limits, forged interactions, cross-site consent, fresh sign-in demands. */
let app: TestApp;
let member: TestUser;
let client: RegisteredClient;
let config: oc.Configuration;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_OIDC_TOKEN: "3/60" });
  const roles = await orgWithRoles(app);
  member = roles.member;
  client = await registerClient(app, roles.org.id, roles.admin, { grant_types: ["authorization_code", "client_credentials"] });
  config = await discover(app.url, client);
});
afterAll(() => app?.close());

async function authorizationUrl(params: Record<string, string> = {}) {
  const verifier = oc.randomPKCECodeVerifier();
  return oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid", code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", ...params }).toString();
}

describe("OIDC edges", () => {
  it("serves the same discovery document at the root and under the prefix", async () => {
    const root = await (await fetch(`${app.url}/.well-known/openid-configuration`)).json();
    const prefixed = await (await fetch(`${app.url}/api/v1/oidc/.well-known/openid-configuration`)).json();
    expect(root).toEqual(prefixed);
  });

  it("shows an expired or forged interaction as an error page, not a stack trace", async () => {
    const res = await fetch(`${app.url}/api/v1/oidc/interaction/forged-uid`);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await res.text()).toContain("This sign-in request has expired");
  });

  it("refuses a consent form posted from another site", async () => {
    const agent = new OidcAgent(app.url);
    await agent.signIn(member.email, member.password);
    const page = await agent.follow(await authorizationUrl(), REDIRECT, "stop");
    const action = /action="([^"]+\/confirm)"/.exec(page.body)![1]!;
    const res = await agent.fetch(new URL(action, app.url).toString(), { method: "POST", headers: { origin: "https://evil.example.com", "sec-fetch-site": "cross-site" } });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("cross-site form submission refused");
  });

  it("asks for a fresh sign-in on prompt=login even with a live Keyward session", async () => {
    const agent = new OidcAgent(app.url);
    await agent.signIn(member.email, member.password);
    const first = await agent.follow(await authorizationUrl({ prompt: "login" }), REDIRECT);
    expect(first.url).toContain("/login?next=");
    const next = `${app.url}${decodeURIComponent(new URL(first.url).searchParams.get("next")!)}`;
    // Coming back with the same session is not a fresh sign-in.
    expect((await agent.follow(next, REDIRECT)).url).toContain("/login?next=");
    await agent.signIn(member.email, member.password);
    const resumed = await agent.follow(next, REDIRECT);
    expect(resumed.consentShown).toBe(true);
    expect(new URL(resumed.url).searchParams.get("code")).toBeTruthy();
  });

  it("answers the token endpoint's rate limit with an OAuth-shaped 429 and Retry-After", async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 5; i++) {
      last = await fetch(`${app.url}/api/v1/oidc/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString("base64")}` },
        body: "grant_type=client_credentials",
      });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await last!.json()).toEqual({ error: "temporarily_unavailable", error_description: "Too many requests; retry later" });
  });
});
