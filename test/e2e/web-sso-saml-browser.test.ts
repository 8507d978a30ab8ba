import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { cheapPasswordHasher, startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser, pageWithAuthenticator } from "../helpers/browser.js";
import { startSamlIdp, type RealSamlIdp } from "../helpers/saml-idp.js";
import { department, type SsoOrg, ssoOrg, stopAll, verifiedDomain } from "../helpers/sso-web.js";
import { axeViolations, shot, signInThroughPage, watchPage } from "../helpers/web.js";
import { invite } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * Enterprise sign-in through a SAML 2.0 IdP (issue 35) in headless Chromium, with a REAL IdP
 * (SimpleSAMLphp, ../shared/tools/saml-idp) and the connection created through the API from the
 * IdP's metadata URL. A new person enters only their address on the sign-in page, fills the IdP's
 * own login form, and comes back signed in to the web app: their organizations screen shows the
 * organization (which manages the account) with the role their group maps to, and the admin's
 * members and department screens show them. With `require_sso` on, an existing account that has
 * not linked yet is refused its password with the way to single sign-on (the documented dead end:
 * the IdP's answer then asks to link first); an account that linked before (from its password
 * sign-in, through the link API) is refused its passkey with the same way, which takes it through
 * the IdP's form and in. (A linked account never reaches the password step: its address goes to
 * the IdP.) The invitation page's Sign out of an IdP-issued session goes on to the IdP's single
 * logout and back. Steps go by keyboard where a person would; axe-core finds nothing at any impact.
 */
let app: TestApp;
let idp: RealSamlIdp;
let browser: Browser;
let owner: TestUser;
let admin: TestUser;
let dorothy: TestUser;
let katherine: TestUser;
let org: SsoOrg["org"];
let engineering: string;
let connection: { id: string; name: string; saml: { sp_metadata_url: string; acs_url: string } };
const SLOW = 180_000;
// Fixed names: they show in the screenshots kept in docs/screenshots.
const DOMAIN = "difference-engine.test";
const GRACE = { email: `grace@${DOMAIN}`, password: "grace-pass", name: "Grace Hopper" };
const DOROTHY = { email: `dorothy@${DOMAIN}`, password: "dorothy-pass", name: "Dorothy Vaughan" };
const KATHERINE = { email: `katherine@${DOMAIN}`, password: "katherine-pass", name: "Katherine Johnson" };

beforeAll(async () => {
  // Several sign-ins from one loopback address: the per-address flow limit is raised.
  [app, idp, browser] = await Promise.all([
    startTestApp({ RATE_LIMIT_OAUTH: "1000/60" }, { passwordHasher: cheapPasswordHasher() }),
    startSamlIdp([
      "--user", `${GRACE.email}:${GRACE.password}:${GRACE.name}:engineering`,
      "--user", `${DOROTHY.email}:${DOROTHY.password}:${DOROTHY.name}:engineering`,
      "--user", `${KATHERINE.email}:${KATHERINE.password}:${KATHERINE.name}:engineering`,
    ]),
    launchBrowser(),
  ]);
  const sso = await ssoOrg(app, "Difference Engines");
  ({ org, owner, admin } = sso);
  // Accounts that existed before the organization turned single sign-on on.
  dorothy = await newUser(app, { email: DOROTHY.email, fullName: DOROTHY.name });
  katherine = await newUser(app, { email: KATHERINE.email, fullName: KATHERINE.name });
  // The domain is proven (the DNS proof has its own tests: domains.test.ts, web-org-sso-browser.test.ts).
  await verifiedDomain(app, org.id, DOMAIN);
  engineering = await department(app, sso, "Engineering");
  // The admin connects the IdP by its metadata URL; the engineering group maps to member and Engineering.
  const created = await app.http.post(
    `/api/v1/organizations/${org.id}/sso/connections/saml`,
    { name: "Difference Engines IdP", metadata_url: idp.metadataUrl, default_role: "guest", group_mappings: [{ group: "engineering", role: "member", department_ids: [engineering] }] },
    { token: admin.token },
  );
  expect(created.status, created.text).toBe(201);
  connection = created.body.data.connection;
  // The IdP reads the SP's metadata from its URL, as an admin would give it.
  writeFileSync(join(idp.spMetadataDir, "difference-engines.url"), `${connection.saml.sp_metadata_url}\n`);
}, 120_000);
afterAll(() => stopAll(browser, app, idp));

/** A fresh browser profile (its own cookies: Keyward's and the IdP's), watched for console errors. */
async function freshPage() {
  const page = await (await browser.newContext()).newPage();
  const watched = await watchPage(page);
  // The IdP's pages are not Keyward's (their own missing favicon, say).
  const problems = () => watched.problems.filter((p) => !p.includes(idp.url));
  return { page, problems };
}

