import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { verify } from "../helpers/audit-chain.js";
import { accountRow, membershipOf, newScimUser, patchOf, scimClient, scimError, type ScimClient } from "../helpers/scim.js";
import { delegatedToken } from "../factories/oidc.js";
import { addMember, newOrg } from "../factories/orgs.js";
import { addVerifiedKey, createCa, grantPrincipal, keysDir } from "../factories/ssh.js";
import { login, newUser, PASSWORD, type TestUser } from "../factories/users.js";

/**
 * Issue 36: SCIM's active=false, active=true and DELETE are offboarding. Each is one change with
 * one receipt (`org.member.offboarded`, the key as its actor) retrievable by the organization's
 * admins, every cut observed on its peer: the session and the CLI's token refused, the API key the
 * person created refused, the certificate revoked in the published KRL. A person who is also a
 * member of another organization keeps that one, and their sign-in.
 */
let app: TestApp;
let scim: ScimClient;
let seq = 0;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  scim = await scimClient(app);
  await createCa(app, scim.orgId, scim.owner);
});
afterAll(() => app?.close());

const O = () => `/api/v1/organizations/${scim.orgId}`;
const receipts = async (userId: string) => {
  const res = await app.http.get(`${O()}/offboardings?user_id=${userId}`, { token: scim.owner.token });
  expect(res.status, res.text).toBe(200);
  return res.body.data.offboardings as Array<Record<string, any>>;
};

/** A person provisioned by SCIM who signed in (a password set by the managing organization's owner). */
async function provisioned(local: string, role?: string): Promise<TestUser> {
  const email = scim.at(local);
  const created = await scim.post("/Users", newScimUser(email));
  expect(created.status, created.text).toBe(201);
  const id = created.body.id as string;
  expect((await app.http.post(`/api/v1/admin/users/${id}/password`, { password: PASSWORD }, { token: scim.owner.token })).status).toBe(200);
  if (role) expect((await app.http.request("PATCH", `${O()}/members/${id}/role`, { token: scim.owner.token, body: { role } })).status).toBe(200);
  const signedIn = await login(app, email);
  expect(signedIn.status, signedIn.text).toBe(200);
  return { id, email, password: PASSWORD, token: signedIn.body.data.token };
}

