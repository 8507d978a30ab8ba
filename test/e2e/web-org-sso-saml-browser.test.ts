import { createHash, X509Certificate } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cheapPasswordHasher, startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { startDns, type RealDns } from "../helpers/dns.js";
import { startSamlIdp, type RealSamlIdp } from "../helpers/saml-idp.js";
import { adminBrowser, checked, department, plainMember, proveDomain, restConnections, type SsoOrg, ssoOrg, status, stopAll } from "../helpers/sso-web.js";
import { axeViolations, fieldError, focusedName, signInThroughPage, tabTo, watchPage } from "../helpers/web.js";
import { generateSelfSignedRsa } from "../../src/lib/crypto/index.js";
import type { TestUser } from "../factories/users.js";

/**
 * SAML 2.0 connections on the Single sign-on screen (issue 35) in headless Chromium, against a REAL
 * IdP (SimpleSAMLphp, ../shared/tools/saml-idp) and a REAL DNS server for the verified domain. An
 * admin adds a connection with the keyboard alone from the IdP's metadata URL, after a malformed
 * URL, an unreadable URL and a malformed metadata file were each refused at their field (focus
 * there, nothing created); the card then shows what the IdP is given (SP entity ID, ACS and SLO
 * URLs, metadata to copy or download, which the IdP reads back) and what Keyward holds about the
 * IdP. Editing changes a group mapping and keeps the IdP; disabling and deleting (after a
 * confirmation) work as for OpenID Connect. A plain member gets none of it. axe-core finds nothing,
 * and nothing scrolls sideways at 360 px.
 */
let app: TestApp;
let dns: RealDns;
let idp: RealSamlIdp;
let browser: Browser;
let admin: TestUser;
let member: TestUser;
let page: Page;
let watched: { problems: string[] };
let sso: SsoOrg;
let org: SsoOrg["org"];
let engineering: string;
let operations: string;
const SLOW = 180_000;
// Fixed names: they show in the screenshots accessible() keeps in docs/screenshots.
const DOMAIN = "difference-engine.test";
const CONNECTION = "Difference Engines SAML";

beforeAll(async () => {
  dns = await startDns();
  app = await startTestApp({ DNS_RESOLVER: dns.server, DNS_TIMEOUT_MS: "2000" }, { passwordHasher: cheapPasswordHasher() });
  idp = await startSamlIdp(["--user", `grace@${DOMAIN}:grace-pass:Grace Hopper:engineering`]);
  browser = await launchBrowser();
  sso = await ssoOrg(app, "Difference Engines");
  ({ org, admin } = sso);
  member = await plainMember(app, sso);
  engineering = await department(app, sso, "Engineering");
  operations = await department(app, sso, "Operations");
  // The domain, proved by a real TXT record.
  await proveDomain(app, dns, sso, DOMAIN);
  ({ page, watched } = await adminBrowser(browser, app));
}, 120_000);
afterAll(() => stopAll(browser, app, idp, dns));

interface RestConnection {
  id: string;
  kind: string;
  name: string;
  enabled: boolean;
  default_role: string;
  group_mappings: Array<{ group: string; role: string | null; department_ids: string[] | null }>;
  saml: { sp_entity_id: string; sp_metadata_url: string; acs_url: string; slo_url: string; idp_entity_id: string; idp_metadata_url: string | null; allow_idp_initiated: boolean };
}
const connections = () => restConnections<RestConnection>(app, sso);
/** SHA-256 over the DER in colon hex, as an IdP's console shows it: computed here from the PEM. */
const fingerprintOf = (pem: string) => createHash("sha256").update(new X509Certificate(pem).raw).digest("hex").toUpperCase().match(/../g)!.join(":");
/** Selects the whole field and types over it. */
async function retype(p: Page, text: string) {
  await p.keyboard.press("Control+A");
  await p.keyboard.type(text);
}

