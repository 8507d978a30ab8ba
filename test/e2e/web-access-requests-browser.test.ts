import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cheapPasswordHasher, startTestApp, type TestApp } from "../helpers/app.js";
import { launchBrowser } from "../helpers/browser.js";
import { accessible, fieldError, focusedName, signInThroughPage, tabTo, watchPage } from "../helpers/web.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { createCa } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * Just-in-time access on the web app's home (issue 37), in headless Chromium: a member asks for a
 * principal, and for a department's grants, from the keyboard (a refusal shows under its field), an approver sees the request and
 * approves it for less time or rejects another with a reason, and the member sees the grant. Each
 * effect is checked through the REST API; each screen passes axe-core at desktop and phone widths
 * with no CSP violation or console error. The approver is never offered their own request.
 */
let app: TestApp;
let browser: Browser;
let owner: TestUser;
let ada: TestUser;
let org: { id: string; slug: string; name: string };
const problems: string[][] = [];

async function pageFor(user: TestUser): Promise<Page> {
  const p = await (await browser.newContext()).newPage();
  problems.push((await watchPage(p)).problems);
  await signInThroughPage(p, app.url, user, "/");
  return p;
}
const status = (p: Page, text: string | RegExp) => p.getByRole("status").getByText(text).first().waitFor();
const requests = async (state?: string) =>
  (await app.http.get(`/api/v1/organizations/${org.id}/access-requests${state ? `?state=${state}` : ""}`, { token: owner.token })).body.data.access_requests as Array<Record<string, unknown>>;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" }, { passwordHasher: cheapPasswordHasher() });
  browser = await launchBrowser();
  owner = await newUser(app, { fullName: "Grace Hopper" });
  ada = await newUser(app, { fullName: "Ada Lovelace" });
  org = await newOrg(app, owner, "Analytical Engines");
  await addMember(app, org.id, owner, ada, "member");
  await createCa(app, org.id, owner);
  const deploy = (await app.http.post(`/api/v1/organizations/${org.id}/principals`, { name: "deploy" }, { token: owner.token })).body.data.principal;
  const set = await app.http.request("PUT", `/api/v1/organizations/${org.id}/principals/${deploy.id}/access-policy`, { token: owner.token, body: { max_duration_minutes: 120 } });
  if (set.status !== 200) throw new Error(set.text);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe("access requests on the home page", () => {
  it("a member asks from the keyboard, an approver approves for less time or rejects with a reason", async () => {
    const member = await pageFor(ada);
    await member.getByRole("heading", { name: "Access requests" }).waitFor();
    // Keyboard only: principal, duration, reason, submit.
    await tabTo(member, "Principal");
    await member.keyboard.type("deploy");
    await member.keyboard.press("Tab");
    expect(await focusedName(member)).toContain("For how long");
    await member.keyboard.press("Control+A");
    await member.keyboard.type("3h");
    await member.keyboard.press("Tab");
    await member.keyboard.type("Release 4.2 hotfix");
    await member.keyboard.press("Enter");
    // Longer than the policy allows: the server's reason, shown on the form.
    await member.getByText("at most 120 minutes").first().waitFor();
    await member.getByLabel("For how long").fill("90m");
    await member.getByRole("button", { name: "Request access" }).click();
    await status(member, "Requested deploy: an approver was told.");
    const [pending] = await requests("pending");
    expect(pending).toMatchObject({ principal: "deploy", requested_minutes: 90, reason: "Release 4.2 hotfix", user_email: ada.email });
    await member.getByRole("list", { name: "Your requests" }).getByText("pending").waitFor();
    await accessible(member, "home-access-request");

    // The approver's home lists it; a second one is asked for through the API, to be rejected.
    const second = await app.http.post(`/api/v1/organizations/${org.id}/access-requests`, { principal: "deploy", duration: "30m", reason: "again" }, { token: ada.token });
    expect(second.body.error.type).toBe("ACCESS_REQUEST_EXISTS");
    const approver = await pageFor(owner);
    const card = approver.getByRole("list", { name: "Requests waiting for your decision" }).getByRole("listitem");
    await expect.poll(() => card.count()).toBe(1);
    await card.getByText("Ada Lovelace").waitFor();
    // Nothing else waits in the organization it administers, and the home says so under its heading.
    await approver.getByRole("region", { name: "In the organizations you administer" }).getByText("Nothing waits for you in them right now.").waitFor();
    await accessible(approver, "home-access-approvals");
    // The approve form is labelled for screen readers, minutes first.
    await card.getByLabel("Minutes to grant").fill("200");
    await card.getByRole("button", { name: "Approve" }).click();
    await card.getByText("not lengthen it").waitFor();
    await card.getByLabel("Minutes to grant").fill("45");
    await card.getByRole("button", { name: "Approve" }).click();
    await status(approver, "Ada Lovelace has deploy for 45 minutes.");
    const [approved] = await requests("approved");
    expect(approved).toMatchObject({ id: pending!.id, granted_minutes: 45, active: true, decided_by_user_id: owner.id });
    await expect.poll(() => card.count()).toBe(0);

    // Another request, rejected with a reason (Reject without one says what is missing).
    const third = await app.http.post(`/api/v1/organizations/${org.id}/access-requests`, { principal: "deploy", duration: "1h", reason: "one more" }, { token: ada.token });
    expect(third.status, third.text).toBe(201);
    await approver.reload();
    await expect.poll(() => card.count()).toBe(1);
    await card.getByRole("button", { name: "Reject" }).click();
    await expect.poll(() => fieldError(approver, "Reason").textContent()).toBeTruthy();
    await card.getByLabel("Reason").fill("Use the release pipeline");
    await card.getByRole("button", { name: "Reject" }).click();
    await status(approver, "Ada Lovelace's request for deploy was rejected.");
    expect((await requests("rejected"))[0]).toMatchObject({ id: third.body.data.access_request.id, decision_reason: "Use the release pipeline" });

    // The member sees the grant and the rejection.
    await member.reload();
    const mine = member.getByRole("list", { name: "Your requests" });
    await mine.getByText("granted").waitFor();
    await mine.getByText("(Use the release pipeline)").waitFor();
    // A department's grants, asked for from the keyboard on the same form: chosen in "Ask for",
    // refused for longer than its policy allows (under the duration), then granted at once (no approval needed).
    const ops = (await app.http.post(`/api/v1/organizations/${org.id}/departments`, { name: "ops" }, { token: owner.token })).body.data.department;
    expect((await app.http.request("PUT", `/api/v1/organizations/${org.id}/departments/${ops.id}/access-policy`, { token: owner.token, body: { max_duration_minutes: 60, approval_required: false } })).status).toBe(200);
    await tabTo(member, "Ask for");
    await member.keyboard.press("ArrowDown");
    await member.getByLabel("Department").waitFor();
    await member.keyboard.press("Tab");
    expect(await focusedName(member)).toContain("Department");
    await member.keyboard.type("ops");
    await member.keyboard.press("Tab");
    await member.keyboard.press("Control+A");
    await member.keyboard.type("2h");
    await member.keyboard.press("Tab");
    await member.keyboard.type("paged");
    await member.keyboard.press("Enter");
    await member.getByText("at most 60 minutes").first().waitFor();
    await member.getByLabel("For how long").fill("1h");
    await member.getByRole("button", { name: "Request access" }).click();
    await status(member, "You have the department ops now");
    const dept = (await requests("approved")).find((r) => r.department === "ops")!;
    expect(dept).toMatchObject({ kind: "department", requested_minutes: 60, reason: "paged", active: true });
    await accessible(member, "home-access-request-department");
    await member.reload();
    const deptRow = mine.getByRole("listitem").filter({ hasText: "the department ops" });
    await deptRow.getByText("granted").waitFor();
    const ended = await app.http.post(`/api/v1/organizations/${org.id}/access-requests/${dept.id as string}/revoke`, { reason: "incident closed" }, { token: owner.token });
    expect(ended.status, ended.text).toBe(200);
    await member.reload();
    await deptRow.getByText("ended early").waitFor();
    await deptRow.getByText("(incident closed)").waitFor();
    // The admin role for a while (a member may ask; an owner decides): no name to give, only how long and why.
    const rolePolicy = await app.http.request("PUT", `/api/v1/organizations/${org.id}/roles/admin/access-policy`, { token: owner.token, body: { max_duration_minutes: 120 } });
    expect(rolePolicy.status, rolePolicy.text).toBe(200);
    await member.getByLabel("Ask for").selectOption("role");
    expect(await member.getByLabel("Department").count()).toBe(0);
    await member.getByLabel("For how long").fill("2h");
    await member.getByLabel("Reason").fill("on call tonight");
    await member.getByRole("button", { name: "Request access" }).click();
    await status(member, "Requested the admin role: an approver was told.");
    expect((await requests("pending")).find((r) => r.kind === "role")).toMatchObject({ role: "admin", requested_minutes: 120, reason: "on call tonight" });
    // Nobody is offered their own request: the member approves nothing.
    expect(await member.getByRole("list", { name: "Requests waiting for your decision" }).count()).toBe(0);
    expect(problems.flat()).toEqual([]);
  }, 180_000);
});
