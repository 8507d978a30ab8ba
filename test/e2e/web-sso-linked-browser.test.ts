import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cheapPasswordHasher, startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { startIdp, type RealIdp } from "../helpers/oidc-idp.js";
import { checked, stopAll } from "../helpers/sso-web.js";
import { axeViolations, signInThroughPage, tabTo, watchPage } from "../helpers/web.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * Account → Linked accounts → Single sign-on (issue 35) in headless Chromium, with a REAL OpenID
 * provider (../shared/tools/oidc-idp): a member finds their organization's connection, links it
 * with the keyboard alone (the mutation sets the binding cookie, the browser goes to the provider's
 * login form and comes back to /account?linked=sso, shown as a success notice), and unlinks it
 * after a confirmation dialog. axe-core finds nothing at any impact; a phone never scrolls sideways.
 */
let app: TestApp;
let idp: RealIdp;
let browser: Browser;
let owner: TestUser;
let linda: TestUser;
let org: { id: string; slug: string; name: string };
let page: Page;
let watched: { problems: string[] };
const SLOW = 180_000;
// Fixed names: they show in the screenshots accessible() keeps in docs/screenshots.
const LINDA = { email: "linda@difference-engine.test", password: "linda-pass", name: "Linda Lovelace-Byron" };
const CONNECTION = "Difference Engines IdP";

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_OAUTH: "1000/60" }, { passwordHasher: cheapPasswordHasher() });
  idp = await startIdp({ redirectUri: `${app.url}/sso/oidc/callback`, users: [`${LINDA.email}:${LINDA.password}:${LINDA.name}:engineering`] });
  browser = await launchBrowser();
  owner = await newUser(app, { fullName: "Charles Babbage" });
  linda = await newUser(app, { email: LINDA.email, fullName: LINDA.name });
  org = await newOrg(app, owner, "Difference Engines");
  await addMember(app, org.id, owner, linda, "member");
  // No verified domain: the sign-in page keeps Linda on her password (linking is what is tested here).
  const created = await app.http.post(
    `/api/v1/organizations/${org.id}/sso/connections/oidc`,
    { name: CONNECTION, issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret },
    { token: owner.token },
  );
  expect(created.status, created.text).toBe(201);
  page = await (await browser.newContext()).newPage();
  watched = await watchPage(page);
}, 120_000);
afterAll(() => stopAll(browser, app, idp));

const ssoIdentities = async () => (await app.http.get("/api/v1/auth/external/linked-accounts", { token: linda.token })).body.data.sso_identities as Array<{ connection_name: string }>;

describe("single sign-on among linked accounts in Chromium", () => {
  it(
    "links the organization's connection with the keyboard: the provider, then back with a success notice",
    async () => {
      await signInThroughPage(page, app.url, linda, "/account/linked");
      const section = page.getByRole("region", { name: "Single sign-on" });
      const offered = section.getByRole("list", { name: "Single sign-on you can link" });
      await offered.getByText(CONNECTION, { exact: true }).waitFor();
      await offered.getByText(`${org.name} · OpenID Connect`).waitFor();
      await checked(page, "account-linked-sso");

      await page.locator("h1").focus();
      await tabTo(page, `Link ${CONNECTION}`);
      await page.keyboard.press("Enter");
      // The provider's own login form (another origin).
      await page.waitForURL((u) => u.toString().startsWith(idp.issuer));
      await page.locator("input[name=username]").fill(LINDA.email);
      await page.locator("input[name=password]").fill(LINDA.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      // Back at /account?linked=sso, which the web app shows on Linked accounts (and then drops from the address).
      await page.waitForURL(`${app.url}/account/linked`);
      await page.getByRole("status").filter({ hasText: "Your organization's single sign-on is linked" }).waitFor();
      await section.getByRole("list", { name: "Single sign-on identities" }).getByText(CONNECTION, { exact: true }).waitFor();
      expect((await ssoIdentities()).map((i) => i.connection_name)).toEqual([CONNECTION]);
      expect(await section.getByRole("button", { name: `Link ${CONNECTION}`, exact: true }).count()).toBe(0);
      await checked(page, "account-linked-sso-linked");
      // The provider's pages are not Keyward's (its missing favicon, say).
      expect(watched.problems.filter((p) => !p.includes(new URL(idp.issuer).origin))).toEqual([]);
    },
    SLOW,
  );

  it(
    "unlinks it after a confirmation dialog, with the keyboard",
    async () => {
      await page.locator("h1").focus();
      await tabTo(page, `Unlink ${CONNECTION}`);
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("alertdialog", { name: `Unlink ${CONNECTION}?` });
      await dialog.getByText(`You will no longer be able to sign in through ${org.name}'s identity provider`).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      // Escape keeps it.
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
      expect(await ssoIdentities()).toHaveLength(1);

      await page.locator("h1").focus();
      await tabTo(page, `Unlink ${CONNECTION}`);
      await page.keyboard.press("Enter");
      await dialog.waitFor();
      await tabTo(page, `Unlink ${CONNECTION}`);
      expect(await page.evaluate(() => document.activeElement?.closest("[role=alertdialog]") !== null)).toBe(true);
      await page.keyboard.press("Enter");
      await page.getByRole("status").filter({ hasText: `${CONNECTION} unlinked.` }).waitFor();
      await page.getByRole("region", { name: "Single sign-on" }).getByRole("button", { name: `Link ${CONNECTION}`, exact: true }).waitFor();
      expect(await ssoIdentities()).toEqual([]);

      // A failed link lands on /account?error=…&error_type=…: the screen says what happened in its own words.
      await page.goto(`${app.url}/account?error=${encodeURIComponent("Crafted text")}&error_type=IDENTITY_ALREADY_LINKED`);
      await page.waitForURL(`${app.url}/account/linked`);
      await page.getByRole("alert").filter({ hasText: "already linked to another account" }).waitFor();
      expect(await page.getByText("Crafted text").count()).toBe(0);
      expect(watched.problems.filter((p) => !p.includes(new URL(idp.issuer).origin))).toEqual([]);
    },
    SLOW,
  );
});
