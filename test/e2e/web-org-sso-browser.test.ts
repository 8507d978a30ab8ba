import { sql } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { cheapPasswordHasher, startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { startDns, type RealDns } from "../helpers/dns.js";
import { startIdp, type RealIdp } from "../helpers/oidc-idp.js";
import { adminBrowser, checked, department, plainMember, restConnections, type SsoOrg, ssoOrg, status, stopAll } from "../helpers/sso-web.js";
import { accessible, axeViolations, fieldError, focusedName, shot, signInThroughPage, tabTo, watchPage } from "../helpers/web.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * Enterprise sign-in in the web app and on the sign-in page (issue 35) in headless Chromium, with a
 * REAL OpenID provider (../shared/tools/oidc-idp) and a REAL DNS server for the domain. An admin
 * sees that single sign-on needs a verified domain, proves one, and adds a connection on the Single
 * sign-on screen with the keyboard alone (a bad issuer is refused at its field; the secret never
 * comes back; the redirect URI copies); a plain member is offered none of it. Then a new person
 * enters only their address on the sign-in page, is sent to the provider's login form, and comes
 * back signed in, a member of the organization with the role and department their group maps to
 * (seen in the web app and through the API). An existing account in the domain is told to sign in
 * as usual and link, and its password is refused with a button to single sign-on, because the
 * connection requires it. Editing keeps the write-only secret; a disabled connection sends the
 * address to the password step in place (the server's 404); deleting asks first. axe-core finds
 * nothing at any impact; a phone never scrolls sideways.
 */
let app: TestApp;
let dns: RealDns;
let idp: RealIdp;
let browser: Browser;
let admin: TestUser;
let member: TestUser;
let dorothy: TestUser;
let page: Page;
let watched: { problems: string[] };
let sso: SsoOrg;
let org: SsoOrg["org"];
let engineering: string;
const SLOW = 180_000;
// Fixed names: they show in the screenshots accessible() keeps in docs/screenshots.
const DOMAIN = "analytical-engine.test";
const GRACE = { email: `grace@${DOMAIN}`, password: "grace-pass", name: "Grace Hopper" };
const DOROTHY = { email: `dorothy@${DOMAIN}`, password: "dorothy-pass", name: "Dorothy Vaughan" };
const CONNECTION = "Analytical Engines IdP";

beforeAll(async () => {
  dns = await startDns();
  // Several sign-ins from one loopback address: the per-address flow limit is raised.
  app = await startTestApp({ DNS_RESOLVER: dns.server, DNS_TIMEOUT_MS: "2000", RATE_LIMIT_OAUTH: "1000/60" }, { passwordHasher: cheapPasswordHasher() });
  idp = await startIdp({
    redirectUri: `${app.url}/sso/oidc/callback`,
    users: [`${GRACE.email}:${GRACE.password}:${GRACE.name}:engineering`, `${DOROTHY.email}:${DOROTHY.password}:${DOROTHY.name}:engineering`],
  });
  browser = await launchBrowser();
  sso = await ssoOrg(app, "Analytical Engines");
  ({ org, admin } = sso);
  member = await plainMember(app, sso);
  // An account that existed before the organization turned single sign-on on.
  dorothy = await newUser(app, { email: DOROTHY.email, fullName: DOROTHY.name });
  engineering = await department(app, sso, "Engineering");
  ({ page, watched } = await adminBrowser(browser, app));
}, 120_000);
afterAll(() => stopAll(browser, app, idp, dns));

interface RestConnection {
  id: string;
  name: string;
  issuer: string;
  client_id: string;
  has_secret: boolean;
  enabled: boolean;
  require_sso: boolean;
  default_role: string;
  group_mappings: Array<{ group: string; role: string | null; department_ids: string[] | null }>;
  session_max_age_seconds: number;
  redirect_uri: string;
}
const connections = () => restConnections<RestConnection>(app, sso);

describe("single sign-on in Chromium", () => {
  it(
    "offers a plain member no Single sign-on entry, and a refusal at its address",
    async () => {
      const theirs = await (await browser.newContext()).newPage();
      const problems = await watchPage(theirs);
      await signInThroughPage(theirs, app.url, member, `/orgs/${org.slug}/security`);
      const nav = theirs.getByRole("navigation", { name: `${org.name} sections` });
      await nav.getByRole("link", { name: "Security" }).waitFor();
      expect(await nav.getByRole("link", { name: "Single sign-on" }).count()).toBe(0);
      await theirs.goto(`${app.url}/orgs/${org.slug}/sso`);
      await theirs.getByRole("heading", { name: "Single sign-on", level: 1 }).waitFor();
      await theirs.getByText(`Only the owner and admins of ${org.name} see and set up its single sign-on.`).waitFor();
      expect(await theirs.getByRole("button", { name: "Add connection" }).count()).toBe(0);
      expect(problems.problems).toEqual([]);
      await theirs.context().close();
    },
    SLOW,
  );

  it(
    "says a verified domain is needed, then adds a connection with the keyboard alone",
    async () => {
      await signInThroughPage(page, app.url, admin, `/orgs/${org.slug}/security`);
      await page.getByRole("navigation", { name: `${org.name} sections` }).getByRole("link", { name: "Single sign-on" }).click();
      await page.waitForURL(`${app.url}/orgs/${org.slug}/sso`);
      const noDomain = page.getByText(`${org.name} has no verified domain yet.`);
      await noDomain.waitFor();
      await page.getByRole("link", { name: "Domains", exact: true }).last().waitFor();
      await page.getByText("No connection yet.").waitFor();
      await checked(page, "org-sso-empty");

      // The admin proves the domain (REST and a real DNS record), as on the Domains screen.
      const claimed = await app.http.post(`/api/v1/organizations/${org.id}/domains`, { domain: DOMAIN }, { token: admin.token });
      const claim = claimed.body.data.domain as { id: string; record_name: string; record_value: string };
      await dns.setTxt({ [claim.record_name]: [claim.record_value] });
      const verified = await app.http.post(`/api/v1/organizations/${org.id}/domains/${claim.id}/verify`, {}, { token: admin.token });
      expect(verified.body.data.domain.status).toBe("verified");
      await page.reload();
      await page.getByText(`Verified domain: ${DOMAIN}.`).waitFor();
      expect(await noDomain.count()).toBe(0);

      // The redirect URI to register at the provider, copied by its button.
      await page.getByRole("button", { name: "Copy Redirect URI", exact: true }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${app.url}/sso/oidc/callback`);

      // From the top of the page, by keyboard: a first try with an issuer that does not answer.
      await page.goto(`${app.url}/orgs/${org.slug}/sso`);
      await page.getByRole("heading", { name: "Single sign-on", level: 1 }).waitFor();
      await tabTo(page, "Name");
      await page.keyboard.type(CONNECTION);
      await tabTo(page, "Issuer");
      await page.keyboard.type("http://127.0.0.1:9/nothing-here");
      await tabTo(page, "Client ID");
      await page.keyboard.type(idp.clientId);
      await tabTo(page, "Client secret");
      await page.keyboard.type(idp.clientSecret);
      await tabTo(page, "Role of a new member");
      await page.keyboard.type("Guest");
      await tabTo(page, "Add a group mapping");
      await page.keyboard.press("Enter");
      await expect.poll(() => focusedName(page)).toBe("Group 1");
      await page.keyboard.type("engineering");
      await tabTo(page, "Role for group 1");
      await page.keyboard.type("Member");
      await tabTo(page, "Engineering");
      await page.keyboard.press("Space");
      await tabTo(page, "Require single sign-on");
      await page.keyboard.press("Space");
      await page.getByText(`Everyone with an address in ${org.name}'s verified domains must then sign in here through the provider`).waitFor();
      await tabTo(page, "Session limit (hours)");
      await page.keyboard.type("8");
      await page.keyboard.press("Enter");
      // The discovery document could not be read: said at the Issuer field, nothing created.
      await fieldError(page, "Issuer").getByText("The identity provider's discovery document could not be used").waitFor();
      // Submitted from the last field: focus moves up to the refused one (the frame SAML shares).
      await expect.poll(() => focusedName(page)).toBe("Issuer");
      expect(await connections()).toEqual([]);
      await checked(page, "org-sso-refused");

      await page.getByLabel("Issuer", { exact: true }).fill(idp.issuer);
      await page.getByLabel("Issuer", { exact: true }).press("Enter");
      await status(page, `${CONNECTION} added.`);
      await expect.poll(() => focusedName(page)).toBe(CONNECTION);
      const [c] = await connections();
      expect(c).toMatchObject({
        name: CONNECTION,
        issuer: idp.issuer,
        client_id: idp.clientId,
        has_secret: true,
        enabled: true,
        require_sso: true,
        default_role: "guest",
        group_mappings: [{ group: "engineering", role: "member", department_ids: [engineering] }],
        session_max_age_seconds: 8 * 3600,
        redirect_uri: `${app.url}/sso/oidc/callback`,
      });
      // The secret is write-only: never on the page.
      expect(await page.content()).not.toContain(idp.clientSecret);
      const card = page.getByRole("list", { name: `Connections of ${org.name}` }).getByRole("listitem").first();
      await card.getByText("Enabled", { exact: true }).waitFor();
      await card.getByText("SSO required", { exact: true }).waitFor();
      await card.getByText("→ Member, Engineering").waitFor();
      await checked(page, "org-sso");
    },
    SLOW,
  );

  it(
    "signs a new person in from their address alone: the provider, then a member with the mapped role and department",
    async () => {
      const theirs = await (await browser.newContext()).newPage();
      const problems = await watchPage(theirs);
      await theirs.goto(`${app.url}/login`);
      await theirs.getByLabel("Email").fill(GRACE.email);
      await shot(theirs, "web-sign-in-email-first");
      await theirs.getByRole("button", { name: "Continue" }).click();
      // The provider's own login form (another origin).
      await theirs.waitForURL((u) => u.toString().startsWith(idp.issuer));
      await theirs.locator("input[name=username]").fill(GRACE.email);
      await theirs.locator("input[name=password]").fill(GRACE.password);
      await theirs.getByRole("button", { name: "Sign in" }).click();
      await theirs.waitForURL(`${app.url}/`);
      await theirs.getByRole("button", { name: GRACE.name }).waitFor();
      // In the web app: the organization, with the mapped role.
      await theirs.goto(`${app.url}/orgs/${org.slug}`);
      await theirs.getByRole("navigation", { name: `${org.name} sections` }).waitFor();
      await theirs.locator(".org-name").getByText("member", { exact: true }).waitFor();
      // The provider's pages are not Keyward's (its missing favicon, say).
      expect(problems.problems.filter((p) => !p.includes(new URL(idp.issuer).origin))).toEqual([]);
      await theirs.context().close();

      // Through the API: a member, in Engineering.
      const members = (await app.http.get(`/api/v1/organizations/${org.id}/members`, { token: admin.token })).body.data.members as Array<{ email: string; role: string; user_id?: string; id?: string }>;
      const grace = members.find((m) => m.email === GRACE.email);
      expect(grace?.role).toBe("member");
      const inDept = resultRows<{ email: string }>(
        await app.container.db.execute(sql`select u.email from department_members d join users u on u.id = d.user_id where d.department_id = ${engineering}`),
      ).map((r) => r.email);
      expect(inDept).toContain(GRACE.email);
      // And in the admin's web app: Engineering lists her.
      await page.goto(`${app.url}/orgs/${org.slug}/departments/${engineering}`);
      await page.getByText(GRACE.name).first().waitFor();
    },
    SLOW,
  );

  it(
    "has an existing account confirm the link with its password, by keyboard, and refuses the password alone with a button to single sign-on",
    async () => {
      const theirs = await (await browser.newContext()).newPage();
      await theirs.goto(`${app.url}/login`);
      await theirs.getByLabel("Email").fill(dorothy.email);
      await theirs.getByRole("button", { name: "Continue" }).click();
      await theirs.waitForURL((u) => u.toString().startsWith(idp.issuer));
      await theirs.locator("input[name=username]").fill(DOROTHY.email);
      await theirs.locator("input[name=password]").fill(DOROTHY.password);
      await theirs.getByRole("button", { name: "Sign in" }).click();
      // Back on the sign-in page with a pending link: confirm with the current method.
      await theirs.waitForURL((u) => u.pathname === "/login" && Boolean(u.searchParams.get("sso_link")));
      await theirs.getByRole("heading", { name: `Confirm it is you to link your account to ${CONNECTION}` }).waitFor();
      expect(await theirs.getByLabel("Email").inputValue()).toBe(dorothy.email);
      await expect.poll(() => theirs.evaluate(() => document.activeElement?.id)).toBe("password");
      expect(await axeViolations(theirs)).toEqual([]);
      await theirs.keyboard.type(dorothy.password);
      await theirs.keyboard.press("Enter");
      await theirs.waitForURL(`${app.url}/`);
      const linked = resultRows<{ n: number }>(await app.container.db.execute(sql`select count(*)::int as n from sso_identities i join users u on u.id = i.user_id where u.email = ${dorothy.email}`));
      expect(linked[0]!.n).toBe(1);
      await theirs.context().close();

      // The password alone (no pending link) is refused, with the way to single sign-on.
      const other = await (await browser.newContext()).newPage();
      await other.goto(`${app.url}/login`);
      await other.getByLabel("Email").fill(dorothy.email);
      await other.getByRole("button", { name: "Continue" }).click();
      await other.waitForURL((u) => u.toString().startsWith(idp.issuer));
      // Back from the provider without signing in there: the address continues on the password step.
      await other.goto(`${app.url}/login?error_type=SSO_NOT_AVAILABLE`);
      await other.getByLabel("Password").fill(dorothy.password);
      await other.getByRole("button", { name: "Sign in", exact: true }).click();
      await other.getByRole("heading", { name: "Your organization requires single sign-on" }).waitFor();
      const button = other.getByRole("link", { name: "Continue with single sign-on" });
      const href = new URL((await button.getAttribute("href"))!);
      expect(href.pathname).toBe("/sso/start");
      expect(href.searchParams.get("email")).toBe(dorothy.email);
      await accessible(other, "sign-in-sso-required", { allImpacts: true });
      await other.context().close();
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );

  it(
    "edits the connection keeping its secret, disables it (addresses then continue with a password) and deletes it after a confirmation",
    async () => {
      await page.goto(`${app.url}/orgs/${org.slug}/sso`);
      const card = page.getByRole("list", { name: `Connections of ${org.name}` }).getByRole("listitem").first();
      await card.getByRole("button", { name: `Edit ${CONNECTION}` }).click();
      const form = page.getByRole("form", { name: `Edit ${CONNECTION}` });
      await form.getByText("A secret is stored and never shown. Leave empty to keep it.").waitFor();
      await form.getByLabel("Role of a new member").selectOption("member");
      await form.getByRole("button", { name: "Save" }).click();
      await status(page, `${CONNECTION} saved.`);
      expect((await connections())[0]).toMatchObject({ default_role: "member", has_secret: true, require_sso: true });

      await card.getByRole("button", { name: `Disable ${CONNECTION}` }).click();
      await status(page, `${CONNECTION} is disabled`);
      await card.getByText("Disabled", { exact: true }).waitFor();
      expect((await connections())[0]!.enabled).toBe(false);
      // With no enabled connection the address gets the same 404 as any other: the page asks for a password, in place.
      const theirs = await (await browser.newContext()).newPage();
      const problems = await watchPage(theirs);
      await theirs.goto(`${app.url}/login`);
      await theirs.getByLabel("Email").fill(GRACE.email);
      await theirs.getByRole("button", { name: "Continue" }).click();
      await theirs.getByLabel("Password").waitFor();
      expect(theirs.url()).toBe(`${app.url}/login`);
      await theirs.getByRole("button", { name: "Use a different email" }).waitFor();
      await shot(theirs, "web-sign-in-password-step");
      expect(problems.problems).toEqual([]);
      await theirs.context().close();

      await card.getByRole("button", { name: `Enable ${CONNECTION}` }).click();
      await status(page, `${CONNECTION} is enabled`);
      expect((await connections())[0]!.enabled).toBe(true);

      await card.getByRole("button", { name: `Delete ${CONNECTION}` }).click();
      const dialog = page.getByRole("alertdialog");
      await dialog.getByRole("heading", { name: `Delete the connection ${CONNECTION}?` }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await dialog.getByRole("button", { name: "Cancel" }).click();
      expect(await connections()).toHaveLength(1);
      await card.getByRole("button", { name: `Delete ${CONNECTION}` }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete connection" }).click();
      await status(page, `${CONNECTION} was deleted.`);
      expect(await connections()).toEqual([]);
      await expect.poll(() => focusedName(page)).toBe(`Connections of ${org.name}`);
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );
});
