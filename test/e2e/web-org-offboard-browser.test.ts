import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { accessible, axeViolations, focusedName, signInThroughPage, startWebOrg, stopWebOrg, tabTo } from "../helpers/web.js";
import { addMember } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal } from "../factories/ssh.js";
import { newUser, type TestUser, uniqueEmail } from "../factories/users.js";

/**
 * "Offboard" on the members page (issue 36): an owner offboards a member by keyboard alone, choosing
 * removal and giving a reason in the confirmation dialog, then reads the receipt (what was cut) on
 * the page; "Remove", which is offboarding too, shows its receipt the same way. The API agrees; axe-core finds nothing with the dialog open nor on the receipt; the phone
 * width does not scroll sideways; no CSP violation or console error.
 */
let app: TestApp;
let browser: Browser;
let owner: TestUser;
let person: TestUser;
let second: TestUser;
let page: Page;
let watched: { problems: string[] };
let org: { id: string; slug: string; name: string };
const SLOW = 180_000;

beforeAll(async () => {
  ({ app, browser, owner, org, page, watched, members: [person] } = await startWebOrg({ owner: "Grace Hopper", org: "Bletchley Park", members: [{ fullName: "Alan Turing", role: "member" }] }));
  await createCa(app, org.id, owner);
  await grantPrincipal(app, org.id, owner, person, "app");
  const key = await addVerifiedKey(app, person);
  expect((await app.http.post("/api/v1/ssh/sign", { key_id: key.id, org_id: org.id }, { token: person.token })).status).toBe(201);
  // Listed after Alan (members are listed by address), so the keyboard test reaches his Offboard first.
  second = await newUser(app, { fullName: "Joan Clarke", email: uniqueEmail("zz.joan") });
  await addMember(app, org.id, owner, second, "member");
  await grantPrincipal(app, org.id, owner, second, "app");
  const key2 = await addVerifiedKey(app, second);
  expect((await app.http.post("/api/v1/ssh/sign", { key_id: key2.id, org_id: org.id }, { token: second.token })).status).toBe(201);
}, 120_000);
afterAll(() => stopWebOrg({ app, browser }));

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
      // A member creates no server enrollment tokens: the row says none were cut.
      expect(await receipt.locator("dt:text-is('Server enrollment tokens revoked') + dd").textContent()).toBe("0");
      await expect.poll(async () => page.getByRole("row", { name: /Alan Turing/ }).count()).toBe(0);

      const listed = await app.http.get(`/api/v1/organizations/${org.id}/offboardings?user_id=${person.id}`, { token: owner.token });
      expect(listed.body.data.offboardings).toEqual([expect.objectContaining({ user_id: person.id, mode: "remove", reason: "Left for Manchester" })]);

      await page.evaluate(() => window.scrollTo(0, 0));
      await accessible(page, "org-members-offboard-receipt");
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );

  it(
    "\"Remove\" is offboarding too: the same receipt is shown after it",
    async () => {
      await page.getByRole("button", { name: "Dismiss" }).click();
      const row = page.getByRole("row", { name: /Joan Clarke/ });
      await row.getByRole("button", { name: "Remove", exact: true }).click();
      const dialog = page.getByRole("alertdialog", { name: "Remove Joan Clarke?" });
      await dialog.waitFor();
      await dialog.getByRole("button", { name: "Remove", exact: true }).click();

      const receipt = page.getByRole("status").filter({ has: page.getByRole("heading", { name: "Joan Clarke was removed" }) });
      await receipt.waitFor();
      expect(await receipt.locator("dt:text-is('SSH certificates revoked') + dd").textContent()).toBe("1");
      expect(await receipt.locator("dt:text-is('Principals taken away') + dd").textContent()).toBe("1");
      await expect.poll(async () => page.getByRole("row", { name: /Joan Clarke/ }).count()).toBe(0);
      // The receipt shown is the one the API lists for this removal.
      const listed = await app.http.get(`/api/v1/organizations/${org.id}/offboardings?user_id=${second.id}`, { token: owner.token });
      expect(listed.body.data.offboardings).toEqual([expect.objectContaining({ user_id: second.id, mode: "remove", reason: "Removed from the organization" })]);
      expect(await receipt.textContent()).toContain(`Receipt ${listed.body.data.offboardings[0].id}`);
      expect(await axeViolations(page)).toEqual([]);
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );
});