describe("SAML connections in Chromium", () => {
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
      await theirs.getByText(`Only the owner and admins of ${org.name} see and set up its single sign-on.`).waitFor();
      expect(await theirs.getByRole("radio").count()).toBe(0);
      expect(await theirs.getByRole("button", { name: "Add SAML connection" }).count()).toBe(0);
      // And the API agrees.
      expect((await app.http.post(`/api/v1/organizations/${org.id}/sso/connections/saml`, { name: "x", metadata_url: idp.metadataUrl }, { token: member.token })).status).toBe(403);
      expect(problems.problems).toEqual([]);
      await theirs.context().close();
    },
    SLOW,
  );

  it(
    "refuses a malformed URL, an unreadable one and a malformed file at their fields, then adds the connection from the metadata URL with the keyboard alone",
    async () => {
      await signInThroughPage(page, app.url, admin, `/orgs/${org.slug}/sso`);
      await page.getByRole("heading", { name: "Single sign-on", level: 1 }).waitFor();
      await page.getByText(`Verified domain: ${DOMAIN}.`).waitFor();
      // OpenID Connect is offered first; the arrow key picks SAML 2.0.
      await tabTo(page, "OpenID Connect");
      await page.keyboard.press("ArrowRight");
      await page.getByRole("heading", { name: "Add a SAML connection" }).waitFor();
      expect(await page.getByRole("button", { name: "Copy Redirect URI", exact: true }).count()).toBe(0);
      await tabTo(page, "Name", { exact: true });
      await page.keyboard.type(CONNECTION);
      await tabTo(page, "Metadata URL", { exact: true });
      await page.keyboard.type("idp.example/metadata");
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
      await tabTo(page, "Add SAML connection");
      await page.keyboard.press("Enter");
      // Not a URL: said at the field, and focus goes there.
      await fieldError(page, "Metadata URL").waitFor();
      await expect.poll(() => focusedName(page)).toBe("Metadata URL");
      expect(await connections()).toEqual([]);

      // A URL that answers, but not with metadata.
      await retype(page, `${idp.url}/saml2/idp/no-such-metadata.php`);
      await page.keyboard.press("Enter");
      await fieldError(page, "Metadata URL").getByText("The identity provider's SAML metadata could not be used").waitFor();
      await expect.poll(() => focusedName(page)).toBe("Metadata URL");
      expect(await connections()).toEqual([]);
      await checked(page, "org-sso-saml-refused", { narrowest: 360 });

      // A metadata file that is not metadata: refused at the document's field.
      await page.getByRole("radio", { name: /^Metadata file/ }).check();
      await page.getByLabel("Metadata file", { exact: true }).setInputFiles({ name: "idp-metadata.xml", mimeType: "application/xml", buffer: Buffer.from("<md:EntityDescriptor") });
      await page.getByText("Read idp-metadata.xml (1 KB) into the field below.").waitFor();
      expect(await page.getByLabel("Metadata XML", { exact: true }).inputValue()).toBe("<md:EntityDescriptor");
      await page.getByRole("button", { name: "Add SAML connection" }).press("Enter");
      await fieldError(page, "Metadata XML").getByText("could not be used").waitFor();
      await expect.poll(() => focusedName(page)).toBe("Metadata XML");
      expect(await connections()).toEqual([]);

      // The real IdP's metadata URL.
      await page.getByRole("radio", { name: /^Metadata URL/ }).focus();
      await page.keyboard.press("Space");
      await tabTo(page, "Metadata URL", { exact: true });
      await retype(page, idp.metadataUrl);
      await page.keyboard.press("Enter");
      await status(page, `${CONNECTION} added.`);
      await expect.poll(() => focusedName(page)).toBe(CONNECTION);
      const [c] = await connections();
      expect(c).toMatchObject({
        kind: "saml",
        name: CONNECTION,
        enabled: true,
        default_role: "guest",
        group_mappings: [{ group: "engineering", role: "member", department_ids: [engineering] }],
        saml: { idp_entity_id: idp.entityId, idp_metadata_url: idp.metadataUrl, allow_idp_initiated: false, acs_url: `${app.url}/sso/saml/${c!.id}/acs` },
      });

      // The card: what the IdP is given, each to copy, and the metadata to download.
      const card = page.getByRole("list", { name: `Connections of ${org.name}` }).getByRole("listitem").first();
      await card.getByText("SAML 2.0", { exact: true }).waitFor();
      await card.getByText("→ Member, Engineering").waitFor();
      const fact = (term: string) => card.locator(`dt:text-is("${term}") + dd`).textContent();
      expect(await fact("IdP entity ID")).toBe(idp.entityId);
      expect(await fact("IdP sign-in URL")).toBe(idp.ssoUrl);
      // The IdP's certificate as its console shows it: fingerprint, subject, validity; no warning for a long-lived one.
      const certs = card.locator('dt:text-is("IdP signing certificates") + dd');
      expect(await certs.textContent()).toMatch(/^1 certificate pinned/);
      await certs.getByText(fingerprintOf(idp.certPem), { exact: true }).waitFor();
      const cn = /^CN=(.*)$/m.exec(new X509Certificate(idp.certPem).subject)?.[1];
      if (cn) await certs.getByText(cn, { exact: true }).waitFor();
      expect(await certs.textContent()).toMatch(/Valid .+ to .+ \(\d+ d( \d+ h)? left\)/);
      expect(await certs.locator(".badge").count()).toBe(0);
      expect(await fact("Requests sent by")).toBe("HTTP-Redirect");
      expect(await fact("IdP metadata")).toMatch(new RegExp(`^${idp.metadataUrl.replace(/[.?]/g, "\\$&")}, last read (now|\\d+ seconds? ago)`));
      for (const [label, value] of [
        ["ACS URL", c!.saml.acs_url],
        ["SP entity ID", c!.saml.sp_entity_id],
        ["SLO URL", c!.saml.slo_url],
        ["SP metadata URL", c!.saml.sp_metadata_url],
      ] as const) {
        await card.getByRole("button", { name: `Copy ${label} of ${CONNECTION}`, exact: true }).click();
        expect(await page.evaluate(() => navigator.clipboard.readText()), label).toBe(value);
      }
      const download = card.getByRole("link", { name: `Download the SP metadata of ${CONNECTION}` });
      expect(await download.getAttribute("href")).toBe(c!.saml.sp_metadata_url);
      expect(await download.getAttribute("download")).toMatch(/\.xml$/);
      const [file] = await Promise.all([page.waitForEvent("download"), download.click()]);
      expect(file.suggestedFilename()).toBe("keyward-saml-metadata-difference-engines-saml.xml");
      // The SP metadata is what the IdP reads back: it names the ACS URL.
      const xml = await (await fetch(c!.saml.sp_metadata_url)).text();
      expect(xml).toContain(`entityID="${c!.saml.sp_entity_id}"`);
      expect(xml).toContain(c!.saml.acs_url);
      await checked(page, "org-sso-saml", { narrowest: 360 });
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );

  it(
    "refuses an IdP by hand with a malformed certificate at that certificate",
    async () => {
      await page.goto(`${app.url}/orgs/${org.slug}/sso`);
      await page.getByRole("radio", { name: /^SAML 2.0/ }).check();
      const form = page.getByRole("form", { name: "Add a SAML connection" });
      await form.getByLabel("Name", { exact: true }).fill("By hand");
      await form.getByRole("radio", { name: /^By hand/ }).check();
      await form.getByLabel("IdP entity ID", { exact: true }).fill(idp.entityId);
      await form.getByLabel("Sign-in URL", { exact: true }).fill(idp.ssoUrl);
      await form.getByLabel("Certificate 1", { exact: true }).fill("not a certificate");
      await form.getByRole("button", { name: "Add a certificate" }).click();
      await form.getByLabel("Certificate 2", { exact: true }).fill(idp.certPem);
      await form.getByRole("button", { name: "Add SAML connection" }).click();
      await fieldError(page, "Certificate 1").getByText(/^Certificate 1: /).waitFor();
      await expect.poll(() => focusedName(page)).toBe("Certificate 1");
      expect(await connections()).toHaveLength(1);
      expect(await axeViolations(page)).toEqual([]);
    },
    SLOW,
  );

  it(
    "edits a group mapping keeping the IdP, disables the connection and deletes it after a confirmation",
    async () => {
      await page.goto(`${app.url}/orgs/${org.slug}/sso`);
      const card = page.getByRole("list", { name: `Connections of ${org.name}` }).getByRole("listitem").first();
      await card.getByRole("button", { name: `Edit ${CONNECTION}` }).focus();
      await page.keyboard.press("Enter");
      const form = page.getByRole("form", { name: `Edit ${CONNECTION}` });
      await form.getByText(idp.entityId, { exact: true }).waitFor();
      expect(await form.getByLabel("Metadata URL", { exact: true }).count()).toBe(0);
      await form.getByLabel("Role for group 1").focus();
      await page.keyboard.type("Admin");
      await tabTo(page, "Operations");
      await page.keyboard.press("Space");
      await tabTo(page, "Save");
      await page.keyboard.press("Enter");
      await status(page, `${CONNECTION} saved.`);
      await expect.poll(() => focusedName(page)).toBe(CONNECTION);
      const [saved] = await connections();
      expect(saved!.group_mappings).toEqual([{ group: "engineering", role: "admin", department_ids: [engineering, operations] }]);
      expect(saved!.saml.idp_metadata_url).toBe(idp.metadataUrl);
      await card.getByText("→ Admin, Engineering, Operations").waitFor();

      await card.getByRole("button", { name: `Disable ${CONNECTION}` }).press("Enter");
      await status(page, `${CONNECTION} is disabled`);
      await card.getByText("Disabled", { exact: true }).waitFor();
      expect((await connections())[0]!.enabled).toBe(false);

      await card.getByRole("button", { name: `Delete ${CONNECTION}` }).press("Enter");
      const dialog = page.getByRole("alertdialog");
      await dialog.getByRole("heading", { name: `Delete the connection ${CONNECTION}?` }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await page.keyboard.press("Escape");
      expect(await connections()).toHaveLength(1);
      await card.getByRole("button", { name: `Delete ${CONNECTION}` }).press("Enter");
      await page.getByRole("alertdialog").getByRole("button", { name: "Delete connection" }).press("Enter");
      await status(page, `${CONNECTION} was deleted.`);
      expect(await connections()).toEqual([]);
      await expect.poll(() => focusedName(page)).toBe(`Connections of ${org.name}`);
      // Its metadata address is gone with it.
      expect((await fetch(saved!.saml.sp_metadata_url)).status).toBe(404);
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );

  it(
    "warns about an IdP certificate that expires within 30 days, and switches AuthnRequests to HTTP-POST from the edit form",
    async () => {
      // The real IdP's metadata with an HTTP-POST sign-in endpoint too, and a signing certificate that ends in about 10 days.
      const expiring = generateSelfSignedRsa("Difference Engines IdP 2026", new Date(Date.now() - 355 * 86_400_000), 1);
      const pemBody = expiring.certPem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
      const metadata = (await (await fetch(idp.metadataUrl)).text())
        .replace(/<md:SingleSignOnService[^>]*Binding="urn:oasis:names:tc:SAML:2\.0:bindings:HTTP-Redirect"[^>]*\/>/, (redirect) => `${redirect}${redirect.replace("HTTP-Redirect", "HTTP-POST")}`)
        .replace(/(<(?:ds:)?X509Certificate>)[^<]+(<\/(?:ds:)?X509Certificate>)/g, `$1${pemBody}$2`);
      const name = "Difference Engines ADFS";
      const created = await app.http.post(`/api/v1/organizations/${org.id}/sso/connections/saml`, { name, metadata_xml: metadata, enabled: false }, { token: admin.token });
      expect(created.status, created.text).toBe(201);
      expect(created.body.data.connection.saml).toMatchObject({ prefer_post_binding: false, authn_request_binding: "redirect" });

      await page.goto(`${app.url}/orgs/${org.slug}/sso`);
      const card = page.getByRole("list", { name: `Connections of ${org.name}` }).getByRole("listitem").filter({ has: page.getByRole("heading", { name }) });
      const certs = card.locator('dt:text-is("IdP signing certificates") + dd');
      await certs.getByText(fingerprintOf(expiring.certPem), { exact: true }).waitFor();
      await certs.getByText("Difference Engines IdP 2026", { exact: true }).waitFor();
      await certs.getByText("Expires soon", { exact: true }).waitFor();
      expect(await certs.textContent()).toMatch(/\((9|10) d( \d+ h)? left\)/);
      const fact = (term: string) => card.locator(`dt:text-is("${term}") + dd`).textContent();
      expect(await fact("Requests sent by")).toBe("HTTP-Redirect");

      // Edit: the HTTP-POST toggle (off), with its hint; on, saved, and the card says HTTP-POST.
      await card.getByRole("button", { name: `Edit ${name}` }).press("Enter");
      const form = page.getByRole("form", { name: `Edit ${name}` });
      await form.getByText("Attribute names, binding, signing and encryption").click();
      const post = form.getByRole("checkbox", { name: "Send authentication requests by HTTP-POST" });
      expect(await post.isChecked()).toBe(false);
      expect(await post.getAttribute("aria-describedby").then((id) => page.locator(`[id="${id}"]`).textContent())).toMatch(/^Use it when your IdP accepts AuthnRequests only by HTTP-POST\./);
      await post.focus();
      await page.keyboard.press("Space");
      await form.getByRole("button", { name: "Save" }).press("Enter");
      await status(page, `${name} saved.`);
      await expect.poll(() => fact("Requests sent by")).toBe("HTTP-POST");
      const saved = (await connections()).find((c) => c.name === name) as unknown as { saml: { prefer_post_binding: boolean; authn_request_binding: string } };
      expect(saved.saml).toMatchObject({ prefer_post_binding: true, authn_request_binding: "post" });
      await checked(page, "org-sso-saml-certificates", { narrowest: 360 });
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );
});
