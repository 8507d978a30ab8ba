import { sql } from "drizzle-orm";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cheapPasswordHasher, startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { startFakeZtCentral, type FakeZtCentral } from "../helpers/fake-zt-central.js";
import { SoftAuthenticator } from "../helpers/soft-authenticator.js";
import { accessible, signInThroughPage, watchPage } from "../helpers/web.js";
import { enrollTotp } from "../factories/mfa.js";
import { registerClient } from "../factories/oidc.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { makeKey } from "../factories/ssh.js";
import { login, newUser, PASSWORD, type TestUser } from "../factories/users.js";

/**
 * The operators' screens of the web app (/admin/…, issue 32) in headless Chromium, as a superadmin
 * uses them: accounts (search, the deleted ones, one account's organizations, two-step methods,
 * linked accounts, SSH keys and audit; suspend and lift, mark verified, set a password, remove
 * two-step methods, unlink, make and unmake a superadmin, delete and restore), every organization,
 * GitHub and Google sign-in settings (the secret never shown back), the built-in clients and any
 * application's API scopes, the system audit log with its filters, paging and chain, the email
 * outbox (send again), and the global kill switch (what it cuts named before it cuts, lifted after)
 * against the local stand-in of ZeroTier Central. Each action once, each effect checked through the
 * REST API; every screen passes axe-core at desktop and phone width, light and dark, with no CSP
 * violation or console error. Someone who is not an operator meets a page that says whose it is.
 */
const TOKEN = "web-admin-central-token-0123456789";
const LAB = "8056c2e21c00adf1";
const ADA_NODE = "adadadad01";

let central: FakeZtCentral;
let app: TestApp;
let browser: Browser;
let root: TestUser;
let grace: TestUser;
let ada: TestUser;
let alan: TestUser;
let bob: TestUser;
let carol: TestUser;
let org: { id: string; slug: string; name: string };
let ctx: BrowserContext;
let page: Page;
let watched: { problems: string[] };
const otherProblems: string[] = [];

beforeAll(async () => {
  central = await startFakeZtCentral();
  central.addToken(TOKEN);
  central.addNetwork(LAB, { name: "Lab" });
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false", ZEROTIER_CENTRAL_URL: central.url, NETWORK_CONTROLLER_RETRIES: "0" }, { passwordHasher: cheapPasswordHasher() });
  browser = await launchBrowser();
  root = await newUser(app, { fullName: "Margaret Hamilton" });
  await app.services.operators.setSuperadmin({ actor: { kind: "anonymous" }, requestId: "test", ip: null, userAgent: null }, root.email, true);
  grace = await newUser(app, { fullName: "Grace Hopper" });
  ada = await newUser(app, { fullName: "Ada Lovelace" });
  alan = await newUser(app, { fullName: "Alan Turing" });
  bob = await newUser(app, { fullName: "Bob Kahn" });
  carol = await newUser(app, { fullName: "Carol Shaw", verify: false });
  org = await newOrg(app, grace, "Analytical Engines");
  await addMember(app, org.id, grace, ada, "member");

  // Ada's two-step methods: an authenticator app and two passkeys.
  await enrollTotp(app, ada);
  for (const name of ["Laptop", "Phone"]) {
    const authenticator = new SoftAuthenticator(app.url, "localhost");
    const begin = await app.http.post("/api/v1/auth/webauthn/register/begin", {}, { token: ada.token });
    const done = await app.http.post("/api/v1/auth/webauthn/register/complete", { challenge_id: begin.body.data.challenge_id, response: authenticator.register(begin.body.data.options), name }, { token: ada.token });
    expect(done.status, done.text).toBe(201);
  }
  // A GitHub account linked to Ada's (linking itself runs through GitHub: web-account-browser.test.ts).
  await app.container.db.execute(sql`insert into external_identities (user_id, provider, subject, email, username) values (${ada.id}, 'github', 'gh-1815', ${ada.email}, 'ada-gh')`);
  // An SSH key of Ada's.
  const key = await app.http.post("/api/v1/ssh/keys", { key: makeKey().pub, description: "Engine room" }, { token: ada.token });
  expect(key.status, key.text).toBeLessThan(300);

  // Ada is on the Lab network of Analytical Engines, with an activation running.
  const O = `/api/v1/organizations/${org.id}`;
  const call = async (method: string, path: string, user: TestUser, body?: Record<string, unknown>) => {
    const res = await app.http.request(method, `${O}${path}`, { token: user.token, ...(body ? { body } : {}) });
    expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
    return res.body.data;
  };
  await call("PUT", "/zerotier-config", grace, { zt_api_mode: "central", zt_api_token: TOKEN });
  const lab = (await call("POST", "/networks", grace, { name: "Lab", zerotier_network_id: LAB })).network;
  const device = (await call("POST", "/devices", ada, { node_id: ADA_NODE, nickname: "Ada's laptop" })).device;
  const approval = (await call("POST", "/approvals", ada, { portal_network_id: lab.id, device_id: device.id, justification: "experiments" })).approval;
  await call("POST", `/approvals/${approval.id}/approve`, grace, {});
  const membership = (await call("GET", "/memberships", ada)).memberships[0];
  await call("POST", `/memberships/${membership.id}/activate`, ada, { lifetime_minutes: 60 });
  expect(central.member(LAB, ADA_NODE)?.config.authorized).toBe(true);

  // A message the outbox gave up on.
  while ((await app.flushEmails()) > 0);
  await app.container.db.execute(sql`update email_outbox set status = 'dead', attempts = 8, last_error = '550 5.1.1 mailbox unavailable', sent_at = null where id = (select id from email_outbox where to_address = ${bob.email} order by created_at limit 1)`);

  ctx = await browser.newContext();
  page = await ctx.newPage();
  watched = await watchPage(page);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await central?.close();
});

