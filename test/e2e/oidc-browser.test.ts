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

const attr = (v: string) => v.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/** An HTML form posting every query parameter but `action` to `action` (a relying party's page). */
function formPage(query: URLSearchParams): string {
  const fields = [...query].filter(([k]) => k !== "action").map(([k, v]) => `<input type="hidden" name="${attr(k)}" value="${attr(v)}">`);
  return `<!doctype html><form method="post" action="${attr(query.get("action")!)}">${fields.join("")}<button id="go" type="submit">Continue</button></form>`;
}

/** Opens the relying party's page with a form that POSTs `fields` to `endpoint`, and submits it. */
async function postForm(page: Page, endpoint: string, fields: Record<string, string>): Promise<void> {
  const url = new URL(`${new URL(REDIRECT).origin}/form`);
  url.searchParams.set("action", endpoint);
  for (const [k, v] of Object.entries(fields)) url.searchParams.set(k, v);
  await page.goto(url.toString());
  await page.click("#go");
}

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
    // The relying party's own page with a form that POSTs its fields to Keyward (`action`), as a button.
    if (req.url?.startsWith("/form?")) return void res.setHeader("content-type", "text/html").end(formPage(new URL(req.url, "http://rp").searchParams));
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
    await page.click("#login-form button[type=submit]");
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
    await page.click("#login-form button[type=submit]");
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
    await page.click("#login-form button[type=submit]");
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
  await page.click("#login-form button[type=submit]");
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

// Issue 33: OpenID Connect Core §3.1.2.1 and RP-Initiated Logout §2 (both endpoints take POST).
describe("form POST to the authorization and end-session endpoints in Chromium", () => {
  /** The authorization request's parameters, as a relying party puts them in its form. */
  async function authorizationFields(scope: string, extra: Record<string, string> = {}) {
    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const nonce = oc.randomNonce();
    const fields = {
      client_id: client.clientId,
      response_type: "code",
      redirect_uri: REDIRECT,
      scope,
      state,
      nonce,
      code_challenge: await oc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      ...extra,
    };
    return { fields, verifier, state, nonce };
  }

  it("signs in from a cross-site form POST to the authorization endpoint, and the code redeems", async () => {
    const user = await newUser(app, { fullName: "Form Poster" });
    const page = await rpPage();
    const { fields, verifier, state, nonce } = await authorizationFields("openid email");
    const answer = page.waitForResponse((r) => r.url() === config.serverMetadata().authorization_endpoint && r.request().method() === "POST");
    await postForm(page, config.serverMetadata().authorization_endpoint!, fields);
    // The provider took the POST (not 404) and sent the browser on to sign in.
    expect((await answer).status()).toBe(303);
    await page.waitForURL(/\/login\?next=/);
    await page.fill("#email", user.email);
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", user.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("#allow");
    await page.click("#allow");
    await page.waitForURL(`${REDIRECT}**`);

    const tokens = await oc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    expect(tokens.claims()).toMatchObject({ sub: user.id, email: user.email, nonce });

    // The provider's session cookie is one a cross-site POST carries: SameSite=None, and Secure
    // (http://localhost is a secure context); the interaction cookies stay Lax.
    const cookies = await page.context().cookies(app.url);
    expect(cookies.find((c) => c.name === "kw_oidc_session")).toMatchObject({ sameSite: "None", secure: true, httpOnly: true });
    for (const c of cookies.filter((c) => c.name.startsWith("kw_oidc_interaction") || c.name.startsWith("kw_oidc_resume"))) expect(c.sameSite).toBe("Lax");

    // Signed in already: the next POST completes with no question (the interaction page sees the Keyward session).
    const again = await authorizationFields("openid email");
    await postForm(page, config.serverMetadata().authorization_endpoint!, again.fields);
    await page.waitForURL(`${REDIRECT}**`);
    const second = await oc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: again.verifier, expectedState: again.state, expectedNonce: again.nonce });
    expect(second.claims()!.sub).toBe(user.id);
    await page.context().close();
  });

  it("ends the session from a cross-site form POST to the end-session endpoint, after the user confirms", async () => {
    const user = await newUser(app, { fullName: "Post Logout" });
    const page = await rpPage();
    await signInOnPage(page, user);
    const { url, verifier, state } = await authorizationUrl("openid");
    await page.goto(url);
    await page.click("#allow");
    await page.waitForURL(`${REDIRECT}**`);
    const tokens = await oc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier, expectedState: state });

    const answer = page.waitForResponse((r) => r.url() === config.serverMetadata().end_session_endpoint && r.request().method() === "POST");
    await postForm(page, config.serverMetadata().end_session_endpoint!, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: POST_LOGOUT, state: "bye", client_id: client.clientId });
    expect((await answer).status()).toBe(200);
    // Another site's POST carries no Keyward cookie, so the hint cannot be matched to the sign-in: the user decides.
    await page.waitForSelector("#logout");
    await page.waitForLoadState("networkidle");
    expect(await keywardStatus(page)).toBe(200);
    await page.click("#logout");
    await page.waitForURL(`${POST_LOGOUT}**`);
    expect(new URL(page.url()).searchParams.get("state")).toBe("bye");
    expect(await keywardStatus(page)).toBe(401);
    await page.context().close();
  });

  it("does not sign a browser out silently on another site's bare POST to the end-session endpoint", async () => {
    const user = await newUser(app, { fullName: "Bare Post" });
    const page = await rpPage();
    await signInOnPage(page, user);
    await postForm(page, `${app.url}/api/v1/oidc/logout`, {});
    await page.waitForSelector("#logout");
    // Give an auto-submitting page time to act, were there one.
    await page.waitForLoadState("networkidle");
    expect(page.url()).toBe(`${app.url}/api/v1/oidc/logout`);
    expect(await keywardStatus(page)).toBe(200);
    await page.context().close();
  });
});
