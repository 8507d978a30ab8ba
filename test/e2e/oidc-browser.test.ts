import { createServer, type Server } from "node:http";
import * as oc from "openid-client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { discover } from "../helpers/oidc-rp.js";
import { orgWithRoles } from "../factories/orgs.js";
import { registerClient, type RegisteredClient } from "../factories/oidc.js";
import { enrollTotp } from "../factories/mfa.js";
import { newUser } from "../factories/users.js";

/**
 * The provider's pages in headless Chromium: a relying party sends the browser to Keyward, the
 * hosted sign-in page (with a second factor) signs the user in, the consent page asks, and the
 * browser lands on the client's redirect URI with a code openid-client exchanges.
 */
let app: TestApp;
let browser: Browser;
let client: RegisteredClient;
let config: oc.Configuration;
/** The relying party's redirect URI: a real loopback server, as a browser must reach it. */
let rp: Server;
let REDIRECT: string;
let POST_LOGOUT: string;

/** A fresh browser (its own cookies). */
async function rpPage(): Promise<Page> {
  const context = await browser.newContext();
  return context.newPage();
}

async function authorizationUrl(scope = "openid email organizations") {
  const verifier = oc.randomPKCECodeVerifier();
  const state = oc.randomState();
  const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", state });
  return { url: url.toString(), verifier, state };
}

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  browser = await launchBrowser();
  rp = createServer((req, res) => {
    // Another site (127.0.0.1 is not localhost's site) linking to Keyward's logout endpoint.
    if (req.url === "/elsewhere") return void res.setHeader("content-type", "text/html").end(`<a id="go" href="${app.url}/api/v1/oidc/logout">Read more</a>`);
    res.end("client callback");
  });
  await new Promise<void>((resolve) => rp.listen(0, "127.0.0.1", resolve));
  const rpOrigin = `http://127.0.0.1:${(rp.address() as { port: number }).port}`;
  REDIRECT = `${rpOrigin}/cb`;
  POST_LOGOUT = `${rpOrigin}/signed-out`;
  const { org, admin } = await orgWithRoles(app);
  client = await registerClient(app, org.id, admin, { name: "Grafana", redirect_uris: [REDIRECT], post_logout_redirect_uris: [POST_LOGOUT] });
  config = await discover(app.url, client);
});
afterAll(async () => {
  rp?.close();
  await browser?.close();
  await app?.close();
});

describe("sign-in and consent pages in Chromium", () => {
  it("signs in an MFA user on the hosted page, asks for consent, and returns a code to the client", async () => {
    const user = await newUser(app, { fullName: "Mfa Browser" });
    const { secret } = await enrollTotp(app, user);
    const page = await rpPage();
    const { url, verifier, state } = await authorizationUrl();

    await page.goto(url);
    await page.waitForURL(/\/login\?next=/);
    await page.fill("#email", user.email);
    await page.fill("#password", user.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("#mfa-step:not([hidden])");
    await page.fill("#mfa-code", totpCode(secret, totpStep(app.clock.now())));
    await page.click("#mfa-code-form button[type=submit]");

    await page.waitForSelector("#allow");
    expect(await page.textContent("#client-name")).toBe("Grafana");
    const scopes = await page.locator("#scopes li").allTextContents();
    expect(scopes).toEqual(["Know who you are (a stable user id)", "Your email address and whether it is verified", "Your membership and role in the organization that registered it"]);
    await page.click("#allow");
    await page.waitForURL(`${REDIRECT}**`);

    const tokens = await oc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(user.id);
    expect(claims.amr).toEqual(expect.arrayContaining(["pwd", "otp", "mfa"]));
    await page.context().close();
  });

  it("skips the sign-in page for a browser already signed in, and the consent page once consent is remembered", async () => {
    const user = await newUser(app, { fullName: "Returning" });
    const page = await rpPage();
    await page.goto(`${app.url}/login`);
    await page.fill("#email", user.email);
    await page.fill("#password", user.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(`${app.url}/`);

    await page.goto((await authorizationUrl("openid email")).url);
    await page.waitForSelector("#allow");
    await page.click("#allow");
    await page.waitForURL(`${REDIRECT}**`);

    await page.goto((await authorizationUrl("openid email")).url);
    await page.waitForURL(`${REDIRECT}**`);
    expect(new URL(page.url()).searchParams.get("code")).toBeTruthy();
    await page.context().close();
  });

  it("returns access_denied when the user denies, and serves the consent page under a strict CSP", async () => {
    const user = await newUser(app, { fullName: "Denier" });
    const page = await rpPage();
    const { url, state } = await authorizationUrl();
    await page.goto(url);
    await page.waitForURL(/\/login\?next=/);
    await page.fill("#email", user.email);
    await page.fill("#password", user.password);
    const consent = page.waitForResponse((r) => /\/interaction\/[^/]+$/.test(new URL(r.url()).pathname) && r.status() === 200);
    await page.click("#login-form button[type=submit]");
    const csp = (await consent).headers()["content-security-policy"]!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`form-action 'self' ${new URL(REDIRECT).origin}`);
    expect(csp).not.toContain("unsafe-inline");
    await page.click("#deny");
    await page.waitForURL(`${REDIRECT}**`);
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toMatchObject({ error: "access_denied", state });
    await page.context().close();
  });
});

/** Signs the browser in to Keyward on the hosted page. */
async function signInOnPage(page: Page, user: { email: string; password: string }): Promise<void> {
  await page.goto(`${app.url}/login`);
  await page.fill("#email", user.email);
  await page.fill("#password", user.password);
  await page.click("#login-form button[type=submit]");
  await page.waitForURL(`${app.url}/`);
}

const keywardStatus = async (page: Page) => (await page.context().request.get(`${app.url}/api/v1/auth/me`)).status();

// Issue 12 item 11: a link on any site used to end the Keyward session.
describe("RP-initiated logout in Chromium", () => {
  it("asks before signing out when another site links to the logout endpoint; confirming signs out", async () => {
    const user = await newUser(app, { fullName: "Linked Away" });
    const page = await rpPage();
    await signInOnPage(page, user);
    await page.goto(`${new URL(REDIRECT).origin}/elsewhere`);
    await page.click("#go");
    await page.waitForSelector("#logout");
    // Give an auto-submitting page time to act, were there one.
    await page.waitForLoadState("networkidle");
    expect(page.url()).toBe(`${app.url}/api/v1/oidc/logout`);
    expect(await keywardStatus(page)).toBe(200);

    await page.click("#logout");
    await page.waitForSelector("#message");
    expect(await page.textContent("#message")).toBe("You are signed out.");
    expect(await keywardStatus(page)).toBe(401);
    await page.context().close();
  });

  it("signs out without a question for a valid id_token_hint of this sign-in, and returns to the client", async () => {
    const user = await newUser(app, { fullName: "Hinted" });
    const page = await rpPage();
    await signInOnPage(page, user);
    const { url, verifier, state } = await authorizationUrl("openid");
    await page.goto(url);
    await page.click("#allow");
    await page.waitForURL(`${REDIRECT}**`);
    const tokens = await oc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });

    await page.goto(oc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: POST_LOGOUT, state: "bye" }).toString());
    await page.waitForURL(`${POST_LOGOUT}**`);
    expect(new URL(page.url()).searchParams.get("state")).toBe("bye");
    expect(await keywardStatus(page)).toBe(401);
    await page.context().close();
  });
});
