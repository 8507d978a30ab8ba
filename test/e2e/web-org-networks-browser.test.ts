import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { startFakeZtCentral, type FakeZtCentral } from "../helpers/fake-zt-central.js";
import { accessible, axeProblems, signInThroughPage, startWebOrg, stopWebOrg, watchPage } from "../helpers/web.js";
import type { TestUser } from "../factories/users.js";

/**
 * An organization's networks in the web app (issue 32), in headless Chromium against a running
 * Keyward whose controller is the local stand-in of ZeroTier Central (as the other network tests on
 * the embedded default): the controller connection and its live test, import, portal networks and
 * their managers and devices, the approval queue (nobody decides their own request), activations
 * with time left, the kill switch, reconciliation. Each action once, each effect checked through
 * the REST API (or at the controller); every screen passes axe-core with no CSP violation or
 * console error; a named manager and a plain member are offered only what they may do.
 */
const TOKEN = "web-central-token-9a8b7c6d5e";
const OFFICE = "8056c2e21c0000a1";
const LAB = "8056c2e21c0000a2";
const STAGING = "8056c2e21c0000a3";
const IMPORTED_NODE = "aaaaaaaaa1";
const ADA_NODE = "bbbbbbbbb2";

let central: FakeZtCentral;
let app: TestApp;
let browser: Browser;
let owner: TestUser;
let ada: TestUser;
let alan: TestUser;
let org: { id: string; slug: string; name: string };
let page: Page;
let watched: { problems: string[] };
const otherProblems: string[] = [];

beforeAll(async () => {
  central = await startFakeZtCentral();
  central.addToken(TOKEN);
  central.addNetwork(OFFICE, { name: "Office VPN", description: "Everyday access to the office" });
  central.addNetwork(LAB, { name: "Lab" });
  central.addNetwork(STAGING, { name: "staging-net" });
  central.addMember(OFFICE, IMPORTED_NODE, { name: "ada-laptop" });
  ({ app, browser, owner, org, page, watched, members: [ada, alan] } = await startWebOrg({
    env: { RATE_LIMIT_ENABLED: "false", ZEROTIER_CENTRAL_URL: central.url, NETWORK_CONTROLLER_RETRIES: "0" },
    owner: "Grace Hopper",
    org: "Analytical Engines",
    members: [{ fullName: "Ada Lovelace", role: "member" }, { fullName: "Alan Turing", role: "member" }],
  }));
}, 120_000);
afterAll(async () => {
  await stopWebOrg({ app, browser });
  await central?.close();
});

const O = () => `/api/v1/organizations/${org.id}`;
/** A REST read as the owner (or `user`), for checking what the screens did. */
const api = async (path: string, user = owner) => {
  const res = await app.http.get(`${O()}${path}`, { token: user.token });
  expect(res.status, `GET ${path}: ${res.text}`).toBe(200);
  return res.body.data;
};
/** A REST call that must succeed (the setup a person does elsewhere: their own device, their own request). */
async function must(method: string, path: string, user: TestUser, body: Record<string, unknown> = {}) {
  const res = await app.http.request(method, `${O()}${path}`, { token: user.token, body });
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.body.data;
}
const networkByName = async (name: string) => ((await api("/networks?include_inactive=true")).networks as Array<{ id: string; name: string }>).find((n) => n.name === name)!;
const tabs = (p: Page) => p.getByRole("navigation", { name: "Network sections" });
const status = (p: Page, text: string | RegExp) => p.getByRole("status").getByText(text).first().waitFor();
const base = () => `/orgs/${org.slug}/networks`;

