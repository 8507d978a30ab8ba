import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { startZeroTierController, type RealController } from "../helpers/zerotier.js";
import { orgWithRoles } from "../factories/orgs.js";

/** The hosted "my network access" page in headless Chromium, against the real ZeroTier controller. */
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
  it("shows the person's devices by name with time left, and switches access on and off at the controller", async () => {
    const { org, owner, admin, member } = await orgWithRoles(app);
    const O = `/api/v1/organizations/${org.id}`;
    await app.http.request("PUT", `${O}/zerotier-config`, { token: owner.token, body: { zt_api_mode: "controller", zt_api_url: zt.url, zt_api_token: zt.token } });
    const nwid = await zt.client.createNetwork!("office");
    const network = (await app.http.post(`${O}/networks`, { name: "Office VPN", zerotier_network_id: nwid, default_activation_lifetime_minutes: 90 }, { token: admin.token })).body.data.network;
    const device = (await app.http.post(`${O}/devices`, { node_id: "abcdef0123", nickname: "Work laptop" }, { token: member.token })).body.data.device;
    const approval = (await app.http.post(`${O}/approvals`, { portal_network_id: network.id, device_id: device.id, justification: "daily work" }, { token: member.token })).body.data.approval;
    await app.http.post(`${O}/approvals/${approval.id}/approve`, {}, { token: admin.token });

    const page = await browser.newPage();
    await page.goto(`${app.url}/network-access`);
    await page.waitForURL(/\/login\?next=%2Fnetwork-access/);
    await page.fill("#email", member.email);
    await page.fill("#password", member.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForURL(`${app.url}/network-access`);

    const row = page.locator("li[data-membership-row]");
    await expect.poll(() => row.textContent()).toContain("Work laptop");
    expect(await row.textContent()).toContain("Office VPN");
    expect(await row.textContent()).toContain("approved, off");
    await page.click("button[data-network-action=activate]");
    await page.waitForSelector("button[data-network-action=deactivate]");
    expect(await page.locator(".network-status").textContent()).toMatch(/^on, (89|90) min left$/);
    expect((await zt.client.getMember(nwid, "abcdef0123"))?.authorized).toBe(true);

    await page.click("button[data-network-action=deactivate]");
    await page.waitForSelector("button[data-network-action=activate]");
    expect((await zt.client.getMember(nwid, "abcdef0123"))?.authorized).toBe(false);
    // The page loads nothing from elsewhere and runs no inline script.
    const csp = (await page.goto(`${app.url}/network-access`))!.headers()["content-security-policy"];
    expect(csp).toContain("script-src 'self'");
    await page.close();
  });
});
