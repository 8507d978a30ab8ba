import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FORGOT_ACCEPTED, REGISTER_ACCEPTED } from "../../src/modules/auth/accounts.service.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { linkIn } from "../helpers/smtp-sink.js";
import { newOrg } from "../factories/orgs.js";
import { login, newUser, registerUser, uniqueEmail } from "../factories/users.js";

/**
 * Issue 14, build item 1: every emailed link lands on a page a person can use, in headless
 * Chromium against the real SMTP sink. Screenshots of the main pages go to docs/screenshots/.
 */
let app: TestApp;
let browser: Browser;
const SHOTS = fileURLToPath(new URL("../../docs/screenshots/", import.meta.url));
const NEW_PASSWORD = "a new and rather long passphrase";

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  app = await startTestApp();
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** A fresh browser profile (no cookies) with a desktop-sized window. */
async function freshPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 960, height: 760 } });
  return context.newPage();
}
/** The pages show only fixed text (names, addresses), so a rerun rewrites the same pictures. */
const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true, animations: "disabled", caret: "hide" });

/** The newest emailed link with `fragment` to `to`, after the outbox worker ran once. */
async function emailedLink(to: string, fragment: string): Promise<string> {
  await app.flushEmails();
  return linkIn(app.mail.lastWith(to, fragment), fragment);
}

/** How many times the visible page says `text` (what a person reads, hidden sections left out). */
const saidTimes = async (page: Page, text: string) => (await page.innerText("main")).split(text).length - 1;

/** Who the page's session belongs to (the web app's home, where sign-in lands, is the page). */
const signedInAs = async (page: Page) => (await (await page.context().request.get(`${app.url}/api/v1/auth/me`)).json()).data.user.email as string;
const me = async (email: string, password: string) => {
  const token = (await login(app, email, password)).body.data.token;
  return (await app.http.get("/api/v1/auth/me", { token })).body.data.user;
};

describe("home and sign-in", () => {
  it("says what Keyward is and links to sign in, register and the API documents, each of which answers", async () => {
    const page = await freshPage();
    const res = await page.goto(`${app.url}/`);
    expect(res!.status()).toBe(200);
    expect(await page.textContent(".lead")).toMatch(/sign-in for your team/);
    expect(await page.isVisible(".site-header .logo")).toBe(true);
    await shot(page, "home");
    const hrefs = await page.$$eval("main a", (as) => as.map((a) => a.getAttribute("href")!));
    expect(hrefs).toEqual(expect.arrayContaining(["/login", "/register", "/api/v1/openapi.json", "/graphql", "/.well-known/openid-configuration"]));
    expect((await page.request.get(`${app.url}/api/v1/openapi.json`)).status()).toBe(200);
    expect((await page.request.get(`${app.url}/.well-known/openid-configuration`)).status()).toBe(200);
    expect((await page.request.get(`${app.url}/graphql`, { headers: { accept: "text/html" } })).status()).not.toBe(404);

    await page.click("#go-login");
    await page.waitForURL(`${app.url}/login`);
    await shot(page, "login");
    // The sign-in page leads to registering and to a forgotten password; the header leads home.
    expect(await page.getAttribute("#register-link", "href")).toBe("/register");
    expect(await page.getAttribute("#forgot-link", "href")).toBe("/forgot-password");
    await page.click("#register-link");
    await page.waitForURL(`${app.url}/register`);
    await page.click(".site-header .brand");
    await page.waitForURL(`${app.url}/`);
    await page.context().close();
  });

  it("comes back only to a same-site path after signing in", async () => {
    const { email, password } = await registerUser(app);
    for (const [next, landing] of [
      ["//evil.example/x", "/"],
      ["/\\evil.example", "/"],
      ["https://evil.example/", "/"],
      ["/account/security", "/account/security"],
    ]) {
      const page = await freshPage();
      await page.goto(`${app.url}/login?next=${encodeURIComponent(next!)}`);
      await page.fill("#email", email);
      await page.click("#login-form button[type=submit]");
      await page.fill("#password", password);
      await page.click("#login-form button[type=submit]");
      await page.waitForURL(`${app.url}${landing}`);
      await page.context().close();
    }
  });
});

