import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { accessible, fieldError, signInThroughPage, startWebOrg, stopWebOrg, tabTo, watchPage } from "../helpers/web.js";
import { createCa, makeKey } from "../factories/ssh.js";
import type { TestUser } from "../factories/users.js";

/**
 * The web app's Enrolled servers screen (/orgs/<slug>/ssh/servers, issue 37) in headless Chromium:
 * an admin creates a one-time enrollment token by keyboard alone (the API's refusals shown at their
 * fields), reads it once with the command to run on the server, sees the token used once a server
 * enrolled with it (through the API, as `keyward host enroll` does), revokes an unused token and
 * retires the server (its certificates revoked). axe-core, a phone (390 px) and dark mode pass; no
 * CSP violation or console error. A plain member is offered none of it.
 */
let app: TestApp;
let browser: Browser;
let admin: TestUser;
let member: TestUser;
let page: Page;
let watched: { problems: string[] };
let org: { id: string; slug: string; name: string };
const SLOW = 180_000;

beforeAll(async () => {
  let owner: TestUser;
  ({ app, browser, owner, org, page, watched, members: [admin, member] } = await startWebOrg({
    env: { RATE_LIMIT_ENABLED: "false" },
    owner: "Charles Babbage",
    org: "Difference Engines",
    members: [{ fullName: "Ada Lovelace", role: "admin" }, { fullName: "Mary Somerville", role: "member" }],
    clipboard: true,
  }));
  await createCa(app, org.id, owner, { ca_type: "host", name: "Servers CA" });
}, 120_000);
afterAll(() => stopWebOrg({ app, browser }));

const tokens = async () => (await app.http.get(`/api/v1/organizations/${org.id}/ssh/host-enrollment-tokens`, { token: admin.token })).body.data.enrollment_tokens as { id: string; status: string; names: string[]; host_id: string | null }[];

describe("Enrolled servers in Chromium", () => {
  it(
    "offers a plain member neither tokens nor servers",
    async () => {
      const theirs = await (await browser.newContext()).newPage();
      const problems = await watchPage(theirs);
      await signInThroughPage(theirs, app.url, member, `/orgs/${org.slug}/ssh/servers`);
      await theirs.getByText("Only the organization's owner and admins see its servers.").waitFor();
      expect(await theirs.getByRole("form", { name: "Create an enrollment token" }).count()).toBe(0);
      expect(problems.problems).toEqual([]);
      await theirs.context().close();
    },
    SLOW,
  );

  it(
    "creates a token by keyboard, shows it once with the command, marks it used, revokes another and retires the server",
    async () => {
      await signInThroughPage(page, app.url, admin, `/orgs/${org.slug}/ssh/servers`);
      await page.getByRole("heading", { name: "Enroll a server" }).waitFor();
      await page.getByText("None yet.").waitFor();
      await page.getByText("No server enrolled yet.").waitFor();

      // The API decides what is valid: a day at most, a name that is a name.
      await tabTo(page, "Host names", { exact: true });
      await page.keyboard.type("web1.example.com, 127.0.0.1");
      await tabTo(page, "Usable for (minutes)", { exact: true });
      await page.keyboard.press("ControlOrMeta+a");
      await page.keyboard.type("5000");
      await page.keyboard.press("Enter");
      await fieldError(page, "Usable for (minutes)").waitFor();
      expect(await tokens()).toEqual([]);
      await page.getByLabel("Usable for (minutes)", { exact: true }).focus();
      await page.keyboard.press("ControlOrMeta+a");
      await page.keyboard.type("30");
      await page.keyboard.press("Enter");

      // Shown once, with the command to run on the server.
      const secret = page.getByRole("group", { name: "Enrollment token for web1.example.com, 127.0.0.1" });
      const token = (await secret.locator(".secret-value").textContent())!;
      expect(token).toMatch(/^kwh_[0-9a-f]{8}_/);
      const command = await page.getByRole("group", { name: "On the server, as root" }).locator(".copy-text-value").textContent();
      expect(command).toBe(`sudo keyward host enroll --server ${app.url} --token ${token}`);
      const list = page.getByRole("list", { name: `Enrollment tokens of ${org.name}` });
      await list.getByText("active", { exact: true }).waitFor();
      const [listed] = await tokens();
      expect(listed).toMatchObject({ status: "active", names: ["web1.example.com", "127.0.0.1"] });

      // The server enrolls with it (what `keyward host enroll` sends).
      const enrolled = await app.http.post("/api/v1/ssh/hosts/enroll", { token, host_keys: [makeKey("ed25519").pub] });
      expect(enrolled.status, enrolled.text).toBe(201);
      await page.reload();
      await list.getByText("used", { exact: true }).waitFor();
      const servers = page.getByRole("region", { name: `Enrolled servers of ${org.name}` });
      await servers.getByText("web1.example.com").waitFor();
      await accessible(page, "org-ssh-servers");

      // A second token, revoked before any server used it.
      await page.getByLabel("Host names", { exact: true }).fill("db1.example.com");
      await page.getByRole("button", { name: "Create enrollment token" }).click();
      await page.getByRole("group", { name: "Enrollment token for db1.example.com" }).waitFor();
      const second = (await tokens()).find((t) => t.names[0] === "db1.example.com")!;
      await list.getByRole("button", { name: /^Revoke the enrollment token .* for db1\.example\.com$/ }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Revoke" }).click();
      await page.getByRole("status").getByText(/no server can enroll with it/).waitFor();
      expect((await tokens()).find((t) => t.id === second.id)?.status).toBe("revoked");
      // The list is read again after the revocation's notice shows: wait for it to have no Revoke left.
      await expect.poll(() => list.getByRole("button", { name: /^Revoke/ }).count()).toBe(0);

      // Retiring the server revokes its certificates.
      await servers.getByRole("button", { name: "Retire web1.example.com" }).click();
      await page.getByRole("alertdialog").getByRole("button", { name: "Retire" }).click();
      await page.getByRole("status").getByText("Retired web1.example.com: its host certificates are revoked.").waitFor();
      await page.getByText("No server enrolled yet.").waitFor();
      expect((await app.http.get(`/api/v1/organizations/${org.id}/ssh/hosts`, { token: admin.token })).body.data.hosts).toEqual([]);
      const retired = (await app.http.get(`/api/v1/organizations/${org.id}/ssh/hosts?include_retired=true`, { token: admin.token })).body.data.hosts;
      expect(retired).toEqual([expect.objectContaining({ name: "web1.example.com", retired_at: expect.any(String) })]);
      expect(watched.problems).toEqual([]);
    },
    SLOW,
  );
});
