import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../../src/lib/crypto/index.js";
import { systemContext } from "../../../src/lib/request-context.js";
import { startTestApp, type TestApp } from "../../helpers/app.js";
import { countRows } from "../../helpers/db.js";
import { enrollTotp } from "../../factories/mfa.js";
import { newOrg } from "../../factories/orgs.js";
import { login, newSuperadmin, newUser, PASSWORD, registerUser, uniqueEmail, type TestUser } from "../../factories/users.js";

/**
 * The outside review's critical finding, played end to end: an attacker creates an organization,
 * "adds" an existing account, then tries to act as that account's administrator. The victim must
 * keep their account, their second factor and their organizations.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false" });
});
afterAll(() => app?.close());

async function victimWithMfa() {
  const victim = await newUser(app, { fullName: "Victoria Victim" });
  const org = await newOrg(app, victim, "Victim Corp");
  const { secret } = await enrollTotp(app, victim);
  return { victim, org, secret };
}

/** The victim signs in with their own password and second factor, and still owns their organization. */
async function assertVictimKeepsAccount(victim: TestUser, secret: string, orgId: string) {
  const first = await login(app, victim.email, PASSWORD);
  expect(first.status).toBe(200);
  expect(first.body.data.requires_mfa).toBe(true);
  app.clock.advance(31);
  const second = await app.http.post("/api/v1/auth/totp/verify", { mfa_token: first.body.data.mfa_token, code: totpCode(secret, totpStep(app.clock.now())) });
  expect(second.status).toBe(200);
  const orgs = await app.http.get("/api/v1/users/me/organizations", { token: second.body.data.token });
  expect(orgs.body.data.organizations).toContainEqual(expect.objectContaining({ id: orgId, role: "owner" }));
  const me = await app.http.get("/api/v1/users/me", { token: second.body.data.token });
  expect(me.body.data.user).toMatchObject({ status: "active", managed_by: null });
}

describe("account takeover through add-member (critical)", () => {
  it("over REST: adding an existing account only invites it, and no admin action reaches it", async () => {
    const { victim, org, secret } = await victimWithMfa();
    const attacker = await newUser(app, { fullName: "Mallory" });
    const evil = await newOrg(app, attacker, "Evil Org");
    const added = await app.http.post(`/api/v1/organizations/${evil.id}/members`, { email: victim.email, role: "member" }, { token: attacker.token });
    expect(added.status).toBe(201);
    // No consent, no membership: the victim is only invited.
    const members = (await app.http.get(`/api/v1/organizations/${evil.id}/members`, { token: attacker.token })).body.data.members;
    expect(members.map((m: { email: string }) => m.email)).toEqual([attacker.email]);

    const base = `/api/v1/admin/users/${victim.id}`;
    const attempts = [
      await app.http.post(`${base}/password`, { password: "attacker chosen password" }, { token: attacker.token }),
      await app.http.delete(`${base}/mfa/all`, { token: attacker.token }),
      await app.http.delete(`${base}/linked-accounts/github`, { token: attacker.token }),
      await app.http.post(`${base}/suspend`, {}, { token: attacker.token }),
      await app.http.post(`${base}/delete`, { confirm: true }, { token: attacker.token }),
      await app.http.get(base, { token: attacker.token }),
    ];
    expect(attempts.map((r) => r.body.error?.type)).toEqual(Array(attempts.length).fill("USER_NOT_FOUND"));
    expect((await app.http.post(`${base}/verify-email`, {}, { token: attacker.token })).status).toBe(403);
    const search = await app.http.get(`/api/v1/admin/users?q=${encodeURIComponent(victim.email)}`, { token: attacker.token });
    expect(search.body.data.users).toEqual([]);
    await assertVictimKeepsAccount(victim, secret, org.id);
  });

  it("over GraphQL: the same attack fails the same way, even after the victim accepts the invitation", async () => {
    const { victim, org, secret } = await victimWithMfa();
    const attacker = await newUser(app, { fullName: "Mallory" });
    const evil = await newOrg(app, attacker, "Evil Org");
    const added = await app.http.gql(
      "mutation($o: ID!, $e: String!) { addMember(orgId: $o, input: { email: $e, role: admin }) { id email role } }",
      { o: evil.id, e: victim.email },
      { token: attacker.token },
    );
    expect(added.errors).toBeUndefined();
    // The victim consents to join: sharing an organization still grants the attacker nothing.
    const invites = (await app.http.get("/api/v1/users/me/invites", { token: victim.token })).body.data.invites;
    expect((await app.http.post(`/api/v1/users/me/invites/${invites[0].id}/accept`, {}, { token: victim.token })).status).toBe(200);

    const v = { u: victim.id };
    const codes = async (query: string) => (await app.http.gql(query, v, { token: attacker.token })).errors?.[0]?.extensions.code;
    expect(await codes('mutation($u: ID!) { setUserPassword(userId: $u, password: "attacker chosen password") { message } }')).toBe("USER_NOT_FOUND");
    expect(await codes('mutation($u: ID!) { removeUserMfa(userId: $u, method: "all") { message } }')).toBe("USER_NOT_FOUND");
    expect(await codes("mutation($u: ID!) { suspendUser(userId: $u) { id } }")).toBe("USER_NOT_FOUND");
    expect(await codes("mutation($u: ID!) { deleteUser(userId: $u, confirm: true) { message } }")).toBe("USER_NOT_FOUND");
    expect(await codes("mutation($u: ID!) { verifyUserEmail(userId: $u) { id } }")).toBe("AUTHORIZATION_ERROR");
    expect(await codes("query($u: ID!) { adminUser(userId: $u) { id } }")).toBe("USER_NOT_FOUND");
    await assertVictimKeepsAccount(victim, secret, org.id);
  });
});

