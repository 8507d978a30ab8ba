import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { accessible, watchPage } from "../helpers/web.js";
import { startZeroTierController, type RealController } from "../helpers/zerotier.js";
import { orgWithRoles } from "../factories/orgs.js";

/**
 * "My network access" in the web app (/account/networks, issue 32), in headless Chromium against
 * the real ZeroTier controller: the old /network-access address (in emails already sent) leads
 * there; each action once (switch on and off, all on, add and rename a device, ask for access, take
 * a device off a network, remove a device), each effect checked through the REST API or at the
 * controller; axe-core at desktop and phone width, light and dark; no CSP violation or console error.
 */
let app: TestApp;
let zt: RealController;
let browser: Browser;

beforeAll(async () => {
  zt = await startZeroTierController();
  app = await startTestApp({ ZEROTIER_CONTROLLER_URLS: zt.url });
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await zt?.stop();
});

describe("my network access", () => {
  it("shows the person's devices by name with time left, switches access on and off at the controller, and manages devices and requests", async () => {
    const { org, owner, admin, member } = await orgWithRoles(app);
    const O = `/api/v1/organizations/${org.id}`;
    const mine = async (what: "devices" | "memberships" | "approvals") => (await app.http.get(`${O}/${what}`, { token: member.token })).body.data[what] as Array<Record<string, unknown>>;
    await app.http.request("PUT", `${O}/zerotier-config`, { token: owner.token, body: { zt_api_mode: "controller", zt_api_url: zt.url, zt_api_token: zt.token } });
    const nwid = await zt.client.createNetwork!("office");
    const network = (await app.http.post(`${O}/networks`, { name: "Office VPN", zerotier_network_id: nwid, default_activation_lifetime_minutes: 90 }, { token: admin.token })).body.data.network;
    const labId = await zt.client.createNetwork!("lab");
    const lab = (await app.http.post(`${O}/networks`, { name: "Lab", zerotier_network_id: labId, request_mode: "approval_required" }, { token: admin.token })).body.data.network;
    const device = (await app.http.post(`${O}/devices`, { node_id: "abcdef0123", nickname: "Work laptop" }, { token: member.token })).body.data.device;
    const approval = (await app.http.post(`${O}/approvals`, { portal_network_id: network.id, device_id: device.id, justification: "daily work" }, { token: member.token })).body.data.approval;
    await app.http.post(`${O}/approvals/${approval.id}/approve`, {}, { token: admin.token });

    const page = await (await browser.newContext()).newPage();
    const watched = await watchPage(page);
    const status = (text: string | RegExp) => page.getByRole("status").getByText(text).waitFor();
    // The address emails carry leads to the app's screen, through sign-in.
    await page.goto(`${app.url}/network-access`);
    await page.waitForURL(/\/login\?next=%2Faccount%2Fnetworks$/);
    await page.fill("#email", member.email);
    await page.click("#login-form button[type=submit]");
    await page.fill("#password", member.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(`${app.url}/account/networks`);
    await page.getByRole("heading", { level: 1, name: "My network access" }).waitFor();

    const row = page.locator(`li[data-membership-row]`).filter({ hasText: "Office VPN" });
    await expect.poll(() => row.textContent()).toContain("Work laptop");
    expect(await row.textContent()).toContain("approved, off");
    await page.getByRole("button", { name: "Switch on Work laptop on Office VPN" }).click();
    await status(/^Work laptop is on Office VPN for (89|90) minutes\.$/);
    await expect.poll(() => row.locator(".network-status").textContent()).toMatch(/^on, (89|90) min left$/);
    expect((await zt.client.getMember(nwid, "abcdef0123"))?.authorized).toBe(true);
    await accessible(page, "account-networks");

    await page.getByRole("button", { name: "Switch off Work laptop on Office VPN" }).click();
    await status("Work laptop is off Office VPN.");
    expect((await zt.client.getMember(nwid, "abcdef0123"))?.authorized).toBe(false);

    // A second device, renamed; then access to the lab for it, which a manager approves.
    const section = page.getByRole("region", { name: org.name, exact: true });
    await section.getByLabel("ZeroTier node ID").fill("Not hex");
    await section.getByRole("button", { name: "Add device" }).click();
    await section.locator(".field[data-invalid]").first().waitFor();
    await section.getByLabel("ZeroTier node ID").fill("0123456789");
    await section.getByLabel("Name (optional)").fill("Spare");
    await section.getByRole("button", { name: "Add device" }).click();
    // It joins the network its owner is approved for at once.
    await status("Spare added: it joined 1 network you are approved for.");
    await page.getByRole("button", { name: "Rename device Spare" }).click();
    await page.getByLabel("New name for Spare").fill("Test rig");
    await page.getByRole("button", { name: "Save name" }).click();
    await status("Device renamed to Test rig.");
    const rig = (await mine("devices")).find((d) => d.node_id === "0123456789")!;
    expect(rig.device_nickname).toBe("Test rig");

    await section.getByRole("combobox", { name: "Network" }).selectOption({ label: "Lab" });
    await section.getByRole("combobox", { name: "Device" }).selectOption({ label: "Test rig" });
    await section.getByLabel("Why (optional)").fill("hardware tests");
    await section.getByRole("button", { name: "Ask for access" }).click();
    await status("Access to Lab requested: a manager decides.");
    const request = (await mine("approvals")).find((a) => a.portal_network_id === lab.id)!;
    expect(request).toMatchObject({ state: "pending", justification: "hardware tests" });
    await section.getByText("waiting for a decision").waitFor();
    expect((await app.http.post(`${O}/approvals/${request.id}/approve`, {}, { token: admin.token })).status).toBe(200);

    await page.reload();
    await page.getByRole("button", { name: "Switch all on" }).click();
    await status("Switched on 3 connections.");
    expect((await zt.client.getMember(nwid, "abcdef0123"))?.authorized).toBe(true);
    expect((await zt.client.getMember(labId, "0123456789"))?.authorized).toBe(true);

    await page.getByRole("button", { name: "Take off Test rig from Lab" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Take it off" }).click();
    await status("Test rig is no longer on Lab.");
    expect((await mine("memberships")).filter((m) => m.portal_network_id === lab.id)).toEqual([]);
    expect((await zt.client.getMember(labId, "0123456789"))?.authorized).not.toBe(true);

    await page.getByRole("button", { name: "Remove device Work laptop" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Remove device" }).click();
    await status(`Work laptop removed: it is off every network of ${org.name}.`);
    expect((await mine("devices")).map((d) => d.node_id)).toEqual(["0123456789"]);
    expect((await zt.client.getMember(nwid, "abcdef0123"))?.authorized).not.toBe(true);
    expect(watched.problems).toEqual([]);
    await page.context().close();
  });
});
