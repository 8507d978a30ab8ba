import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { addMember, newOrg } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";
import { expect } from "vitest";
import { projectPath } from "../../src/infra/paths.js";
import { cheapPasswordHasher, startTestApp, type TestApp } from "./app.js";
import { launchBrowser } from "./browser.js";

/**
 * Browser-test helpers for Keyward's pages and its web app: screenshots for the README, axe-core,
 * and what the page's CSP refused or the console reported; the organization the screens of one
 * (test/e2e/web-org-*-browser.test.ts) are tried on.
 */

/** An organization's screens in Chromium: a running Keyward, its organization and people, and a browser. */
export interface WebOrg<Members extends readonly unknown[] = TestUser[]> {
  app: TestApp;
  browser: Browser;
  org: { id: string; slug: string; name: string };
  owner: TestUser;
  /** The people of `members`, in its order, each added with the role it gives. */
  members: { -readonly [K in keyof Members]: TestUser };
  /** The browser context `page` is in (the clipboard open to the app with `clipboard`). */
  ctx: BrowserContext;
  /** Watched (watchPage) from before its first navigation. */
  page: Page;
  watched: { problems: string[] };
}

/**
 * Starts Keyward with `env` and Chromium side by side, then the organization `org` owned by
 * `owner` with `members` (full name and role, made in that order), and one watched page in a context
 * of its own. The app hashes passwords at argon2id's cheapest (cheapPasswordHasher): the screens sign
 * people up and in, and nothing here is about the hash. Whatever started is stopped again when a
 * step fails.
 */
export async function startWebOrg<const Members extends ReadonlyArray<{ fullName: string; role: string }> = []>(setup: {
  env?: Record<string, string>;
  owner: string;
  org: string;
  members?: Members;
  clipboard?: boolean;
}): Promise<WebOrg<Members>> {
  const [app, browser] = await Promise.allSettled([startTestApp(setup.env, { passwordHasher: cheapPasswordHasher() }), launchBrowser()]);
  if (app.status === "rejected" || browser.status === "rejected") {
    await stopWebOrg({ app: app.status === "fulfilled" ? app.value : undefined, browser: browser.status === "fulfilled" ? browser.value : undefined });
    throw app.status === "rejected" ? app.reason : (browser as PromiseRejectedResult).reason;
  }
  const started = { app: app.value, browser: browser.value };
  try {
    const owner = await newUser(started.app, { fullName: setup.owner });
    const members: TestUser[] = [];
    for (const m of setup.members ?? []) members.push(await newUser(started.app, { fullName: m.fullName }));
    const org = await newOrg(started.app, owner, setup.org);
    for (const [i, m] of (setup.members ?? []).entries()) await addMember(started.app, org.id, owner, members[i]!, m.role);
    const ctx = await started.browser.newContext();
    // The Copy buttons write to the clipboard; tests read it back.
    if (setup.clipboard) await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: started.app.url });
    const page = await ctx.newPage();
    return { ...started, org, owner, members: members as WebOrg<Members>["members"], ctx, page, watched: await watchPage(page) };
  } catch (e) {
    await stopWebOrg(started);
    throw e;
  }
}

/** Stops what startWebOrg started, the browser first; either may be missing (a beforeAll that failed). */
export async function stopWebOrg(w: { app?: TestApp; browser?: Browser } | undefined): Promise<void> {
  await w?.browser?.close();
  await w?.app?.close();
}
const SHOTS = projectPath("docs/screenshots");
type Violation = Awaited<ReturnType<AxeBuilder["analyze"]>>["violations"][number];

/**
 * Screens show addresses and times that differ on every run, so checked-in screenshots are
 * rewritten only when asked (UPDATE_SCREENSHOTS=1 npm test) or missing: a test run leaves git clean.
 */
export async function shot(p: Page, name: string, opts: { fullPage?: boolean } = { fullPage: true }): Promise<void> {
  const path = `${SHOTS}/${name}.png`;
  const image = await p.screenshot(opts);
  expect(image.length).toBeGreaterThan(0);
  if (process.env.UPDATE_SCREENSHOTS || !existsSync(path)) {
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(path, image);
  }
}

/**
 * axe-core's WCAG 2.2 AA violations on the page as it is now, as "id [impact] target". Only the
 * violations are fully worked out (resultTypes): the passes' selectors, which nothing reads, took
 * much of each run. A page without frames is checked with axe.run() in the page itself (the
 * builder's legacy mode) instead of runPartial() there and finishRun() in a new blank page, which
 * finds the same for one frame; a page with frames keeps the frame-by-frame run. Together a third
 * of the time a run took (16 runs: 28 s down to 8 s on a loaded two-core machine), and the browser
 * tests make hundreds.
 */