describe("an organization's networks in the web app", () => {
  it("connects the controller after a live test: field errors at the field, the controller's refusal said, the token never shown", async () => {
    await signInThroughPage(page, app.url, owner, `${base()}/controller`);
    await page.getByRole("heading", { name: "Controller", level: 1 }).waitFor();
    await page.getByText("No controller is connected").waitFor();

    await page.getByLabel("API token").fill("short");
    await page.getByRole("button", { name: "Test and connect" }).click();
    await page.locator(".field[data-invalid]").filter({ hasText: "API token" }).waitFor();
    // A self-hosted controller must be on the operator's list: the refusal shows at the address.
    await page.getByRole("radio", { name: /Self-hosted controller/ }).check();
    await page.getByLabel("Controller API address").fill("http://10.1.2.3:9993");
    await page.getByLabel("API token").fill("some-token-0123456789");
    await page.getByRole("button", { name: "Test and connect" }).click();
    await page.locator(".field[data-invalid]").filter({ hasText: "Controller API address" }).getByText("not on the operator's list").waitFor();
    await page.getByRole("radio", { name: "ZeroTier Central" }).check();
    await page.getByLabel("API token").fill("wrong-token-0123456789");
    await page.getByRole("button", { name: "Test and connect" }).click();
    await page.getByRole("alert").getByText("refused the API token").waitFor();
    expect((await api("/zerotier-config")).config.configured).toBe(false);

    await page.getByLabel("API token").fill(TOKEN);
    await page.getByRole("button", { name: "Test and connect" }).dblclick();
    await status(page, /^Connected: the controller answered/);
    expect((await api("/zerotier-config")).config).toMatchObject({ configured: true, zt_api_mode: "central" });
    expect(await page.content()).not.toContain(TOKEN);

    await page.getByRole("button", { name: "Test the connection now" }).click();
    await status(page, /The controller answered with the saved token \(3 networks not imported yet\)/);
    await accessible(page, "org-networks-controller");
  });

  it("imports a controller network and adds one by its id; a double click adds one", async () => {
    await tabs(page).getByRole("link", { name: "Networks" }).click();
    await page.getByRole("heading", { name: "Networks", level: 1 }).waitFor();
    await page.getByText("No networks yet.").waitFor();
    await page.getByRole("checkbox", { name: /Office VPN/ }).check();
    await page.getByRole("button", { name: "Import network" }).dblclick();
    await status(page, "Imported Office VPN.");
    await page.getByRole("checkbox", { name: /^Lab/ }).check();
    await page.getByRole("button", { name: "Import network" }).click();
    await status(page, "Imported Lab.");

    const add = page.getByRole("form", { name: "Add a network" });
    await add.getByLabel("Name", { exact: true }).fill("Staging");
    await add.getByLabel("ZeroTier network id").fill("not-a-network");
    await add.getByLabel("Activation lasts (minutes)").fill("an hour");
    await add.getByRole("button", { name: "Add network" }).click();
    await add.locator(".field[data-invalid]").getByText("Enter a whole number of minutes.").waitFor();
    await add.getByLabel("Activation lasts (minutes)").fill("60");
    await add.getByRole("button", { name: "Add network" }).click();
    await add.locator(".field[data-invalid]").filter({ hasText: "ZeroTier network id" }).getByText("16 hexadecimal").first().waitFor();
    await add.getByLabel("ZeroTier network id").fill(STAGING);
    await add.getByRole("button", { name: "Add network" }).dblclick();
    await status(page, "Staging was added.");
    const networks = (await api("/networks")).networks as Array<{ name: string; zerotier_network_id: string; default_activation_lifetime_minutes: number }>;
    expect(networks.map((n) => n.name).sort()).toEqual(["Lab", "Office VPN", "Staging"]);
    expect(networks.find((n) => n.name === "Staging")).toMatchObject({ zerotier_network_id: STAGING, default_activation_lifetime_minutes: 60 });
    await page.getByRole("link", { name: "Staging" }).waitFor();
    await page.getByText("Every network of the controller is already here.").waitFor();
    await accessible(page, "org-networks");
  });

  it("changes a network, names its manager, imports its devices, switches it off and on; deletes another after its name is typed", async () => {
    await page.getByRole("link", { name: "Office VPN" }).click();
    await page.getByRole("heading", { name: "Office VPN", level: 1 }).waitFor();
    const office = await networkByName("Office VPN");

    const settings = page.getByRole("form", { name: "Settings of Office VPN" });
    await settings.getByLabel("Activation lasts (minutes)").fill("90");
    await settings.getByLabel("Longest activation (minutes)").fill("240");
    await settings.getByRole("button", { name: "Save settings" }).click();
    await status(page, "Office VPN was saved.");
    expect((await api(`/networks/${office.id}`)).network).toMatchObject({ default_activation_lifetime_minutes: 90, max_activation_lifetime_minutes: 240 });

    await page.getByRole("checkbox", { name: /Alan Turing/ }).check();
    await page.getByRole("button", { name: "Save managers" }).click();
    await status(page, "Office VPN's managers were saved.");
    expect((await api(`/networks/${office.id}/managers`)).managers.map((m: { email: string }) => m.email)).toEqual([alan.email]);

    const importForm = page.getByRole("form", { name: "Import devices into Office VPN" });
    await importForm.getByLabel("Node id").fill("zz");
    await importForm.getByLabel("Owner").selectOption(ada.email);
    await importForm.getByRole("button", { name: "Import device" }).click();
    await importForm.locator(".field[data-invalid]").getByText("10 hexadecimal").first().waitFor();
    await importForm.getByLabel("Node id").fill(IMPORTED_NODE);
    await importForm.getByLabel("Name (optional)").fill("Ada's old laptop");
    await importForm.getByRole("button", { name: "Import device" }).click();
    await status(page, "1 device was imported into Office VPN.");
    const imported = (await api("/admin/memberships")).memberships as Array<{ node_id: string; user_id: string; network_name: string }>;
    expect(imported).toEqual([expect.objectContaining({ node_id: IMPORTED_NODE, user_id: ada.id, network_name: "Office VPN" })]);
    await page.getByRole("region", { name: "Devices on Office VPN" }).getByText("Ada's old laptop").waitFor();
    await accessible(page, "org-network");

    await page.getByRole("button", { name: "Switch Office VPN off" }).click();
    await page.getByRole("alertdialog").getByText("Every device on Office VPN is deauthorized").waitFor();
    await page.getByRole("alertdialog").getByRole("button", { name: "Switch off" }).click();
    await status(page, "Office VPN is switched off: its devices came off.");
    expect((await api(`/networks/${office.id}`)).network.is_active).toBe(false);
    await page.getByRole("button", { name: "Switch Office VPN on" }).click();
    await status(page, /Office VPN is switched on/);
    expect((await api(`/networks/${office.id}`)).network.is_active).toBe(true);

    await page.getByRole("link", { name: "← All networks" }).click();
    await page.getByRole("link", { name: "Staging" }).click();
    await page.getByRole("button", { name: "Delete Staging" }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog.getByText(`(${STAGING}) stays at the controller`).waitFor();
    const confirm = dialog.getByRole("button", { name: "Delete network" });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(/Type .* to confirm/).fill("Staging");
    await confirm.click();
    await page.waitForURL(`${app.url}${base()}`);
    expect(((await api("/networks?include_inactive=true")).networks as Array<{ name: string }>).map((n) => n.name).sort()).toEqual(["Lab", "Office VPN"]);
  });

  it("decides requests: approves one (a double click acts once), rejects one with a reason; nobody decides their own", async () => {
    const lab = await networkByName("Lab");
    const office = await networkByName("Office VPN");
    const adaDevice = (await must("POST", "/devices", ada, { node_id: ADA_NODE, nickname: "Work laptop" })).device;
    await must("POST", "/approvals", ada, { portal_network_id: lab.id, device_id: adaDevice.id, justification: "Daily builds" });
    const alanDevice = (await must("POST", "/devices", alan, { node_id: "ccccccccc3", nickname: "Turing's desktop" })).device;
    await must("POST", "/approvals", alan, { portal_network_id: lab.id, device_id: alanDevice.id, justification: "Testing" });
    const ownDevice = (await must("POST", "/devices", owner, { node_id: "ddddddddd4", nickname: "Grace's phone" })).device;
    await must("POST", "/approvals", owner, { portal_network_id: office.id, device_id: ownDevice.id, justification: "Own request" });

    await page.reload();
    await tabs(page).getByRole("link", { name: /Requests/ }).click();
    await page.getByRole("heading", { name: "Access requests" }).waitFor();
    expect(await tabs(page).getByRole("link", { name: /Requests/ }).textContent()).toBe("Requests3 waiting");
    // The owner's own request waits for another manager: no buttons for it.
    const own = page.getByRole("listitem").filter({ hasText: "Grace Hopper asks for Office VPN" });
    await own.getByText("Your own request: another manager decides it.").waitFor();
    expect(await own.getByRole("button").count()).toBe(0);
    await accessible(page, "org-network-requests");

    await page.getByRole("button", { name: "Approve Ada Lovelace for Lab" }).dblclick();
    await status(page, "Ada Lovelace may now use Lab.");
    expect(((await api("/approvals", ada)).approvals as Array<{ portal_network_id: string; state: string }>).find((a) => a.portal_network_id === lab.id)?.state).toBe("approved");

    await page.getByRole("button", { name: "Reject Alan Turing for Lab" }).click();
    const dialog = page.getByRole("alertdialog");
    const confirm = dialog.getByRole("button", { name: "Reject request" });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel("Reason").fill("The lab is full this month");
    expect(await axeProblems(page)).toEqual([]);
    await confirm.click();
    await status(page, "Alan Turing's request for Lab was rejected.");
    expect((await api("/approvals", alan)).approvals).toEqual([expect.objectContaining({ portal_network_id: lab.id, state: "rejected", decision_reason: "The lab is full this month" })]);
    // The message comes at once; the list follows when it has been read again.
    await page.getByRole("listitem").filter({ hasText: "Alan Turing asks for" }).waitFor({ state: "detached" });
    expect(await page.getByRole("listitem").filter({ hasText: "asks for" }).count()).toBe(1);
  });

  it("shows activations with time left and ends one; removes a device from a network", async () => {
    const membership = ((await api("/memberships", ada)).memberships as Array<{ id: string; node_id: string }>).find((m) => m.node_id === ADA_NODE)!;
    await must("POST", `/memberships/${membership.id}/activate`, ada, { lifetime_minutes: 90 });
    expect(central.member(LAB, ADA_NODE)?.config.authorized).toBe(true);

    await tabs(page).getByRole("link", { name: "Activations" }).click();
    await page.getByRole("heading", { name: "Activations", level: 1 }).waitFor();
    const row = page.getByRole("row", { name: /Ada Lovelace/ });
    await row.getByText(/^1 h (29|30) min left$/).waitFor();
    await accessible(page, "org-network-activations");
    await row.getByRole("button", { name: "End Ada Lovelace's activation of Work laptop on Lab" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "End activation" }).click();
    await status(page, "The activation of Work laptop on Lab ended.");
    expect((await api("/sessions")).sessions).toEqual([]);
    expect(central.member(LAB, ADA_NODE)?.config.authorized).toBe(false);
    await page.getByText("No access is on right now.").waitFor();

    await tabs(page).getByRole("link", { name: "Devices" }).click();
    await page.getByRole("heading", { name: "Devices", level: 1 }).waitFor();
    await page.getByLabel("Search by device, person or network").fill("old laptop");
    await page.getByRole("row", { name: /Work laptop/ }).waitFor({ state: "detached" });
    await accessible(page, "org-network-devices");
    await page.getByRole("button", { name: "Remove Ada's old laptop of Ada Lovelace from Office VPN" }).click();
    await page.getByRole("alertdialog").getByText(`Ada Lovelace's device Ada's old laptop (${IMPORTED_NODE}) is deauthorized`).waitFor();
    await page.getByRole("alertdialog").getByRole("button", { name: "Remove device" }).click();
    await status(page, "Ada's old laptop of Ada Lovelace was removed from Office VPN.");
    const left = (await api("/admin/memberships")).memberships as Array<{ node_id: string }>;
    expect(left.map((m) => m.node_id)).not.toContain(IMPORTED_NODE);
  });

  it("pulls the kill switch on a person after naming what it cuts, and lifts it", async () => {
    const membership = ((await api("/memberships", ada)).memberships as Array<{ id: string; node_id: string }>).find((m) => m.node_id === ADA_NODE)!;
    await must("POST", `/memberships/${membership.id}/activate`, ada, {});
    expect(central.member(LAB, ADA_NODE)?.config.authorized).toBe(true);

    await tabs(page).getByRole("link", { name: "Kill switch" }).click();
    await page.getByRole("heading", { name: "Kill switch", level: 1 }).waitFor();
    await page.getByText("The kill switch has never been used").waitFor();
    // Only people below the caller's role are offered; never oneself.
    const people = await page.getByLabel("Person").locator("option").allTextContents();
    expect(people.some((p) => p.includes("Grace Hopper"))).toBe(false);
    await page.getByLabel("Person").selectOption(ada.id);
    await page.getByLabel("Reason").fill("Laptop reported stolen");
    await page.getByRole("button", { name: "Cut Ada Lovelace off…" }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog.getByRole("heading", { name: "Cut Ada Lovelace off every network of Analytical Engines?" }).waitFor();
    await dialog.getByText("Ends 1 running activation: Work laptop on Lab.").waitFor();
    await dialog.getByText("Deauthorizes 1 device at the controller: Work laptop.").waitFor();
    expect(await axeProblems(page)).toEqual([]);
    await dialog.getByRole("button", { name: "Cut Ada Lovelace off" }).click();
    await status(page, "Ada Lovelace is cut off every network of Analytical Engines: 1 activation ended.");
    const [event] = (await api("/kill-switch")).events;
    expect(event).toMatchObject({ target_user_id: ada.id, scope: "organization", reason: "Laptop reported stolen", sessions_ended: 1, lifted_at: null });
    expect(central.member(LAB, ADA_NODE)?.config.authorized).toBe(false);
    await page.getByRole("row", { name: /Ada Lovelace/ }).getByText("In force").waitFor();
    await accessible(page, "org-network-kill-switch");

    await page.getByRole("button", { name: "Lift the kill switch on Ada Lovelace" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Lift kill switch" }).click();
    await status(page, "The kill switch on Ada Lovelace was lifted.");
    expect((await api("/kill-switch")).events[0].lifted_at).not.toBeNull();
    // Her approvals (Lab, and Office VPN's from the import) were suspended and are back.
    expect(((await api("/approvals", ada)).approvals as Array<{ state: string }>).map((a) => a.state)).toEqual(["approved", "approved"]);
  });

  it("reconciles with the controller, putting back what changed behind Keyward's back, and disconnects it", async () => {
    // Someone authorizes Ada's laptop at the controller directly: no activation runs, so it must come off.
    central.member(LAB, ADA_NODE)!.config.authorized = true;
    await tabs(page).getByRole("link", { name: "Controller" }).click();
    await page.getByRole("heading", { name: "Reconciliation" }).waitFor();
    await page.getByText("In step").waitFor();
    await page.getByRole("button", { name: "Reconcile now" }).click();
    await page.getByRole("status").getByText(/^Checked 2 networks: 1 change at the controller/).waitFor();
    expect(central.member(LAB, ADA_NODE)?.config.authorized).toBe(false);

    await page.getByRole("button", { name: "Disconnect the controller" }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog.getByText("Keyward deletes the saved token. The 2 networks stay here").waitFor();
    await dialog.getByRole("button", { name: "Disconnect" }).click();
    await status(page, "The controller was disconnected; its token is deleted.");
    expect((await api("/zerotier-config")).config.configured).toBe(false);
    await page.getByText("No controller is connected").waitFor();
    expect(watched.problems).toEqual([]);
  });

  it("offers a named manager their network's decisions and a plain member no admin action", async () => {
    const office = await networkByName("Office VPN");
    // Alan manages Office VPN: he decides the owner's own request there.
    const alanCtx = await browser.newContext();
    const theirs = await alanCtx.newPage();
    const problems = await watchPage(theirs);
    await signInThroughPage(theirs, app.url, alan, base());
    await theirs.getByRole("heading", { name: "Networks", level: 1 }).waitFor();
    expect((await tabs(theirs).getByRole("link").allTextContents()).map((t) => t.replace(/\d+ waiting$/, ""))).toEqual(["Networks", "Requests", "Your activations"]);
    expect(await theirs.getByRole("heading", { name: "Import from the controller" }).count()).toBe(0);
    expect(await theirs.getByRole("heading", { name: "Add a network by its id" }).count()).toBe(0);
    await theirs.getByRole("link", { name: "Office VPN" }).click();
    await theirs.getByRole("heading", { name: "Requests waiting" }).waitFor();
    await theirs.getByRole("heading", { name: "Devices on this network" }).waitFor();
    for (const admin of ["Settings", "Import devices from the controller", "Stop governing Office VPN"]) expect(await theirs.getByRole("heading", { name: admin }).count()).toBe(0);
    expect(await theirs.getByRole("button", { name: /^Remove device/ }).count()).toBe(0);
    await accessible(theirs, "org-network-manager");
    await theirs.getByRole("button", { name: "Approve Grace Hopper for Office VPN" }).click();
    await theirs.getByRole("status").getByText("Grace Hopper may now use Office VPN.").waitFor();
    expect(((await api("/approvals")).approvals as Array<{ portal_network_id: string; state: string; granted_by_user_id: string }>).find((a) => a.portal_network_id === office.id)).toMatchObject({ state: "approved", granted_by_user_id: alan.id });
    otherProblems.push(...problems.problems);
    await alanCtx.close();

    // Ada manages nothing: no decisions, and the admins' screens say they are the admins'.
    const adaCtx = await browser.newContext();
    const hers = await adaCtx.newPage();
    const herProblems = await watchPage(hers);
    await signInThroughPage(hers, app.url, ada, `${base()}/kill-switch`);
    await hers.getByText("Only the owners and admins of Analytical Engines use the kill switch.").waitFor();
    expect(await hers.getByRole("button", { name: /Cut/ }).count()).toBe(0);
    await tabs(hers).getByRole("link", { name: "Requests" }).click();
    await hers.getByText("Requests for the networks you manage appear here.").waitFor();
    await tabs(hers).getByRole("link", { name: "Networks" }).click();
    await hers.getByRole("link", { name: "Lab" }).click();
    await hers.getByText("To use Lab, ask for access from your account; its managers decide.").waitFor();
    expect(await hers.getByRole("button").filter({ hasText: /Approve|Reject|Revoke|Remove|Delete|Save|Grant/ }).count()).toBe(0);
    await accessible(hers, "org-network-member");
    otherProblems.push(...herProblems.problems);
    await adaCtx.close();
    expect(otherProblems).toEqual([]);
  });
});
