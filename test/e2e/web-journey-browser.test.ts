import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGISTER_ACCEPTED } from "../../src/modules/auth/accounts.service.js";
import { cheapPasswordHasher, startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { buildCli, cliUser, runCli, startCli, type CliUser } from "../helpers/cli.js";
import { linkIn } from "../helpers/smtp-sink.js";
import { startSshd } from "../helpers/sshd.js";
import { accessible, watchPage } from "../helpers/web.js";
import { makeKey } from "../factories/ssh.js";
import { login } from "../factories/users.js";

/**
 * Issue 32, "Must show", first item: one journey from zero, in headless Chromium against a running
 * Keyward, as two people do it. A newcomer registers on /register, confirms the address from the
 * emailed link, signs in, creates an organization in the web app, a user CA (SSH), a principal and
 * a department with a certificate policy that grants it (Directory), and invites a colleague
 * (Members). The colleague, in a second browser, opens the emailed invitation, creates an account
 * there and is a member; the owner puts them in the department; they copy the two commands the SSH
 * screen shows and get a certificate with the real `keyward` client, signing in through their
 * browser. A real sshd, set up from the SSH screen's lines and its KRL, accepts that certificate;
 * the owner finds it in the inventory and revokes it with a reason; the KRL downloaded from the
 * SSH screen's link lists it (ssh-keygen -Q) and the same sshd refuses it.
 *
 * Every effect is checked through the REST API. accessible() (axe-core at desktop and phone width,
 * light and dark) runs on what the journey passes through that no other test checks: the hosted
 * registration, confirmation, sign-in, invitation and consent pages (docs/screenshots/
 * web-hosted-*.png) and a member's home with a certificate. Neither browser sees a CSP violation or
 * a console error. On PostgreSQL and Redis in CI (.ci/run runs the web app's browser tests once),
 * and on the embedded default with `npm test`.
 */
let app: TestApp;
let browser: Browser;
let ownerCtx: BrowserContext;
let memberCtx: BrowserContext;
/** The owner's browser, then the member's. */
let page: Page;
let theirs: Page;
let ownerWatch: { problems: string[] };
let memberWatch: { problems: string[] };
/** What the journey made, as the API names it. */
const made = { ownerToken: "", memberToken: "", memberId: "", orgId: "", caId: "", principalId: "", deptId: "", certId: "", certSerial: "" };
let cli: CliUser;
let work: string;
let sshd: Awaited<ReturnType<typeof startSshd>> | undefined;

// Fixed names and addresses: they show in the screenshots accessible() keeps in docs/screenshots.
const OWNER = { name: "Margaret Hamilton", email: "margaret.hamilton@example.com", password: "a long passphrase for the owner" };
const MEMBER = { name: "Katherine Johnson", email: "katherine.johnson@example.com", password: "a long passphrase for the member" };
const ORG = { name: "Apollo Guidance", slug: "apollo-guidance" };
const CA = "Crew CA";
const PRINCIPAL = "deploy";
const DEPT = "Flight Software";
const REASON = "Laptop left on a train";
/** The department's policy: 8 hours (not the default 1), no X11 or port forwarding. */
const POLICY = { defaultHours: 8, maxHours: 12, extensions: ["permit-agent-forwarding", "permit-pty", "permit-user-rc"] };
/** Each step is many clicks, a few axe-core passes or a child process; shared CI machines are slow. */
const SLOW = 180_000;

beforeAll(async () => {
  buildCli();
  app = await startTestApp({}, { passwordHasher: cheapPasswordHasher() });
  browser = await launchBrowser();
  // Commands and the servers' lines are taken with the screens' Copy buttons, as a person does.
  ownerCtx = await browser.newContext({ viewport: { width: 1280, height: 800 }, permissions: ["clipboard-read", "clipboard-write"] });
  memberCtx = await browser.newContext({ viewport: { width: 1280, height: 800 }, permissions: ["clipboard-read", "clipboard-write"] });
  page = await ownerCtx.newPage();
  theirs = await memberCtx.newPage();
  ownerWatch = await watchPage(page);
  memberWatch = await watchPage(theirs);
  work = mkdtempSync(join(tmpdir(), "kw-journey-"));
  cli = cliUser(app.url);
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", MEMBER.email, "-f", join(cli.home, ".ssh", "id_ed25519")]);
}, 120_000);
afterAll(async () => {
  sshd?.stop();
  await browser?.close();
  await app?.close();
  for (const dir of [work, cli?.home]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A REST read, as the owner unless told otherwise, for checking what the screens did. */
const api = async (path: string, token = made.ownerToken) => {
  const res = await app.http.get(`/api/v1${path}`, { token });
  expect(res.status, `${path}: ${res.text}`).toBe(200);
  return res.body.data;
};
const O = () => `/organizations/${made.orgId}`;
/** The newest link with `fragment` emailed to `to`, once the outbox worker has run. */
async function emailedLink(to: string, fragment: string): Promise<string> {
  await app.flushEmails();
  return linkIn(app.mail.lastWith(to, fragment), fragment);
}
const status = (p: Page, text: string) => p.getByRole("status").getByText(text).waitFor();
const section = (p: Page, name: string) => p.getByRole("navigation", { name: `${ORG.name} sections` }).getByRole("link", { name, exact: true }).click();
/** accessible(), from the top of the screen (the sticky header covers links on a scrolled page). */
async function checked(p: Page, name: string): Promise<void> {
  await p.evaluate(() => window.scrollTo(0, 0));
  await accessible(p, name);
}
/** What a Copy button put on the clipboard. */
async function copy(p: Page, label: string): Promise<string> {
  const group = p.getByRole("group", { name: label });
  await group.getByRole("button", { name: `Copy ${label}` }).click();
  await group.getByText("Copied.").waitFor();
  return (await p.evaluate(() => navigator.clipboard.readText())).trim();
}
/** The KRL, downloaded through the SSH screen's link (a download, as a person's browser saves it). */
async function downloadKrl(path: string): Promise<void> {
  await section(page, "SSH");
  await page.getByRole("navigation", { name: "SSH sections" }).getByRole("link", { name: "Authorities and servers" }).click();
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download the key revocation list (KRL)" }).click()]);
  expect(download.suggestedFilename()).toBe(`${ORG.slug}.krl`);
  await download.saveAs(path);
}
const krlQuery = (krl: string, cert: string) => spawnSync("ssh-keygen", ["-Q", "-f", krl, cert], { encoding: "utf8" });

describe("a journey from zero in Chromium", () => {
  it("a newcomer registers on /register, confirms the address from the emailed link, and signs in", async () => {
    await page.goto(`${app.url}/`);
    await page.click("#go-register");
    await page.waitForURL(`${app.url}/register`);
    await page.fill("#full-name", OWNER.name);
    await page.fill("#email", OWNER.email);
    await page.fill("#password", OWNER.password);
    await page.fill("#password-confirm", OWNER.password);
    await checked(page, "hosted-register");
    await page.click("#register-form button[type=submit]");
    await page.waitForSelector("#register-done:not([hidden])");
    expect(await page.textContent("#register-done [data-message]")).toBe(REGISTER_ACCEPTED);

    // Not verified until the person opens the link and confirms.
    const signedIn = await login(app, OWNER.email, OWNER.password);
    expect(signedIn.status, signedIn.text).toBe(200);
    made.ownerToken = signedIn.body.data.token;
    expect((await api("/auth/me")).user).toMatchObject({ email: OWNER.email, full_name: OWNER.name, email_verified: false });

    await page.goto(await emailedLink(OWNER.email, "/verify-email?token="));
    expect(await page.textContent("h1")).toBe("Confirm your email address");
    await checked(page, "hosted-verify-email");
    await page.click("#confirm-email");
    await page.waitForSelector("#verify-done:not([hidden])");
    expect((await api("/auth/me")).user.email_verified).toBe(true);

    // Continue → the welcome page (not signed in yet) → sign in → the web app's home.
    await page.click("#verified-continue");
    await page.waitForURL(`${app.url}/`);
    await page.click("#go-login");
    await page.waitForURL(`${app.url}/login`);
    await page.fill("#email", OWNER.email);
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", OWNER.password);
    await checked(page, "hosted-login");
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(`${app.url}/`);
    await page.getByRole("heading", { name: "Your organizations" }).waitFor();
  }, SLOW);

  it("creates the organization in the web app", async () => {
    await page.getByRole("link", { name: "Create an organization" }).click();
    await page.waitForURL(`${app.url}/orgs/new`);
    await page.getByLabel("Name", { exact: true }).fill(ORG.name);
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.waitForURL(`${app.url}/orgs/${ORG.slug}`);
    await page.getByRole("heading", { level: 1, name: ORG.name }).waitFor();
    const orgs = (await api("/organizations")).organizations;
    expect(orgs).toEqual([expect.objectContaining({ name: ORG.name, slug: ORG.slug, role: "owner" })]);
    made.orgId = orgs[0].id;
  }, SLOW);

  it("creates a user CA on the SSH screen", async () => {
    await section(page, "SSH");
    await page.getByRole("heading", { level: 1, name: "SSH" }).waitFor();
    const form = page.getByRole("form", { name: "New certificate authority" });
    await form.getByLabel("Name", { exact: true }).fill(CA);
    await form.getByRole("button", { name: "Create certificate authority" }).click();
    await status(page, `${CA} created: copy its lines to your servers.`);
    const cas = (await api(`${O()}/cas`)).cas;
    expect(cas).toEqual([expect.objectContaining({ name: CA, ca_type: "user", key_type: "ed25519" })]);
    made.caId = cas[0].id;
  }, SLOW);

  it("creates a principal and a department with a certificate policy that grants it, on the Directory screens", async () => {
    await section(page, "Directory");
    await page.getByRole("heading", { level: 1, name: "Directory" }).waitFor();
    const newPrincipal = page.getByRole("form", { name: "New principal" });
    await newPrincipal.getByLabel("New principal").fill(PRINCIPAL);
    await newPrincipal.getByLabel("Description").fill("Ships the flight software");
    await newPrincipal.getByRole("button", { name: "Create principal" }).click();
    await status(page, `Principal ${PRINCIPAL} created.`);
    const principals = (await api(`${O()}/principals`)).principals;
    expect(principals).toEqual([expect.objectContaining({ name: PRINCIPAL, description: "Ships the flight software" })]);
    made.principalId = principals[0].id;

    const newDept = page.getByRole("form", { name: "New department" });
    await newDept.getByLabel("New department").fill(DEPT);
    await newDept.getByRole("button", { name: "Create department" }).click();
    await status(page, `Department ${DEPT} created.`);
    const departments = (await api(`${O()}/departments`)).departments;
    expect(departments).toEqual([expect.objectContaining({ name: DEPT })]);
    made.deptId = departments[0].id;

    await page.getByRole("link", { name: DEPT }).click();
    await page.getByRole("heading", { level: 1, name: new RegExp(DEPT) }).waitFor();
    const policy = page.getByRole("form", { name: `Certificate policy of ${DEPT}` });
    await policy.getByLabel("Lifetime by default (hours)").fill(String(POLICY.defaultHours));
    await policy.getByLabel("Longest lifetime (hours)").fill(String(POLICY.maxHours));
    await policy.getByLabel(/permit-X11-forwarding/).uncheck();
    await policy.getByLabel(/permit-port-forwarding/).uncheck();
    await policy.getByRole("button", { name: "Save policy" }).click();
    await status(page, `The certificate policy of ${DEPT} is saved.`);
    expect((await api(`${O()}/departments/${made.deptId}/cert-policy`)).cert_policy).toMatchObject({
      is_default: false,
      default_expiry_hours: POLICY.defaultHours,
      max_expiry_hours: POLICY.maxHours,
      allow_user_expiry: false,
      allowed_extensions: POLICY.extensions,
      custom_extensions: [],
    });

    await page.getByLabel("Link a principal", { exact: true }).selectOption({ label: PRINCIPAL });
    await page.getByRole("button", { name: "Link", exact: true }).click();
    await status(page, `${DEPT} now grants ${PRINCIPAL}.`);
    expect((await api(`${O()}/departments/${made.deptId}/principals`)).principals).toEqual([expect.objectContaining({ id: made.principalId, name: PRINCIPAL })]);
  }, SLOW);

  it("invites a colleague on the Members screen", async () => {
    await section(page, "Members");
    await page.getByLabel("Invite by email").fill(MEMBER.email);
    await page.getByRole("button", { name: "Send invitation" }).click();
    await status(page, `Invitation sent to ${MEMBER.email}.`);
    expect((await api(`${O()}/invites`)).invites).toEqual([expect.objectContaining({ email: MEMBER.email, role: "member" })]);
  }, SLOW);

  it("the colleague, in a second browser, creates an account from the emailed invitation and is a member", async () => {
    const link = await emailedLink(MEMBER.email, "/invite?token=");
    await theirs.goto(link);
    expect(await theirs.textContent("#invite-org")).toBe(ORG.name);
    expect(await theirs.textContent("#invite-role")).toBe("member");
    await checked(theirs, "hosted-invite");
    await theirs.fill("#full-name", MEMBER.name);
    await theirs.fill("#password", MEMBER.password);
    await theirs.fill("#password-confirm", MEMBER.password);
    await theirs.click("#invite-register");
    await theirs.waitForSelector("#invite-done:not([hidden])");
    expect(await theirs.textContent("#invite-done")).toContain(`You are now a member of ${ORG.name}`);
    await theirs.click("#invite-continue");
    await theirs.waitForURL(`${app.url}/`);
    await theirs.getByRole("list", { name: "Organizations" }).getByRole("link", { name: ORG.name }).waitFor();

    const signedIn = await login(app, MEMBER.email, MEMBER.password);
    expect(signedIn.status, signedIn.text).toBe(200);
    made.memberToken = signedIn.body.data.token;
    // Accepting through the emailed link proved the address.
    const me = (await api("/auth/me", made.memberToken)).user;
    expect(me).toMatchObject({ email: MEMBER.email, full_name: MEMBER.name, email_verified: true });
    made.memberId = me.id;
    const members = (await api(`${O()}/members`)).members as Array<{ user_id: string; email: string; role: string }>;
    expect(members.map((m) => [m.email, m.role]).sort()).toEqual([
      [MEMBER.email, "member"],
      [OWNER.email, "owner"],
    ]);
    expect((await api(`${O()}/invites`)).invites).toEqual([]);
    expect((await api("/organizations", made.memberToken)).organizations).toEqual([expect.objectContaining({ id: made.orgId, role: "member" })]);

    // The owner's Members screen shows them, and no invitation waiting.
    await page.reload();
    await page.getByRole("row", { name: new RegExp(MEMBER.name) }).getByLabel(`Role of ${MEMBER.name}`).waitFor();
    await page.getByText("No invitations waiting.").waitFor();
  }, SLOW);

  it("the owner puts the colleague in the department, which grants them the principal under its policy", async () => {
    await section(page, "Directory");
    await page.getByRole("link", { name: DEPT }).click();
    await page.getByLabel("Add a member of the organization").selectOption({ label: `${MEMBER.name} (${MEMBER.email})` });
    await page.getByRole("button", { name: "Add", exact: true }).click();
    await status(page, `${MEMBER.name} added to ${DEPT}.`);
    expect((await api(`${O()}/departments/${made.deptId}/members`)).members).toEqual([expect.objectContaining({ email: MEMBER.email })]);
  }, SLOW);

  it("the colleague copies the SSH screen's two commands and gets a certificate with the keyward client", async () => {
    await theirs.getByRole("list", { name: "Organizations" }).getByRole("link", { name: ORG.name }).click();
    await theirs.waitForURL(`${app.url}/orgs/${ORG.slug}`);
    await section(theirs, "SSH");
    await theirs.getByText(`ssh ${PRINCIPAL}@your-server`).waitFor();
    await theirs.getByText(`Your certificates last ${POLICY.defaultHours} hours and allow agent-forwarding, pty, user-rc.`).waitFor();

    // keyward login --server <this server>: it prints the sign-in address (and would open it): a
    // new tab of the browser already signed in; the answer goes back to the client's loopback listener.
    const loginCommand = await copy(theirs, "Sign in from your terminal");
    expect(loginCommand).toBe(`keyward login --server ${app.url}`);
    const signingIn = startCli(loginCommand.split(/\s+/).slice(1), cli);
    const [authorize] = await signingIn.waitFor(/https?:\/\/\S+\/authorize\?\S+/);
    const redirectUri = new URL(authorize!).searchParams.get("redirect_uri")!;
    expect(redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    const tab = await memberCtx.newPage();
    const tabWatch = await watchPage(tab);
    await tab.goto(authorize!);
    // Keyward's own client asks once (the first sign-in), naming who is signed in.
    await tab.getByText(`Signed in as ${MEMBER.email}`).waitFor();
    await checked(tab, "hosted-consent");
    await tab.click("#allow");
    await tab.waitForURL(`${redirectUri}**`);
    await tab.getByRole("heading", { name: "Signed in" }).waitFor();
    const signedIn = await signingIn.done;
    expect(signedIn.code, signedIn.stderr).toBe(0);
    expect(signedIn.stdout).toContain(`Signed in to ${app.url} as ${MEMBER.email}`);
    expect(tabWatch.problems).toEqual([]);
    await tab.close();

    const signCommand = await copy(theirs, "Get a certificate for your SSH key");
    expect(signCommand).toBe(`keyward ssh sign --org-id ${made.orgId}`);
    const signed = await runCli(signCommand.split(/\s+/).slice(1), cli);
    expect(signed.code, signed.stderr).toBe(0);
    const certPath = join(cli.home, ".ssh", "id_ed25519-cert.pub");
    expect(signed.stdout).toContain(`Certificate from ${ORG.name} written to ${certPath}`);
    expect(signed.stdout).toMatch(new RegExp(`principals: ${PRINCIPAL}\\b`));
    expect(existsSync(certPath)).toBe(true);

    // The API: the key the client registered (proved with ssh-keygen -Y sign), and the certificate
    // under the department's policy.
    const keys = (await api("/ssh/keys", made.memberToken)).keys;
    expect(keys).toEqual([expect.objectContaining({ verified: true })]);
    const mine = await api(`${O()}/certificates?user_id=${made.memberId}`);
    expect(mine.count).toBe(1);
    const cert = mine.certificates[0];
    expect(cert).toMatchObject({ cert_type: "user", principals: [PRINCIPAL], status: "active", revoked: false, ca_id: made.caId });
    expect([...cert.extensions].sort()).toEqual(POLICY.extensions);
    const lifetime = Date.parse(cert.valid_before) - Date.now();
    expect(lifetime).toBeGreaterThan((POLICY.defaultHours - 0.5) * 3600_000);
    expect(lifetime).toBeLessThanOrEqual(POLICY.defaultHours * 3600_000);
    expect(execFileSync("ssh-keygen", ["-L", "-f", certPath], { encoding: "utf8" })).toContain(`Serial: ${cert.serial}`);
    made.certId = cert.id;
    made.certSerial = cert.serial;

    // Back in the app (opened afresh: the screen's data is kept for a few seconds), their home
    // shows the certificate among what needs them: it expires within a week.
    await theirs.goto(`${app.url}/`);
    await theirs.getByText(new RegExp(`${PRINCIPAL} in ${ORG.name}`)).waitFor();
    await checked(theirs, "home-member");
  }, SLOW);

  it("a real sshd set up from the SSH screen's lines and its KRL accepts the certificate", async () => {
    await section(page, "SSH");
    const trusted = await copy(page, "TrustedUserCAKeys file");
    expect(trusted).toBe((await api(`${O()}/ssh/ca-keys`)).trusted_user_ca_keys.trim());
    const krl = join(work, "keyward.krl");
    await downloadKrl(krl);
    expect(krlQuery(krl, join(cli.home, ".ssh", "id_ed25519-cert.pub")).stdout).toMatch(/: ok$/m);
    const hostKey = makeKey("ed25519");
    chmodSync(hostKey.path, 0o600);
    // This machine has no "deploy" account: the server maps the principal to root.
    const principals = join(work, "principals");
    writeFileSync(principals, `${PRINCIPAL}\n`);
    sshd = await startSshd({ trustedUserCaKeys: `${trusted}\n`, hostKeyPath: hostKey.path, krlPath: krl, extraConfig: [`AuthorizedPrincipalsFile ${principals}`] });
    const ssh = sshd.login("root", join(cli.home, ".ssh", "id_ed25519"), join(cli.home, ".ssh", "id_ed25519-cert.pub"));
    expect(ssh.status, `${ssh.stderr}\n${sshd.log()}`).toBe(0);
    expect(await sshd.waitForLog(new RegExp(`Accepted certificate ID "${MEMBER.email.replace(/\./g, "\\.")}`))).toBe(true);
  }, SLOW);

  it("the owner finds the certificate in the inventory and revokes it with a reason", async () => {
    await page.getByRole("navigation", { name: "SSH sections" }).getByRole("link", { name: "Certificates", exact: true }).click();
    await page.getByLabel("Person").selectOption({ label: `${MEMBER.name} (${MEMBER.email})` });
    await page.getByText("Page 1 of 1 · 1 certificate").waitFor();
    const row = page.getByRole("region", { name: `Certificates of ${ORG.name}` }).getByRole("row", { name: new RegExp(MEMBER.name) });
    await row.getByText(PRINCIPAL, { exact: true }).waitFor();
    await row.getByText(made.certSerial, { exact: true }).waitFor();
    await row.getByText("valid", { exact: true }).waitFor();

    const label = `certificate ${made.certSerial} of ${MEMBER.name}`;
    await row.getByRole("button", { name: `Revoke ${label}` }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog.getByRole("heading", { name: `Revoke ${label}?` }).waitFor();
    await dialog.getByLabel("Reason (for the audit log)").fill(REASON);
    await dialog.getByRole("button", { name: "Revoke" }).click();
    await status(page, `Revoked ${label}.`);
    await row.getByText(REASON).waitFor();
    await row.getByText("revoked", { exact: true }).waitFor();

    const cert = (await api(`/ssh/certificates/${made.certId}`)).certificate;
    expect(cert).toMatchObject({ revoked: true, status: "revoked", revoke_reason: REASON });
    expect(cert.revoked_at).toEqual(expect.any(String));
    expect((await api(`${O()}/certificates?status=active`)).count).toBe(0);
    // The colleague's own list says so too, and their home no longer counts it.
    expect((await api(`/ssh/certificates/${made.certId}`, made.memberToken)).certificate.status).toBe("revoked");
    await theirs.reload();
    await theirs.getByRole("heading", { name: "Your organizations" }).waitFor();
    expect(await theirs.getByText(new RegExp(`${PRINCIPAL} in ${ORG.name}`)).count()).toBe(0);
  }, SLOW);

  it("the KRL downloaded from the SSH screen lists it, and the same sshd now refuses it", async () => {
    const krl = join(work, "keyward.krl");
    await downloadKrl(krl);
    const certPath = join(cli.home, ".ssh", "id_ed25519-cert.pub");
    const query = krlQuery(krl, certPath);
    expect(query.status).toBe(1);
    expect(query.stdout).toContain("REVOKED");
    // sshd reads RevokedKeys on every connection: the new file is enough.
    const ssh = sshd!.login("root", join(cli.home, ".ssh", "id_ed25519"), certPath);
    expect(ssh.status).not.toBe(0);
    expect(await sshd!.waitForLog(/revoked/i)).toBe(true);

    expect(ownerWatch.problems).toEqual([]);
    expect(memberWatch.problems).toEqual([]);
  }, SLOW);
});
