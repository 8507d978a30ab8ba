import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { accessible, signInThroughPage, startWebOrg, stopWebOrg } from "../helpers/web.js";
import type { TestUser } from "../factories/users.js";

/**
 * The scopes of an organization's API key on the web app's Security screen (issue 32), which
 * web-org-security-apps-audit-browser.test.ts leaves at their default: an owner creates a key with
 * two chosen scopes using the keyboard alone (Tab, Space, Enter), sees both listed on the key, and
 * the key does what those scopes allow and nothing else (checked through the REST API with the key
 * itself). axe-core finds no violation of any impact; the phone width does not scroll sideways; no
 * CSP violation or console error.
 */
let app: TestApp;
let browser: Browser;
let owner: TestUser;
let page: Page;
let watched: { problems: string[] };
let org: { id: string; slug: string; name: string };
const SLOW = 180_000;
const KEY = "Audit exporter";

beforeAll(async () => {
  ({ app, browser, owner, org, page, watched } = await startWebOrg({ owner: "Grace Hopper", org: "Difference Engines" }));
}, 120_000);
afterAll(() => stopWebOrg({ app, browser }));

/** What has focus, as "aria-label", else "checkbox <value>" for a scope, else "<input name>" or its text. */
const focused = (p: Page) =>
  p.evaluate(() => {
    const el = document.activeElement as HTMLInputElement | null;
    if (!el) return "";
    if (el.getAttribute("aria-label")) return el.getAttribute("aria-label")!;
    if (el.type === "checkbox" && el.name === "scopes") return `checkbox ${el.value}`;
    if (el.tagName === "INPUT") return `input ${el.name}`;
    return el.textContent?.trim() ?? "";
  });
/** Presses Tab until `target` has focus (at most `max` times). */
async function tabTo(p: Page, target: string, max = 80): Promise<void> {
  const passed: string[] = [];
  for (let i = 0; i < max; i++) {
    await p.keyboard.press("Tab");
    const now = await focused(p);
    passed.push(now);
    if (now === target) return;
  }
  throw new Error(`Tab never reached ${target}; it passed ${passed.join(" | ")}`);
}
const checkedScopes = (p: Page) => p.getByRole("form", { name: "Create an API key" }).locator("input[name=scopes]:checked").evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));

describe("an API key's scopes in Chromium", () => {
  it(
    "creates a key with two scopes by keyboard alone, lists them on the key, and the key may do just that",
    async () => {
      await signInThroughPage(page, app.url, owner, `/orgs/${org.slug}/security`);
      await page.getByRole("heading", { name: "API keys" }).waitFor();
      await page.getByText("No API keys yet.").waitFor();

      await tabTo(page, "input name");
      await page.keyboard.type(KEY);
      // The sudo check is chosen by default: Space takes it off; members and the audit log go on.
      await tabTo(page, "checkbox ssh:sudo", 3);
      await page.keyboard.press("Space");
      await tabTo(page, "checkbox members:read", 1);
      await page.keyboard.press("Space");
      await tabTo(page, "checkbox audit:read", 2);
      await page.keyboard.press("Space");
      expect(await checkedScopes(page)).toEqual(["members:read", "audit:read"]);
      // Past the scim checkbox (the last scope) to the button.
      await tabTo(page, "Create API key", 2);
      await page.keyboard.press("Enter");
      await page.getByRole("status").filter({ hasText: `API key ${KEY} created.` }).first().waitFor();
      const secret = (await page.getByRole("group", { name: `Secret of the API key ${KEY}` }).locator(".secret-value").textContent())!;
      expect(secret).toMatch(/^kwk_/);

      // Listed on the key, as the API stored them.
      const item = page.getByRole("list", { name: `API keys of ${org.name}` }).getByRole("listitem").filter({ has: page.getByRole("heading", { name: KEY }) });
      // The list is read again after the creation's notice shows: wait for the key's scopes there.
      const listed = async () => (await item.locator("dt:text-is('Scopes') + dd code").allTextContents()).map((s) => s.trim()).sort();
      await expect.poll(listed).toEqual(["audit:read", "members:read"]);
      const stored = (await app.http.get(`/api/v1/organizations/${org.id}/api-keys`, { token: owner.token })).body.data.api_keys as Array<{ name: string; scopes: string[] }>;
      expect(stored).toEqual([expect.objectContaining({ name: KEY, scopes: expect.arrayContaining(["members:read", "audit:read"]) })]);
      expect(stored[0]!.scopes).toHaveLength(2);
      // The form is back at its default for the next key.
      expect(await checkedScopes(page)).toEqual(["ssh:sudo"]);

      // The key reads what its scopes allow, and nothing else.
      const withKey = async (path: string) => (await fetch(`${app.url}/api/v1/organizations/${org.id}${path}`, { headers: { authorization: `Bearer ${secret}` } })).status;
      expect(await withKey("/members")).toBe(200);
      expect(await withKey("/audit-logs")).toBe(200);
      expect(await withKey("/principals")).toBe(403);

      await page.evaluate(() => window.scrollTo(0, 0));
      await accessible(page, "org-security-api-key-scopes", { allImpacts: true });
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );
});