describe("register and verify the address", () => {
  it("registers, emails a link, and verifies only when the person presses the button (a GET spends nothing)", async () => {
    const email = "new.comer@example.com"; // fixed: it shows in the committed screenshot
    const page = await freshPage();
    await page.goto(`${app.url}/register`);
    await page.fill("#full-name", "New Comer");
    await page.fill("#email", email);
    await page.fill("#password", NEW_PASSWORD);
    await page.fill("#password-confirm", NEW_PASSWORD);
    await shot(page, "register");
    await page.fill("#password-confirm", NEW_PASSWORD + "x");
    await page.click("#register-form button[type=submit]");
    await expect.poll(() => page.textContent("#alert")).toBe("The two passwords do not match.");
    expect(await page.getAttribute("#password-confirm", "aria-invalid")).toBe("true");
    await page.fill("#password-confirm", NEW_PASSWORD);
    await page.click("#register-form button[type=submit]");
    await page.waitForSelector("#register-done:not([hidden])");
    expect(await page.textContent("#register-done [data-message]")).toBe(REGISTER_ACCEPTED);
    expect(await page.isHidden("#register-form")).toBe(true);

    const link = await emailedLink(email, "/verify-email?token=");
    expect(link.startsWith(`${app.url}/verify-email?token=`)).toBe(true);
    // A mail scanner fetching the link, twice: the page answers, the token stays unspent.
    for (let i = 0; i < 2; i++) {
      const scanned = await fetch(link);
      expect(scanned.status).toBe(200);
      expect(scanned.headers.get("content-type")).toMatch(/^text\/html/);
      expect(scanned.headers.get("referrer-policy")).toBe("no-referrer");
    }
    expect((await me(email, NEW_PASSWORD)).email_verified).toBe(false);

    await page.goto(link);
    expect(await page.textContent("h1")).toBe("Confirm your email address");
    await shot(page, "verify-email");
    await page.click("#confirm-email");
    await page.waitForSelector("#verify-done:not([hidden])");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("verify-done");
    expect((await me(email, NEW_PASSWORD)).email_verified).toBe(true);

    // The spent link says so and offers a new one, with the same answer for any address.
    await page.goto(link);
    await page.click("#confirm-email");
    await page.waitForSelector("#verify-invalid:not([hidden])");
    expect(await saidTimes(page, "invalid, has expired or was already used")).toBe(1);
    await page.fill("#resend-email", email);
    await page.click("#resend-form button[type=submit]");
    await page.waitForSelector("#resend-done:not([hidden])");
    expect(await page.textContent("#resend-done [data-message]")).toMatch(/^If this address belongs to an unverified account/);
    await page.context().close();
  });
});

describe("forgotten password", () => {
  it("answers the same for any address, emails a link, sets the new password, and signs in with it", async () => {
    const { email, password } = await registerUser(app);
    const page = await freshPage();
    await page.goto(`${app.url}/login`);
    await page.click("#forgot-link");
    await page.waitForURL(`${app.url}/forgot-password`);
    await shot(page, "forgot-password");

    // An address without an account gets the very same answer (no account enumeration).
    await page.fill("#email", uniqueEmail("nobody"));
    await page.click("#forgot-form button[type=submit]");
    await page.waitForSelector("#forgot-done:not([hidden])");
    const unknownAnswer = await page.textContent("#forgot-done");
    await page.reload();
    await page.fill("#email", email);
    await page.press("#email", "Enter");
    await page.waitForSelector("#forgot-done:not([hidden])");
    expect(await page.textContent("#forgot-done [data-message]")).toBe(FORGOT_ACCEPTED);
    expect(await page.textContent("#forgot-done")).toBe(unknownAnswer);

    const link = await emailedLink(email, "/reset-password?token=");
    const res = await page.goto(link);
    expect(res!.headers()["referrer-policy"]).toBe("no-referrer");
    await shot(page, "reset-password");
    await page.fill("#password", "short");
    await page.fill("#password-confirm", "short");
    await page.click("#reset-form button[type=submit]");
    await expect.poll(() => page.textContent("#alert")).toBe("Password must be at least 8 characters.");
    await page.fill("#password", NEW_PASSWORD);
    await page.fill("#password-confirm", NEW_PASSWORD);
    await page.click("#reset-form button[type=submit]");
    await page.waitForSelector("#reset-done:not([hidden])");
    expect(await page.textContent("#reset-done [data-message]")).toMatch(/password was reset/);

    await page.click("#reset-sign-in");
    await page.waitForURL(`${app.url}/login`);
    await page.fill("#email", email);
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", NEW_PASSWORD);
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(`${app.url}/`);
    expect(await signedInAs(page)).toBe(email);
    expect((await login(app, email, password)).status).toBe(401);

    // The link is spent: the page says so and leads to a new one.
    await page.goto(link);
    await page.fill("#password", NEW_PASSWORD);
    await page.fill("#password-confirm", NEW_PASSWORD);
    await page.click("#reset-form button[type=submit]");
    await page.waitForSelector("#reset-invalid:not([hidden])");
    expect(await page.getAttribute("#reset-invalid a", "href")).toBe("/forgot-password");
    expect(await saidTimes(page, "invalid, has expired or was already used")).toBe(1);
    await page.context().close();
  });
});

