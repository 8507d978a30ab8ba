import { writeFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { axeViolations, signInThroughPage, startWebOrg, stopWebOrg } from "../helpers/web.js";
import type { TestUser } from "../factories/users.js";

/**
 * A temporary admin in the web app (issue 37): a member whose `admin` role comes from an approved
 * role request sees, on the organization's screens, a quiet notice with the grant's end and a link
 * to their requests, and none of what the API refuses them with ELEVATED_ROLE_FORBIDS (inviting,
 * changing roles, removing, API keys, domains); what a temporary admin may do (the two-step policy
 * and who complies with it, the audit) stays. axe-core finds nothing at desktop or phone width; the
 * phone width does not scroll sideways; no CSP violation or console error (no refused request).
 * Screenshots go to /tmp (web-elevated-*.png), not to docs/.
 */
let app: TestApp;
let browser: Browser;
let owner: TestUser;
let member: TestUser;
let page: Page;
let watched: { problems: string[] };
let org: { id: string; slug: string; name: string };
let grantEndsAt: string;
const SLOW = 180_000;

beforeAll(async () => {
  ({ app, browser, owner, org, page, watched, members: [member] } = await startWebOrg({
    env: { RATE_LIMIT_ENABLED: "false" },
    owner: "Grace Hopper",
    org: "Langley Research",
    members: [{ fullName: "Katherine Johnson", role: "member" }],
  }));
  const base = `/api/v1/organizations/${org.id}`;
  const policy = await app.http.request("PUT", `${base}/roles/admin/access-policy`, { token: owner.token, body: { max_duration_minutes: 240 } });
  expect(policy.status, policy.text).toBe(200);
  const asked = await app.http.post(`${base}/access-requests`, { role: "admin", duration_minutes: 120, reason: "INC-7 rotate the CA" }, { token: member.token });
  expect(asked.status, asked.text).toBe(201);
  const approved = await app.http.post(`${base}/access-requests/${asked.body.data.access_request.id}/approve`, {}, { token: owner.token });
  expect(approved.status, approved.text).toBe(200);
  grantEndsAt = approved.body.data.access_request.grant_ends_at;
}, 120_000);
afterAll(() => stopWebOrg({ app, browser }));

/** The temporary admin's notice on the screen. */
const notice = (p: Page) => p.locator(".elevated-notice");

/** axe-core finds nothing at desktop width, nor at phone width (which does not scroll sideways); the phone screenshot goes to /tmp. */
async function checked(p: Page, name: string): Promise<void> {
  expect(await axeViolations(p), `${name} (desktop)`).toEqual([]);
  await p.setViewportSize({ width: 390, height: 844 });
  expect(await axeViolations(p), `${name} (phone)`).toEqual([]);
  expect(await p.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1), `${name} scrolls sideways on a phone`).toBe(false);
  writeFileSync(`/tmp/web-elevated-${name}-phone.png`, await p.screenshot({ fullPage: true }));
  await p.setViewportSize({ width: 1280, height: 800 });
}

describe("a temporary admin in Chromium", () => {
  it(
    "sees the notice and no invitation, role change or API key controls; keeps what a temporary admin may do",
    async () => {
      await signInThroughPage(page, app.url, member, `/orgs/${org.slug}/members`);
      await page.getByRole("heading", { name: "Members" }).waitFor();
      // The notice: the grant's end (as a machine-readable time), what it means, and the way to the requests.
      await notice(page).waitFor();
      expect(await notice(page).innerText()).toMatch(/You are an admin until .+ \(requested access\)\. Some actions need a lasting admin role\./);
      expect(await notice(page).locator("time").getAttribute("datetime")).toBe(grantEndsAt);
      expect(await notice(page).getByRole("link", { name: "Your access requests" }).getAttribute("href")).toBe("/#access-requests");
      // Hidden, not disabled: no invitation form, no role selector, no removal, no invitations list.
      expect(await page.getByRole("form", { name: "Invite someone" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: /Send invitation|Add member/ }).count()).toBe(0);
      expect(await page.getByRole("combobox", { name: /^Role of / }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Remove" }).count()).toBe(0);
      expect(await page.getByRole("heading", { name: "Invitations" }).count()).toBe(0);
      // Still an admin for the rest: the admin sections stay in the navigation.
      const nav = page.getByRole("navigation", { name: `${org.name} sections` });
      await nav.getByRole("link", { name: "Audit" }).waitFor();
      expect(await page.getByRole("alert").count()).toBe(0);
      await checked(page, "members");

      // Security: the two-step policy (org.update) stays; compliance (members.manage) and API keys (which outlive the grant) go.
      await nav.getByRole("link", { name: "Security" }).click();
      await page.getByRole("heading", { name: "Security", level: 1 }).waitFor();
      await page.getByRole("button", { name: "Save policy" }).waitFor();
      await notice(page).waitFor();
      expect(await page.getByRole("heading", { name: "Compliance" }).count()).toBe(0);
      expect(await page.getByRole("heading", { name: /API keys/ }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Create API key" }).count()).toBe(0);
      expect(await page.getByRole("alert").count()).toBe(0);
      await checked(page, "security");

      // A screen made only of refused actions: the notice in place of its controls, reached by keyboard.
      await nav.getByRole("link", { name: "Domains" }).focus();
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Domains", level: 1 }).waitFor();
      await notice(page).waitFor();
      expect(await notice(page).innerText()).toContain("Verifying the organization's domains is not shown.");
      expect(await page.getByRole("button", { name: /Add domain|Verify/ }).count()).toBe(0);
      expect(await page.getByRole("alert").count()).toBe(0);
      await checked(page, "domains");

      // The directory: creating departments and principals is what a temporary admin may do.
      await nav.getByRole("link", { name: "Directory" }).click();
      await page.getByRole("form", { name: "New department" }).getByRole("button", { name: "Create department" }).waitFor();
      expect(await page.getByRole("alert").count()).toBe(0);

      // The owner sees no notice, and the controls.
      const theirs = await (await browser.newContext()).newPage();
      await signInThroughPage(theirs, app.url, owner, `/orgs/${org.slug}/members`);
      await theirs.getByRole("button", { name: "Send invitation" }).waitFor();
      expect(await notice(theirs).count()).toBe(0);
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );
});