async function axeRun(page: Page): Promise<Violation[]> {
  const builder = new AxeBuilder({ page }).options({ resultTypes: ["violations"] });
  if (page.frames().length === 1) builder.setLegacyMode();
  const result = await builder.withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
  return result.violations;
}
const described = (violations: Violation[]) => violations.map((v) => `${v.id} [${v.impact}] ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);

/** axe-core's serious and critical findings on the page as it is now (WCAG 2.2 AA rules), as "id [impact] target". */
export async function axeProblems(page: Page): Promise<string[]> {
  return described((await axeRun(page)).filter((v) => v.impact === "serious" || v.impact === "critical"));
}

/** Collects CSP violations and console errors from now on (call before the first navigation). */
export async function watchPage(page: Page): Promise<{ problems: string[] }> {
  const problems: string[] = [];
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => console.error(`CSP ${e.violatedDirective} ${e.sample}`));
  });
  page.on("console", (m) => {
    // The sign-in page asks /sso/start?email= whether an address signs in through its organization's
    // provider; "no" is the server's 404 SSO_NOT_AVAILABLE, which Chromium logs like any 404.
    if (m.type() === "error" && /status of 404/.test(m.text()) && /\/sso\/start\?email=/.test(m.location().url ?? "")) return;
    if (m.type() === "error") problems.push(`${m.text()} ${m.location().url ?? ""}`.trim());
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  return { problems };
}

/**
 * Signs in through the hosted sign-in page, the way a person does: a signed-out visit to an address
 * of the web app is sent to sign-in first (a visitor's `/` is the welcome page, so for `/` the
 * sign-in page is opened directly), and comes back to it afterwards.
 */
export async function signInThroughPage(p: Page, appUrl: string, user: TestUser, next: string): Promise<void> {
  if (next === "/") await p.goto(`${appUrl}/login?next=%2F`);
  else await p.goto(`${appUrl}${next}`);
  await p.waitForURL(`${appUrl}/login?next=${encodeURIComponent(next)}`);
  await p.fill("#email", user.email);
  await p.click("#login-form button[type=submit]");
  await p.fill("#password", user.password);
  await p.click("#login-form button[type=submit]");
  await p.waitForURL(`${appUrl}${next}`);
}

/**
 * A screen is done when axe-core finds nothing serious or critical at desktop width, at phone width
 * (where nothing may scroll sideways) and in dark mode; screenshots of the three go to
 * docs/screenshots as web-<name>*.png. The viewport is back at desktop width afterwards. With
 * `allImpacts`, nothing at any impact at desktop width (axeViolations), in the same one axe-core run.
 */
export async function accessible(p: Page, name: string, { allImpacts = false }: { allImpacts?: boolean } = {}): Promise<void> {
  expect(await (allImpacts ? axeViolations(p) : axeProblems(p)), `${name} (desktop)`).toEqual([]);
  await shot(p, `web-${name}`);
  await p.setViewportSize({ width: 390, height: 844 });
  await shot(p, `web-${name}-phone`);
  expect(await axeProblems(p), `${name} (phone)`).toEqual([]);
  const sideways = await p.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
  expect(sideways, `${name} scrolls sideways on a phone`).toBe(false);
  await p.emulateMedia({ colorScheme: "dark" });
  expect(await axeProblems(p), `${name} (phone, dark)`).toEqual([]);
  await shot(p, `web-${name}-phone-dark`);
  await p.emulateMedia({ colorScheme: "light" });
  await p.setViewportSize({ width: 1280, height: 800 });
}

/** axe-core's findings at every impact (WCAG 2.2 AA rules), as "id [impact] target". */
export async function axeViolations(p: Page): Promise<string[]> {
  return described(await axeRun(p));
}

/** The focused element's name: its aria-label, its label's text, or its own text. */
export const focusedName = (p: Page) =>
  p.evaluate(() => {
    const el = document.activeElement as HTMLInputElement | null;
    if (!el) return "";
    return (el.getAttribute("aria-label") ?? el.labels?.[0]?.textContent ?? el.textContent ?? "").trim();
  });

/** Presses Tab until the focused element's name starts with `name` (is `name`, with `exact`). */
export async function tabTo(p: Page, name: string, { exact = false, max = 80 } = {}): Promise<void> {
  const passed: string[] = [];
  for (let i = 0; i < max; i++) {
    await p.keyboard.press("Tab");
    const label = await focusedName(p);
    passed.push(label);
    if (exact ? label === name : label.startsWith(name)) return;
  }
  throw new Error(`focus never reached ${name}; it passed ${passed.join(" | ")}`);
}

/** The API's message under the web app's field labelled `label` (present once the field is marked invalid). */
export const fieldError = (p: Page, label: string) => p.locator(".field[data-invalid]").filter({ has: p.getByLabel(label, { exact: true }) }).locator(".field-error");
