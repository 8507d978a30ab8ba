import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { accessible, axeProblems, signInThroughPage, startWebOrg, stopWebOrg, watchPage } from "../helpers/web.js";
import { addVerifiedKey, keysDir, makeKey } from "../factories/ssh.js";
import type { TestUser } from "../factories/users.js";

/**
 * The web app's directory (/orgs/<slug>/departments: departments, principals, certificate policy)
 * and SSH screens (/orgs/<slug>/ssh: authorities, servers' lines, the KRL, the certificate
 * inventory, host certificates) in headless Chromium against a running Keyward (issue 32). Each
 * action is taken once and its effect checked through the REST API; every screen passes axe-core at
 * desktop and phone width, light and dark; a plain member is offered no admin action; no CSP
 * violation or console error anywhere.
 */
let app: TestApp;
let browser: Browser;
let owner: TestUser;
let member: TestUser;
let page: Page;
let watched: { problems: string[] };
let org: { id: string; slug: string; name: string };
const OWNER = "Grace Hopper";
/** Each test takes many steps and four axe-core passes; shared CI machines are slow. */
const SLOW = 180_000;
const MEMBER = "Ada Lovelace";

beforeAll(async () => {
  // Signing 21 certificates in a row is this test's set-up, not what rate limits are for.
  ({ app, browser, owner, org, page, watched, members: [member] } = await startWebOrg({
    env: { RATE_LIMIT_ENABLED: "false" },
    owner: OWNER,
    org: "Difference Engines",
    members: [{ fullName: MEMBER, role: "member" }],
    clipboard: true,
  }));
}, 120_000);
afterAll(() => stopWebOrg({ app, browser }));

/** A REST read as the owner (or `token`), for checking what the screens did. */
const api = (path: string, token = owner.token) => app.http.get(`/api/v1${path}`, { token });
const O = () => `/organizations/${org.id}`;
const status = (p: Page, text: string) => p.getByRole("status").getByText(text).waitFor();
const dialog = () => page.getByRole("alertdialog");
/** accessible(), from the top of the screen (a scrolled page hides the navigation's links under the sticky header). */
async function checked(p: Page, name: string): Promise<void> {
  await p.evaluate(() => window.scrollTo(0, 0));
  await accessible(p, name);
}

