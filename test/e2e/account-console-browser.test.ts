import * as oc from "openid-client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import type { TestApp } from "../helpers/app.js";
import { launchBrowser, pageWithAuthenticator } from "../helpers/browser.js";
import { shot } from "../helpers/web.js";
import { externalIdpSuite, githubAccount, type FakeIdps } from "../helpers/external-idp.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { discover } from "../helpers/oidc-rp.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";
import { REDIRECT, registerClient } from "../factories/oidc.js";
import { invite, newOrg } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../factories/ssh.js";
import { login, newUser, uniqueEmail, type TestUser } from "../factories/users.js";

/**
 * The account console in headless Chromium: every section used once through the page, each
 * effect checked through the API. Screenshots of the console (desktop and phone width) are saved
 * to docs/screenshots/ for the README.
 */
const suite = externalIdpSuite();
let app: TestApp;
let idps: FakeIdps;
let browser: Browser;
let page: Page;
let user: TestUser;
let owner: TestUser;
let orgs: { joined: { id: string; name: string }; declined: { id: string; name: string } };
let consentClient: string;
let keyId: string;

beforeAll(async () => {
  ({ app, idps } = suite);
  browser = await launchBrowser();
  page = await pageWithAuthenticator(browser);
  page.on("dialog", (d) => void d.accept());

  user = await newUser(app, { fullName: "Ada Lovelace" });
  owner = await newUser(app, { fullName: "Grace Hopper" });
  orgs = { joined: await newOrg(app, owner, "Analytical Engines"), declined: await newOrg(app, owner, "Difference Ltd") };
  await invite(app, orgs.joined.id, owner, user.email, "member");
  await invite(app, orgs.declined.id, owner, user.email, "admin");
  await createCa(app, orgs.joined.id, owner);
  keyId = (await addVerifiedKey(app, user)).id;

  // An application the user allowed (through a browser of its own: one more session).
  const client = await registerClient(app, orgs.joined.id, owner, { name: "Team Wiki" });
  consentClient = client.clientId;
  const agent = new OidcAgent(app.url);
  await agent.signIn(user.email, user.password);
  const config = await discover(app.url, client);
  const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid email profile", code_challenge: await oc.calculatePKCECodeChallenge(oc.randomPKCECodeVerifier()), code_challenge_method: "S256" });
  expect((await agent.follow(url.toString(), REDIRECT)).url).toContain(REDIRECT);
}, 120_000);
afterAll(() => browser?.close());

const api = (path: string, token = user.token) => app.http.get(`/api/v1${path}`, { token });
const fromPage = async (path: string) => (await page.context().request.get(`${app.url}/api/v1${path}`)).json();
const status = () => page.textContent("#status");
const alert = () => page.textContent("#alert");