/** Email first on the sign-in page, by keyboard: the address, then Enter (Continue). */
async function enterAddress(page: Page, email: string) {
  await page.goto(`${app.url}/login`);
  const field = page.getByLabel("Email");
  await field.focus();
  await page.keyboard.type(email);
  await page.keyboard.press("Enter");
}

/** SimpleSAMLphp's own login form, filled as a person does: username, Tab, password, Enter. */
async function atIdp(page: Page, person: { email: string; password: string }) {
  await page.waitForURL((u) => u.toString().startsWith(idp.url));
  const username = page.getByLabel("Username");
  await username.waitFor();
  await username.fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByLabel("Password").press("Enter");
}

const membership = async (userId: string) =>
  resultRows<{ role: string }>(await app.container.db.execute(sql`select role from org_memberships where organization_id = ${org.id} and user_id = ${userId} and deleted_at is null`))[0]?.role ?? null;

describe("SAML single sign-on in Chromium", () => {
  it(
    "signs a new person in from their address alone, through the IdP's login form, into the organization with the mapped role and department",
    async () => {
      const { page, problems } = await freshPage();
      await enterAddress(page, GRACE.email);
      await atIdp(page, GRACE);
      // The IdP posts the answer to the ACS; Keyward signs the person in and opens the web app.
      await page.waitForURL(`${app.url}/`);
      await page.getByRole("button", { name: GRACE.name }).waitFor();
      // Their organizations: this one, which manages the account, with the role the group maps to.
      await page.goto(`${app.url}/account/organizations`);
      const mine = page.getByRole("list", { name: "Your organizations" }).getByRole("listitem").filter({ hasText: org.name });
      await mine.waitFor();
      await mine.getByText("member", { exact: true }).waitFor();
      await mine.getByText("manages your account").waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await shot(page, "web-sso-saml-organizations");
      expect(problems()).toEqual([]);
      await page.context().close();

      // The admin's web app: Grace among the members as a member, and in Engineering.
      const theirs = await freshPage();
      await signInThroughPage(theirs.page, app.url, admin, `/orgs/${org.slug}/members`);
      const members = theirs.page.getByRole("region", { name: `Members of ${org.name}` });
      const role = members.getByLabel(`Role of ${GRACE.name}`);
      await role.waitFor();
      expect(await role.inputValue()).toBe("member");
      await members.getByRole("row").filter({ hasText: GRACE.email }).getByText("managed", { exact: true }).waitFor();
      await theirs.page.goto(`${app.url}/orgs/${org.slug}/departments/${engineering}`);
      await theirs.page.getByText(GRACE.name).first().waitFor();
      expect(theirs.problems()).toEqual([]);
      await theirs.page.context().close();
    },
    SLOW,
  );

  it(
    "with single sign-on required, an account that existed before the connection confirms its link inside its first SSO sign-in, by keyboard",
    async () => {
      const required = await app.http.patch(`/api/v1/organizations/${org.id}/sso/connections/${connection.id}`, { require_sso: true }, { token: admin.token });
      expect(required.status, required.text).toBe(200);
      const { page, problems } = await freshPage();
      await enterAddress(page, KATHERINE.email);
      await atIdp(page, KATHERINE);
      // Not linked yet: back on the sign-in page with a pending link, asked to confirm with her current method.
      await page.waitForURL((u) => u.pathname === "/login" && Boolean(u.searchParams.get("sso_link")));
      await page.getByRole("heading", { name: `Confirm it is you to link your account to ${connection.name}` }).waitFor();
      expect(await page.getByLabel("Email").inputValue()).toBe(KATHERINE.email);
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("password");
      expect(await axeViolations(page)).toEqual([]);
      await shot(page, "web-sso-saml-confirm-link");
      expect(await membership(katherine.id)).toBeNull();
      // Her Keyward password (not the IdP's): the one sign-in SSO_REQUIRED lets through, for this link.
      await page.keyboard.type(katherine.password);
      await page.keyboard.press("Enter");
      await page.waitForURL(`${app.url}/`);
      await page.getByRole("button", { name: KATHERINE.name }).waitFor();
      expect(await membership(katherine.id)).toBe("member");
      expect(problems()).toEqual([]);
      await page.context().close();
    },
    SLOW,
  );

  it(
    "refuses a linked account's passkey once single sign-on is required, and its button signs her in through the IdP",
    async () => {
      // Dorothy links her account while single sign-on is not yet required.
      await app.http.patch(`/api/v1/organizations/${org.id}/sso/connections/${connection.id}`, { require_sso: false }, { token: admin.token });
      // Her browser has a platform authenticator (a CDP virtual one).
      const page = await pageWithAuthenticator(browser);
      const watched = await watchPage(page);
      const problems = () => watched.problems.filter((p) => !p.includes(idp.url));
      await enterAddress(page, DOROTHY.email);
      await atIdp(page, DOROTHY);
      // Not linked yet: she confirms the link with her Keyward password (not the IdP's) and is signed in, linked.
      await page.waitForURL((u) => u.pathname === "/login" && Boolean(u.searchParams.get("sso_link")));
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("password");
      await page.keyboard.type(dorothy.password);
      await page.keyboard.press("Enter");
      await page.waitForURL(`${app.url}/`);
      await page.getByRole("button", { name: DOROTHY.name }).waitFor();
      expect(await membership(dorothy.id)).toBe("member");
      // She also keeps a passkey (enrolled through the API from the page, with the authenticator).
      const enrolled = await page.evaluate(async () => {
        const post = (path: string, body: unknown) => fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), credentials: "same-origin" });
        const begin = (await (await post("/api/v1/auth/webauthn/register/begin", {})).json()) as { data: { challenge_id: string; options: PublicKeyCredentialCreationOptionsJSON } };
        const credential = (await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(begin.data.options) })) as PublicKeyCredential;
        return (await post("/api/v1/auth/webauthn/register/complete", { challenge_id: begin.data.challenge_id, response: credential.toJSON(), name: "Laptop" })).status;
      });
      expect(enrolled).toBe(201);

      const required = await app.http.patch(`/api/v1/organizations/${org.id}/sso/connections/${connection.id}`, { require_sso: true }, { token: admin.token });
      expect(required.status).toBe(200);
      const refused = await app.http.post("/api/v1/auth/login", { email: dorothy.email, password: dorothy.password });
      expect(refused.body.error.type).toBe("SSO_REQUIRED");
      // A later visit (no cookies left: neither Keyward's session nor the IdP's): her passkey is
      // refused too, with the way to single sign-on, which takes her through the IdP's form and in.
      await page.context().clearCookies();
      await page.goto(`${app.url}/login`);
      await page.getByRole("button", { name: "Sign in with a passkey" }).focus();
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Your organization requires single sign-on" }).waitFor();
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("sso-required-title");
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe("Continue with single sign-on");
      await page.keyboard.press("Enter");
      await atIdp(page, DOROTHY);
      await page.waitForURL(`${app.url}/`);
      await page.getByRole("button", { name: DOROTHY.name }).waitFor();
      const me = await page.evaluate(async () => ((await (await fetch("/api/v1/users/me", { credentials: "same-origin" })).json()) as { data: { user: { id: string } } }).data.user.id);
      expect(me).toBe(dorothy.id);
      // The passkey's refusal is a 403 that Chromium logs like any error status.
      expect(problems().filter((p) => !/status of 403 .*\/api\/v1\/auth\/webauthn\/login\/complete$/.test(p))).toEqual([]);
      await page.context().close();
    },
    SLOW,
  );

  it(
    "the invitation page's Sign out of a session the IdP issued signs out at the IdP too (single logout)",
    async () => {
      // SimpleSAMLphp signs its LogoutResponse only when asked to (Keyward refuses unsigned ones).
      writeFileSync(join(idp.spMetadataDir, "difference-engines.json"), JSON.stringify({ "sign.logout": true }));
      const { page, problems } = await freshPage();
      await enterAddress(page, GRACE.email);
      await atIdp(page, GRACE);
      await page.waitForURL(`${app.url}/`);
      await page.getByRole("button", { name: GRACE.name }).waitFor();
      // An invitation for another address: the page offers to sign out first.
      const token = await invite(app, org.id, owner, `someone-else.${Date.now().toString(36)}@example.com`, "guest");
      await page.goto(`${app.url}/invite?token=${token}`);
      expect(await page.textContent("#wrong-account")).toContain(GRACE.email);
      const toIdp = page.waitForRequest((r) => r.url().startsWith(`${idp.sloUrl}?SAMLRequest=`));
      await page.click("#flow-sign-out");
      await toIdp;
      // The IdP's signed LogoutResponse brings the browser back to Keyward's sign-in page, signed out.
      await page.waitForURL((u) => u.toString().startsWith(`${app.url}/login`));
      expect((await page.request.get(`${app.url}/api/v1/users/me`)).status()).toBe(401);
      expect(problems()).toEqual([]);
      await page.context().close();
    },
    SLOW,
  );
});
