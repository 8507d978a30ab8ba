import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { linkIn, tokenFrom } from "../helpers/smtp-sink.js";
import { invite, newOrg } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";
import { makeKey } from "../factories/ssh.js";

/**
 * What an address nobody has proved may do (README, "Unverified accounts"): sign in and look after
 * its own account, and nothing in an organization. A mistyped address must not come to own
 * organizations and CAs, nor hold certificates, which whoever really holds the address would take
 * over with a password reset.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

const CREATE = "mutation($i: CreateOrganizationInput!) { createOrganization(input: $i) { id } }";
const myOrgs = async (u: TestUser) => (await app.http.get("/api/v1/users/me/organizations", { token: u.token })).body.data.organizations as unknown[];

async function verifyFromEmail(u: TestUser): Promise<void> {
  await app.flushEmails();
  const token = tokenFrom(linkIn(app.mail.lastWith(u.email, "/verify-email"), "/verify-email"));
  expect((await app.http.post("/api/v1/auth/verify-email", { token })).status).toBe(200);
}

describe("an account whose address is not verified", () => {
  it("signs in and looks after its own account", async () => {
    const unproven = await newUser(app, { verify: false });
    expect((await app.http.get("/api/v1/users/me", { token: unproven.token })).body.data.user).toMatchObject({ email: unproven.email, email_verified: false });
    expect((await app.http.patch("/api/v1/users/me", { full_name: "Still Me" }, { token: unproven.token })).status).toBe(200);
    expect((await app.http.post("/api/v1/ssh/keys", { key: makeKey().pub }, { token: unproven.token })).status).toBe(201);
    expect((await app.http.post("/api/v1/auth/me/resend-verification", {}, { token: unproven.token })).status).toBe(200);
  });

  it("creates no organization, on either door, and is told how to get the link; once verified it does", async () => {
    const unproven = await newUser(app, { verify: false });
    const rest = await app.http.post("/api/v1/organizations", { name: "Typo Corp" }, { token: unproven.token });
    expect([rest.status, rest.body.error?.type]).toEqual([403, "EMAIL_NOT_VERIFIED"]);
    expect(rest.body.message).toContain("Verify your email address before you create or join an organization");
    expect(rest.body.message).toContain("POST /api/v1/auth/me/resend-verification");
    const gql = await app.http.gql(CREATE, { i: { name: "Typo Corp" } }, { token: unproven.token });
    expect(gql.errors?.[0]?.extensions?.code).toBe("EMAIL_NOT_VERIFIED");
    // Twenty at once: not one slips through.
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => app.http.post("/api/v1/organizations", { name: `Burst ${i}` }, { token: unproven.token })));
    expect(burst.map((r) => r.status)).toEqual(Array(20).fill(403));
    expect(await myOrgs(unproven)).toEqual([]);

    await verifyFromEmail(unproven);
    const created = await app.http.post("/api/v1/organizations", { name: "Proven Corp" }, { token: unproven.token });
    expect(created.status, created.text).toBe(201);
    expect(await myOrgs(unproven)).toHaveLength(1);
  });

  it("so owns no CA and holds no certificate: there is no organization to hold one in", async () => {
    const unproven = await newUser(app, { verify: false });
    const key = await app.http.post("/api/v1/ssh/keys", { key: makeKey().pub }, { token: unproven.token });
    const sign = await app.http.post("/api/v1/ssh/sign", { key_id: key.body.data.id }, { token: unproven.token });
    expect(sign.status).toBeGreaterThanOrEqual(400);
    expect(sign.status).toBeLessThan(500);
    expect((await app.http.get("/api/v1/ssh/certificates", { token: unproven.token })).body.data.certificates).toEqual([]);
  });

  it("joins through an invitation's emailed link, which proves the address, but not from its invitation list", async () => {
    const owner = await newUser(app);
    const org = await newOrg(app, owner, "Inviting");
    const unproven = await newUser(app, { verify: false });
    const token = await invite(app, org.id, owner, unproven.email);
    // The list shows invitations to verified addresses only.
    expect((await app.http.get("/api/v1/users/me/invites", { token: unproven.token })).body.data.invites).toEqual([]);
    const accepted = await app.http.post(`/api/v1/invites/${token}/accept`, {}, { token: unproven.token });
    expect(accepted.status, accepted.text).toBe(200);
    expect((await app.http.get("/api/v1/users/me", { token: unproven.token })).body.data.user.email_verified).toBe(true);
    expect(await myOrgs(unproven)).toHaveLength(1);
  });
});

describe("REQUIRE_VERIFIED_EMAIL=false (an installation that cannot deliver mail)", () => {
  it("lets an unverified account create an organization", async () => {
    const open = await startTestApp({ RATE_LIMIT_ENABLED: "false", REQUIRE_VERIFIED_EMAIL: "false" });
    try {
      const unproven = await newUser(open, { verify: false });
      expect((await open.http.post("/api/v1/organizations", { name: "No Mail Here" }, { token: unproven.token })).status).toBe(201);
    } finally {
      await open.close();
    }
  });
});