describe("the directory in Chromium", () => {
  let deptId: string;
  let principalId: string;

  it("creates principals and departments: the API's message at the field, one for a double click", async () => {
    await signInThroughPage(page, app.url, owner, `/orgs/${org.slug}`);
    await page.getByRole("navigation", { name: /sections/ }).getByRole("link", { name: "Directory" }).click();
    await page.getByRole("heading", { name: "Directory" }).waitFor();
    await page.getByText("No principals yet.").waitFor();

    const newPrincipal = page.getByRole("form", { name: "New principal" });
    await newPrincipal.getByLabel("New principal").fill("not valid!");
    await newPrincipal.getByRole("button", { name: "Create principal" }).click();
    await newPrincipal.locator(".field[data-invalid]").getByText(/it becomes an SSH principal/).waitFor();
    expect((await api(`${O()}/principals`)).body.data.principals).toEqual([]);

    await newPrincipal.getByLabel("New principal").fill("deploy");
    await newPrincipal.getByLabel("Description").fill("Deploys from CI");
    await newPrincipal.getByRole("button", { name: "Create principal" }).dblclick();
    await status(page, "Principal deploy created.");
    const principals = (await api(`${O()}/principals`)).body.data.principals;
    expect(principals.map((p: { name: string }) => p.name)).toEqual(["deploy"]);
    principalId = principals[0].id;

    const newDept = page.getByRole("form", { name: "New department" });
    await newDept.getByLabel("New department").fill("Engineering");
    await newDept.getByLabel("Description").fill("Builds the engines");
    await newDept.getByLabel("Its members may use sudo").check();
    await newDept.getByRole("button", { name: "Create department" }).dblclick();
    await status(page, "Department Engineering created.");
    const departments = (await api(`${O()}/departments`)).body.data.departments;
    expect(departments).toEqual([expect.objectContaining({ name: "Engineering", description: "Builds the engines", can_sudo: true })]);
    deptId = departments[0].id;
    await checked(page, "org-directory");
  }, SLOW);

  it("a department: people, the principals it grants, its certificate policy with the defaults shown, renaming", async () => {
    await page.getByRole("link", { name: "Engineering" }).click();
    await page.getByRole("heading", { name: /Engineering/ }).waitFor();

    await page.getByLabel("Add a member of the organization").selectOption({ label: `${MEMBER} (${member.email})` });
    await page.getByRole("button", { name: "Add", exact: true }).click();
    await status(page, `${MEMBER} added to Engineering.`);
    const people = async () => (await api(`${O()}/departments/${deptId}/members`)).body.data.members.map((m: { email: string }) => m.email);
    expect(await people()).toEqual([member.email]);

    await page.getByLabel("Link a principal", { exact: true }).selectOption({ label: "deploy" });
    await page.getByRole("button", { name: "Link", exact: true }).click();
    await status(page, "Engineering now grants deploy.");
    const granted = async () => (await api(`${O()}/departments/${deptId}/principals`)).body.data.principals.map((p: { name: string }) => p.name);
    expect(await granted()).toEqual(["deploy"]);

    // The policy: Keyward's defaults until one is saved; malformed and refused values at their fields.
    const policy = page.getByRole("form", { name: "Certificate policy of Engineering" });
    await policy.getByText("these are Keyward's defaults").waitFor();
    expect(await policy.getByLabel("Lifetime by default (hours)").inputValue()).toBe("1");
    expect(await policy.getByLabel("Longest lifetime (hours)").inputValue()).toBe("24");
    await policy.getByLabel("Lifetime by default (hours)").fill("four");
    await policy.getByRole("button", { name: "Save policy" }).click();
    await policy.locator(".field[data-invalid]").getByText("Enter a whole number of hours").waitFor();
    await policy.getByLabel("Lifetime by default (hours)").fill("48");
    await policy.getByRole("button", { name: "Save policy" }).click();
    await policy.locator(".field[data-invalid]").getByText(/must not exceed max_expiry_hours/).waitFor();
    await policy.getByLabel("Lifetime by default (hours)").fill("4");
    await policy.getByLabel("Longest lifetime (hours)").fill("12");
    await policy.getByLabel("Custom extensions").fill("not an extension!");
    await policy.getByRole("button", { name: "Save policy" }).click();
    await policy.locator(".field[data-invalid]").getByText(/must be an extension name/).waitFor();
    expect((await api(`${O()}/departments/${deptId}/cert-policy`)).body.data.cert_policy.is_default).toBe(true);

    await policy.getByLabel("Custom extensions").fill("login@example.com");
    await policy.getByLabel(/Members may ask for another lifetime/).check();
    await policy.getByLabel(/permit-X11-forwarding/).uncheck();
    // Hardware-bound keys, by keyboard: touch and PIN wait for "only hardware security keys".
    expect(await policy.getByLabel(/Require a touch/).isDisabled()).toBe(true);
    await policy.getByLabel(/Only hardware security keys/).focus();
    await page.keyboard.press("Space");
    await page.keyboard.press("Tab");
    expect(await policy.getByLabel(/Require a touch/).evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press("Space");
    await policy.getByRole("button", { name: "Save policy" }).click();
    await status(page, "The certificate policy of Engineering is saved.");
    expect((await api(`${O()}/departments/${deptId}/cert-policy`)).body.data.cert_policy).toMatchObject({
      is_default: false,
      default_expiry_hours: 4,
      max_expiry_hours: 12,
      allow_user_expiry: true,
      allowed_extensions: ["permit-agent-forwarding", "permit-port-forwarding", "permit-pty", "permit-user-rc"],
      custom_extensions: ["login@example.com"],
      require_hardware_key: true,
      require_touch: true,
      require_verify: false,
    });
    await page.getByText("Custom policy").waitFor();

    await page.getByText("Rename or describe").click();
    const details = page.getByRole("form", { name: "Department details" });
    await details.getByLabel("Name", { exact: true }).fill("Platform");
    await details.getByLabel("Description").fill("Runs the engines");
    await details.getByRole("button", { name: "Save" }).click();
    await status(page, "Platform saved.");
    expect((await api(`${O()}/departments/${deptId}`)).body.data.department).toMatchObject({ name: "Platform", description: "Runs the engines" });
    await page.getByRole("heading", { name: /Platform/ }).waitFor();
    await checked(page, "org-department");

    // Unlinking and removing ask first, naming both sides.
    await page.getByRole("button", { name: "Unlink deploy" }).click();
    await dialog().getByRole("heading", { name: "Stop granting deploy through Platform?" }).waitFor();
    expect(await axeProblems(page)).toEqual([]);
    await dialog().getByRole("button", { name: "Unlink" }).click();
    await status(page, "Platform no longer grants deploy.");
    expect(await granted()).toEqual([]);

    await page.getByRole("button", { name: `Remove ${MEMBER} from Platform` }).click();
    await dialog().getByText(`${MEMBER} no longer gets the principals of Platform`).waitFor();
    await dialog().getByRole("button", { name: "Remove" }).click();
    await status(page, `${MEMBER} removed from Platform.`);
    expect(await people()).toEqual([]);
  }, SLOW);

  it("a principal: direct holders, the departments that grant it, renaming, deletion", async () => {
    await page.getByRole("link", { name: "← Directory" }).click();
    await page.getByRole("link", { name: "deploy" }).click();
    await page.getByRole("heading", { name: "Principal deploy" }).waitFor();

    await page.getByLabel("Grant through a department").selectOption({ label: "Platform" });
    await page.getByRole("button", { name: "Link", exact: true }).click();
    await status(page, "Platform now grants deploy.");
    const grantedBy = async () => (await api(`${O()}/principals/${principalId}/departments`)).body.data.departments.map((d: { name: string }) => d.name);
    expect(await grantedBy()).toEqual(["Platform"]);

    const add = async (name: string, email: string) => {
      await page.getByLabel("Add a member of the organization").selectOption({ label: `${name} (${email})` });
      await page.getByRole("button", { name: "Add", exact: true }).click();
      await status(page, `${name} now holds deploy.`);
    };
    await add(MEMBER, member.email);
    await add(OWNER, owner.email);
    const holders = async () => (await api(`${O()}/principals/${principalId}/members`)).body.data.members.map((m: { email: string }) => m.email).sort();
    expect(await holders()).toEqual([member.email, owner.email].sort());

    await page.getByRole("button", { name: `Remove ${OWNER} from deploy` }).click();
    await dialog().getByRole("button", { name: "Remove" }).click();
    await status(page, `${OWNER} no longer holds deploy directly.`);
    expect(await holders()).toEqual([member.email]);

    await page.getByRole("button", { name: "Unlink Platform" }).click();
    await dialog().getByRole("button", { name: "Unlink" }).click();
    await status(page, "Platform no longer grants deploy.");
    expect(await grantedBy()).toEqual([]);

    await page.getByText("Rename or describe").click();
    const details = page.getByRole("form", { name: "Principal details" });
    await details.getByLabel("Name", { exact: true }).fill("deploy ops");
    await details.getByRole("button", { name: "Save" }).click();
    await details.locator(".field[data-invalid]").getByText(/it becomes an SSH principal/).waitFor();
    await details.getByLabel("Name", { exact: true }).fill("deploy-ops");
    await details.getByRole("button", { name: "Save" }).click();
    await status(page, "Principal deploy-ops saved.");
    expect((await api(`${O()}/principals/${principalId}`)).body.data.principal.name).toBe("deploy-ops");
    await checked(page, "org-principal");

    // A principal made elsewhere, deleted here: the list says so afterwards.
    const extra = (await app.http.post(`/api/v1${O()}/principals`, { name: "old-root" }, { token: owner.token })).body.data.principal;
    await page.goto(`${app.url}/orgs/${org.slug}/departments/principals/${extra.id}`);
    await page.getByRole("button", { name: "Delete old-root" }).click();
    await dialog().getByText("New certificates no longer name").waitFor();
    await dialog().getByRole("button", { name: "Delete principal" }).click();
    await page.waitForURL(`${app.url}/orgs/${org.slug}/departments`);
    await status(page, "Principal old-root deleted.");
    expect((await api(`${O()}/principals`)).body.data.principals.map((p: { name: string }) => p.name)).toEqual(["deploy-ops"]);
  }, SLOW);

  it("deletes a department after a confirmation naming it", async () => {
    await page.getByRole("link", { name: "Platform" }).click();
    await page.getByRole("button", { name: "Delete Platform" }).click();
    await dialog().getByRole("heading", { name: "Delete the department Platform?" }).waitFor();
    await dialog().getByRole("button", { name: "Delete department" }).click();
    await page.waitForURL(`${app.url}/orgs/${org.slug}/departments`);
    await status(page, "Department Platform deleted.");
    expect((await api(`${O()}/departments`)).body.data.departments).toEqual([]);
    await page.getByText("No departments yet.").waitFor();
    // A department that does not exist (a stale link) says so, with the way back.
    await page.goto(`${app.url}/orgs/${org.slug}/departments/${deptId}`);
    await page.getByRole("alert").getByText(/department/i).waitFor();
    await page.getByRole("link", { name: "← Directory" }).waitFor();
  }, SLOW);
});

describe("SSH in Chromium", () => {
  const cas = async () => (await api(`${O()}/cas`)).body.data.cas as Array<{ id: string; name: string; ca_type: string; key_type: string; fingerprint: string; default_validity_hours: number; max_validity_hours: number; previous_keys: unknown[] }>;

  it("creates a user and a host CA, copies the servers' lines, edits and rotates with overlap, downloads the KRL", async () => {
    await page.getByRole("navigation", { name: /sections/ }).getByRole("link", { name: "SSH" }).click();
    await page.getByRole("heading", { name: "SSH", exact: true }).waitFor();
    await page.getByText("No certificate authority yet.", { exact: true }).waitFor();

    const form = page.getByRole("form", { name: "New certificate authority" });
    await form.getByLabel("Longest lifetime (hours)").fill("a week");
    await form.getByRole("button", { name: "Create certificate authority" }).click();
    await form.locator(".field[data-invalid]").getByText("Enter a whole number of hours").waitFor();
    await form.getByLabel("Longest lifetime (hours)").fill("");
    await form.getByRole("button", { name: "Create certificate authority" }).click();
    await form.locator(".field[data-invalid]").getByLabel("Name").waitFor();
    expect(await cas()).toEqual([]);

    await form.getByLabel("Name", { exact: true }).fill("People CA");
    await form.getByRole("button", { name: "Create certificate authority" }).dblclick();
    await status(page, "People CA created: copy its lines to your servers.");
    expect((await cas()).map((c) => [c.name, c.ca_type, c.key_type])).toEqual([["People CA", "user", "ed25519"]]);

    // Only the missing kind is offered now.
    await form.getByLabel("Signs").selectOption({ label: "servers' keys (host CA)" });
    await form.getByLabel("Name", { exact: true }).fill("Servers CA");
    await form.getByRole("button", { name: "Create certificate authority" }).click();
    await status(page, "Servers CA created: copy its lines to your servers.");
    expect((await cas()).map((c) => c.ca_type).sort()).toEqual(["host", "user"]);
    await expect.poll(() => form.count()).toBe(0);

    const lines = (await api(`${O()}/ssh/ca-keys`)).body.data;
    const trusted = page.getByRole("group", { name: "TrustedUserCAKeys file" });
    expect((await trusted.locator("pre").textContent())?.trim()).toBe(lines.trusted_user_ca_keys.trim());
    await trusted.getByRole("button", { name: "Copy TrustedUserCAKeys file" }).click();
    await trusted.getByText("Copied.").waitFor();
    expect((await page.evaluate(() => navigator.clipboard.readText())).trim()).toBe(lines.trusted_user_ca_keys.trim());
    const knownHosts = page.getByRole("group", { name: "known_hosts line (@cert-authority)" });
    expect((await knownHosts.locator("pre").textContent())?.trim()).toBe(lines.known_hosts.trim());
    expect(lines.known_hosts).toMatch(/^@cert-authority \* ssh-ed25519 /);

    // How a member gets a certificate: this server's address and the organization, exactly.
    await page.getByRole("group", { name: "Sign in from your terminal" }).getByText(`keyward login --server ${app.url}`).waitFor();
    await page.getByRole("group", { name: "Get a certificate for your SSH key" }).getByText(`keyward ssh sign --org-id ${org.id}`).waitFor();

    const krl = page.getByRole("link", { name: "Download the key revocation list (KRL)" });
    expect(await krl.getAttribute("href")).toBe(`/api/v1/organizations/${org.id}/ssh/krl`);
    const download = await page.request.get(`${app.url}${await krl.getAttribute("href")}`);
    expect(download.status()).toBe(200);
    expect(download.headers()["content-type"]).toContain("application/octet-stream");

    const userCa = (await cas()).find((c) => c.ca_type === "user")!;
    await page.getByText("Edit People CA").click();
    const edit = page.getByRole("form", { name: "Edit People CA" });
    await edit.getByLabel("Lifetime by default (hours)").fill("12");
    await edit.getByLabel("Longest lifetime (hours)").fill("48");
    await edit.getByRole("button", { name: "Save" }).click();
    await status(page, "People CA saved.");
    expect((await cas()).find((c) => c.id === userCa.id)).toMatchObject({ default_validity_hours: 12, max_validity_hours: 48 });

    // The host CA's hosts: unset at first (known_hosts says *); a bare * needs its box; then patterns.
    await page.locator(".ssh-ca", { hasText: "Servers CA" }).getByText(/not set: known_hosts trusts it for every host/).waitFor();
    await page.getByText("Edit Servers CA").click();
    const hostEdit = page.getByRole("form", { name: "Edit Servers CA" });
    await hostEdit.getByLabel("Hosts (patterns, comma separated)").fill("*");
    await hostEdit.getByRole("button", { name: "Save" }).click();
    await hostEdit.getByText(/matches every host: set allow_any_host/).waitFor();
    await hostEdit.getByLabel("Hosts (patterns, comma separated)").fill("*.prod.example.com, 10.0.0.*");
    await hostEdit.getByRole("button", { name: "Save" }).click();
    await status(page, "Servers CA saved.");
    expect(((await cas()).find((c) => c.ca_type === "host") as unknown as { host_patterns: string[] }).host_patterns).toEqual(["*.prod.example.com", "10.0.0.*"]);
    await page.locator(".ssh-ca", { hasText: "Servers CA" }).locator("dd code", { hasText: "*.prod.example.com, 10.0.0.*" }).waitFor();
    await expect.poll(async () => (await knownHosts.locator("pre").textContent())?.trim()).toMatch(/^@cert-authority \*\.prod\.example\.com,\[\*\.prod\.example\.com\]:\*,10\.0\.0\.\*,\[10\.0\.0\.\*\]:\* ssh-ed25519 /);

    await page.getByRole("button", { name: "Rotate key of People CA" }).click();
    await dialog().getByLabel("New key type").selectOption("ecdsa");
    await dialog().getByLabel("Reason (for the audit log)").fill("Yearly rotation");
    await dialog().getByRole("button", { name: "Rotate key" }).click();
    await status(page, `People CA has a new key; the previous one (${userCa.fingerprint}) stays trusted for the overlap.`);
    const rotated = (await cas()).find((c) => c.id === userCa.id)!;
    expect(rotated.key_type).toBe("ecdsa");
    expect(rotated.fingerprint).not.toBe(userCa.fingerprint);
    expect(rotated.previous_keys).toEqual([expect.objectContaining({ fingerprint: userCa.fingerprint })]);
    await page.getByRole("heading", { name: "Previous keys, still trusted" }).waitFor();
    await page.locator(".ssh-previous").getByText(userCa.fingerprint).waitFor();
    // Both keys are trusted during the overlap, and the screen's line says so.
    const overlap = (await api(`${O()}/ssh/ca-keys`)).body.data.trusted_user_ca_keys.trim();
    expect(overlap.split("\n")).toHaveLength(2);
    expect((await trusted.locator("pre").textContent())?.trim()).toBe(overlap);
    await checked(page, "org-ssh");
  }, SLOW);

  it("the inventory: filters by person, principal and status, pages, revokes one with a reason and all of a person's; the KRL lists them", async () => {
    // Certificates signed the way the CLI signs them: 21 for the member, one for the owner.
    const theirs = await addVerifiedKey(app, member);
    const signed: Array<{ id: string; certificate: string }> = [];
    for (let i = 0; i < 21; i++) {
      const res = await app.http.post("/api/v1/ssh/sign", { key_id: theirs.id, org_id: org.id, principals: ["deploy-ops"] }, { token: member.token });
      expect(res.status, res.text).toBe(201);
      signed.push(res.body.data);
    }
    await app.http.post(`/api/v1${O()}/principals`, { name: "ops" }, { token: owner.token });
    const mine = await addVerifiedKey(app, owner);
    const ownCert = (await app.http.post("/api/v1/ssh/sign", { key_id: mine.id, org_id: org.id, principals: ["ops"] }, { token: owner.token })).body.data;

    await page.getByRole("navigation", { name: "SSH sections" }).getByRole("link", { name: "Certificates", exact: true }).click();
    const table = page.getByRole("region", { name: `Certificates of ${org.name}` });
    await page.getByText("Page 1 of 2 · 22 certificates").waitFor();
    expect(await table.locator("tbody tr").count()).toBe(20);
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByText("Page 2 of 2 · 22 certificates").waitFor();
    await expect.poll(() => table.locator("tbody tr").count()).toBe(2);

    await page.getByLabel("Person").selectOption({ label: `${OWNER} (${owner.email})` });
    await page.getByText("Page 1 of 1 · 1 certificate").waitFor();
    await table.getByRole("row", { name: new RegExp(OWNER) }).getByText("ops").waitFor();
    await page.getByLabel("Person").selectOption({ label: "Everyone" });
    await page.getByLabel("Principal").selectOption("ops");
    await page.getByText("Page 1 of 1 · 1 certificate").waitFor();
    await page.getByLabel("Principal").selectOption("");
    await page.getByLabel("Status").selectOption("revoked");
    await page.getByText("No certificate matches these filters.").waitFor();
    await page.getByLabel("Status").selectOption("");

    // Revoke one, with a reason.
    await page.getByLabel("Person").selectOption({ label: `${OWNER} (${owner.email})` });
    await page.getByText("Page 1 of 1 · 1 certificate").waitFor();
    await page.getByRole("button", { name: `Revoke certificate ${ownCert.serial} of ${OWNER}` }).click();
    await dialog().getByText("servers refuse it once they fetch the list").waitFor();
    await dialog().getByLabel("Reason (for the audit log)").fill("Laptop lost");
    await dialog().getByRole("button", { name: "Revoke" }).click();
    await status(page, `Revoked certificate ${ownCert.serial} of ${OWNER}.`);
    expect((await api(`/ssh/certificates/${ownCert.id}`)).body.data.certificate).toMatchObject({ revoked: true, revoke_reason: "Laptop lost", status: "revoked" });
    await table.getByText("Laptop lost").waitFor();

    // Revoke everything of one person.
    await page.getByLabel("Person").selectOption({ label: `${MEMBER} (${member.email})` });
    await page.getByText("Page 1 of 2 · 21 certificates").waitFor();
    await page.getByRole("button", { name: `Revoke every certificate of ${MEMBER}` }).click();
    await dialog().getByRole("button", { name: "Revoke all" }).click();
    await status(page, `Revoked 21 certificates of ${MEMBER}.`);
    const active = await api(`${O()}/certificates?user_id=${member.id}&status=active`);
    expect(active.body.data.count).toBe(0);
    expect((await api(`${O()}/certificates?status=revoked`)).body.data.count).toBe(22);
    await page.getByLabel("Status").selectOption("active");
    await page.getByText("No certificate matches these filters.").waitFor();
    await page.getByLabel("Status").selectOption("revoked");
    await page.getByText("Page 1 of 2 · 21 certificates").waitFor();
    await checked(page, "org-ssh-certificates");

    // The KRL behind the screen's download link lists what was revoked (ssh-keygen says so).
    await page.getByRole("navigation", { name: "SSH sections" }).getByRole("link", { name: "Authorities and servers" }).click();
    const href = await page.getByRole("link", { name: "Download the key revocation list (KRL)" }).getAttribute("href");
    const krlFile = join(keysDir, "web-directory-ssh.krl");
    writeFileSync(krlFile, await (await page.request.get(`${app.url}${href}`)).body());
    for (const [n, cert] of [ownCert, signed[0]!, signed[20]!].entries()) {
      const file = join(keysDir, `web-directory-ssh-${n}-cert.pub`);
      writeFileSync(file, `${cert.certificate}\n`);
      const check = spawnSync("ssh-keygen", ["-Q", "-f", krlFile, file], { encoding: "utf8" });
      expect(check.stdout, check.stderr).toMatch(/REVOKED/);
    }
  }, SLOW);

  it("signs a host certificate (a malformed key refused at its field), lists it; deletes the host CA", async () => {
    await page.getByRole("navigation", { name: "SSH sections" }).getByRole("link", { name: "Host certificates" }).click();
    const form = page.getByRole("form", { name: "Sign a host certificate" });
    await form.getByLabel("The server's public key").fill("ssh-ed25519 not-a-key root@web1");
    await form.getByLabel("Host names").fill("web1.example.com web1");
    await form.getByRole("button", { name: "Sign host certificate" }).click();
    await form.locator(".field[data-invalid]").getByLabel("The server's public key").waitFor();
    expect((await api(`${O()}/certificates?cert_type=host`)).body.data.count).toBe(0);

    const hostKey = makeKey();
    await form.getByLabel("The server's public key").fill(hostKey.pub);
    await form.getByRole("button", { name: "Sign host certificate" }).dblclick();
    await status(page, "signed for web1.example.com, web1.");
    const hosts = (await api(`${O()}/certificates?cert_type=host`)).body.data;
    expect(hosts.count).toBe(1);
    expect(hosts.certificates[0]).toMatchObject({ cert_type: "host", principals: ["web1.example.com", "web1"], key_id: `host:web1.example.com [signed-by:${owner.email}]` });
    expect((await page.getByRole("group", { name: "Certificate for web1.example.com, web1" }).locator("pre").textContent())?.trim()).toBe(hosts.certificates[0].certificate.trim());
    await page.getByRole("region", { name: `Host certificates of ${org.name}` }).getByText("web1.example.com", { exact: true }).waitFor();
    await page.getByLabel("Host name", { exact: true }).fill("web2");
    await page.getByText("No certificate matches these filters.").waitFor();
    await page.getByLabel("Host name", { exact: true }).fill("web1");
    await page.getByText("Page 1 of 1 · 1 certificate").waitFor();
    await checked(page, "org-ssh-hosts");

    await page.getByRole("navigation", { name: "SSH sections" }).getByRole("link", { name: "Authorities and servers" }).click();
    await page.getByRole("button", { name: "Delete Servers CA" }).click();
    await dialog().getByRole("heading", { name: "Delete the host CA Servers CA?" }).waitFor();
    await dialog().getByRole("button", { name: "Delete certificate authority" }).click();
    await status(page, "Servers CA deleted.");
    expect((await cas()).map((c) => c.name)).toEqual(["People CA"]);
    expect(watched.problems).toEqual([]);
  }, SLOW);
});

describe("as a plain member", () => {
  it("reads the directory and how to get a certificate; no admin action is offered", async () => {
    const dept = (await app.http.post(`/api/v1${O()}/departments`, { name: "Research" }, { token: owner.token })).body.data.department;
    const theirs = await browser.newContext();
    const p = await theirs.newPage();
    const problems = await watchPage(p);
    await signInThroughPage(p, app.url, member, `/orgs/${org.slug}/departments`);
    await p.getByRole("link", { name: "Research" }).waitFor();
    await p.getByRole("link", { name: "deploy-ops" }).waitFor();
    expect(await p.getByRole("form").count()).toBe(0);
    expect(await p.getByRole("button", { name: /Create/ }).count()).toBe(0);

    await p.getByRole("link", { name: "Research" }).click();
    await p.getByText("Only the organization's owner and admins see and change certificate policies.").waitFor();
    expect(await p.getByRole("button").filter({ hasText: /Remove|Unlink|Delete|Save|Add|Link/ }).count()).toBe(0);
    expect(await p.getByText("Rename or describe").count()).toBe(0);

    await p.goto(`${app.url}/orgs/${org.slug}/departments/principals/${(await api(`${O()}/principals`)).body.data.principals.find((x: { name: string }) => x.name === "deploy-ops").id}`);
    await p.getByRole("heading", { name: "Principal deploy-ops" }).waitFor();
    await p.getByRole("list", { name: "People who hold it directly" }).getByText(MEMBER).waitFor();
    expect(await p.getByRole("button").filter({ hasText: /Remove|Unlink|Delete|Save|Add|Link/ }).count()).toBe(0);

    await p.getByRole("link", { name: "SSH", exact: true }).click();
    await p.getByRole("group", { name: "Sign in from your terminal" }).getByText(`keyward login --server ${app.url}`).waitFor();
    await p.getByText("ssh deploy-ops@your-server").waitFor();
    await p.getByText(/Your certificates last 1 hour and allow/).waitFor();
    await p.getByRole("group", { name: "TrustedUserCAKeys file" }).waitFor();
    expect(await p.getByRole("heading", { name: "Certificate authorities" }).count()).toBe(0);
    expect(await p.getByRole("navigation", { name: "SSH sections" }).count()).toBe(0);
    expect(await p.getByRole("button", { name: /Rotate|Delete/ }).count()).toBe(0);
    await checked(p, "org-ssh-member");

    await p.goto(`${app.url}/orgs/${org.slug}/ssh/certificates`);
    await p.getByText("Only the organization's owner and admins see its certificates.").waitFor();
    expect(await p.getByRole("button", { name: /Revoke/ }).count()).toBe(0);
    // The API decides too: the inventory is refused to a member.
    expect((await api(`${O()}/certificates`, member.token)).status).toBe(403);
    expect(problems.problems).toEqual([]);
    await theirs.close();
    expect(dept.name).toBe("Research");
  }, SLOW);
});
