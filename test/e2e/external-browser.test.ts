import { createServer } from "node:http";
import * as oc from "openid-client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import type { TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { externalIdpSuite, githubAccount, googleAccount, type FakeIdps } from "../helpers/external-idp.js";
import { discover } from "../helpers/oidc-rp.js";
import { enrollTotp } from "../factories/mfa.js";
import { registerClient } from "../factories/oidc.js";
import { orgWithRoles } from "../factories/orgs.js";
import { newUser, uniqueEmail } from "../factories/users.js";

/**
 * The hosted pages in headless Chromium with GitHub and Google stand-ins on another host: the
 * provider sends the browser back cross-site, so the flow's binding cookie and the session and
 * second-factor cookies must work the way a real browser applies SameSite.
 */
const suite = externalIdpSuite();
let app: TestApp;
let idps: FakeIdps;
let browser: Browser;

beforeAll(async () => {
  ({ app, idps } = suite);
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

const freshPage = async (): Promise<Page> => (await browser.newContext()).newPage();
/** Who the page's session belongs to, read through the REST API with its cookie. */
const whoIs = async (page: Page) => (await (await page.context().request.get(`${app.url}/api/v1/auth/me`)).json()).data.user.email as string;

describe("external sign-in in Chromium", () => {
  it("signs up with GitHub from the sign-in page and lands signed in", async () => {
    const email = uniqueEmail("chromium");
    idps.github.signIn(githubAccount(email));
    const page = await freshPage();
    await page.goto(`${app.url}/login`);
    await page.click("button[data-provider=github]");
    // The web app's home.
    await page.waitForURL(`${app.url}/`);
    await page.getByRole("heading", { level: 1, name: /^Welcome/ }).waitFor();
    expect(await whoIs(page)).toBe(email);
    await page.goto(`${app.url}/account/linked`);
    await page.locator("#linked li").first().waitFor();
    expect(await page.locator("#linked li").allTextContents()).toEqual([expect.stringContaining("GitHub: octo")]);
    await page.context().close();
  });

  it("links Google from the web app's account screen, then stops the MFA user at the second step after a Google sign-in", async () => {
    const user = await newUser(app);
    const { secret } = await enrollTotp(app, user);
    idps.google.signIn(googleAccount(user.email));
    const linkPage = await freshPage();
    await linkPage.goto(`${app.url}/login`);
    await linkPage.fill("#email", user.email);
    await linkPage.click("#login-form button[type=submit]");
    await linkPage.fill("#password", user.password);
    await linkPage.click("#login-form button[type=submit]");
    await linkPage.waitForSelector("#mfa-step:not([hidden])");
    await linkPage.fill("#mfa-code", totpCode(secret, totpStep(app.clock.now())));
    await linkPage.click("#mfa-code-form button[type=submit]");
    await linkPage.waitForURL(`${app.url}/`);
    await linkPage.goto(`${app.url}/account/linked`);
    await linkPage.getByRole("button", { name: "Link Google" }).click();
    await linkPage.getByRole("status").getByText("Google is linked: you can sign in with it.").waitFor();
    expect(linkPage.url()).toBe(`${app.url}/account/linked`);
    await linkPage.context().close();

    app.clock.advance(30);
    const page = await freshPage();
    await page.goto(`${app.url}/login`);
    await page.click("button[data-provider=google]");
    await page.waitForURL(/\/login\?mfa=/);
    await page.waitForSelector("#mfa-step:not([hidden])");
    await page.fill("#mfa-code", totpCode(secret, totpStep(app.clock.now())));
    await page.click("#mfa-code-form button[type=submit]");
    await page.waitForURL(`${app.url}/`);
    expect(await whoIs(page)).toBe(user.email);
    await page.context().close();
  });

  it("signs in to a relying party of Keyward's OIDC provider with GitHub", async () => {
    const rp = createServer((_req, res) => res.end("client callback"));
    await new Promise<void>((resolve) => rp.listen(0, "127.0.0.1", resolve));
    const redirect = `http://127.0.0.1:${(rp.address() as { port: number }).port}/cb`;
    try {
      const { org, admin } = await orgWithRoles(app);
      const client = await registerClient(app, org.id, admin, { name: "Wiki", redirect_uris: [redirect] });
      const config = await discover(app.url, client);
      const verifier = oc.randomPKCECodeVerifier();
      const url = oc.buildAuthorizationUrl(config, { redirect_uri: redirect, scope: "openid email", code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });

      const email = uniqueEmail("rp");
      idps.github.signIn(githubAccount(email));
      const page = await freshPage();
      await page.goto(url.toString());
      await page.waitForURL(/\/login\?next=/);
      await page.click("button[data-provider=github]");
      await page.waitForSelector("#allow");
      await page.click("#allow");
      await page.waitForURL(`${redirect}**`);
      const tokens = await oc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: verifier });
      expect(tokens.claims()).toMatchObject({ email, email_verified: true });
      await page.context().close();
    } finally {
      rp.close();
    }
  });

  it("shows why a sign-in was refused, in its own words only", async () => {
    const owner = await newUser(app);
    idps.github.signIn(githubAccount(owner.email));
    const page = await freshPage();
    await page.goto(`${app.url}/login`);
    await page.click("button[data-provider=github]");
    await page.waitForURL(/\/login\?error=/);
    await expect.poll(() => page.textContent("#alert")).toMatch(/already exists.*then link the provider/);
    // A crafted link cannot put its own text on the page.
    await page.goto(`${app.url}/login?error=${encodeURIComponent("Call +1 555 0100 to unlock your account")}&error_type=NOPE`);
    expect(await page.textContent("#alert")).toBe("The sign-in could not be completed. Try again.");
    await page.context().close();
  });
});
