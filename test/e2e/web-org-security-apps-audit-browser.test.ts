import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { accessible, axeProblems, signInThroughPage, startWebOrg, stopWebOrg, watchPage } from "../helpers/web.js";
import { enrollTotp } from "../factories/mfa.js";
import type { TestUser } from "../factories/users.js";

/**
 * The web app's security, applications and audit screens of an organization (issue 32) in headless
 * Chromium: the two-step policy and who is past its deadline (with a reminder), API keys (secret
 * shown once, rename, revoke), OpenID Connect applications (register, edit, rotate the secret,
 * delete), and the activity with its filters, paging, exports and chain verification. Each action
 * once, each effect checked through the REST API (and the secrets shown through the endpoints that
 * take them); a plain member is offered none of it. Every screen passes axe-core at desktop and
 * phone width, light and dark, with no CSP violation or console error.
 */
let app: TestApp;
let browser: Browser;
let owner: TestUser;
let member: TestUser;
let page: Page;
let watched: { problems: string[] };
let org: { id: string; slug: string; name: string };
const OWNER = "Grace Hopper";
const MEMBER = "Ada Lovelace";
const DAY = 86_400;

beforeAll(async () => {
  ({ app, browser, owner, org, page, watched, members: [member] } = await startWebOrg({ owner: OWNER, org: "Difference Engines", members: [{ fullName: MEMBER, role: "member" }] }));
}, 120_000);
afterAll(() => stopWebOrg({ app, browser }));

/** A REST read as the owner (or `token`), for checking what the screens did. */
const api = (path: string, token = owner.token) => app.http.get(`/api/v1${path}`, { token });
/** accessible() with the page scrolled to its top first (full-page screenshots keep the sticky header there). */
const checked = async (p: Page, name: string) => {
  await p.evaluate(() => window.scrollTo(0, 0));
  await accessible(p, name);
};
const signIn = (p: Page, user: TestUser, next: string) => signInThroughPage(p, app.url, user, next);
const status = (p: Page, text: string | RegExp) => p.getByRole("status").filter({ hasText: text }).first().waitFor();
/** The API's message shown at the field labelled `label` (react-aria marks the field invalid). */
const fieldError = (p: Page, label: string) => p.locator(".field[data-invalid]").filter({ has: p.getByLabel(label, { exact: true }) }).locator(".field-error");

/** What the sudo check answers with `apiKey` (404 for an unknown serial: the key was accepted; 401: it was not). */
const sudoCheck = async (apiKey: string) => (await app.http.post("/api/v1/sudo/check", { api_key: apiKey, certificate_serial: "999999999" })).status;
/** Whether the OIDC provider accepts `secret` as the client's (client_secret_basic at the revocation endpoint). */
const clientAuth = async (clientId: string, secret: string) =>
  (
    await fetch(`${app.url}/api/v1/oidc/revoke`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
      body: "token=not-a-token",
    })
  ).status;

