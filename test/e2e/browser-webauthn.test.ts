import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser, pageWithAuthenticator } from "../helpers/browser.js";
import { registerUser, PASSWORD } from "../factories/users.js";

/**
 * A real browser on the hosted pages: headless Chromium with a CDP virtual authenticator
 * registers a passkey, signs out, signs in with the passkey, and signs in with password + WebAuthn.
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
  it("enrolls a passkey, signs in with it, and uses it as a second factor", async () => {
    const { email } = await registerUser(app, { fullName: "Browser User" });

    // Password sign-in (no MFA yet) lands on the account page.
    await page.goto(`${app.url}/login?next=/account/security`);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(`${app.url}/account/security`);

    // Register a passkey through the page: the virtual authenticator answers.
    await page.fill("#passkey-name", "Virtual key");
    await page.click("#add-passkey");
    await expect.poll(() => page.textContent("#status")).toBe("Passkey added.");
    expect(await page.isVisible("#backup-codes")).toBe(true);
    expect((await page.textContent("#backup-code-list"))!.trim().split("\n")).toHaveLength(10);
    expect(await page.textContent("#passkeys")).toContain("Virtual key");

    // Sign out, then sign in with the passkey alone (usernameless).
    await page.goto(`${app.url}/account`);
    await page.click("#sign-out");
    await page.waitForURL(`${app.url}/login`);
    await page.click("#passkey");
    await page.waitForURL(`${app.url}/account`);
    expect(await page.textContent("#who")).toBe(email);

    // Password sign-in now stops at the second step; the security key completes it.
    await page.click("#sign-out");
    await page.waitForURL(`${app.url}/login`);
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("#mfa-step:not([hidden])");
    expect(await page.isVisible("#password-step")).toBe(false);
    // No session yet: the account page still wants a sign-in.
    const peek = await page.context().request.get(`${app.url}/api/v1/auth/me`);
    expect(peek.status()).toBe(401);
    await page.click("#mfa-webauthn");
    await page.waitForURL(`${app.url}/account`);
    expect(await page.textContent("#who")).toBe(email);
  });

  it("shows a wrong password as an alert and serves pages with a strict CSP and no external assets", async () => {
    const res = await page.goto(`${app.url}/login`);
    const csp = res!.headers()["content-security-policy"]!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await res!.text();
    expect(html).not.toMatch(/(src|href)="https?:/);
    await page.fill("#email", "nobody@example.com");
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
