import { sql } from "drizzle-orm";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import { addMember, newOrg } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";
import type { TestApp } from "./app.js";
import type { RealDns } from "./dns.js";
import { accessible, axeViolations, watchPage } from "./web.js";

/**
 * What the single sign-on browser tests (test/e2e/web-*sso*-browser.test.ts) share: the
 * organization an admin sets single sign-on up for (with the names their screenshots show), its
 * departments and verified domain, the admin's browser context, and the checks every screen passes.
 */

export interface SsoOrg {
  org: { id: string; name: string; slug: string };
  /** Charles Babbage. */
  owner: TestUser;
  /** Ada Lovelace, an admin of the organization. */
  admin: TestUser;
}

/** The organization `name`, owned by Charles Babbage with Ada Lovelace as its admin. */
export async function ssoOrg(app: TestApp, name: string): Promise<SsoOrg> {
  const owner = await newUser(app, { fullName: "Charles Babbage" });
  const admin = await newUser(app, { fullName: "Ada Lovelace" });
  const org = await newOrg(app, owner, name);
  await addMember(app, org.id, owner, admin, "admin");
  return { org, owner, admin };
}

/** Mary Somerville, a plain member of the organization (offered none of the admin's screens). */
export async function plainMember(app: TestApp, { org, owner }: SsoOrg): Promise<TestUser> {
  const member = await newUser(app, { fullName: "Mary Somerville" });
  await addMember(app, org.id, owner, member, "member");
  return member;
}

/** A department of the organization, made by its owner; its id. */
export async function department(app: TestApp, { org, owner }: SsoOrg, name: string): Promise<string> {
  const res = await app.http.post(`/api/v1/organizations/${org.id}/departments`, { name }, { token: owner.token });
  expect(res.status, res.text).toBe(201);
  return res.body.data.department.id as string;
}

/** The admin claims `domain` and proves it by a real TXT record on `dns`. */
export async function proveDomain(app: TestApp, dns: RealDns, { org, admin }: SsoOrg, domain: string): Promise<void> {
  const claimed = await app.http.post(`/api/v1/organizations/${org.id}/domains`, { domain }, { token: admin.token });
  expect(claimed.status, claimed.text).toBe(201);
  const claim = claimed.body.data.domain as { id: string; record_name: string; record_value: string };
  await dns.setTxt({ [claim.record_name]: [claim.record_value] });
  const verified = await app.http.post(`/api/v1/organizations/${org.id}/domains/${claim.id}/verify`, {}, { token: admin.token });
  expect(verified.body.data.domain.status, verified.text).toBe("verified");
}

/** `domain` recorded as proven (the DNS proof has its own tests: domains.test.ts, web-org-sso-browser.test.ts). */
export async function verifiedDomain(app: TestApp, orgId: string, domain: string): Promise<void> {
  await app.container.db.execute(sql`insert into organization_domains (organization_id, domain, verification_token, status, verified_at) values (${orgId}, ${domain}, ${`tok-${domain}`}, 'verified', now())`);
}

/** The admin's browser: a context that may use the clipboard (the Copy buttons), one page in it, watched for console errors and CSP reports. */
export async function adminBrowser(browser: Browser, app: TestApp): Promise<{ ctx: BrowserContext; page: Page; watched: { problems: string[] } }> {
  const ctx = await browser.newContext();
  await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.url });
  const page = await ctx.newPage();
  return { ctx, page, watched: await watchPage(page) };
}

/** Stops what a test file started, the browser first; any of them may be missing (a beforeAll that failed). */
export async function stopAll(browser: Browser | undefined, app: TestApp | undefined, ...peers: Array<{ stop(): void } | undefined>): Promise<void> {
  await browser?.close();
  await app?.close();
  for (const peer of peers) peer?.stop();
}

/**
 * A screen passes: axe-core finds nothing at any impact from the top of the page, then accessible()
 * (serious and critical at desktop, phone and dark, screenshots, nothing sideways on a phone); with
 * `narrowest`, also nothing sideways and nothing from axe-core at that width.
 */
export async function checked(p: Page, name: string, { narrowest }: { narrowest?: number } = {}): Promise<void> {
  await p.evaluate(() => window.scrollTo(0, 0));
  await accessible(p, name, { allImpacts: true });
  if (!narrowest) return;
  await p.setViewportSize({ width: narrowest, height: 740 });
  expect(await p.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1), `${name} scrolls sideways at ${narrowest} px`).toBe(false);
  expect(await axeViolations(p), `${name} at ${narrowest} px`).toEqual([]);
  await p.setViewportSize({ width: 1280, height: 800 });
}

/** Waits for a status message (role=status) with this text. */
export const status = (p: Page, text: string | RegExp) => p.getByRole("status").filter({ hasText: text }).first().waitFor();

/** The organization's connections as the REST API lists them to its admin. */
export async function restConnections<T>(app: TestApp, { org, admin }: SsoOrg): Promise<T[]> {
  const res = await app.http.get(`/api/v1/organizations/${org.id}/sso/connections`, { token: admin.token });
  expect(res.status, res.text).toBe(200);
  return res.body.data.connections as T[];
}
