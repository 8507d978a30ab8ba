import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as oc from "openid-client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/lib/crypto/index.js";
import type { TestApp } from "../helpers/app.js";
import { launchBrowser, pageWithAuthenticator } from "../helpers/browser.js";
import { accessible, axeProblems, signInThroughPage, watchPage } from "../helpers/web.js";
import { externalIdpSuite, githubAccount, type FakeIdps } from "../helpers/external-idp.js";
import { OidcAgent } from "../helpers/oidc-agent.js";
import { discover } from "../helpers/oidc-rp.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";
import { REDIRECT, registerClient } from "../factories/oidc.js";
import { invite, newOrg } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal, keysDir, makeKey } from "../factories/ssh.js";
import { login, newUser, uniqueEmail, type TestUser } from "../factories/users.js";

/**
 * My account in the web app (/account/…, issue 32), in headless Chromium: every action of every
 * screen once (profile, email change, password, authenticator app with its QR code, passkeys with a
 * CDP virtual authenticator, backup codes, sessions, linked GitHub, organizations and invitations,
 * SSH keys with their proof and certificates, applications allowed), each effect checked through
 * the REST API; axe-core on every screen at desktop and phone width, light and dark
 * (docs/screenshots/web-account-*.png); no CSP violation or console error.
 */
const suite = externalIdpSuite();
let app: TestApp;
let idps: FakeIdps;
let browser: Browser;
let page: Page;
let watched: { problems: string[] };
let user: TestUser;
let owner: TestUser;
let orgs: { joined: { id: string; name: string }; declined: { id: string; name: string }; left: { id: string; name: string } };
let consentClient: string;
let keyId: string;
/** The backup codes the first second factor came with. */
let firstCodes: string[];

beforeAll(async () => {
  ({ app, idps } = suite);
  browser = await launchBrowser();
  page = await pageWithAuthenticator(browser);
  watched = await watchPage(page);

  user = await newUser(app, { fullName: "Ada Lovelace" });
  owner = await newUser(app, { fullName: "Grace Hopper" });
  orgs = { joined: await newOrg(app, owner, "Analytical Engines"), declined: await newOrg(app, owner, "Difference Ltd"), left: await newOrg(app, owner, "Babbage Club") };
  await invite(app, orgs.joined.id, owner, user.email, "member");
  await invite(app, orgs.declined.id, owner, user.email, "admin");
  await invite(app, orgs.left.id, owner, user.email, "guest");
  await createCa(app, orgs.joined.id, owner);
  keyId = (await addVerifiedKey(app, user)).id;

  // An application the user allowed (through a browser of its own: one more session).
  const client = await registerClient(app, orgs.joined.id, owner, { name: "Team Wiki" });
  consentClient = client.clientId;
  const agent = new OidcAgent(app.url);
  await agent.signIn(user.email, user.password);
  const config = await discover(app.url, client);
  const url = oc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid email profile", code_challenge: await oc.calculatePKCECodeChallenge(oc.randomPKCECodeVerifier()), code_challenge_method: "S256" });
  expect((await agent.follow(url.toString(), REDIRECT)).url).toContain(REDIRECT);
}, 120_000);
afterAll(() => browser?.close());

/** A REST read as the user (or `token`), for checking what the screens did. */
const api = (path: string, token = user.token) => app.http.get(`/api/v1${path}`, { token });
/** A REST read with the browser's own session cookie. */
const fromPage = async (path: string) => (await page.context().request.get(`${app.url}/api/v1${path}`)).json();
const status = (text: string | RegExp) => page.getByRole("status").getByText(text).waitFor();
const open = async (link: string, heading: string) => {
  await page.getByRole("navigation", { name: "Account sections" }).getByRole("link", { name: link, exact: true }).click();
  await page.getByRole("heading", { level: 1, name: heading }).waitFor();
};