describe("addresses nobody proved (high)", () => {
  it("adding an address with no account creates nothing until its owner follows the link", async () => {
    const attacker = await newUser(app);
    const evil = await newOrg(app, attacker, "Evil Org");
    const ghost = uniqueEmail("ghost");
    expect((await app.http.post(`/api/v1/organizations/${evil.id}/members`, { email: ghost, role: "member" }, { token: attacker.token })).status).toBe(201);
    expect(await countRows(app, "users", `email = '${ghost}'`)).toBe(0);
    // The real owner registers later: the account is theirs, unmanaged, and verified only by their own link.
    await registerUser(app, { email: ghost });
    const owner = await login(app, ghost);
    const me = (await app.http.get("/api/v1/users/me", { token: owner.body.data.token })).body.data.user;
    expect(me).toMatchObject({ email: ghost, managed_by: null, email_verified: true });
    const reach = await app.http.post(`/api/v1/admin/users/${me.id}/password`, { password: "attacker chosen password" }, { token: attacker.token });
    expect(reach.body.error.type).toBe("USER_NOT_FOUND");
  });

  it("an address in SUPERADMIN_EMAILS is promoted at start only when its owner proved it through the mailed link", async () => {
    const listedLink = uniqueEmail("ops-link");
    const listedByWord = uniqueEmail("ops-word");
    await registerUser(app, { email: listedLink });
    const unproven = await newUser(app, { email: listedByWord, verify: false });
    const root = await newSuperadmin(app);
    // Even a superadmin's word (audited) does not make an address good enough for operator power.
    expect((await app.http.post(`/api/v1/admin/users/${unproven.id}/verify-email`, {}, { token: root.token })).status).toBe(200);
    const promoted = await app.services.operators.bootstrapSuperadmins(systemContext("bootstrap"), [listedLink, listedByWord]);
    expect(promoted).toBe(1);
    expect((await login(app, listedLink)).body.data.user.is_superadmin).toBe(true);
    expect((await login(app, listedByWord)).body.data.user.is_superadmin).toBe(false);
  });
});

describe("add-member answers (medium)", () => {
  it("say the same whether or not the address has an account, in the answer, the invite list and the activity log", async () => {
    const admin = await newUser(app);
    const org = await newOrg(app, admin, "Quiet Org");
    const existing = await newUser(app, { fullName: "Somebody Known" });
    const unknown = uniqueEmail("nobody");
    const a = await app.http.post(`/api/v1/organizations/${org.id}/members`, { email: existing.email, role: "member" }, { token: admin.token });
    const b = await app.http.post(`/api/v1/organizations/${org.id}/members`, { email: unknown, role: "member" }, { token: admin.token });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.message).toBe(b.body.message);
    expect(Object.keys(a.body.data.invite).sort()).toEqual(Object.keys(b.body.data.invite).sort());
    expect(a.text).not.toMatch(/Somebody Known|account_created|pending_activation|status/);
    const listed = (await app.http.get(`/api/v1/organizations/${org.id}/invites`, { token: admin.token })).body.data.invites;
    expect(listed.map((i: { email: string }) => i.email).sort()).toEqual([existing.email, unknown].sort());
    expect(Object.keys(listed[0]).sort()).toEqual(Object.keys(listed[1]).sort());
    const log = (await app.http.get(`/api/v1/organizations/${org.id}/audit-logs?action=org.member.add`, { token: admin.token })).body.data;
    const entries = log.audit_logs as Array<{ metadata: Record<string, unknown> }>;
    expect(entries.map((e) => Object.keys(e.metadata).sort())).toEqual([["email", "role"], ["email", "role"]]);
  });
});

describe("add-member is rate limited like invites", () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ RATE_LIMIT_INVITES: "3/3600" });
  });
  afterAll(() => limited?.close());

  it("per organization and per sender, so more organizations do not mean more mail", async () => {
    const sender = await newUser(limited);
    const one = await newOrg(limited, sender, "One");
    const two = await newOrg(limited, sender, "Two");
    const add = (orgId: string) => limited.http.post(`/api/v1/organizations/${orgId}/members`, { email: uniqueEmail("spam"), role: "member" }, { token: sender.token });
    for (let i = 0; i < 3; i++) expect((await add(one.id)).status).toBe(201);
    const fourth = await add(one.id);
    expect(fourth.status).toBe(429);
    expect(fourth.body.error.type).toBe("RATE_LIMIT_EXCEEDED");
    // Another organization of the same sender: the sender's own budget is spent.
    expect((await add(two.id)).status).toBe(429);
    await limited.flushEmails();
    expect(limited.mail.received.filter((m) => m.subject.startsWith("Activate")).length).toBe(3);
  });
});
