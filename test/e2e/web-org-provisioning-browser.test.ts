import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { clientFor, newScimUser, patchOf, verifyDomain } from "../helpers/scim.js";
import { accessible, axeViolations, signInThroughPage, startWebOrg, stopWebOrg, tabTo, watchPage } from "../helpers/web.js";
import type { TestUser } from "../factories/users.js";

/**
 * The web app's Provisioning (SCIM) screen (/orgs/<slug>/provisioning, issue 36) in headless
 * Chromium: an admin finds the SCIM base URL (copied by its button), follows "Create a SCIM key" to
 * the API key form with the scim scope already chosen and creates the key by keyboard alone; the key
 * then provisions a person over /scim/v2, changes them and sends a filter that does not parse; the
 * screen shows the last sync, the last change and the last error with its detail, overall and for
 * the key. axe-core finds no violation of any impact; a phone (390 px) never scrolls sideways; dark
 * mode passes; no CSP violation or console error. A plain member is offered none of it.
 */
let app: TestApp;
let browser: Browser;
let admin: TestUser;
let member: TestUser;
let page: Page;
let watched: { problems: string[] };
let org: { id: string; slug: string; name: string };
const SLOW = 180_000;
// Fixed names: they show in the screenshots accessible() keeps in docs/screenshots.
const DOMAIN = "jacquard-looms.test";

beforeAll(async () => {
  ({ app, browser, org, page, watched, members: [admin, member] } = await startWebOrg({
    env: { RATE_LIMIT_ENABLED: "false" },
    owner: "Joseph Jacquard",
    org: "Jacquard Looms",
    members: [{ fullName: "Ada Lovelace", role: "admin" }, { fullName: "Mary Somerville", role: "member" }],
    clipboard: true,
  }));
  await verifyDomain(app, org.id, DOMAIN);
}, 120_000);
afterAll(() => stopWebOrg({ app, browser }));

describe("Provisioning (SCIM) in Chromium", () => {
  it(
    "offers a plain member no Provisioning entry, and the usual refusal at its address",
    async () => {
      const theirs = await (await browser.newContext()).newPage();
      const problems = await watchPage(theirs);
      await signInThroughPage(theirs, app.url, member, `/orgs/${org.slug}/security`);
      const nav = theirs.getByRole("navigation", { name: `${org.name} sections` });
      await nav.getByRole("link", { name: "Security" }).waitFor();
      expect(await nav.getByRole("link", { name: "Provisioning (SCIM)" }).count()).toBe(0);
      await theirs.goto(`${app.url}/orgs/${org.slug}/provisioning`);
      await theirs.getByRole("heading", { name: "Provisioning (SCIM)", level: 1 }).waitFor();
      await theirs.getByText(`Only the owner and admins of ${org.name} connect an identity provider and see its activity.`).waitFor();
      expect(await theirs.getByText("SCIM base URL").count()).toBe(0);
      // Nothing was asked that the API would refuse (a refusal would show as a console error).
      expect(problems.problems).toEqual([]);
      await theirs.context().close();
    },
    SLOW,
  );

  it(
    "connects an identity provider by keyboard and shows its last sync, last change and last error",
    async () => {
      await signInThroughPage(page, app.url, admin, `/orgs/${org.slug}/security`);
      await page.getByRole("navigation", { name: `${org.name} sections` }).getByRole("link", { name: "Provisioning (SCIM)" }).click();
      await page.getByRole("heading", { name: "Provisioning (SCIM)", level: 1 }).waitFor();
      await page.getByText("No SCIM key yet").waitFor();
      const base = page.getByRole("group", { name: "SCIM base URL" });
      expect(await base.locator(".copy-text-value").textContent()).toBe(`${app.url}/scim/v2`);
      await base.getByRole("button", { name: "Copy SCIM base URL" }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${app.url}/scim/v2`);
      expect(await axeViolations(page)).toEqual([]);

      // To the API key form, the scim scope chosen, and the key created: all by keyboard.
      await tabTo(page, "Create a SCIM key", { exact: true });
      await page.keyboard.press("Enter");
      await page.waitForURL(`${app.url}/orgs/${org.slug}/security?newKey=scim#api-keys`);
      const form = page.getByRole("form", { name: "Create an API key" });
      await form.waitFor();
      expect(await form.getByLabel("Key name").inputValue()).toBe("SCIM provisioning");
      expect(await form.locator("input[name=scopes]:checked").evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))).toEqual(["scim"]);
      await form.getByLabel("Key name").focus();
      await tabTo(page, "Create API key", { exact: true });
      await page.keyboard.press("Enter");
      await page.getByRole("status").filter({ hasText: "API key SCIM provisioning created." }).first().waitFor();
      const secret = (await page.getByRole("group", { name: "Secret of the API key SCIM provisioning" }).locator(".secret-value").textContent())!;
      expect(secret).toMatch(/^kwk_/);
      const keys = (await app.http.get(`/api/v1/organizations/${org.id}/api-keys`, { token: admin.token })).body.data.api_keys as Array<{ id: string; scopes: string[] }>;
      expect(keys).toEqual([expect.objectContaining({ scopes: ["scim"] })]);

      // The identity provider at work: a person created, deactivated, and a filter that does not parse.
      const idp = clientFor(app, { orgId: org.id, owner: admin, key: secret, keyId: keys[0]!.id, domain: DOMAIN });
      const created = await idp.post("/Users", newScimUser(idp.at("charles.babbage")));
      expect(created.status, created.text).toBe(201);
      expect((await idp.patch(`/Users/${created.body.id}`, patchOf({ op: "replace", path: "active", value: false }))).status).toBe(200);
      const bad = await idp.get(`/Users?filter=${encodeURIComponent("userName eq")}`);
      expect(bad.status).toBe(400);

      await page.getByRole("navigation", { name: `${org.name} sections` }).getByRole("link", { name: "Provisioning (SCIM)" }).click();
      const summary = page.getByRole("definition").filter({ hasText: "invalidFilter" }).first();
      const lastChange = page.getByText(`PATCH User ${created.body.id}`).first();
      // The door records once it has answered: Refresh until the error and the change are both there
      // (the error alone once showed before the change, which the page then waited for in vain).
      for (let i = 0; i < 20 && !((await summary.isVisible()) && (await lastChange.isVisible())); i++) {
        await page.getByRole("button", { name: "Refresh" }).click();
        await page.waitForTimeout(150);
      }
      await summary.waitFor();
      const overall = page.getByRole("definition").first();
      await overall.locator("time").waitFor();
      await lastChange.waitFor();
      await page.getByText(bad.body.detail).first().waitFor();
      const key = page.getByRole("list", { name: `SCIM keys of ${org.name}` }).getByRole("listitem").filter({ has: page.getByRole("heading", { name: "SCIM provisioning" }) });
      await key.getByText("Active").waitFor();
      expect(await key.locator("dt:text-is('Last change') + dd code").textContent()).toBe(`PATCH User ${created.body.id}`);
      expect(await key.locator("dt:text-is('Last error') + dd").textContent()).toContain("400 refused as malformed");
      expect(await key.locator("dt:text-is('Last error') + dd").textContent()).toContain("GET /Users");

      await page.evaluate(() => window.scrollTo(0, 0));
      await accessible(page, "org-provisioning", { allImpacts: true });
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );
});