describe("an organization's security, applications and audit in Chromium", () => {
  it("shows a plain member the policy and nothing they may not do", async () => {
    const ctx = await browser.newContext();
    const theirs = await ctx.newPage();
    const problems = await watchPage(theirs);
    await signIn(theirs, member, `/orgs/${org.slug}/security`);
    await theirs.getByRole("heading", { name: "Security" }).waitFor();
    await theirs.getByText(`Two-step verification in ${org.name}:`).waitFor();
    await theirs.getByRole("link", { name: "Your passkeys and authenticator app" }).waitFor();
    const nav = theirs.getByRole("navigation", { name: `${org.name} sections` });
    expect(await nav.getByRole("link").allTextContents()).not.toEqual(expect.arrayContaining(["Applications"]));
    expect(await nav.getByRole("link", { name: "Audit" }).count()).toBe(0);
    expect(await nav.getByRole("link", { name: "Security" }).count()).toBe(1);
    expect(await theirs.getByRole("button", { name: "Save policy" }).count()).toBe(0);
    expect(await theirs.getByRole("heading", { name: "API keys" }).count()).toBe(0);
    expect(await theirs.getByRole("heading", { name: "Compliance" }).count()).toBe(0);
    await checked(theirs, "org-security-member");

    // Typed addresses: no admin action, and no request the API would refuse.
    await theirs.goto(`${app.url}/orgs/${org.slug}/apps`);
    await theirs.getByText(`Only the owner and admins of ${org.name} see and register its applications.`).waitFor();
    expect(await theirs.getByRole("button", { name: "Register an application" }).count()).toBe(0);
    await theirs.goto(`${app.url}/orgs/${org.slug}/audit`);
    await theirs.getByText(`Only the owner and admins of ${org.name} read its activity.`).waitFor();
    expect(await theirs.getByRole("link", { name: "Download JSONL" }).count()).toBe(0);
    expect(problems.problems).toEqual([]);
    await ctx.close();
  });

  it("requires two-step verification: the API's limits at their fields, then who is in grace and who is past the deadline, with a reminder", async () => {
    await signIn(page, owner, `/orgs/${org.slug}/security`);
    // The owner has a second step (enrolled after signing in), so the policy does not lock them out.
    await enrollTotp(app, owner);
    await page.getByRole("heading", { name: "Compliance" }).waitFor();
    await page.getByText(`Nobody has a deadline: two-step verification is not required in ${org.name}.`).waitFor();

    await page.getByRole("radio", { name: /Required/ }).check();
    await page.getByLabel("Grace period (days)").fill("two weeks");
    await page.getByRole("button", { name: "Save policy" }).click();
    await fieldError(page, "Grace period (days)").getByText("Enter a whole number of days, 0 or more.").waitFor();
    await page.getByLabel("Grace period (days)").fill("400");
    await page.getByRole("button", { name: "Save policy" }).click();
    // The API's own limit, at the field it is about.
    await fieldError(page, "Grace period (days)").getByText(/365/).waitFor();
    expect((await api(`/organizations/${org.id}/security-policy`)).body.data.security_policy.mfa_policy_mode).toBe("optional");

    await page.getByLabel("Grace period (days)").fill("14");
    await page.getByLabel("First reminder (days before the deadline)").fill("3");
    await page.getByRole("button", { name: "Save policy" }).click();
    await status(page, "Two-step verification is now required.");
    const policy = (await api(`/organizations/${org.id}/security-policy`)).body.data.security_policy;
    expect(policy).toMatchObject({ mfa_policy_mode: "required", mfa_grace_period_days: 14, notify_days_before: 3 });

    const row = (name: string) => page.getByRole("row", { name: new RegExp(name) });
    await row(MEMBER).getByText("In grace period").waitFor();
    await row(OWNER).getByText("Two-step on").waitFor();
    await page.getByRole("button", { name: `Send reminder to ${MEMBER}` }).click();
    await status(page, `Reminder sent to ${MEMBER}.`);
    const standing = async () => ((await api(`/organizations/${org.id}/mfa-compliance`)).body.data.members as Array<{ user_id: string; status: string; last_notified_at: string | null }>).find((m) => m.user_id === member.id)!;
    expect((await standing()).last_notified_at).not.toBeNull();
    await app.flushEmails();
    expect(app.mail.lastWith(member.email, `${org.name} requires multi-factor authentication`)).toBeTruthy();

    // Fifteen days on, the compliance pass finds the member past the deadline.
    app.clock.advance(15 * DAY);
    try {
      await app.services.mfaPolicy.runCompliance();
    } finally {
      app.clock.reset();
    }
    expect((await standing()).status).toBe("past_due");
    await page.reload();
    await row(MEMBER).getByText("Past the deadline").waitFor();
    await page.getByLabel("Show").selectOption("past_due");
    expect(await page.getByRole("row").count()).toBe(2); // the header and the member
    await page.getByLabel("Show").selectOption("all");
  });

  it("creates an API key once for a double click, shows its secret once, renames and revokes it", async () => {
    await page.getByRole("button", { name: "Create API key" }).click();
    await fieldError(page, "Key name").waitFor();
    expect((await api(`/organizations/${org.id}/api-keys`)).body.data.api_keys).toEqual([]);

    await page.getByLabel("Key name").fill("Build servers");
    await page.getByLabel("Description (optional)").fill("sudo checks on the build fleet");
    await page.getByRole("button", { name: "Create API key" }).dblclick();
    await status(page, "API key Build servers created.");
    const secret = (await page.getByRole("group", { name: "Secret of the API key Build servers" }).locator(".secret-value").textContent())!;
    expect(secret).toMatch(/^kwk_/);
    const keys = async () => (await api(`/organizations/${org.id}/api-keys`)).body.data.api_keys as Array<{ name: string; description: string; revoked_at: string | null; revoke_reason: string | null }>;
    expect(await keys()).toEqual([expect.objectContaining({ name: "Build servers", description: "sudo checks on the build fleet", revoked_at: null })]);
    expect(await sudoCheck(secret)).toBe(404);
    await checked(page, "org-security");

    await page.getByRole("button", { name: "Edit Build servers" }).click();
    await page.getByRole("form", { name: "Edit the API key Build servers" }).getByLabel("Key name").fill("Build fleet");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await status(page, "API key Build fleet saved.");
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Edit Build fleet");
    expect((await keys())[0]!.name).toBe("Build fleet");
    // Shown once: after a reload the secret is gone from the screen.
    await page.reload();
    await page.getByRole("heading", { name: "Build fleet" }).waitFor();
    expect(await page.getByText(secret).count()).toBe(0);

    await page.getByRole("button", { name: "Revoke Build fleet" }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog.getByRole("heading", { name: "Revoke the API key Build fleet?" }).waitFor();
    await dialog.getByLabel("Reason (optional)").fill("moved to a new key");
    expect(await axeProblems(page)).toEqual([]);
    await dialog.getByRole("button", { name: "Revoke key" }).click();
    await status(page, "API key Build fleet revoked.");
    expect(await keys()).toEqual([expect.objectContaining({ name: "Build fleet", revoke_reason: "moved to a new key", revoked_at: expect.any(String) })]);
    expect(await sudoCheck(secret)).toBe(401);
    await page.getByText(`Every API key of ${org.name} is revoked.`).waitFor();
    await page.getByLabel("Show 1 revoked").check();
    await page.getByRole("heading", { name: "Build fleet" }).waitFor();
  });

  it("registers an application (its URI checked by the API), edits it, rotates its secret and deletes it", async () => {
    await page.getByRole("navigation", { name: `${org.name} sections` }).getByRole("link", { name: "Applications" }).click();
    await page.getByText("No applications yet.").waitFor();
    await page.getByRole("button", { name: "Register an application" }).click();
    const form = page.getByRole("form", { name: "Register an application" });
    await form.getByLabel("Name", { exact: true }).fill("Team wiki");
    await form.getByLabel("Redirect URIs", { exact: true }).fill("http://wiki.example.com/callback");
    await form.getByRole("button", { name: "Register" }).click();
    await fieldError(page, "Redirect URIs").getByText(/^Line 1: must be https/).waitFor();
    await checked(page, "org-apps-register");
    const clients = async () => (await api(`/organizations/${org.id}/clients`)).body.data.clients as Array<Record<string, unknown>>;
    expect(await clients()).toEqual([]);

    // A public application cannot act as itself: the API says so at the grants.
    await form.getByLabel("Redirect URIs", { exact: true }).fill("https://wiki.example.com/callback");
    await form.getByRole("radio", { name: /Public/ }).check();
    await form.getByRole("checkbox", { name: /Client credentials/ }).check();
    await form.getByRole("button", { name: "Register" }).click();
    await form.locator("fieldset[data-invalid]").getByText("client_credentials needs a confidential client").waitFor();
    expect(await clients()).toEqual([]);
    await form.getByRole("radio", { name: /Confidential/ }).check();
    await form.getByRole("checkbox", { name: /Client credentials/ }).uncheck();

    await form.getByLabel("Redirect URIs after sign-out").fill("https://wiki.example.com/");
    await form.getByLabel("ID token signing algorithm").selectOption("ES256");
    await form.getByRole("button", { name: "Register" }).dblclick();
    await status(page, "Team wiki registered: copy its secret now.");
    const first = (await page.getByRole("group", { name: "Client secret of Team wiki" }).locator(".secret-value").textContent())!;
    const [registered] = await clients();
    expect(await clients()).toHaveLength(1);
    expect(registered).toMatchObject({
      name: "Team wiki",
      redirect_uris: ["https://wiki.example.com/callback"],
      post_logout_redirect_uris: ["https://wiki.example.com/"],
      grant_types: ["authorization_code", "refresh_token"],
      id_token_signed_response_alg: "ES256",
      public: false,
    });
    const clientId = registered!.client_id as string;
    await page.getByText(clientId).first().waitFor();
    expect(await clientAuth(clientId, first)).toBe(200);
    await checked(page, "org-apps");

    await page.getByRole("button", { name: "Edit Team wiki" }).click();
    const edit = page.getByRole("form", { name: "Edit Team wiki" });
    await edit.getByLabel("Name", { exact: true }).fill("Wiki");
    await edit.getByLabel("Redirect URIs", { exact: true }).fill("https://wiki.example.com/callback\nhttps://wiki.example.org/callback");
    await edit.getByRole("checkbox", { name: /Device code/ }).check();
    await edit.getByRole("button", { name: "Save" }).click();
    await status(page, "Wiki saved.");
    // Focus comes back to where the edit started.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Edit Wiki");
    expect((await clients())[0]).toMatchObject({
      name: "Wiki",
      redirect_uris: ["https://wiki.example.com/callback", "https://wiki.example.org/callback"],
      grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
    });

    await page.getByRole("button", { name: "Rotate secret of Wiki" }).click();
    let dialog = page.getByRole("alertdialog");
    await dialog.getByText("The current secret of Wiki stops working at once").waitFor();
    await dialog.getByRole("button", { name: "Rotate secret" }).click();
    await status(page, "Wiki has a new secret: copy it now.");
    const second = (await page.getByRole("group", { name: "Client secret of Wiki" }).locator(".secret-value").textContent())!;
    expect(second).not.toBe(first);
    expect(await clientAuth(clientId, second)).toBe(200);
    expect(await clientAuth(clientId, first)).toBe(401);

    await page.getByRole("button", { name: "Delete Wiki" }).click();
    dialog = page.getByRole("alertdialog");
    await dialog.getByText("Nobody can sign in to Wiki with Keyward any more").waitFor();
    await dialog.getByRole("button", { name: "Delete application" }).click();
    await status(page, "Wiki was deleted.");
    expect(await clients()).toEqual([]);
    expect(await clientAuth(clientId, second)).toBe(401);
    await page.getByText("No applications yet.").waitFor();
  });

  it("lists the activity with filters and cursor paging, downloads the chain; an admin verifies it, an operator every chain", async () => {
    // Enough records for a second page.
    for (let i = 0; i < 26; i++) expect((await app.http.patch(`/api/v1/organizations/${org.id}`, { description: `Revision ${i}` }, { token: owner.token })).status).toBe(200);
    const rest = async (query: string) => (await api(`/organizations/${org.id}/audit-logs?limit=200${query}`)).body.data.audit_logs as Array<{ id: string; action: string; created_at: string }>;

    await page.getByRole("navigation", { name: `${org.name} sections` }).getByRole("link", { name: "Audit" }).click();
    const list = page.getByRole("list", { name: `Activity of ${org.name}` });
    await list.getByRole("listitem").first().waitFor();
    expect(await list.locator(":scope > li").count()).toBe(25);
    await page.getByRole("button", { name: "Show older" }).click();
    const all = await rest("");
    await expect.poll(() => list.locator(":scope > li").count()).toBe(Math.min(all.length, 50));

    await page.getByLabel("Event").selectOption("api_key.created");
    await expect.poll(() => list.locator(":scope > li").count()).toBe(1);
    await list.getByText("API key created").waitFor();
    expect(await rest("&action=api_key.created")).toHaveLength(1);
    await page.getByLabel("Event").selectOption("");
    await page.getByLabel("Person").selectOption({ label: `${MEMBER} (${member.email})` });
    const aboutMember = await rest(`&user_id=${member.id}`);
    expect(aboutMember.length).toBeGreaterThan(0);
    await expect.poll(() => list.locator(":scope > li").count()).toBe(aboutMember.length);
    await list.getByText("Two-step reminder sent").waitFor();
    await checked(page, "org-audit");
    await page.getByLabel("Event").selectOption("ssh.cert.revoked");
    await page.getByText("Nothing matches these filters.").waitFor();
    await page.getByRole("button", { name: "Clear filters" }).click();
    // Days in the reader's zone (the browser's is the machine's). The two-step test above wrote a record
    // on a clock 15 days ahead, so the days are those of the oldest and newest records: from the first
    // to the last holds everything, the day after the last nothing.
    const times = all.map((e) => Date.parse(e.created_at));
    const day = (t: number) => {
      const d = new Date(t);
      return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
    };
    const newest = Math.max(...times);
    const dayAfter = new Date(newest);
    dayAfter.setHours(24, 0, 0, 0);
    await page.getByLabel("From", { exact: true }).fill(day(dayAfter.getTime()));
    await page.getByText("Nothing matches these filters.").waitFor();
    await page.getByLabel("From", { exact: true }).fill(day(Math.min(...times)));
    await page.getByLabel("To", { exact: true }).fill(day(newest));
    await expect.poll(() => list.locator(":scope > li").count()).toBe(25);
    expect(await rest(`&since=${encodeURIComponent(dayAfter.toISOString())}`)).toEqual([]);
    expect(await rest(`&until=${encodeURIComponent(dayAfter.toISOString())}`)).toHaveLength(all.length);
    expect((await api(`/organizations/${org.id}/audit-logs?since=yesterday`)).status).toBe(400);
    await page.getByRole("button", { name: "Clear filters" }).click();
    // Back to everything, with the pages already shown.
    await expect.poll(() => list.locator(":scope > li").count()).toBe(Math.min(all.length, 50));

    // The exports are plain links to the REST API, on the browser's session.
    for (const [name, type, start] of [
      ["Download JSONL", "application/x-ndjson", /^\{/],
      ["Download CSV", "text/csv", /^type,chain,seq,prev_hash,hash,/],
    ] as const) {
      const href = (await page.getByRole("link", { name }).getAttribute("href"))!;
      const res = await page.request.get(`${app.url}${href}`);
      expect(res.status(), name).toBe(200);
      expect(res.headers()["content-type"]).toContain(type);
      expect(res.headers()["content-disposition"]).toMatch(/^attachment; filename="audit-org-/);
      expect(await res.text()).toMatch(start);
    }
    expect(await rest("&action=audit.chain.exported")).toHaveLength(2);
    expect(await page.getByRole("button", { name: "Verify the audit chains" }).count()).toBe(0);

    // The organization's admins verify its chain; the outcome stays (here, on their home, in the API).
    await page.getByText(`The chain of ${org.name} has not been verified yet.`).waitFor();
    await page.getByRole("button", { name: "Verify the chain now" }).click();
    await status(page, new RegExp(`^The chain of ${org.name} verifies: `));
    const kept = (await api(`/organizations/${org.id}/audit/verification`)).body.data.check;
    expect(kept).toMatchObject({ chain: org.id, ok: true, break: null });
    expect(await rest("&action=audit.chain.verified")).toEqual([expect.objectContaining({ success: true })]);
    await page.reload();
    await status(page, new RegExp(`^The chain of ${org.name} verifies: `));

    // An operator (superadmin) verifies the chains from here.
    await app.services.operators.setSuperadmin({ actor: { kind: "anonymous" }, requestId: "test", ip: null, userAgent: null }, owner.email, true);
    await page.reload();
    await page.getByRole("button", { name: "Verify the audit chains" }).click();
    await status(page, `The chain of ${org.name} verifies.`);
    const verified = (await api("/audit-logs?action=audit.chain.verified")).body.data.audit_logs as Array<{ success: boolean; organization_id: string | null }>;
    expect(verified).toEqual([expect.objectContaining({ success: true, organization_id: null }), expect.objectContaining({ success: true, organization_id: org.id })]);
    expect(watched.problems).toEqual([]);
  });
});
