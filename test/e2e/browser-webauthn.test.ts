import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser, pageWithAuthenticator } from "../helpers/browser.js";
import { watchPage } from "../helpers/web.js";
import { registerUser, PASSWORD } from "../factories/users.js";

/**
 * A real browser on the sign-in pages and the web app: headless Chromium with a CDP virtual
 * authenticator registers a passkey in the app (/account/security), signs out, signs in with the
 * passkey, and signs in with password + WebAuthn.
 */
let app: TestApp;
let browser: Browser;
let page: Page;
beforeAll(async () => {
  app = await startTestApp();
  browser = await launchBrowser();
  page = await pageWithAuthenticator(browser);
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe("hosted pages with a real browser", () => {
  it("enrolls a passkey in the web app, signs in with it, and uses it as a second factor", async () => {
    const { email } = await registerUser(app, { fullName: "Browser User" });
    const watched = await watchPage(page);
    const signedIn = () => page.getByRole("button", { name: "Browser User" }).waitFor();
    const signOut = async () => {
      await page.getByRole("button", { name: "Browser User" }).click();
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(`${app.url}/login`);
    };

    // Password sign-in (no MFA yet) comes back to the address that asked for it.
    await page.goto(`${app.url}/login?next=/account/security`);
    await page.fill("#email", email);
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", PASSWORD);
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(`${app.url}/account/security`);

    // Register a passkey through the app: the virtual authenticator answers the browser's prompt.
    await page.getByLabel("Name for the new passkey").fill("Virtual key");
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await page.getByRole("status").getByText("Passkey Virtual key added.").waitFor();
    expect(await page.getByRole("list", { name: "Backup codes" }).getByRole("listitem").count()).toBe(10);
    expect(await page.getByRole("list", { name: "Your passkeys" }).textContent()).toContain("Virtual key");

    // Sign out, then sign in with the passkey alone (usernameless): the app's home.
    await signOut();
    await page.click("#passkey");
    await page.waitForURL(`${app.url}/`);
    await signedIn();

    // Password sign-in now stops at the second step; the security key completes it.
    await signOut();
    await page.fill("#email", email);
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", PASSWORD);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("#mfa-step:not([hidden])");
    expect(await page.isVisible("#password-step")).toBe(false);
    // No session yet: the account page still wants a sign-in.
    const peek = await page.context().request.get(`${app.url}/api/v1/auth/me`);
    expect(peek.status()).toBe(401);
    await page.click("#mfa-webauthn");
    await page.waitForURL(`${app.url}/`);
    await signedIn();
    expect((await page.context().request.get(`${app.url}/api/v1/auth/me`)).status()).toBe(200);
    expect(watched.problems).toEqual([]);
  });

  it("shows a wrong password as an alert and serves pages with a strict CSP and no external assets", async () => {
    const res = await page.goto(`${app.url}/login`);
    const csp = res!.headers()["content-security-policy"]!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await res!.text();
    expect(html).not.toMatch(/(src|href)="https?:/);
    await page.fill("#email", "nobody@example.com");
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", "wrong password here");
    await page.click("#login-form button[type=submit]");
    await expect.poll(() => page.textContent("[role=alert]")).toBe("Invalid email or password");
  });

  it("sends an anonymous visitor of a signed-in page to the sign-in page", async () => {
    const fresh = await browser.newPage();
    await fresh.goto(`${app.url}/account/security`);
    expect(fresh.url()).toBe(`${app.url}/login?next=${encodeURIComponent("/account/security")}`);
    await fresh.close();
  });
});