describe("my account in the web app", () => {
  it("sends a signed-out visit of /account to sign-in and back, under the app's CSP, with the old console gone", async () => {
    await signInThroughPage(page, app.url, user, "/account");
    const res = await page.reload();
    const csp = res!.headers()["content-security-policy"]!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("img-src 'self' data:");
    expect(csp).not.toContain("unsafe-inline");
    expect(await res!.text()).not.toMatch(/<script>|style="|(src|href)="(https?:)?\/\//);
    await page.getByRole("heading", { level: 1, name: "Profile" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Account sections" }).getByRole("link").allTextContents()).toEqual([
      "Profile",
      "Password and two-step",
      "Sessions",
      "Linked accounts",
      "Organizations",
      "SSH keys",
      "Applications",
      "Network access",
    ]);
    expect(await page.locator("#managed-by").textContent()).toBe("No organization manages your account: only you can change how you sign in.");
    await accessible(page, "account-profile");
    for (const gone of ["/assets/account.js", "/assets/account-two-step.js"]) expect((await page.request.get(`${app.url}${gone}`)).status(), gone).toBe(404);
    // The person menu leads here from every screen.
    await page.goto(`${app.url}/`);
    await page.getByRole("button", { name: "Ada Lovelace" }).click();
    await page.getByRole("link", { name: "My account" }).click();
    await page.waitForURL(`${app.url}/account`);
    await page.getByRole("heading", { level: 1, name: "Profile" }).waitFor();
  });

  it("changes the name", async () => {
    await page.getByLabel("Full name").fill("Ada King");
    await page.getByRole("button", { name: "Save name" }).click();
    await status("Name saved.");
    expect((await api("/users/me")).body.data.user.full_name).toBe("Ada King");
    // The frame shows the new name too.
    await page.getByRole("button", { name: "Ada King" }).waitFor();
  });

  it("links GitHub: the provider sends the browser back to the screen, which says so once", async () => {
    await open("Linked accounts", "Linked accounts");
    await page.getByText("No linked accounts.").waitFor();
    idps.github.signIn(githubAccount(user.email));
    await page.getByRole("button", { name: "Link GitHub" }).click();
    await status("GitHub is linked: you can sign in with it.");
    await expect.poll(() => page.url()).toBe(`${app.url}/account/linked`);
    expect((await api("/auth/external/linked-accounts")).body.data.linked_accounts).toEqual([expect.objectContaining({ provider: "github" })]);
    expect(await page.locator("#linked li").allTextContents()).toEqual([expect.stringContaining("GitHub: octo")]);
    await accessible(page, "account-linked");
    await page.getByRole("button", { name: "Unlink GitHub" }).click();
    await page.getByRole("alertdialog").getByText("You will no longer be able to sign in with GitHub").waitFor();
    await page.getByRole("alertdialog").getByRole("button", { name: "Unlink GitHub" }).click();
    await status("GitHub unlinked.");
    expect((await api("/auth/external/linked-accounts")).body.data.linked_accounts).toEqual([]);
    // A crafted address cannot put its own words on the screen.
    await page.goto(`${app.url}/account/linked?error_type=${encodeURIComponent("<b>Call us</b>")}&error=${encodeURIComponent("Call +1 555 0100")}`);
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("The provider could not be linked. Try again.");
    await page.goto(`${app.url}/account/linked?error_type=EMAIL_MISMATCH`);
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/does not list your email address as verified/);
  });

  it("accepts invitations, declines one, and leaves an organization after a confirmation", async () => {
    await open("Organizations", "Organizations");
    await page.getByRole("button", { name: `Accept the invitation to ${orgs.joined.name}` }).click();
    await status(`You joined ${orgs.joined.name} as member.`);
    await page.getByRole("button", { name: `Decline the invitation to ${orgs.declined.name}` }).click();
    await status(`You declined the invitation to ${orgs.declined.name}.`);
    await page.getByRole("button", { name: `Accept the invitation to ${orgs.left.name}` }).click();
    await status(`You joined ${orgs.left.name} as guest.`);
    const mine = async () => (await api("/users/me/organizations")).body.data.organizations.map((o: { id: string }) => o.id);
    expect(await mine()).toEqual(expect.arrayContaining([orgs.joined.id, orgs.left.id]));
    expect(await mine()).not.toContain(orgs.declined.id);
    expect((await api("/users/me/invites")).body.data.invites).toEqual([]);
    await page.locator("#org-list").getByRole("link", { name: orgs.joined.name }).waitFor();
    await page.getByText("No invitations waiting.").waitFor();
    await accessible(page, "account-organizations");

    await page.getByRole("button", { name: `Leave ${orgs.left.name}` }).click();
    await page.getByRole("alertdialog").getByText(`You lose access to everything ${orgs.left.name} gives you`).waitFor();
    await page.getByRole("alertdialog").getByRole("button", { name: "Leave" }).click();
    await status(`You left ${orgs.left.name}.`);
    expect(await mine()).toEqual([orgs.joined.id]);
  });

  it("enrolls an authenticator app from its QR code, with a code computed here; the backup codes show once", async () => {
    await open("Password and two-step", "Password and two-step verification");
    await page.getByRole("button", { name: "Set up an authenticator app" }).click();
    const qr = page.locator("#totp-qr");
    await qr.waitFor();
    expect(await qr.getAttribute("src")).toMatch(/^data:image\/png;base64,/);
    // The image really loaded (img-src allows data:).
    expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    expect(await page.locator("#totp-uri").getAttribute("href")).toMatch(/^otpauth:\/\/totp\//);
    const secret = (await page.locator("#totp-secret").textContent())!;
    await page.evaluate(() => window.scrollTo(0, 0));
    await accessible(page, "account-security");
    const code = page.getByLabel("Code the app shows");
    await code.fill("000000");
    await page.getByRole("button", { name: "Turn on" }).click();
    // The refusal is shown at the field.
    await page.locator(".field[data-invalid]").getByText(/code/i).first().waitFor();
    await code.fill(totpCode(secret, totpStep(app.clock.now())));
    await page.getByRole("button", { name: "Turn on" }).click();
    await status(/^Authenticator app turned on/);
    const codes = page.getByRole("list", { name: "Backup codes" }).getByRole("listitem");
    expect(await codes.count()).toBe(10);
    firstCodes = (await codes.allTextContents()).map((c) => c.trim());
    expect((await api("/auth/mfa/status")).body.data).toMatchObject({ totp_enabled: true, backup_codes_remaining: 10 });
    // Shown first to keyboard and screen-reader users.
    expect(await page.evaluate(() => document.activeElement?.classList.contains("codes-box"))).toBe(true);
    await page.getByRole("button", { name: "I have stored them" }).click();
    expect(await page.getByRole("list", { name: "Backup codes" }).count()).toBe(0);
    await page.locator("#totp-state").getByText("on", { exact: true }).waitFor();
  });

  it("adds a passkey with the virtual authenticator and renames it", async () => {
    await page.getByLabel("Name for the new passkey").fill("Virtual key");
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await status("Passkey Virtual key added.");
    const [credential] = (await api("/auth/webauthn/credentials")).body.data.credentials;
    expect(credential.name).toBe("Virtual key");
    await page.getByRole("button", { name: "Rename passkey Virtual key" }).click();
    await page.getByLabel("New name for Virtual key").fill("Laptop key");
    await page.getByLabel("New name for Virtual key").press("Enter");
    await status("Passkey renamed to Laptop key.");
    expect((await api("/auth/webauthn/credentials")).body.data.credentials[0].name).toBe("Laptop key");
  });

  it("regenerates backup codes: a wrong password at its field; the new ones work, an old one does not", async () => {
    const form = page.getByRole("form", { name: "Make new backup codes" });
    await form.getByLabel("Current password").fill("wrong password");
    await form.getByRole("button", { name: "Make new backup codes" }).click();
    await form.locator(".field[data-invalid]").getByText("The current password is incorrect").waitFor();
    await form.getByLabel("Current password").fill(user.password);
    await form.getByRole("button", { name: "Make new backup codes" }).click();
    await status(/^New backup codes made/);
    const codes = (await page.getByRole("list", { name: "Backup codes" }).getByRole("listitem").allTextContents()).map((c) => c.trim());
    expect(codes).toHaveLength(10);
    const secondStep = async (code: string) => {
      const mfa = (await login(app, user.email, user.password)).body.data;
      expect(mfa.requires_mfa).toBe(true);
      return app.http.post("/api/v1/auth/mfa/backup-code", { mfa_token: mfa.mfa_token, code });
    };
    expect((await secondStep(firstCodes[1]!)).status).not.toBe(200);
    const used = await secondStep(codes[0]!);
    expect(used.status, used.text).toBe(200);
    await page.getByRole("button", { name: "I have stored them" }).click();
  });

  it("turns the authenticator app off after a confirmation with the password; the passkey stays", async () => {
    const button = page.getByRole("button", { name: "Turn off the authenticator app" });
    // The danger button is visible: a background and a colour of its own.
    expect(await button.evaluate((b) => getComputedStyle(b).backgroundColor)).not.toMatch(/rgba\(0, 0, 0, 0\)|transparent/);
    await button.click();
    const dialog = page.getByRole("alertdialog");
    await dialog.getByText("Its codes stop working at once").waitFor();
    expect(await axeProblems(page)).toEqual([]);
    await dialog.getByLabel("Current password").fill(user.password);
    await dialog.getByRole("button", { name: "Turn off" }).click();
    await status("Authenticator app turned off.");
    expect((await api("/auth/mfa/status")).body.data).toMatchObject({ totp_enabled: false, webauthn_enabled: true, mfa_enabled: true });
  });

  it("lists certificates, adds a key with the proof that the private key is here, renames and removes keys", async () => {
    await grantPrincipal(app, orgs.joined.id, owner, user, "deploy");
    const signed = await app.http.post("/api/v1/ssh/sign", { key_id: keyId }, { token: user.token });
    expect(signed.status, signed.text).toBe(201);
    const [cert] = (await api("/ssh/certificates")).body.data.certificates;
    await open("SSH keys", "SSH keys and certificates");
    const row = page.locator("#cert-table tbody tr").first();
    await expect.poll(() => row.textContent()).toContain(cert.serial);
    expect(await row.textContent()).toContain("deploy");
    expect(await row.textContent()).toContain(orgs.joined.name);

    const key = makeKey();
    await page.getByLabel("Public key").fill(key.pub);
    await page.getByLabel("Name (optional)").fill("Build server");
    await page.getByRole("button", { name: "Add key" }).click();
    await page.getByRole("heading", { name: "Prove you hold Build server" }).waitFor();
    const commands = page.locator("#ssh-challenge-commands");
    await commands.waitFor();
    const [, challenge] = /echo '([^']+)'/.exec((await commands.textContent())!)!;
    const added = (await api("/ssh/keys")).body.data.keys.find((k: { description: string }) => k.description === "Build server");
    expect(added.verified).toBe(false);
    await accessible(page, "account-ssh");
    // A signature by another key is refused at the field.
    const other = makeKey();
    const sign = (path: string) => {
      const file = join(keysDir, `web-challenge-${Date.now()}.txt`);
      writeFileSync(file, `${challenge}\n`);
      execFileSync("ssh-keygen", ["-Y", "sign", "-n", "file", "-f", path, file], { stdio: "ignore" });
      return readFileSync(`${file}.sig`, "utf8");
    };
    await page.getByLabel("Signature").fill(sign(other.path));
    await page.getByRole("button", { name: "Verify key" }).click();
    await page.locator(".field[data-invalid]").getByText(/does not verify/).waitFor();
    await page.getByLabel("Signature").fill(sign(key.path));
    await page.getByRole("button", { name: "Verify key" }).click();
    await status("SSH key Build server verified: certificates can be signed for it.");
    expect((await api("/ssh/keys")).body.data.keys.find((k: { id: string }) => k.id === added.id).verified).toBe(true);

    await page.getByRole("button", { name: "Rename SSH key Build server" }).click();
    await page.getByLabel("New name for Build server").fill("CI runner");
    await page.getByRole("button", { name: "Save name" }).click();
    await status("SSH key renamed to CI runner.");
    expect((await api("/ssh/keys")).body.data.keys.find((k: { id: string }) => k.id === added.id).description).toBe("CI runner");

    await page.getByRole("button", { name: "Remove SSH key laptop" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Remove key" }).click();
    await status("SSH key laptop removed.");
    expect((await api("/ssh/keys")).body.data.keys.map((k: { id: string }) => k.id)).toEqual([added.id]);
  });

  it("withdraws an application's consent", async () => {
    await open("Applications", "Applications");
    await page.getByText("Team Wiki").waitFor();
    await accessible(page, "account-apps");
    await page.getByRole("button", { name: "Withdraw access of Team Wiki" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Withdraw access" }).click();
    await status("Team Wiki no longer has access to your account.");
    expect(consentClient).toBeTruthy();
    expect((await api("/users/me/consents")).body.data.consents).toEqual([]);
    await page.getByText("No application has access to your account.").waitFor();
  });

  it("signs out one other session, then all the others", async () => {
    const sessions = (await api("/auth/sessions")).body.data.sessions as Array<{ id: string; current: boolean }>;
    const bearer = sessions.find((s) => s.current)!;
    expect(sessions.length).toBeGreaterThanOrEqual(3);
    await open("Sessions", "Sessions");
    await page.getByText("this browser").waitFor();
    await accessible(page, "account-sessions");
    await page.locator(`li[data-session-id="${bearer.id}"]`).getByRole("button", { name: /^Sign out/ }).click();
    await status(/^Signed out /);
    expect((await api("/auth/me")).status).toBe(401);

    const spare = (await login(app, user.email, user.password)).body.data.mfa_token as string;
    expect(spare).toBeTruthy();
    await page.getByRole("button", { name: "Sign out all other sessions" }).click();
    await status(/other sessions? signed out\.$/);
    const left = await fromPage("/auth/sessions");
    expect(left.data.sessions).toEqual([expect.objectContaining({ current: true })]);
    await expect.poll(() => page.locator("#session-list li").count()).toBe(1);
  });

  it("changes the password: the old one is refused, the new one accepted", async () => {
    await open("Password and two-step", "Password and two-step verification");
    const form = page.getByRole("form", { name: "Password", exact: true });
    const next = "a new and longer passphrase";
    await form.getByLabel("Current password").fill(user.password);
    await form.getByLabel("New password", { exact: true }).fill(next);
    await form.getByLabel("Repeat the new password").fill("something else entirely");
    await form.getByRole("button", { name: "Change password" }).click();
    // The API's validation message, at its field.
    await form.locator(".field[data-invalid]").first().waitFor();
    expect((await login(app, user.email, next)).status).toBe(401);
    await form.getByLabel("Repeat the new password").fill(next);
    await form.getByRole("button", { name: "Change password" }).click();
    await status(/^Password changed/);
    expect((await login(app, user.email, user.password)).status).toBe(401);
    expect((await login(app, user.email, next)).body.data.requires_mfa).toBe(true);
    user.password = next;
  });

  it("changes the email address once the link sent to the new one is opened", async () => {
    await open("Profile", "Profile");
    const next = uniqueEmail("ada.king");
    const form = page.getByRole("form", { name: "Change your email address" });
    await form.getByLabel("New email address").fill(next);
    await form.getByLabel("Current password").fill(user.password);
    await form.getByRole("button", { name: "Send confirmation link" }).click();
    await status(new RegExp(`We sent a link to ${next.replace(/[.]/g, "\\.")}`));
    await app.flushEmails();
    const token = tokenFrom(linkIn(app.mail.lastWith(next, "/verify-email?token="), "/verify-email"));
    expect((await app.http.post("/api/v1/auth/verify-email", { token })).status).toBe(200);
    expect((await fromPage("/users/me")).data.user).toMatchObject({ email: next, email_verified: true });
    user.email = next;
  });

  it("shows what a person typed as text, never as markup", async () => {
    const hostile = `<img src=x onerror="document.title='owned'"> Ada`;
    const cookie = await page.context().request.patch(`${app.url}/api/v1/users/me`, { data: { full_name: hostile }, headers: { origin: app.url } });
    expect(cookie.status()).toBe(200);
    await page.reload();
    await expect.poll(() => page.getByLabel("Full name").inputValue()).toBe(hostile);
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.title()).not.toBe("owned");
    await page.getByRole("button", { name: hostile }).waitFor();
  });

  it("removes the passkey after a confirmation: two-step verification is off again", async () => {
    await open("Password and two-step", "Password and two-step verification");
    await page.getByRole("button", { name: "Remove passkey Laptop key" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Remove passkey" }).click();
    await status("Passkey Laptop key removed.");
    expect((await fromPage("/auth/mfa/status")).data).toMatchObject({ mfa_enabled: false, credential_count: 0 });
    await page.locator("#mfa-summary").getByText("Two-step verification is off").waitFor();
  });

  it("sends a new verification link to an address not verified yet; invitations wait for it", async () => {
    const unverified = await newUser(app, { fullName: "Charles Babbage", verify: false });
    const other = await (await browser.newContext()).newPage();
    const theirs = await watchPage(other);
    await signInThroughPage(other, app.url, unverified, "/account");
    await other.locator("#current-email").getByText("not verified").waitFor();
    await app.flushEmails();
    const sent = app.mail.to(unverified.email).length;
    await other.getByRole("button", { name: "Send a new verification link" }).click();
    await other.locator("#email-title ~ [role=status]").waitFor();
    await app.flushEmails();
    expect(app.mail.to(unverified.email).length).toBe(sent + 1);
    expect(app.mail.last(unverified.email)?.text).toContain("/verify-email?token=");
    await other.getByRole("link", { name: "Organizations", exact: true }).click();
    await other.getByText("Verify your email address to see the invitations sent to it.").waitFor();
    expect(theirs.problems).toEqual([]);
    await other.context().close();
  });

  it("signs out everywhere, after a confirmation", async () => {
    await open("Sessions", "Sessions");
    await page.getByRole("button", { name: "Sign out everywhere" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Sign out everywhere" }).click();
    await page.waitForURL(`${app.url}/login`);
    expect((await page.context().request.get(`${app.url}/api/v1/auth/me`)).status()).toBe(401);
    const fresh = await browser.newPage();
    await fresh.goto(`${app.url}/account/security`);
    expect(fresh.url()).toBe(`${app.url}/login?next=${encodeURIComponent("/account/security")}`);
    await fresh.close();
    expect(watched.problems).toEqual([]);
  });
});
