import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cheapPasswordHasher, startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { accessible, focusedName, signInThroughPage, tabTo, watchPage } from "../helpers/web.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * Principals per server on the web app's "Enrolled servers" page (issue 37), in headless Chromium:
 * an admin sets which principals may log in as an account on the servers a pattern matches, from
 * the keyboard (a refusal shows under its field), replaces and removes it; each effect is checked
 * through the REST API; the screen passes axe-core at desktop and phone widths with no CSP
 * violation or console error. A member is not shown the form.
 */
let app: TestApp;
let browser: Browser;
let owner: TestUser;
let member: TestUser;
let org: { id: string; slug: string; name: string };
const problems: string[][] = [];

async function pageFor(user: TestUser, path: string): Promise<Page> {
  const p = await (await browser.newContext()).newPage();
  problems.push((await watchPage(p)).problems);
  await signInThroughPage(p, app.url, user, path);
  return p;
}
const maps = async () =>
  (await app.http.get(`/api/v1/organizations/${org.id}/ssh/host-principals`, { token: owner.token })).body.data.host_principals as Array<{ id: string; host_pattern: string; login: string; principals: string[] }>;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" }, { passwordHasher: cheapPasswordHasher() });
  browser = await launchBrowser();
  owner = await newUser(app, { fullName: "Grace Hopper" });
  member = await newUser(app, { fullName: "Ada Lovelace" });
  org = await newOrg(app, owner, "Analytical Engines");
  await addMember(app, org.id, owner, member, "member");
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe("principals per server on Enrolled servers", () => {
  it("an admin sets, replaces and removes a mapping from the keyboard; a member sees no form", async () => {
    const page = await pageFor(owner, `/orgs/${org.slug}/ssh/servers`);
    await page.getByRole("heading", { name: "Principals per server" }).waitFor();
    await page.getByText("No mapping").waitFor();
    // Keyboard only: servers, account, principals, submit; an account name sshd could not use is refused under its field.
    await tabTo(page, "Servers");
    await page.keyboard.type("web*.example.com");
    await page.keyboard.press("Tab");
    expect(await focusedName(page)).toContain("Account");
    await page.keyboard.type("Root");
    await page.keyboard.press("Tab");
    await page.keyboard.type("ops, oncall");
    await page.keyboard.press("Enter");
    await page.getByText("must be a local account name").first().waitFor();
    await page.getByRole("textbox", { name: "Account", exact: true }).fill("root");
    await page.getByRole("button", { name: "Save principals" }).click();
    await page.getByRole("status").getByText("On web*.example.com, root now takes certificates with oncall, ops").first().waitFor();
    expect(await maps()).toEqual([expect.objectContaining({ host_pattern: "web*.example.com", login: "root", principals: ["oncall", "ops"] })]);
    const table = page.getByRole("region", { name: `Principals per server of ${org.name}` });
    await table.getByRole("cell", { name: "oncall, ops" }).waitFor();
    // From the top: scrolled down, the sticky header covers the section tabs (axe's target-size counts what is obscured).
    await page.evaluate(() => window.scrollTo(0, 0));
    await accessible(page, "org-ssh-host-principals");

    // The same pattern and account again: replaced whole, still one row.
    await page.getByRole("textbox", { name: "Servers", exact: true }).fill("web*.example.com");
    await page.getByRole("textbox", { name: "Account", exact: true }).fill("root");
    await page.getByRole("textbox", { name: "Principals", exact: true }).fill("breakglass");
    await page.getByRole("button", { name: "Save principals" }).click();
    await table.getByRole("cell", { name: "breakglass" }).waitFor();
    expect((await maps()).map((m) => m.principals)).toEqual([["breakglass"]]);

    await page.getByRole("button", { name: "Remove root on web*.example.com" }).click();
    await page.getByText("No mapping").waitFor();
    expect(await maps()).toEqual([]);

    const other = await pageFor(member, `/orgs/${org.slug}/ssh/servers`);
    await other.getByText("Only the organization's owner and admins see its servers.").waitFor();
    expect(await other.getByRole("button", { name: "Save principals" }).count()).toBe(0);
    expect(problems.flat()).toEqual([]);
  }, 180_000);
});
