import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { startDns, type RealDns } from "../helpers/dns.js";
import { accessible, axeViolations, signInThroughPage, startWebOrg, stopWebOrg, watchPage } from "../helpers/web.js";
import { newOrg } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * The web app's Domains screen of an organization (/orgs/<slug>/domains, issue 35) in headless
 * Chromium, against a Keyward that asks a REAL DNS server (dnsmasq on loopback, its records changed
 * while it runs) through DNS_RESOLVER. An admin adds a domain and sees the TXT record to publish
 * (copied to the clipboard by its buttons); "Verify now" fails with the reason while the record is
 * missing and succeeds once it is published; a consumer domain is refused at the field; the whole
 * of add + verify works from the keyboard alone; a domain another organization verified first is
 * refused in words; the organization's look-ups are rate-limited and the screen says so politely;
 * a re-check that misses the record warns, three lapse the domain; a domain is removed after a
 * confirmation. Every effect is checked
 * through the REST API; axe-core finds no violation of any impact; a phone (390 px) never scrolls
 * sideways; no CSP violation or console error. A plain member is offered none of it.
 */
let app: TestApp;
let dns: RealDns;
let browser: Browser;
let admin: TestUser;
let member: TestUser;
let page: Page;
let watched: { problems: string[] };
let org: { id: string; slug: string; name: string };
/** Each test takes many steps and several axe-core passes; shared CI machines are slow. */
const SLOW = 180_000;
// Fixed names: they show in the screenshots accessible() keeps in docs/screenshots.
const DOMAIN = "analytical-engine.test";
const KEYBOARD_DOMAIN = "difference-engine.test";
const LIMITED_DOMAIN = "jacquard-loom.test";
const SHARED_DOMAIN = "mechanical-turk.test";
/** Look-ups an hour for the organization: the tests below make five, then run into the limit. */
const VERIFY_BUDGET = 6;
const DAY = 86_400;

beforeAll(async () => {
  dns = await startDns();
  ({ app, browser, org, page, watched, members: [admin, member] } = await startWebOrg({
    env: { DNS_RESOLVER: dns.server, DNS_TIMEOUT_MS: "2000", RATE_LIMIT_DOMAIN_VERIFY: `${VERIFY_BUDGET}/3600` },
    owner: "Charles Babbage",
    org: "Analytical Engines",
    members: [{ fullName: "Ada Lovelace", role: "admin" }, { fullName: "Mary Somerville", role: "member" }],
    clipboard: true,
  }));
}, 120_000);
afterAll(async () => {
  await stopWebOrg({ app, browser });
  dns?.stop();
});

interface RestDomain {
  id: string;
  domain: string;
  status: string;
  record_name: string;
  record_value: string;
  last_check_error: string | null;
  verified_at: string | null;
}
/** The organization's domains as the REST API lists them (as the admin). */
const domains = async () => (await app.http.get(`/api/v1/organizations/${org.id}/domains`, { token: admin.token })).body.data.domains as RestDomain[];
const restDomain = async (name: string) => (await domains()).find((d) => d.domain === name);

/** No violation at all at desktop width, then serious ones at phone width and in dark mode, no sideways scroll, screenshots (accessible()). */
const checked = async (p: Page, name: string) => {
  await p.evaluate(() => window.scrollTo(0, 0));
  await accessible(p, name, { allImpacts: true });
};
const status = (p: Page, text: string | RegExp) => p.getByRole("status").filter({ hasText: text }).first().waitFor();
/** The card of one domain in the list. */
const card = (p: Page, name: string) => p.getByRole("list", { name: `Domains of ${org.name}` }).getByRole("listitem").filter({ has: p.getByRole("heading", { name, exact: true }) });
/** The API's message shown at the Domain field (react-aria marks the field invalid). */
const fieldError = (p: Page) => p.locator(".field[data-invalid]").filter({ has: p.getByLabel("Domain", { exact: true }) }).locator(".field-error");
/** What has focus: its accessible label, or else its text. */
const focused = (p: Page) => p.evaluate(() => document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.textContent?.trim() ?? "");

/** Presses Tab until `done` holds for the focused element (at most `max` times); returns what focus passed through. */
async function tabUntil(p: Page, done: (label: string) => boolean, max = 60): Promise<string[]> {
  const passed: string[] = [];
  for (let i = 0; i < max; i++) {
    await p.keyboard.press("Tab");
    const label = await focused(p);
    passed.push(label);
    if (done(label)) return passed;
  }
  throw new Error(`focus never reached the target; it passed ${passed.join(" | ")}`);
}

