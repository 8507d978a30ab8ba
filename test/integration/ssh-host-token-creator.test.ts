import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { addMember, orgWithRoles } from "../factories/orgs.js";
import { createCa, makeKey } from "../factories/ssh.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * An enrollment token is worth no more than the admin who created it (issue 37): offboarding
 * (suspend, remove) revokes the unused tokens they created in the same transaction and lists them
 * on the receipt; any other way of losing the admin role (a demotion, leaving) is caught when the
 * token is used: refused, nothing issued, the token closed and both audited.
 */
let app: TestApp;
let org: { id: string };
let owner: TestUser;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
  ({ org, owner } = await orgWithRoles(app));
  await createCa(app, org.id, owner, { ca_type: "host", name: "Host CA" });
});
afterAll(() => app?.close());

const T = () => `/api/v1/organizations/${org.id}/ssh/host-enrollment-tokens`;
const O = () => `/api/v1/organizations/${org.id}`;
let seq = 0;

async function newAdmin(): Promise<TestUser> {
  const admin = await newUser(app, { fullName: `Token Admin ${seq++}` });
  await addMember(app, org.id, owner, admin, "admin");
  return admin;
}

async function tokenBy(admin: TestUser) {
  const res = await app.http.post(T(), { names: [`h${seq++}.example.com`] }, { token: admin.token });
  expect(res.status, res.text).toBe(201);
  return res.body.data.enrollment_token as { id: string; token: string };
}

const enroll = (token: string) => app.http.post("/api/v1/ssh/hosts/enroll", { token, host_keys: [makeKey().pub] });
const statusOf = async (id: string) => ((await app.http.get(T(), { token: owner.token })).body.data.enrollment_tokens as Array<{ id: string; status: string }>).find((t) => t.id === id)?.status;
const hostCount = async () => (await app.http.get(`${O()}/ssh/hosts`, { token: owner.token })).body.data.hosts.length as number;

describe("enrollment tokens of an admin who is no longer one", () => {
  it("are revoked by offboarding (suspend and remove), in its transaction, and counted on the receipt", async () => {
    for (const mode of ["suspend", "remove"] as const) {
      const admin = await newAdmin();
      const [a, b] = [await tokenBy(admin), await tokenBy(admin)];
      const used = await tokenBy(admin);
      expect((await enroll(used.token)).status).toBe(201);
      const res = await app.http.post(`${O()}/members/${admin.id}/offboard`, { mode, reason: "left the company" }, { token: owner.token });
      expect(res.status, res.text).toBe(201);
      const receipt = res.body.data.receipt;
      expect(receipt.enrollment_tokens.count).toBe(2);
      expect(receipt.enrollment_tokens.ids.sort()).toEqual([a.id, b.id].sort());
      expect(await statusOf(a.id)).toBe("revoked");
      expect(await statusOf(used.id)).toBe("used");
      const refused = await enroll(a.token);
      expect(refused.status).toBe(410);
      expect(refused.body.error.type).toBe("ENROLLMENT_TOKEN_REVOKED");
      // The receipt as read back says the same.
      const again = await app.http.get(`${O()}/offboardings/${receipt.id}`, { token: owner.token });
      expect(again.body.data.receipt.enrollment_tokens.count).toBe(2);
    }
  });

  it("are revoked when the admin is removed as a member (the removal is offboarding)", async () => {
    const admin = await newAdmin();
    const t = await tokenBy(admin);
    const res = await app.http.delete(`${O()}/members/${admin.id}`, { token: owner.token });
    expect(res.status, res.text).toBe(200);
    expect(await statusOf(t.id)).toBe("revoked");
    expect((await enroll(t.token)).body.error.type).toBe("ENROLLMENT_TOKEN_REVOKED");
  });

  it("are refused at use once the creator was demoted or left: nothing issued, the token closed, audited", async () => {
    const demoted = await newAdmin();
    const leaver = await newAdmin();
    const [d, l] = [await tokenBy(demoted), await tokenBy(leaver)];
    expect((await app.http.patch(`${O()}/members/${demoted.id}/role`, { role: "member" }, { token: owner.token })).status).toBe(200);
    expect((await app.http.post(`${O()}/leave`, {}, { token: leaver.token })).status).toBe(200);
    const before = await hostCount();
    for (const t of [d, l]) {
      const res = await enroll(t.token);
      expect(res.status, res.text).toBe(410);
      expect(res.body.error.type).toBe("ENROLLMENT_TOKEN_CREATOR_GONE");
      expect(await statusOf(t.id)).toBe("revoked");
      // Used again: revoked for good (not "creator gone" twice).
      expect((await enroll(t.token)).body.error.type).toBe("ENROLLMENT_TOKEN_REVOKED");
    }
    expect(await hostCount()).toBe(before);
    const audit = JSON.stringify((await app.http.get(`${O()}/audit-logs?per_page=100`, { token: owner.token })).body);
    expect(audit.includes("its creator no longer administers the organization")).toBe(true);
    expect(audit.includes("ssh.host.enroll.failed")).toBe(true);
  });

  it("of an admin who still is one keep working, also under 20 parallel uses (exactly one enrolls)", async () => {
    const admin = await newAdmin();
    const t = await tokenBy(admin);
    const results = await Promise.all(Array.from({ length: 20 }, () => enroll(t.token)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 201).every((r) => r.body.error.type === "ENROLLMENT_TOKEN_USED")).toBe(true);
  });
});