async function sign(user: TestUser): Promise<{ certificate: string; id: string; serial: string }> {
  await grantPrincipal(app, scim.orgId, scim.owner, user, "app");
  const key = await addVerifiedKey(app, user);
  const res = await app.http.post("/api/v1/ssh/sign", { key_id: key.id, org_id: scim.orgId }, { token: user.token });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function revokedInKrl(certificate: string): Promise<boolean> {
  const krl = join(keysDir, `scim-off-${seq}.krl`);
  const cert = join(keysDir, `scim-off-${seq++}-cert.pub`);
  writeFileSync(krl, Buffer.from(await (await fetch(`${app.url}${O()}/ssh/krl`)).arrayBuffer()));
  writeFileSync(cert, `${certificate}\n`);
  const check = spawnSync("ssh-keygen", ["-Q", "-f", krl, cert], { encoding: "utf8" });
  return check.status !== 0 && /REVOKED/.test(check.stdout);
}

const deactivate = (id: string) => scim.patch(`/Users/${id}`, patchOf({ op: "replace", path: "active", value: false }));
const activate = (id: string) => scim.patch(`/Users/${id}`, patchOf({ op: "replace", path: "active", value: true }));

describe("SCIM deprovisioning is offboarding", () => {
  it("active=false cuts every way in with one receipt; active=true reinstates; DELETE after it removes with a receipt", async () => {
    const person = await provisioned("dana.cut", "admin");
    const cert = await sign(person);
    const cli = await delegatedToken(app, person);
    expect((await app.http.get("/api/v1/auth/me", { token: cli.accessToken })).status).toBe(200);
    const key = await app.http.post(`${O()}/api-keys`, { name: "their script", scopes: ["members:read"] }, { token: person.token });
    expect(key.status, key.text).toBe(201);
    expect((await app.http.get(`${O()}/members`, { token: key.body.data.api_key.key })).status).toBe(200);

    const off = await deactivate(person.id);
    expect([off.status, off.body.active], off.text).toEqual([200, false]);
    const all = await receipts(person.id);
    expect(all).toHaveLength(1);
    const receipt = all[0]!;
    expect(receipt).toMatchObject({
      mode: "suspend", role: "admin", managed: true, account_suspended: true, actor_id: null,
      certificates: { count: 1, ids: [cert.id], serials: [cert.serial] },
      api_keys: { count: 1, ids: [key.body.data.api_key.id] },
      principals: { count: 1 },
      pending: { devices: [] },
    });
    expect(receipt.sessions.count).toBeGreaterThanOrEqual(1);
    expect(receipt.cli_tokens.count).toBeGreaterThanOrEqual(1);
    // Each cut, on its peer.
    expect((await app.http.get("/api/v1/users/me", { token: person.token })).status).toBe(401);
    expect((await app.http.get("/api/v1/auth/me", { token: cli.accessToken })).status).toBe(401);
    expect((await app.http.get(`${O()}/members`, { token: key.body.data.api_key.key })).status).toBe(401);
    expect(await revokedInKrl(cert.certificate)).toBe(true);
    expect((await login(app, person.email)).status).not.toBe(200);
    expect(await membershipOf(app, scim.orgId, person.id)).toBeUndefined();
    // Still the organization's User, inactive; a second active=false changes nothing (no second receipt).
    expect((await scim.get(`/Users/${person.id}`)).body.active).toBe(false);
    expect((await deactivate(person.id)).status).toBe(200);
    expect(await receipts(person.id)).toHaveLength(1);
    // The receipt is the key's record, verified by the audit chain.
    const log = await app.http.get(`${O()}/audit-logs?action=org.member.offboarded`, { token: scim.owner.token });
    const record = log.body.data.audit_logs.find((r: { id: string }) => r.id === receipt.audit_id);
    expect(record.metadata.actor.key_id).toBe(scim.keyId);
    await app.services.auditChain.chainAll();
    expect((await verify(app)).ok).toBe(true);

    // active=true: the suspension lifted, with the role it had; revoked credentials stay revoked.
    const on = await activate(person.id);
    expect([on.status, on.body.active], on.text).toEqual([200, true]);
    expect(await membershipOf(app, scim.orgId, person.id)).toEqual({ role: "admin" });
    expect(await accountRow(app, person.id)).toMatchObject({ status: "active" });
    expect((await login(app, person.email)).status).toBe(200);
    expect(await revokedInKrl(cert.certificate)).toBe(true);

    // active=false then DELETE (as Okta and Entra ID do it): a removal receipt, the account deleted.
    expect((await deactivate(person.id)).status).toBe(200);
    expect((await scim.delete(`/Users/${person.id}`)).status).toBe(204);
    const [removal, suspension] = await receipts(person.id);
    expect(removal).toMatchObject({ mode: "remove", role: "admin", managed: true, account_suspended: false });
    expect(suspension).toMatchObject({ mode: "suspend" });
    expect(await receipts(person.id)).toHaveLength(3);
    expect((await accountRow(app, person.id))!.deleted_at).not.toBeNull();
    expect(scimError(await scim.get(`/Users/${person.id}`))[0]).toBe(404);
    // Nothing left to reinstate.
    expect((await app.http.post(`${O()}/members/${person.id}/reinstate`, {}, { token: scim.owner.token })).body.error.type).toBe("NOT_SUSPENDED");
  }, 60_000);

  it("DELETE of an active person removes in one step with a receipt", async () => {
    const person = await provisioned("eli.gone");
    expect((await scim.delete(`/Users/${person.id}`)).status).toBe(204);
    expect(await receipts(person.id)).toEqual([expect.objectContaining({ mode: "remove", role: "member", managed: true })]);
    expect((await app.http.get("/api/v1/users/me", { token: person.token })).status).toBe(401);
    expect((await accountRow(app, person.id))!.deleted_at).not.toBeNull();
  });

  it("a PATCH that deactivates and renames is one change: refused (an owner), nothing is written", async () => {
    const person = await provisioned("fay.owner", "owner");
    const before = (await scim.get(`/Users/${person.id}`)).body;
    const res = await scim.patch(`/Users/${person.id}`, patchOf({ op: "replace", path: "displayName", value: "Renamed" }, { op: "replace", path: "active", value: false }));
    expect(scimError(res)[0]).toBe(403);
    expect((await scim.get(`/Users/${person.id}`)).body).toEqual(before);
    expect(await membershipOf(app, scim.orgId, person.id)).toEqual({ role: "owner" });
    expect(await receipts(person.id)).toEqual([]);
    expect((await app.http.get("/api/v1/users/me", { token: person.token })).status).toBe(200);
    // Accepted as one change for a member: renamed and offboarded together.
    const member = await provisioned("gus.both");
    const both = await scim.patch(`/Users/${member.id}`, patchOf({ op: "replace", path: "displayName", value: "Gus B." }, { op: "replace", path: "active", value: false }));
    expect([both.status, both.body.displayName, both.body.active]).toEqual([200, "Gus B.", false]);
    expect(await receipts(member.id)).toHaveLength(1);
  });

  it("20 parallel active=false: one receipt, every answer 200", async () => {
    const person = await provisioned("hal.race");
    const answers = await Promise.all(Array.from({ length: 20 }, () => deactivate(person.id)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(await receipts(person.id)).toHaveLength(1);
  });
});

describe("a person in two organizations", () => {
  it("deactivated by A's SCIM still signs in and works in B; DELETE releases the account to them", async () => {
    const person = await provisioned("ivy.two");
    const otherOwner = await newUser(app);
    const other = await newOrg(app, otherOwner);
    await addMember(app, other.id, otherOwner, person, "member");

    expect((await deactivate(person.id)).status).toBe(200);
    const [receipt] = await receipts(person.id);
    // The account is A's, but not A's to suspend: B's membership is not A's to take away.
    expect(receipt).toMatchObject({ mode: "suspend", managed: true, account_suspended: false });
    expect(await accountRow(app, person.id)).toMatchObject({ status: "active", managed_by_organization_id: scim.orgId });
    expect((await scim.get(`/Users/${person.id}`)).body.active).toBe(false);
    // Sessions ended (the account is A's); signing in again works, B answers, A does not.
    expect((await app.http.get("/api/v1/users/me", { token: person.token })).status).toBe(401);
    const again = await login(app, person.email);
    expect(again.status, again.text).toBe(200);
    const token = again.body.data.token as string;
    expect((await app.http.get(`/api/v1/organizations/${other.id}`, { token })).status).toBe(200);
    expect((await app.http.get(`/api/v1/organizations/${other.id}/members`, { token })).status).toBe(200);
    expect((await app.http.get(O(), { token })).status).toBe(404);

    // active=true reinstates in A; DELETE then removes with a receipt, and the account becomes its holder's.
    expect((await activate(person.id)).body.active).toBe(true);
    expect(await membershipOf(app, scim.orgId, person.id)).toEqual({ role: "member" });
    expect((await scim.delete(`/Users/${person.id}`)).status).toBe(204);
    expect((await receipts(person.id))[0]).toMatchObject({ mode: "remove" });
    expect(await accountRow(app, person.id)).toMatchObject({ deleted_at: null, managed_by_organization_id: null, status: "active" });
    expect(await membershipOf(app, other.id, person.id)).toEqual({ role: "member" });
    expect((await login(app, person.email)).status).toBe(200);
  });
});
