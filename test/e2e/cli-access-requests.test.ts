import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { buildCli, cliUser, loginWithLoopback, runCli, type CliUser } from "../helpers/cli.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { createCa, grantPrincipal } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * Just-in-time access through the built `keyward` client (issue 37): `keyward request principal
 * deploy --for 2h --reason …`, an approver approves through the API for less time, and the
 * certificate `keyward ssh sign` writes carries the principal and ends no later than the grant, as
 * real `ssh-keygen -L` reads it.
 */
let app: TestApp;
let owner: TestUser;
let admin: TestUser;
let person: TestUser;
let u: CliUser;
let org: { id: string; name: string };

const json = (s: string) => JSON.parse(s);

beforeAll(async () => {
  buildCli();
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  owner = await newUser(app, { fullName: "Owner" });
  admin = await newUser(app, { fullName: "Approver" });
  person = await newUser(app, { fullName: "On call" });
  org = await newOrg(app, owner, `Initech ${Date.now().toString(36)}`);
  await createCa(app, org.id, owner, { key_type: "ed25519" });
  await addMember(app, org.id, owner, admin, "admin");
  await addMember(app, org.id, owner, person, "member");
  await grantPrincipal(app, org.id, owner, person, "app");
  const deploy = (await app.http.post(`/api/v1/organizations/${org.id}/principals`, { name: "deploy" }, { token: owner.token })).body.data.principal;
  const policy = await app.http.request("PUT", `/api/v1/organizations/${org.id}/principals/${deploy.id}/access-policy`, { token: owner.token, body: { max_duration_minutes: 240 } });
  if (policy.status !== 200) throw new Error(policy.text);
  // A department whose grants (its principal ops-root) can be asked for up to an hour.
  const ops = (await app.http.post(`/api/v1/organizations/${org.id}/departments`, { name: "ops" }, { token: owner.token })).body.data.department;
  const opsRoot = (await app.http.post(`/api/v1/organizations/${org.id}/principals`, { name: "ops-root" }, { token: owner.token })).body.data.principal;
  if ((await app.http.post(`/api/v1/organizations/${org.id}/principals/${opsRoot.id}/departments/${ops.id}`, {}, { token: owner.token })).status !== 201) throw new Error("link failed");
  const opsPolicy = await app.http.request("PUT", `/api/v1/organizations/${org.id}/departments/${ops.id}/access-policy`, { token: owner.token, body: { max_duration_minutes: 60 } });
  if (opsPolicy.status !== 200) throw new Error(opsPolicy.text);
  // The admin role can be asked for, up to four hours (owners set it, owners approve).
  const rolePolicy = await app.http.request("PUT", `/api/v1/organizations/${org.id}/roles/admin/access-policy`, { token: owner.token, body: { max_duration_minutes: 240 } });
  if (rolePolicy.status !== 200) throw new Error(rolePolicy.text);
  u = cliUser(app.url);
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "jit-test", "-f", join(u.home, ".ssh", "id_ed25519")]);
  const login = await loginWithLoopback(app.url, person, u);
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
}, 120_000);
afterAll(() => app?.close());

/** The certificate's principals and end as ssh-keygen prints them (read in UTC). */
function keygenListing(path: string): { principals: string[]; validTo: Date } {
  const out = execFileSync("ssh-keygen", ["-L", "-f", path], { encoding: "utf8", env: { ...process.env, TZ: "UTC" } });
  const to = /Valid: from \S+ to (\S+)/.exec(out)?.[1];
  const principals = /Principals:\s*\n((?:\s{16,}\S+\n)+)/.exec(out)?.[1]?.trim().split(/\s+/) ?? [];
  if (!to) throw new Error(`no validity in:\n${out}`);
  return { principals, validTo: new Date(`${to}Z`) };
}

describe("keyward request", () => {
  it("asks for a principal, and once approved `ssh sign` carries it until the grant ends, no later", async () => {
    const asked = await runCli(["request", "principal", "deploy", "--for", "2h", "--reason", "hotfix INC-42"], u);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain("Requested deploy for 120 minutes");
    expect(asked.stdout).toContain("pending");
    const mine = json((await runCli(["request", "list", "--json"], u)).stdout);
    const request = mine.access_requests.find((r: { principal: string }) => r.principal === "deploy");
    expect(request).toMatchObject({ state: "pending", requested_minutes: 120, reason: "hotfix INC-42" });

    // Refusals come back with the server's reason and exit code 1.
    const tooLong = await runCli(["request", "principal", "deploy", "--for", "5h", "--reason", "x"], u);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toContain("at most 240 minutes");
    const unknown = await runCli(["request", "principal", "root", "--for", "1h", "--reason", "x", "--json"], u);
    expect(unknown.code).toBe(1);
    expect(json(unknown.stdout).error.type).toBe("PRINCIPAL_NOT_FOUND");
    const missingReason = await runCli(["request", "principal", "deploy", "--for", "1h"], u);
    expect(missingReason.code).toBe(2);

    // Before the decision: only the standing principal.
    const before = await runCli(["ssh", "sign"], u);
    expect(before.code, before.stderr).toBe(0);
    const certPath = join(u.home, ".ssh", "id_ed25519-cert.pub");
    expect(keygenListing(certPath).principals).toEqual(["app"]);

    // An approver approves for 45 minutes through the API.
    const approved = await app.http.post(`/api/v1/organizations/${org.id}/access-requests/${request.id}/approve`, { duration: "45m" }, { token: admin.token });
    expect(approved.status, approved.text).toBe(200);
    const grantEnd = new Date(approved.body.data.access_request.grant_ends_at);

    const listed = await runCli(["request", "list"], u);
    expect(listed.stdout).toMatch(/deploy .*granted until/);

    const signed = await runCli(["ssh", "sign"], u);
    expect(signed.code, signed.stderr).toBe(0);
    expect(signed.stdout).toMatch(/principals: app, deploy/);
    const cert = keygenListing(certPath);
    expect(cert.principals).toEqual(["app", "deploy"]);
    expect(cert.validTo.getTime()).toBeLessThanOrEqual(grantEnd.getTime());
    expect(cert.validTo.getTime()).toBeGreaterThan(grantEnd.getTime() - 5_000);
  }, 120_000);

  it("asks for a department's grants; approved, `ssh sign` carries its principals until the grant ends; ended early, the next certificate leaves them out", async () => {
    const tooLong = await runCli(["request", "department", "ops", "--for", "2h", "--reason", "failover", "--json"], u);
    expect(tooLong.code).toBe(1);
    expect(json(tooLong.stdout).error.type).toBe("DURATION_TOO_LONG");
    const unknown = await runCli(["request", "department", "nope", "--for", "1h", "--reason", "x", "--json"], u);
    expect(json(unknown.stdout).error.type).toBe("DEPARTMENT_NOT_FOUND");

    const asked = await runCli(["request", "department", "ops", "--for", "1h", "--reason", "failover INC-7"], u);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain("Requested department ops for 60 minutes");
    const request = json((await runCli(["request", "list", "--json"], u)).stdout).access_requests.find((r: { kind: string }) => r.kind === "department");
    expect(request).toMatchObject({ department: "ops", state: "pending", requested_minutes: 60 });

    const approved = await app.http.post(`/api/v1/organizations/${org.id}/access-requests/${request.id}/approve`, { duration: "20m" }, { token: admin.token });
    expect(approved.status, approved.text).toBe(200);
    const grantEnd = new Date(approved.body.data.access_request.grant_ends_at);
    expect((await runCli(["request", "list"], u)).stdout).toMatch(/department ops .*granted until/);

    const certPath = join(u.home, ".ssh", "id_ed25519-cert.pub");
    const signed = await runCli(["ssh", "sign"], u);
    expect(signed.code, signed.stderr).toBe(0);
    const cert = keygenListing(certPath);
    expect(cert.principals).toContain("ops-root");
    expect(cert.validTo.getTime()).toBeLessThanOrEqual(grantEnd.getTime());
    expect(cert.validTo.getTime()).toBeGreaterThan(grantEnd.getTime() - 5_000);

    // An approver ends it early: the next certificate carries no ops-root, and the list says why.
    const revoked = await app.http.post(`/api/v1/organizations/${org.id}/access-requests/${request.id}/revoke`, { reason: "incident closed" }, { token: admin.token });
    expect(revoked.status, revoked.text).toBe(200);
    const after = await runCli(["ssh", "sign"], u);
    expect(after.code, after.stderr).toBe(0);
    expect(keygenListing(certPath).principals).not.toContain("ops-root");
    expect((await runCli(["request", "list"], u)).stdout).toMatch(/department ops .*ended early: incident closed/);
  }, 120_000);

  it("asks for the admin role; an owner approves; `ssh sign` signs with every principal until the elevation ends, no later", async () => {
    const owner_ = await runCli(["request", "role", "owner", "--for", "1h", "--reason", "x", "--json"], u);
    expect([owner_.code, json(owner_.stdout).error.type]).toEqual([1, "NOT_REQUESTABLE"]);
    const asked = await runCli(["request", "role", "admin", "--for", "2h", "--reason", "INC-9 rotate the CA"], u);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain("Requested role admin for 120 minutes");
    expect(asked.stdout).toContain("owners were told");
    const request = json((await runCli(["request", "list", "--json"], u)).stdout).access_requests.find((r: { kind: string }) => r.kind === "role");
    expect(request).toMatchObject({ role: "admin", state: "pending", requested_minutes: 120 });

    const approved = await app.http.post(`/api/v1/organizations/${org.id}/access-requests/${request.id}/approve`, { duration: "30m" }, { token: owner.token });
    expect(approved.status, approved.text).toBe(200);
    const grantEnd = new Date(approved.body.data.access_request.grant_ends_at);
    expect((await runCli(["request", "list"], u)).stdout).toMatch(/role admin .*granted until/);

    const certPath = join(u.home, ".ssh", "id_ed25519-cert.pub");
    const signed = await runCli(["ssh", "sign"], u);
    expect(signed.code, signed.stderr).toBe(0);
    const cert = keygenListing(certPath);
    // An admin signs with every principal of the organization.
    expect(cert.principals).toEqual(expect.arrayContaining(["app", "deploy", "ops-root"]));
    expect(cert.validTo.getTime()).toBeLessThanOrEqual(grantEnd.getTime());
    expect(cert.validTo.getTime()).toBeGreaterThan(grantEnd.getTime() - 5_000);
  }, 120_000);
});