describe("the account console in Chromium", () => {
  it("signs in and shows every section, labelled and reachable from the nav, under a strict CSP", async () => {
    await page.goto(`${app.url}/login?next=/account`);
    await page.fill("#email", user.email);
    await page.fill("#password", user.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(`${app.url}/account`);
    expect(await page.textContent("#who")).toBe(user.email);

    const res = await page.reload();
    const csp = res!.headers()["content-security-policy"]!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await res!.text();
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/<script>|style="/);

    const sections = await page.$$eval("section.console-section", (all) => all.map((s) => ({ id: s.id, heading: s.querySelector("h2")?.textContent })));
    expect(sections.map((s) => s.id)).toEqual(["profile", "password", "two-step", "sessions", "linked-accounts", "organizations", "ssh", "consents"]);
    const nav = await page.$$eval(".console-nav a[href^='#']", (links) => links.map((a) => a.getAttribute("href")));
    expect(nav).toEqual(sections.map((s) => `#${s.id}`));
    // Every field has a label; every button has a name.
    const unlabelled = await page.$$eval(".console input:not([type=hidden])", (inputs) => inputs.filter((i) => !(i as HTMLInputElement).labels?.length && !i.getAttribute("aria-label")).map((i) => i.id));
    expect(unlabelled).toEqual([]);
    const nameless = await page.$$eval(".console button", (buttons) => buttons.filter((b) => !(b.getAttribute("aria-label") || b.textContent?.trim())).length);
    expect(nameless).toBe(0);
    // Keyboard: a nav link opened with Enter goes to its section.
    await page.focus(".console-nav a[href='#sessions']");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.evaluate(() => location.hash)).toBe("#sessions");
  });

  it("links GitHub", async () => {
    idps.github.signIn(githubAccount(user.email));
    await page.click("#linked-accounts button[data-provider=github]");
    await page.waitForURL(`${app.url}/account?linked=github`);
    expect(await status()).toContain("GitHub is linked");
    expect((await api("/auth/external/linked-accounts")).body.data.linked_accounts).toEqual([expect.objectContaining({ provider: "github" })]);
    expect(await page.locator("#linked li").allTextContents()).toEqual([expect.stringContaining("GitHub: octo")]);
  });

  it("accepts one invitation and declines the other", async () => {
    await page.click(`[data-action=invite-accept][data-name="${orgs.joined.name}"]`);
    await expect.poll(status).toBe(`You joined ${orgs.joined.name} as member.`);
    await page.click(`[data-action=invite-decline][data-name="${orgs.declined.name}"]`);
    await expect.poll(status).toBe(`You declined the invitation to ${orgs.declined.name}.`);
    const mine = (await api("/users/me/organizations")).body.data.organizations.map((o: { id: string }) => o.id);
    expect(mine).toContain(orgs.joined.id);
    expect(mine).not.toContain(orgs.declined.id);
    expect((await api("/users/me/invites")).body.data.invites).toEqual([]);
    expect(await page.textContent("#org-list")).toContain(orgs.joined.name);
  });

  it("changes the name", async () => {
    await page.fill("#full-name", "Ada King");
    await page.click("form[data-form=profile] button[type=submit]");
    await expect.poll(status).toBe("Name saved.");
    expect((await api("/users/me")).body.data.user.full_name).toBe("Ada King");
  });

  it("enrolls an authenticator app from its QR code, with a code computed here", async () => {
    await page.click("#totp-start");
    await page.waitForSelector("#totp-setup:not([hidden])");
    expect(await page.getAttribute("#totp-qr", "src")).toMatch(/^data:image\/png;base64,/);
    expect(await page.getAttribute("#totp-uri", "href")).toMatch(/^otpauth:\/\/totp\//);
    const secret = (await page.textContent("#totp-secret"))!;
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("totp-code");
    await page.fill("#totp-code", "000000");
    await page.click("form[data-form=totp-confirm] button[type=submit]");
    await expect.poll(alert).toMatch(/code/i);
    await page.fill("#totp-code", totpCode(secret, totpStep(app.clock.now())));
    await page.click("form[data-form=totp-confirm] button[type=submit]");
    await expect.poll(status).toMatch(/^Authenticator app turned on/);
    expect((await page.textContent("#backup-code-list"))!.trim().split("\n")).toHaveLength(10);
    expect((await api("/auth/mfa/status")).body.data).toMatchObject({ totp_enabled: true, backup_codes_remaining: 10 });
    await page.click("[data-action=backup-done]");
    expect(await page.isVisible("#backup-codes")).toBe(false);
  });

  it("adds a passkey with the virtual authenticator and renames it", async () => {
    await page.fill("#passkey-name", "Virtual key");
    await page.click("#add-passkey");
    await expect.poll(status).toBe("Passkey added.");
    const [credential] = (await api("/auth/webauthn/credentials")).body.data.credentials;
    expect(credential.name).toBe("Virtual key");
    await page.click(`[data-action=toggle][data-target="rename-${credential.id}"]`);
    await page.fill(`#rename-${credential.id}-name`, "Laptop key");
    await page.press(`#rename-${credential.id}-name`, "Enter");
    await expect.poll(status).toBe("Passkey renamed to Laptop key.");
    expect((await api("/auth/webauthn/credentials")).body.data.credentials[0].name).toBe("Laptop key");
  });

  it("regenerates backup codes: the new ones work, an old one does not", async () => {
    const before = (await api("/auth/mfa/status")).body.data.backup_codes_remaining;
    expect(before).toBe(10);
    await page.fill("#backup-password", "wrong password");
    await page.click("form[data-form=backup-regenerate] button[type=submit]");
    await expect.poll(alert).toBe("The current password is incorrect");
    await page.fill("#backup-password", user.password);
    await page.click("form[data-form=backup-regenerate] button[type=submit]");
    await expect.poll(status).toMatch(/^New backup codes made/);
    const codes = (await page.textContent("#backup-code-list"))!.trim().split("\n");
    expect(codes).toHaveLength(10);
    const mfa = (await login(app, user.email, user.password)).body.data;
    expect(mfa.requires_mfa).toBe(true);
    const used = await app.http.post("/api/v1/auth/mfa/backup-code", { mfa_token: mfa.mfa_token, code: codes[0] });
    expect(used.status, used.text).toBe(200);
    await page.click("[data-action=backup-done]");
  });

  it("lists recent certificates, and saves screenshots at desktop and phone width", async () => {
    await grantPrincipal(app, orgs.joined.id, owner, user, "deploy");
    const signed = await app.http.post("/api/v1/ssh/sign", { key_id: keyId }, { token: user.token });
    expect(signed.status, signed.text).toBe(201);
    const [cert] = (await api("/ssh/certificates")).body.data.certificates;
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${app.url}/account`);
    const row = await page.textContent("#cert-table tbody tr");
    expect(row).toContain(cert.serial);
    expect(row).toContain("deploy");
    await shot(page, "account-console-desktop");

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    await phone.addCookies(await page.context().cookies());
    const small = await phone.newPage();
    await small.goto(`${app.url}/account`);
    expect(await small.textContent("#who")).toBe(user.email);
    // Readable on a phone: nothing wider than the screen, the nav above the sections.
    expect(await small.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    const [nav, first] = await Promise.all([small.locator(".console-nav").boundingBox(), small.locator("#profile").boundingBox()]);
    expect(nav!.y).toBeLessThan(first!.y);
    await shot(small, "account-console-phone", {});
    await phone.close();
  });

  it("removes an SSH key", async () => {
    await page.click(`[data-action=ssh-key-remove][data-id="${keyId}"]`);
    await expect.poll(status).toMatch(/^SSH key .* removed\.$/);
    expect((await api("/ssh/keys")).body.data.keys).toEqual([]);
  });

  it("withdraws an application's consent", async () => {
    await page.click(`[data-action=consent-withdraw][data-id="${consentClient}"]`);
    await expect.poll(status).toBe("Team Wiki no longer has access to your account.");
    expect((await api("/users/me/consents")).body.data.consents).toEqual([]);
  });

  it("signs out one other session, then all the others", async () => {
    const sessions = (await api("/auth/sessions")).body.data.sessions as Array<{ id: string; current: boolean }>;
    const bearer = sessions.find((s) => s.current)!;
    expect(sessions.length).toBeGreaterThanOrEqual(3);
    await page.click(`[data-action=session-revoke][data-id="${bearer.id}"]`);
    await expect.poll(status).toMatch(/^Signed out /);
    expect((await api("/auth/me")).status).toBe(401);

    const spare = (await login(app, user.email, user.password)).body.data.mfa_token as string;
    expect(spare).toBeTruthy();
    await page.click("[data-action=sessions-revoke-others]");
    await expect.poll(status).toMatch(/other sessions? signed out\.$/);
    const left = await fromPage("/auth/sessions");
    expect(left.data.sessions).toEqual([expect.objectContaining({ current: true })]);
    expect(await page.locator("#session-list li").count()).toBe(1);
  });

  it("changes the password: the old one is refused, the new one accepted", async () => {
    const next = "a new and longer passphrase";
    await page.fill("#current-password", user.password);
    await page.fill("#new-password", next);
    await page.fill("#new-password-confirm", next);
    await page.click("form[data-form=password] button[type=submit]");
    await expect.poll(status).toMatch(/^Password changed/);
    expect((await login(app, user.email, user.password)).status).toBe(401);
    expect((await login(app, user.email, next)).body.data.requires_mfa).toBe(true);
    user.password = next;
  });

  it("changes the email address once the link sent to the new one is opened", async () => {
    const next = uniqueEmail("ada.king");
    await page.fill("#new-email", next);
    await page.fill("#email-password", user.password);
    await page.click("form[data-form=email] button[type=submit]");
    await expect.poll(status).toContain(`We sent a link to ${next}`);
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.lastWith(next, "/verify-email?token="), "/verify-email"));
    expect((await app.http.post("/api/v1/auth/verify-email", { token })).status).toBe(200);
    expect((await fromPage("/users/me")).data.user).toMatchObject({ email: next, email_verified: true });
  });

  it("signs out everywhere", async () => {
    await page.click("[data-action=sign-out-everywhere]");
    await page.waitForURL(`${app.url}/login`);
    expect((await page.context().request.get(`${app.url}/api/v1/auth/me`)).status()).toBe(401);
    const fresh = await browser.newPage();
    await fresh.goto(`${app.url}/account/security`);
    expect(fresh.url()).toBe(`${app.url}/login?next=${encodeURIComponent("/account/security")}`);
    await fresh.close();
  });
});