describe("an organization's domains in Chromium", () => {
  it(
    "offers a plain member no Domains entry, and the usual refusal at its address",
    async () => {
      const theirs = await (await browser.newContext()).newPage();
      const problems = await watchPage(theirs);
      await signInThroughPage(theirs, app.url, member, `/orgs/${org.slug}/security`);
      const nav = theirs.getByRole("navigation", { name: `${org.name} sections` });
      await nav.getByRole("link", { name: "Security" }).waitFor();
      expect(await nav.getByRole("link", { name: "Domains" }).count()).toBe(0);
      await theirs.goto(`${app.url}/orgs/${org.slug}/domains`);
      await theirs.getByRole("heading", { name: "Domains", level: 1 }).waitFor();
      await theirs.getByText(`Only the owner and admins of ${org.name} see and verify its domains.`).waitFor();
      expect(await theirs.getByRole("button", { name: "Add domain" }).count()).toBe(0);
      // Nothing was asked that the API would refuse (a refusal would show as a console error).
      expect(problems.problems).toEqual([]);
      await theirs.context().close();
    },
    SLOW,
  );

  it(
    "adds a domain, shows its TXT record, fails to verify it while the record is missing, verifies it once published",
    async () => {
      await signInThroughPage(page, app.url, admin, `/orgs/${org.slug}/security`);
      await page.getByRole("navigation", { name: `${org.name} sections` }).getByRole("link", { name: "Domains" }).click();
      await page.waitForURL(`${app.url}/orgs/${org.slug}/domains`);
      await page.getByText("No domains yet.").waitFor();

      // A consumer mail provider is refused, at the field, in the API's words.
      await page.getByLabel("Domain", { exact: true }).fill("gmail.com");
      await page.getByRole("button", { name: "Add domain" }).click();
      await fieldError(page).getByText("gmail.com is a consumer email provider").waitFor();
      expect(await page.getByLabel("Domain", { exact: true }).getAttribute("aria-invalid")).toBe("true");
      await checked(page, "org-domains-refused");
      expect(await domains()).toEqual([]);

      await page.getByLabel("Domain", { exact: true }).fill(DOMAIN);
      await page.getByRole("button", { name: "Add domain" }).dblclick();
      await status(page, `${DOMAIN} added. Publish its TXT record below, then choose Verify now.`);
      expect(await fieldError(page).count()).toBe(0);
      const [claim] = await domains();
      expect(await domains()).toHaveLength(1);
      expect(claim).toMatchObject({ domain: DOMAIN, status: "pending", record_name: `_keyward-verification.${DOMAIN}` });
      const item = card(page, DOMAIN);
      await item.getByText("Pending", { exact: true }).waitFor();
      // The record to publish: type, name and value, each value with a Copy button that copies it.
      await item.getByText("TXT", { exact: true }).waitFor();
      await item.getByText(claim!.record_name, { exact: true }).waitFor();
      await item.getByText(claim!.record_value, { exact: true }).waitFor();
      await item.getByText("_keyward-verification", { exact: true }).waitFor();
      await item.getByRole("button", { name: `Copy the record value for ${DOMAIN}` }).click();
      await item.getByRole("status").filter({ hasText: "Copied." }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(claim!.record_value);
      await item.getByRole("button", { name: `Copy the record name for ${DOMAIN}` }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(claim!.record_name);

      // Nothing published yet: the check fails, and says why.
      await item.getByRole("button", { name: `Verify now: ${DOMAIN}` }).click();
      await item.getByRole("status").filter({ hasText: `Not verified yet. No TXT record at ${claim!.record_name}` }).waitFor();
      await item.getByText("Pending", { exact: true }).waitFor();
      expect(await restDomain(DOMAIN)).toMatchObject({ status: "pending", last_check_error: expect.stringContaining("No TXT record") });
      await checked(page, "org-domains");

      // Published in the real DNS server: verified.
      await dns.setTxt({ [claim!.record_name]: [claim!.record_value] });
      await item.getByRole("button", { name: `Verify now: ${DOMAIN}` }).click();
      await status(page, `${DOMAIN} is verified.`);
      await item.getByText("Verified", { exact: true }).waitFor();
      expect(await item.getByRole("button", { name: `Verify now: ${DOMAIN}` }).count()).toBe(0);
      expect(await restDomain(DOMAIN)).toMatchObject({ status: "verified", last_check_error: null, verified_at: expect.any(String) });

      // The same name again: the API's refusal, at the field.
      await page.getByLabel("Domain", { exact: true }).fill(DOMAIN.toUpperCase());
      await page.getByRole("button", { name: "Add domain" }).click();
      await fieldError(page).getByText("The organization already has this domain").waitFor();
      expect(await domains()).toHaveLength(1);
      await page.getByLabel("Domain", { exact: true }).fill("");
      // Editing the name clears the API's word about it.
      expect(await fieldError(page).count()).toBe(0);
      await checked(page, "org-domains-verified");
    },
    SLOW,
  );

  it(
    "adds and verifies a domain with the keyboard alone",
    async () => {
      // From the top of a freshly loaded page, Tab reaches the Domain field.
      await page.goto(`${app.url}/orgs/${org.slug}/domains`);
      await page.getByRole("heading", { name: "Domains", level: 1 }).waitFor();
      let steps = 0;
      while ((await page.evaluate(() => document.activeElement?.getAttribute("name"))) !== "domain") {
        await page.keyboard.press("Tab");
        if (++steps > 60) throw new Error("Tab never reached the Domain field");
      }
      await page.keyboard.type(KEYBOARD_DOMAIN);
      await page.keyboard.press("Enter");
      await status(page, `${KEYBOARD_DOMAIN} added.`);
      // Focus moves to the new domain, so the keyboard goes on to its record and "Verify now".
      await expect.poll(() => focused(page)).toBe(KEYBOARD_DOMAIN);
      const passed = await tabUntil(page, (label) => label === `Verify now: ${KEYBOARD_DOMAIN}`, 15);
      expect(passed).toEqual(expect.arrayContaining([`Copy the record name for ${KEYBOARD_DOMAIN}`, `Copy the record value for ${KEYBOARD_DOMAIN}`]));
      const item = card(page, KEYBOARD_DOMAIN);
      await page.keyboard.press("Enter");
      await item.getByRole("status").filter({ hasText: "Not verified yet. No TXT record at" }).waitFor();
      expect(await focused(page)).toBe(`Verify now: ${KEYBOARD_DOMAIN}`);

      const claim = (await restDomain(KEYBOARD_DOMAIN))!;
      await dns.setTxt({ [claim.record_name]: [claim.record_value] });
      await page.keyboard.press("Enter");
      await status(page, `${KEYBOARD_DOMAIN} is verified.`);
      await item.getByText("Verified", { exact: true }).waitFor();
      // "Verify now" is gone: focus stays with the domain.
      await expect.poll(() => focused(page)).toBe(KEYBOARD_DOMAIN);
      expect((await restDomain(KEYBOARD_DOMAIN))!.status).toBe("verified");
    },
    SLOW,
  );

  it(
    "says so when another organization has already verified the domain",
    async () => {
      // Another organization proves SHARED_DOMAIN first (over REST).
      const theirOwner = await newUser(app, { fullName: "Herman Hollerith" });
      const theirOrg = await newOrg(app, theirOwner, "Tabulating Machines");
      const path = `/api/v1/organizations/${theirOrg.id}/domains`;
      const theirs = (await app.http.post(path, { domain: SHARED_DOMAIN }, { token: theirOwner.token })).body.data.domain as RestDomain;
      await dns.setTxt({ [theirs.record_name]: [theirs.record_value] });
      expect((await app.http.post(`${path}/${theirs.id}/verify`, {}, { token: theirOwner.token })).body.data.domain.status).toBe("verified");

      // This organization may claim it, and publish its own record beside theirs, but not verify it.
      await page.getByLabel("Domain", { exact: true }).fill(SHARED_DOMAIN);
      await page.getByRole("button", { name: "Add domain" }).click();
      await status(page, `${SHARED_DOMAIN} added.`);
      const ours = (await restDomain(SHARED_DOMAIN))!;
      await dns.setTxt({ [ours.record_name]: [theirs.record_value, ours.record_value] });
      const item = card(page, SHARED_DOMAIN);
      await item.getByRole("button", { name: `Verify now: ${SHARED_DOMAIN}` }).click();
      await item.getByRole("alert").filter({ hasText: `Another organization has already verified ${SHARED_DOMAIN}, and a domain belongs to one organization at most.` }).waitFor();
      await item.getByText("Pending", { exact: true }).waitFor();
      expect((await restDomain(SHARED_DOMAIN))!.status).toBe("pending");
    },
    SLOW,
  );

  it(
    "says politely when the organization has looked up its domains too often",
    async () => {
      await page.getByLabel("Domain", { exact: true }).fill(LIMITED_DOMAIN);
      await page.getByRole("button", { name: "Add domain" }).click();
      await status(page, `${LIMITED_DOMAIN} added.`);
      const item = card(page, LIMITED_DOMAIN);
      const limited = item.getByRole("alert").filter({ hasText: `Keyward has looked up the domains of ${org.name} many times in the last hour` });
      // The budget's last look-ups fail for the missing record; the next one is refused before DNS is asked.
      let presses = 0;
      while ((await limited.count()) === 0) {
        if (++presses > VERIFY_BUDGET) throw new Error(`no refusal after ${VERIFY_BUDGET} more look-ups`);
        const answered = page.waitForResponse((r) => r.url().endsWith("/graphql") && (r.request().postData() ?? "").includes("VerifyOrganizationDomain"));
        await item.getByRole("button", { name: `Verify now: ${LIMITED_DOMAIN}` }).click();
        await answered;
        await expect.poll(async () => (await limited.count()) > 0 || (await item.getByRole("status").filter({ hasText: "Not verified yet." }).count()) > 0).toBe(true);
      }
      expect(presses).toBeGreaterThan(1);
      expect(await limited.textContent()).toMatch(/Try again in about \d+ minutes; the record does not need to change\.$/);
      expect((await restDomain(LIMITED_DOMAIN))!.status).toBe("pending");
      await checked(page, "org-domains-rate-limited");
    },
    SLOW,
  );

  it(
    "warns when a daily re-check misses the record, and shows a domain lapsed after three in a row",
    async () => {
      const claim = (await restDomain(KEYBOARD_DOMAIN))!;
      await dns.setTxt({ [claim.record_name]: null });
      const item = card(page, KEYBOARD_DOMAIN);
      // The re-check job, a day later each round; the clock goes back before the browser asks again.
      let round = 0;
      const recheck = async () => {
        app.clock.advance(++round * (DAY + 60));
        try {
          await app.services.domains.recheckDue();
        } finally {
          app.clock.reset();
        }
      };
      await recheck();
      await page.reload();
      await item.getByText("Verified", { exact: true }).waitFor();
      await item.getByText(`The last re-check did not find the record: No TXT record at ${claim.record_name}`).waitFor();
      await recheck();
      await recheck();
      expect((await restDomain(KEYBOARD_DOMAIN))!.status).toBe("lapsed");
      await page.reload();
      await item.getByText("Lapsed", { exact: true }).waitFor();
      await item.getByText(`The TXT record went missing on consecutive checks, so ${KEYBOARD_DOMAIN} no longer counts for ${org.name}.`).waitFor();
      // The record to publish again, and the way to prove it anew.
      await item.getByText(claim.record_value, { exact: true }).waitFor();
      await item.getByRole("button", { name: `Verify now: ${KEYBOARD_DOMAIN}` }).waitFor();
      await checked(page, "org-domains-lapsed");
    },
    SLOW,
  );

  it(
    "removes a domain after a confirmation that names it",
    async () => {
      await page.getByRole("button", { name: `Remove ${DOMAIN}` }).click();
      const dialog = page.getByRole("alertdialog");
      await dialog.getByRole("heading", { name: `Remove the domain ${DOMAIN}?` }).waitFor();
      await dialog.getByText(`${org.name} lets go of ${DOMAIN}`).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await dialog.getByRole("button", { name: "Cancel" }).click();
      expect(await restDomain(DOMAIN)).toBeDefined();

      await page.getByRole("button", { name: `Remove ${DOMAIN}` }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Remove domain" }).click();
      await status(page, `${DOMAIN} was removed.`);
      expect(await restDomain(DOMAIN)).toBeUndefined();
      // The status is announced as the list refetches: the card may leave a moment later.
      await expect.poll(() => card(page, DOMAIN).count()).toBe(0);
      await expect.poll(() => focused(page)).toBe(`Domains of ${org.name}`);
      expect((await domains()).map((d) => d.domain).sort()).toEqual([KEYBOARD_DOMAIN, LIMITED_DOMAIN, SHARED_DOMAIN].sort());
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );
});