describe("invitations", () => {
  const members = async (orgId: string, token: string) =>
    (await app.http.get(`/api/v1/organizations/${orgId}/members`, { token })).body.data.members as Array<{ user_id: string; role: string }>;

  it("a new person opens the emailed invitation, creates the account on the page, and is a member", async () => {
    const owner = await newUser(app, { fullName: "Olive Owner" });
    const org = await newOrg(app, owner, "Acme Robotics");
    const email = "ivy.invitee@example.com"; // fixed: it shows in the committed screenshot
    expect((await app.http.post(`/api/v1/organizations/${org.id}/invites`, { email, role: "member" }, { token: owner.token })).status).toBe(201);
    const link = await emailedLink(email, "/invite?token=");

    const page = await freshPage();
    const res = await page.goto(link);
    expect(res!.status()).toBe(200);
    expect(res!.headers()["referrer-policy"]).toBe("no-referrer");
    expect(await page.textContent("#invite-org")).toBe("Acme Robotics");
    expect(await page.textContent("#invite-role")).toBe("member");
    expect(await page.textContent("#invite-email")).toBe(email);
    await shot(page, "invite");
    await page.fill("#full-name", "Ivy Invitee");
    await page.fill("#password", NEW_PASSWORD);
    await page.fill("#password-confirm", NEW_PASSWORD);
    await page.click("#invite-register");
    await page.waitForSelector("#invite-done:not([hidden])");
    expect(await page.textContent("#invite-done")).toContain("You are now a member of Acme Robotics");

    // Signed in by accepting: the web app opens without another sign-in.
    await page.click("#invite-continue");
    await page.waitForURL(`${app.url}/`);
    expect(await signedInAs(page)).toBe(email);
    const user = await me(email, NEW_PASSWORD);
    expect(user.email_verified).toBe(true);
    expect((await members(org.id, owner.token)).find((m) => m.user_id === user.id)?.role).toBe("member");
    await page.context().close();
  });

  it("a new person registers first, signs in, comes back to the invitation and accepts it", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner, "Globex Ops");
    const email = uniqueEmail("roundtrip");
    await app.http.post(`/api/v1/organizations/${org.id}/invites`, { email, role: "admin" }, { token: owner.token });
    const link = await emailedLink(email, "/invite?token=");
    const back = link.slice(app.url.length);

    const page = await freshPage();
    await page.goto(link);
    await page.click("#invite-sign-in");
    await page.waitForURL(`${app.url}/login?next=${encodeURIComponent(back)}`);
    // Sign-in page → register, keeping the way back.
    await page.click("#register-link");
    await page.waitForURL(`${app.url}/register?next=${encodeURIComponent(back)}`);
    await page.fill("#email", email);
    await page.fill("#password", NEW_PASSWORD);
    await page.fill("#password-confirm", NEW_PASSWORD);
    await page.click("#register-form button[type=submit]");
    await page.waitForSelector("#register-done:not([hidden])");
    await page.click("#register-sign-in");
    await page.waitForURL(`${app.url}/login?next=${encodeURIComponent(back)}`);
    await page.fill("#email", email);
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", NEW_PASSWORD);
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(link);

    expect(await page.textContent("#accept-form")).toContain(`Signed in as ${email}`);
    await page.click("#accept-invite");
    await page.waitForSelector("#invite-done:not([hidden])");
    const user = await me(email, NEW_PASSWORD);
    expect((await members(org.id, owner.token)).find((m) => m.user_id === user.id)?.role).toBe("admin");
    // Accepting through the emailed link proved the address.
    expect(user.email_verified).toBe(true);

    // Used once: the link now says so, as an HTML page.
    const again = await page.goto(link);
    expect(again!.status()).toBe(404);
    expect(await page.textContent("#invite-error")).toMatch(/already used/);
    await page.context().close();
  });

  it("someone signed in with another account is told so and can sign out", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const other = await newUser(app);
    const email = uniqueEmail("elsewhere");
    await app.http.post(`/api/v1/organizations/${org.id}/invites`, { email, role: "guest" }, { token: owner.token });
    const link = await emailedLink(email, "/invite?token=");
    const page = await freshPage();
    await page.goto(`${app.url}/login`);
    await page.fill("#email", other.email);
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", other.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(`${app.url}/`);
    await page.goto(link);
    expect(await page.textContent("#wrong-account")).toContain(other.email);
    await page.click("#flow-sign-out");
    await page.waitForSelector("#invite-register-form");
    await page.context().close();
  });
});

