import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { accessible, axeViolations, focusedName, signInThroughPage, tabTo, watchPage } from "../helpers/web.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * "Offboard" on the members page (issue 36): an owner offboards a member by keyboard alone, choosing
 * removal and giving a reason in the confirmation dialog, then reads the receipt (what was cut) on
 * the page. The API agrees; axe-core finds nothing with the dialog open nor on the receipt; the phone
 * width does not scroll sideways; no CSP violation or console error.
 */
let app: TestApp;
let browser: Browser;
let owner: TestUser;
let person: TestUser;
let page: Page;
let watched: { problems: string[] };
let org: { id: string; slug: string; name: string };
const SLOW = 180_000;

beforeAll(async () => {
  app = await startTestApp();
  browser = await launchBrowser();
  owner = await newUser(app, { fullName: "Grace Hopper" });
  person = await newUser(app, { fullName: "Alan Turing" });
  org = await newOrg(app, owner, "Bletchley Park");
  await createCa(app, org.id, owner);
  await addMember(app, org.id, owner, person, "member");
  await grantPrincipal(app, org.id, owner, person, "app");
  const key = await addVerifiedKey(app, person);
  expect((await app.http.post("/api/v1/ssh/sign", { key_id: key.id, org_id: org.id }, { token: person.token })).status).toBe(201);
  page = await (await browser.newContext()).newPage();
  watched = await watchPage(page);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe("offboarding in Chromium", () => {
  it(
    "offboards a member by keyboard alone and shows the receipt",
    async () => {
      await signInThroughPage(page, app.url, owner, `/orgs/${org.slug}/members`);
      await page.getByRole("heading", { name: "Members" }).waitFor();
      await tabTo(page, "Offboard", { exact: true });
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("alertdialog", { name: "Offboard Alan Turing?" });
      await dialog.waitFor();
      expect(await axeViolations(page)).toEqual([]);

      await tabTo(page, "What happens to the membership", { max: 5 });
      await page.keyboard.press("ArrowDown");
      await dialog.getByRole("button", { name: "Remove", exact: true }).waitFor();
      await tabTo(page, "Reason", { max: 3 });
      await page.keyboard.type("Left for Manchester");
      await tabTo(page, "Remove", { exact: true, max: 5 });
      expect(await focusedName(page)).toBe("Remove");
      await page.keyboard.press("Enter");

      const receipt = page.getByRole("status").filter({ has: page.getByRole("heading", { name: "Alan Turing was removed" }) });
      await receipt.waitFor();
      expect(await receipt.locator("dt:text-is('SSH certificates revoked') + dd").textContent()).toBe("1");
      expect(await receipt.locator("dt:text-is('Principals taken away') + dd").textContent()).toBe("1");
      await expect.poll(async () => page.getByRole("row", { name: /Alan Turing/ }).count()).toBe(0);

      const listed = await app.http.get(`/api/v1/organizations/${org.id}/offboardings`, { token: owner.token });
      expect(listed.body.data.offboardings).toEqual([expect.objectContaining({ user_id: person.id, mode: "remove", reason: "Left for Manchester" })]);

      await page.evaluate(() => window.scrollTo(0, 0));
      await accessible(page, "org-members-offboard-receipt");
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );
});