/** A REST read as the operator, for checking what the screens did. */
const api = async (path: string, user = root) => {
  const res = await app.http.get(`/api/v1${path}`, { token: user.token });
  expect(res.status, `GET ${path}: ${res.text}`).toBe(200);
  return res.body.data;
};
/** accessible() with the page scrolled to its top first (the sticky header must not cover links). */
const checked = async (p: Page, name: string) => {
  await p.evaluate(() => window.scrollTo(0, 0));
  await accessible(p, name);
};
const status = (text: string | RegExp) => page.getByRole("status").filter({ hasText: text }).first().waitFor();
const dialog = () => page.getByRole("alertdialog");
const nav = () => page.getByRole("navigation", { name: "Operator sections" });
const open = async (link: string, heading: string) => {
  await page.evaluate(() => window.scrollTo(0, 0));
  await nav().getByRole("link", { name: link, exact: true }).click();
  await page.getByRole("heading", { level: 1, name: heading }).waitFor();
};
const openAccount = async (user: TestUser, name: string) => {
  await page.goto(`${app.url}/admin/accounts?q=${encodeURIComponent(user.email)}`);
  await page.getByRole("link", { name }).click();
  await page.getByRole("heading", { level: 1, name }).waitFor();
};

describe("the operators' screens in the web app", () => {
  it("shows someone who is not an operator a page for Keyward's operators, and no way in", async () => {
    const theirs = await browser.newContext();
    const p = await theirs.newPage();
    const problems = await watchPage(p);
    await signInThroughPage(p, app.url, grace, "/admin");
    await p.getByRole("heading", { level: 1, name: "For Keyward's operators" }).waitFor();
    expect(await p.getByRole("navigation", { name: "Operator sections" }).count()).toBe(0);
    await p.goto(`${app.url}/admin/accounts`);
    await p.getByRole("heading", { level: 1, name: "For Keyward's operators" }).waitFor();
    await p.getByRole("button", { name: "Grace Hopper" }).click();
    await p.locator("#person-menu").getByRole("link", { name: "My account" }).waitFor();
    expect(await p.locator("#person-menu").getByRole("link", { name: "Operators" }).count()).toBe(0);
    await p.getByRole("button", { name: "Grace Hopper" }).click();
    await checked(p, "admin-refusal");
    // The API refuses them whatever the page shows.
    expect((await app.http.get("/api/v1/superadmin/organizations", { token: grace.token })).status).toBe(403);
    expect((await app.http.gql("{ adminOrganizations { count } }", {}, { token: grace.token })).errors[0].extensions.code).toBe("AUTHORIZATION_ERROR");
    otherProblems.push(...problems.problems);
    await theirs.close();
  });

  it("signs an operator in to the overview, reached from the person menu, with what needs them", async () => {
    await signInThroughPage(page, app.url, root, "/");
    await page.getByRole("button", { name: "Margaret Hamilton" }).click();
    await page.getByRole("link", { name: "Operators" }).click();
    await page.waitForURL(`${app.url}/admin`);
    await page.getByRole("heading", { level: 1, name: "Operators" }).waitFor();
    expect(await nav().getByRole("link").allTextContents()).toEqual(["Overview", "Accounts", "Organizations", "Sign-in providers", "Built-in clients", "Audit log", "Email outbox", "Kill switch"]);
    const needs = page.getByRole("list", { name: "What needs an operator" });
    await needs.getByText("1 email not delivered").waitFor();
    await needs.getByText("GitHub and Google sign-in off").waitFor();
    const accounts = (await api("/superadmin/users?per_page=1")).count;
    expect(await page.locator(".facts div").filter({ has: page.getByText("Accounts", { exact: true }) }).locator("dd").textContent()).toBe(String(accounts));
    await checked(page, "admin-overview");
  });

  it("finds accounts by address, lists operators, and opens one with everything about it", async () => {
    await open("Accounts", "Accounts");
    await page.getByLabel("Email or name").fill("Lovelace");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/\/admin\/accounts\?q=Lovelace/);
    const table = page.getByRole("region", { name: "Accounts" });
    await expect.poll(() => table.locator("tbody tr").count()).toBe(1);
    await table.getByRole("link", { name: "Ada Lovelace" }).waitFor();
    await table.getByText("Analytical Engines (member)").waitFor();
    await page.getByLabel("Email or name").fill("nobody-at-all");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("No account matches “nobody-at-all”.").waitFor();
    await page.getByRole("button", { name: "Show all accounts" }).click();
    await page.getByLabel("Show").selectOption("superadmins");
    await page.waitForURL(/show=superadmins/);
    await expect.poll(() => table.locator("tbody tr").count()).toBe(1);
    await table.getByRole("link", { name: "Margaret Hamilton" }).waitFor();
    await page.getByLabel("Show").selectOption("all");
    await page.locator("p.pager").filter({ hasText: /^\d+ accounts$/ }).waitFor();
    await checked(page, "admin-accounts");

    await openAccount(ada, "Ada Lovelace");
    await page.getByRole("list", { name: "Ada Lovelace's two-step methods" }).getByText("Passkey Laptop").waitFor();
    await page.getByRole("list", { name: "Ada Lovelace's linked accounts" }).getByText("GitHub: ada-gh").waitFor();
    await page.getByRole("list", { name: "SSH keys" }).getByText("Engine room").waitFor();
    await page.getByRole("list", { name: "Audit records about Ada Lovelace" }).getByText("Passkey added").first().waitFor();
    await page.getByText("Analytical Engines").first().waitFor();
    await checked(page, "admin-account");
  });

  it("cuts a person off every network everywhere after naming what it cuts, and lifts it", async () => {
    // From the account just opened.
    await page.getByRole("link", { name: "Cut off networks everywhere…" }).click();
    await page.getByRole("heading", { level: 1, name: "Global kill switch" }).waitFor();
    const reach = page.getByRole("region", { name: "Network access of Ada Lovelace" });
    await reach.locator("tr").filter({ hasText: "Analytical Engines" }).filter({ hasText: "Lab" }).filter({ hasText: "Ada's laptop" }).getByText(/left$/).waitFor();
    await page.getByText("Nobody is cut off everywhere.").waitFor();
    await checked(page, "admin-kill-switch");

    // Finding the person by name works as well.
    await page.getByRole("search", { name: "Find the person" }).getByLabel("Email or name").fill("Lovelace");
    await page.getByRole("search", { name: "Find the person" }).getByRole("button", { name: "Find" }).click();
    await page.getByLabel("Person", { exact: true }).selectOption({ label: `Ada Lovelace (${ada.email})` });
    await page.getByLabel("Reason").fill("Laptop left on a train");
    await page.getByRole("button", { name: "Cut Ada Lovelace off everywhere…" }).click();
    await dialog().getByText("Ends 1 running activation: Ada's laptop on Lab (Analytical Engines).").waitFor();
    await dialog().getByText("Deauthorizes 1 device at the controllers: Ada's laptop (Analytical Engines).").waitFor();
    await dialog().getByText("Reason: “Laptop left on a train”").waitFor();
    await dialog().getByRole("button", { name: "Cut Ada Lovelace off" }).click();
    await status("Ada Lovelace is cut off everywhere: 1 activation ended.");
    expect(central.member(LAB, ADA_NODE)?.config.authorized).toBe(false);
    const inForce = (await api("/superadmin/kill-switch?in_force=true")).events;
    expect(inForce).toEqual([expect.objectContaining({ reason: "Laptop left on a train", target: expect.objectContaining({ id: ada.id }), lifted_at: null })]);
    await page.getByText("Ada Lovelace is already cut off everywhere").waitFor();
    const table = page.getByRole("region", { name: "Global kill switches in force" });
    await table.getByText("Laptop left on a train").waitFor();
    await checked(page, "admin-kill-switch-in-force");

    // Home tells an operator what needs them: the person cut off, and the message never delivered.
    await page.goto(`${app.url}/`);
    const needs = page.getByRole("list", { name: "What needs an operator" });
    await needs.getByText("1 person is cut off every network by a global kill switch.").waitFor();
    await needs.getByText("1 email was not delivered.").waitFor();
    await checked(page, "home-operator");
    await needs.getByRole("link", { name: "Review" }).click();
    await page.getByRole("heading", { level: 1, name: "Global kill switch" }).waitFor();

    await table.getByRole("button", { name: "Lift the kill switch on Ada Lovelace" }).click();
    await dialog().getByText("comes back in every organization as it was approved").waitFor();
    await dialog().getByRole("button", { name: "Lift kill switch" }).click();
    await status("The kill switch on Ada Lovelace was lifted.");
    expect((await api("/superadmin/kill-switch?in_force=true")).events).toEqual([]);
    const lifted = (await api("/superadmin/kill-switch?in_force=false")).events;
    expect(lifted[0]).toMatchObject({ target: expect.objectContaining({ id: ada.id }), lifted_by: expect.objectContaining({ id: root.id }) });
    await page.getByRole("region", { name: "Lifted global kill switches" }).getByText("Laptop left on a train").waitFor();
    await page.getByText("Nobody is cut off everywhere.").waitFor();
  });

  it("suspends an account with a reason and lifts the suspension", async () => {
    await openAccount(ada, "Ada Lovelace");
    await page.getByRole("button", { name: "Suspend…" }).click();
    await dialog().getByText("is signed out everywhere at once").waitFor();
    await dialog().getByLabel("Reason (sent to them)").fill("Laptop reported stolen");
    await dialog().getByRole("button", { name: "Suspend account" }).click();
    await status("Ada Lovelace is suspended");
    expect((await api(`/admin/users/${ada.id}`)).user.status).toBe("suspended");
    expect((await login(app, ada.email)).body.error.type).toBe("ACCOUNT_SUSPENDED");
    await page.getByRole("button", { name: "Lift the suspension" }).click();
    await dialog().getByRole("button", { name: "Lift suspension" }).click();
    await status("Ada Lovelace can sign in again.");
    expect((await api(`/admin/users/${ada.id}`)).user.status).toBe("active");
    await page.getByRole("list", { name: "Audit records about Ada Lovelace" }).getByText("Account suspended").waitFor();
  });

  it("sets a password: the API's refusal at the field, then the new one signs in", async () => {
    await page.getByRole("button", { name: "Set a password…" }).click();
    await dialog().getByLabel("New password").fill("short");
    await dialog().getByRole("button", { name: "Set password" }).click();
    await dialog().locator(".field[data-invalid]").filter({ has: page.getByLabel("New password") }).locator(".field-error").waitFor();
    const fresh = "a brand new passphrase for ada";
    await dialog().getByLabel("New password").fill(fresh);
    await dialog().getByRole("button", { name: "Set password" }).click();
    await status("Ada Lovelace's password was set");
    expect((await login(app, ada.email, fresh)).status).toBe(200);
    expect((await login(app, ada.email, PASSWORD)).status).toBe(401);
  });

  it("removes a passkey, the authenticator app, then every remaining method; unlinks GitHub", async () => {
    const mfa = async () => api(`/admin/users/${ada.id}/mfa`);
    await page.getByRole("button", { name: "Remove passkey Laptop" }).click();
    await dialog().getByText("The passkey no longer signs them in.").waitFor();
    await dialog().getByRole("button", { name: "Remove passkey" }).click();
    await status("Passkey Laptop was removed");
    expect((await mfa()).webauthn.map((c: { name: string }) => c.name)).toEqual(["Phone"]);

    await page.getByRole("button", { name: "Remove Ada Lovelace's authenticator app" }).click();
    await dialog().getByRole("button", { name: "Remove authenticator app" }).click();
    await status("Ada Lovelace's authenticator app was removed");
    expect((await mfa()).totp_enabled).toBe(false);

    await page.getByRole("button", { name: "Remove every two-step method…" }).click();
    await dialog().getByRole("button", { name: "Remove all methods" }).click();
    await status("Ada Lovelace's two-step methods were removed");
    expect(await mfa()).toMatchObject({ totp_enabled: false, webauthn: [] });
    await page.getByText("Ada Lovelace has no second step").waitFor();

    await page.getByRole("button", { name: "Unlink GitHub from Ada Lovelace" }).click();
    await dialog().getByText("can no longer sign in with GitHub").waitFor();
    await dialog().getByRole("button", { name: "Unlink GitHub" }).click();
    await status("GitHub was unlinked from Ada Lovelace.");
    expect((await api(`/admin/users/${ada.id}/linked-accounts`)).linked_accounts).toEqual([]);
  });

  it("marks an unverified address verified after a confirmation", async () => {
    await openAccount(carol, "Carol Shaw");
    await page.getByText("not verified", { exact: true }).waitFor();
    await page.getByRole("button", { name: "Mark the address verified…" }).click();
    await dialog().getByText("Do this only if you checked another way").waitFor();
    await dialog().getByRole("button", { name: "Mark verified" }).click();
    await status(`${carol.email} is marked verified.`);
    expect((await api(`/admin/users/${carol.id}`)).user.email_verified).toBe(true);
    await expect.poll(() => page.getByRole("button", { name: "Mark the address verified…" }).count()).toBe(0);
  });

  it("makes an account a superadmin and takes it back; an operator's own account offers neither", async () => {
    await openAccount(alan, "Alan Turing");
    await page.getByRole("button", { name: "Make superadmin…" }).click();
    await dialog().getByText("gets every operator power").waitFor();
    await dialog().getByRole("button", { name: "Make superadmin" }).click();
    await status("Alan Turing is now a superadmin.");
    expect((await api(`/admin/users/${alan.id}`)).user.is_superadmin).toBe(true);
    await page.getByRole("button", { name: "Remove superadmin…" }).click();
    await dialog().getByRole("button", { name: "Remove superadmin" }).click();
    await status("Alan Turing is no longer a superadmin.");
    expect((await api(`/admin/users/${alan.id}`)).user.is_superadmin).toBe(false);

    await openAccount(root, "Margaret Hamilton");
    await page.getByText("This is your own account").waitFor();
    expect(await page.getByRole("button", { name: /superadmin/ }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^Delete/ }).count()).toBe(0);
  });

  it("deletes an account after its address is typed, and restores it from the deleted accounts", async () => {
    await openAccount(bob, "Bob Kahn");
    await page.getByRole("button", { name: "Delete Bob Kahn…" }).click();
    const confirm = dialog().getByRole("button", { name: "Delete account" });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog().getByLabel(/Type .* to confirm/).fill(bob.email);
    await confirm.click();
    await page.getByRole("heading", { level: 1, name: "Account deleted" }).waitFor();
    expect((await app.http.get(`/api/v1/admin/users/${bob.id}`, { token: root.token })).status).toBe(404);
    expect((await login(app, bob.email)).status).toBe(401);

    await page.getByRole("link", { name: "Deleted accounts" }).click();
    await page.waitForURL(/show=deleted/);
    const deleted = page.getByRole("region", { name: "Deleted accounts" });
    await deleted.getByText("Bob Kahn").waitFor();
    await checked(page, "admin-accounts-deleted");
    await deleted.getByRole("button", { name: "Restore Bob Kahn" }).click();
    await dialog().getByRole("button", { name: "Restore account" }).click();
    await status(`${bob.email} was restored`);
    expect((await api(`/admin/users/${bob.id}`)).user.email).toBe(bob.email);
    await page.getByText("No account has been deleted.").waitFor();
  });

  it("lists every organization with its members counted and its owners", async () => {
    await open("Organizations", "Organizations");
    const table = page.getByRole("region", { name: "Organizations" });
    const row = table.locator("tr").filter({ hasText: "Analytical Engines" });
    await row.waitFor();
    expect(await row.locator("td").nth(1).textContent()).toBe("2");
    await row.getByRole("link", { name: "Grace Hopper" }).waitFor();
    const listed = (await api(`/superadmin/organizations?q=${org.slug}`)).organizations;
    expect(listed).toEqual([expect.objectContaining({ id: org.id, member_count: 2 })]);
    await page.getByLabel("Name or address").fill("no such organization");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("No organization matches “no such organization”.").waitFor();
    await page.getByLabel("Name or address").fill("");
    await page.getByRole("button", { name: "Search" }).click();
    await row.waitFor();
    await checked(page, "admin-organizations");
  });

  it("configures GitHub sign-in: field errors at their fields, the secret never shown back; removes it", async () => {
    await open("Sign-in providers", "Sign-in providers");
    const github = page.getByRole("form", { name: "GitHub sign-in settings" });
    await page.getByRole("group", { name: "GitHub callback URL" }).getByText(`${app.url}/api/v1/auth/external/github/callback`).waitFor();
    await github.getByLabel("Client ID").fill("Iv1.0123456789abcdef");
    await github.getByRole("button", { name: "Save GitHub" }).click();
    await github.locator(".field[data-invalid]").filter({ has: page.getByLabel("Client secret") }).getByText("required when configuring").waitFor();
    const secret = "gh-secret-4f1c2a9b8e7d6c5b";
    await github.getByLabel("Client secret").fill(secret);
    await github.getByLabel("Scopes").fill("read:user user:email");
    await github.getByRole("button", { name: "Save GitHub" }).dblclick();
    await status("GitHub sign-in was saved: it is on.");
    const providers = async () => (await api("/admin/oauth/providers")).providers as Array<Record<string, unknown>>;
    expect((await providers()).find((p) => p.provider === "github")).toMatchObject({ source: "database", client_id: "Iv1.0123456789abcdef", has_client_secret: true, is_enabled: true, scopes: ["read:user", "user:email"] });
    expect(await page.content()).not.toContain(secret);
    expect(await github.getByLabel("Client secret").inputValue()).toBe("");
    await page.getByRole("region", { name: "GitHub" }).getByText("secret stored").waitFor();
    await checked(page, "admin-sign-in");

    await github.getByRole("button", { name: "Remove the stored settings…" }).click();
    await dialog().getByText("The client ID and sealed secret stored here are deleted").waitFor();
    await dialog().getByRole("button", { name: "Remove settings" }).click();
    await status("GitHub's stored settings were removed.");
    expect((await providers()).find((p) => p.provider === "github")).toMatchObject({ source: "none", has_client_secret: false });
  });

  it("changes the built-in client's lifetimes and API scopes, and another application's scopes", async () => {
    await open("Built-in clients", "Built-in clients");
    const form = page.getByRole("form", { name: "Settings of Keyward command-line client" });
    const access = form.getByLabel("Access tokens last (seconds)");
    await access.fill("soon");
    await form.getByRole("button", { name: /^Save/ }).click();
    await form.locator(".field[data-invalid]").getByText("Enter a whole number of seconds.").waitFor();
    await access.fill("30");
    await form.getByRole("button", { name: /^Save/ }).click();
    await form.locator(".field[data-invalid]").filter({ has: page.getByLabel("Access tokens last (seconds)") }).locator(".field-error").waitFor();
    await access.fill("600");
    await form.getByRole("checkbox", { name: /networks:activate/ }).uncheck();
    await form.getByRole("button", { name: /^Save/ }).click();
    await status("Keyward command-line client was saved.");
    const cli = (await api("/admin/oidc-clients/keyward-cli")).client;
    expect(cli.access_token_ttl).toBe(600);
    expect(cli.allowed_api_scopes).toEqual(["orgs:read", "profile:read", "ssh:keys", "ssh:sign"]);
    await checked(page, "admin-clients");

    const wiki = await registerClient(app, org.id, grace, { name: "Team Wiki" });
    const finder = page.getByRole("search", { name: "Find an application" });
    await finder.getByLabel("Client ID").fill(wiki.clientId);
    await finder.getByRole("button", { name: "Find" }).click();
    const scopes = page.getByRole("form", { name: "API scopes of Team Wiki" });
    await scopes.getByRole("checkbox", { name: /profile:read/ }).check();
    await scopes.getByRole("button", { name: "Save scopes" }).click();
    await status("Team Wiki may now ask for profile:read.");
    expect((await api(`/admin/oidc-clients/${wiki.clientId}`)).client.allowed_api_scopes).toEqual(["profile:read"]);
  });

  it("reads the system audit log: filtered, searched, paged; verifies and exports the chain", async () => {
    await open("Audit log", "Audit log");
    const records = page.getByRole("list", { name: "Audit records" });
    await records.locator("li").first().waitFor();
    const pager = page.getByRole("navigation", { name: "Pages of records" });
    await pager.getByText(/^Page 1 of \d+ · \d+ records$/).waitFor();
    await pager.getByRole("button", { name: "Next" }).click();
    await pager.getByText(/^Page 2 of/).waitFor();

    await page.getByLabel("Event").selectOption("user.suspend");
    await records.getByText("Account suspended").first().waitFor();
    await page.locator("p.pager").filter({ hasText: /^1 record$/ }).waitFor();
    await records.getByRole("link", { name: `Ada Lovelace (${ada.email})` }).waitFor();
    await records.getByRole("link", { name: `Margaret Hamilton (${root.email})` }).waitFor();
    const viaApi = (await api("/audit-logs?action=user.suspend")).audit_logs;
    expect(viaApi).toHaveLength(1);

    await page.getByLabel("Event").selectOption("");
    await page.getByLabel("Outcome").selectOption("failed");
    await page.getByLabel("Search").fill(ada.email);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("No record matches these filters.").waitFor();
    await page.getByRole("button", { name: "Clear filters" }).click();
    await pager.getByText(/^Page 1 of/).waitFor();
    await checked(page, "admin-audit");

    await page.getByRole("button", { name: "Verify every chain now" }).click();
    await status(/Every chain verifies\.|A chain is broken\./);
    const href = await page.getByRole("link", { name: "Download the global chain (JSONL)" }).getAttribute("href");
    const download = await page.request.get(`${app.url}${href}`);
    expect(download.status()).toBe(200);
    expect((await download.text()).split("\n")[0]).toContain("{");
  });

  it("shows the outbox by status and sends a message it gave up on again", async () => {
    await open("Email outbox", "Email outbox");
    await page.getByRole("button", { name: "Gave up: 1" }).click();
    const messages = page.getByRole("region", { name: "Messages" });
    await messages.getByText("550 5.1.1 mailbox unavailable").waitFor();
    await expect.poll(() => messages.locator("tbody tr").count()).toBe(1);
    await checked(page, "admin-outbox");
    await messages.getByRole("button", { name: `Send again to ${bob.email}` }).dblclick();
    await status(`The message to ${bob.email} is queued again`);
    expect((await api("/superadmin/emails?status=dead")).emails).toEqual([]);
    expect((await api("/superadmin/emails?status=pending")).emails.map((m: { to_address: string }) => m.to_address)).toContain(bob.email);
    await page.getByText("No message is given up after every attempt.").waitFor();
  });

  it("left no CSP violation or console error on any screen", () => {
    expect([...watched.problems, ...otherProblems]).toEqual([]);
  });
});