describe("account activation", () => {
  it("a person an organization added chooses a password on the activation page and signs in", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner, "Initech");
    const email = "pat.provisioned@example.com"; // fixed: it shows in the committed screenshot
    await app.http.post(`/api/v1/organizations/${org.id}/members`, { email, role: "member", full_name: "Pat Provisioned" }, { token: owner.token });
    const link = await emailedLink(email, "/activate?code=");
    const page = await freshPage();
    await page.goto(link);
    expect(await page.textContent("main")).toContain("Initech");
    expect(await page.isVisible("#managed-notice")).toBe(true);
    await shot(page, "activate");
    await page.fill("#password", NEW_PASSWORD);
    await page.fill("#password-confirm", NEW_PASSWORD);
    await page.click("#activate-form button[type=submit]");
    await page.waitForSelector("#activate-done:not([hidden])");
    await page.click("#activate-sign-in");
    await page.waitForURL(`${app.url}/login`);
    await page.fill("#email", email);
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", NEW_PASSWORD);
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(`${app.url}/`);
    expect(await signedInAs(page)).toBe(email);
    await page.context().close();
  });
});

describe("every emailed link lands on a page", () => {
  it("answers 200 HTML (never a JSON 404) for the verify, reset, forgot, activate and invite links the emails carry", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner);
    const fresh = uniqueEmail("links");
    await app.http.post("/api/v1/auth/register", { email: fresh, password: NEW_PASSWORD });
    // Registering an address that has an account emails its owner a /forgot-password link.
    await app.http.post("/api/v1/auth/register", { email: owner.email, password: NEW_PASSWORD });
    await app.http.post("/api/v1/auth/forgot-password", { email: owner.email });
    const provisioned = uniqueEmail("links-new");
    await app.http.post(`/api/v1/organizations/${org.id}/members`, { email: provisioned, role: "member" }, { token: owner.token });
    const invited = uniqueEmail("links-inv");
    await app.http.post(`/api/v1/organizations/${org.id}/invites`, { email: invited, role: "member" }, { token: owner.token });
    await app.flushEmails();
    const links = [
      linkIn(app.mail.lastWith(fresh, "/verify-email"), "/verify-email?token="),
      linkIn(app.mail.lastWith(owner.email, "/reset-password"), "/reset-password?token="),
      linkIn(app.mail.lastWith(owner.email, "/forgot-password"), "/forgot-password"),
      linkIn(app.mail.lastWith(provisioned, "/activate"), "/activate?code="),
      linkIn(app.mail.lastWith(invited, "/invite"), "/invite?token="),
    ];
    for (const link of links) {
      const res = await fetch(link);
      expect(res.status, link).toBe(200);
      expect(res.headers.get("content-type"), link).toMatch(/^text\/html/);
      expect(res.headers.get("content-security-policy"), link).toContain("script-src 'self'");
      expect(await res.text()).toContain('<script src="/assets/flows.js" defer></script>');
    }
    // A made-up or incomplete link is still a page that says what happened.
    for (const path of ["/verify-email", "/reset-password", "/activate", "/invite", "/invite?token=nope", "/verify-email?token=nope"]) {
      const res = await fetch(app.url + path);
      expect(res.headers.get("content-type"), path).toMatch(/^text\/html/);
      expect(await res.text(), path).toContain("</main>");
    }
  });

  it("reads well on a phone: no sideways scrolling, every field labelled", async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true });
    const page = await context.newPage();
    for (const path of ["/", "/login", "/register", "/forgot-password", "/verify-email?token=x", "/reset-password?token=x", "/activate?code=x"]) {
      await page.goto(app.url + path);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(360);
      const unlabelled = await page.$$eval("input:not([type=hidden])", (inputs) =>
        inputs.filter((i) => !(i as HTMLInputElement).labels?.length).map((i) => i.outerHTML),
      );
      expect(unlabelled, path).toEqual([]);
    }
    await context.close();
  });
});
