import type postgres from "postgres";
import { connectPostgres } from "../../src/infra/db.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeZtCentral, type FakeZtCentral } from "../helpers/fake-zt-central.js";
import { linkIn, startSmtpSink, tokenFrom, type SmtpSink } from "../helpers/smtp-sink.js";
import { startCluster, type Cluster, type Instance } from "./cluster.js";

/**
 * Two Keyward processes on one PostgreSQL database and one Redis (issue 18 item 4): what one
 * instance does, the other sees. Sessions live in Redis, rate limits count in Redis, and the
 * outbox workers of both instances drain one table, each email claimed by exactly one of them.
 * Every periodic job ticks each second on both; each tick's work is done by one of them.
 */
let cluster: Cluster;
let mail: SmtpSink;
let central: FakeZtCentral;
let sql: postgres.Sql;
let a: Instance;
let b: Instance;
const TICK = 1000;

beforeAll(async () => {
  mail = await startSmtpSink();
  central = await startFakeZtCentral();
  cluster = await startCluster({
    EMAIL_PROVIDER: "smtp",
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: String(mail.port),
    EMAIL_WORKER_INTERVAL_MS: "100",
    RATE_LIMIT_CONTACT: "3/3600",
    MFA_COMPLIANCE_INTERVAL_MS: String(TICK),
    OIDC_KEY_CHECK_INTERVAL_MS: String(TICK),
    NETWORK_RECONCILE_INTERVAL_MS: String(TICK),
    ZEROTIER_CENTRAL_URL: central.url,
  });
  sql = connectPostgres(cluster.env.DATABASE_URL!, { max: 3, onnotice: () => {} });
  // Both start at once: the migrations run once, under their lock, and the other waits.
  [a, b] = await Promise.all([cluster.start(), cluster.start()]);
}, 120_000);
afterAll(async () => {
  await sql?.end();
  await cluster?.close();
  await mail?.close();
  await central?.close();
});

const json = async (base: string, path: string, init: { method?: string; body?: unknown; token?: string } = {}) => {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? (init.body ? "POST" : "GET"),
    headers: { "content-type": "application/json", ...(init.token ? { authorization: `Bearer ${init.token}` } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as { data?: Record<string, unknown>; error?: { type: string } } };
};
const PASSWORD = "correct horse battery staple";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Holds one of the jobs' advisory locks on a connection of the test's own, as another instance would. */
async function holding<T>(lock: number, fn: () => Promise<T>): Promise<T> {
  const conn = await sql.reserve();
  await conn`select pg_advisory_lock(${lock})`;
  try {
    return await fn();
  } finally {
    await conn`select pg_advisory_unlock(${lock})`;
    conn.release();
  }
}

/** An owner with an organization, and `n` people who joined it through emailed invitations. */
async function orgWithMembers(n: number) {
  const email = `jobs.owner.${Date.now()}@example.com`;
  await json(a.url, "/api/v1/auth/register", { body: { email, password: PASSWORD, full_name: "Owner" } });
  const token = String((await json(b.url, "/api/v1/auth/login", { body: { email, password: PASSWORD } })).body.data!.token);
  const orgId = String(((await json(a.url, "/api/v1/organizations", { body: { name: `Jobs ${Date.now()}` }, token })).body.data!.organization as { id: string }).id);
  const members = Array.from({ length: n }, (_, i) => `jobs.member.${i}.${Date.now()}@example.com`);
  for (const to of members) expect((await json(a.url, `/api/v1/organizations/${orgId}/invites`, { body: { email: to, role: "member" }, token })).status).toBe(201);
  for (let i = 0; i < 100 && members.some((to) => !mail.lastWith(to, "/invite?token=")); i++) await sleep(100);
  for (const to of members) {
    const link = tokenFrom(linkIn(mail.lastWith(to, "/invite?token="), "/invite"));
    expect((await json(b.url, `/api/v1/invites/${link}/accept`, { body: { password: PASSWORD, full_name: "Member" } })).status).toBe(200);
  }
  return { orgId, token, emails: [email, ...members] };
}

describe("two instances on one PostgreSQL and Redis", () => {
  it("share sessions: signed in on one, known on the other; signed out on one, gone on both", async () => {
    const email = `two.${Date.now()}@example.com`;
    expect((await json(a.url, "/api/v1/auth/register", { body: { email, password: PASSWORD, full_name: "Two" } })).status).toBe(201);
    const signIn = await json(a.url, "/api/v1/auth/login", { body: { email, password: PASSWORD } });
    const token = String(signIn.body.data!.token);
    expect((await json(b.url, "/api/v1/auth/me", { token })).status).toBe(200);
    expect((await json(b.url, "/api/v1/auth/logout", { method: "POST", token })).status).toBe(200);
    expect((await json(a.url, "/api/v1/auth/me", { token })).status).toBe(401);
    expect((await json(b.url, "/api/v1/auth/me", { token })).status).toBe(401);
  });

  it("share rate limits: the budget spent on one is spent on the other", async () => {
    const message = { name: "Ada", email: "ada@example.com", subject: "Hello", message: "Two instances, one budget." };
    const answers = [];
    for (const instance of [a, b, a, b]) answers.push((await json(instance.url, "/api/v1/contact", { body: message })).status);
    expect(answers).toEqual([200, 200, 200, 429]);
  });

  it("send each email exactly once, whichever instance queued it and both workers draining", async () => {
    const recipients = Array.from({ length: 12 }, (_, i) => `once.${i}.${Date.now()}@example.com`);
    await Promise.all(recipients.map((email, i) => json(i % 2 ? a.url : b.url, "/api/v1/auth/register", { body: { email, password: PASSWORD, full_name: "Once" } })));
    for (let i = 0; i < 100 && recipients.some((r) => mail.to(r).length === 0); i++) await new Promise((r) => setTimeout(r, 100));
    // A little longer, for a duplicate to show up if there were one.
    await new Promise((r) => setTimeout(r, 1000));
    expect(recipients.map((r) => mail.to(r).length)).toEqual(recipients.map(() => 1));
  });
});

describe("periodic jobs on two instances: each tick's work is done once", () => {
  it("MFA compliance: no pass while its lock is held elsewhere, then exactly one reminder per member", async () => {
    const { orgId, token, emails } = await orgWithMembers(3);
    const reminders = (to: string) => mail.to(to).filter((m) => m.subject.includes("multi-factor authentication")).length;
    const audited = async () => (await sql<{ n: number }[]>`select count(*)::int as n from audit_logs where action = 'mfa.policy.reminder_sent' and organization_id = ${orgId}`)[0]!.n;
    await holding(7420002, async () => {
      // Required with one day of grace: every member is due their final reminder at the next pass.
      const put = await json(a.url, `/api/v1/organizations/${orgId}/security-policy`, { method: "PUT", body: { mfa_policy_mode: "required", mfa_grace_period_days: 1, notify_days_before: 1 }, token });
      expect(put.status).toBe(200);
      await sleep(2.5 * TICK);
      expect(await audited()).toBe(0);
    });
    for (let i = 0; i < 60 && emails.some((to) => reminders(to) === 0); i++) await sleep(100);
    // Several more ticks on both instances, for a second reminder to show up if there were one.
    await sleep(2.5 * TICK);
    expect(emails.map(reminders)).toEqual(emails.map(() => 1));
    expect(await audited()).toBe(emails.length);
  });

  it("OIDC signing keys: rotated once when due, and both instances publish the new keys", async () => {
    const kids = async (instance: Instance) => ((await (await fetch(`${instance.url}/api/v1/oidc/jwks`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();
    const before = await kids(a);
    expect(before).toHaveLength(2);
    const since = new Date();
    await holding(7420003, async () => {
      // Past the rotation age: both instances' next check finds the keys due, and waits for the lock.
      await sql`update oidc_signing_keys set created_at = created_at - interval '100 days' where retired_at is null`;
      await sleep(2.5 * TICK);
      expect((await sql`select kid from oidc_signing_keys`).length).toBe(2);
    });
    for (let i = 0; i < 50 && ((await kids(a)).length < 4 || (await kids(b)).length < 4); i++) await sleep(100);
    const keys = await sql<{ kid: string; retired: boolean }[]>`select kid, retired_at is not null as retired from oidc_signing_keys`;
    expect(keys.filter((k) => !k.retired)).toHaveLength(2);
    expect(keys.filter((k) => k.retired).map((k) => k.kid).sort()).toEqual(before);
    const rotations = await sql`select id from audit_logs where action = 'oidc.keys.rotated' and created_at >= ${since}`;
    expect(rotations).toHaveLength(1);
    expect(await kids(a)).toEqual(keys.map((k) => k.kid).sort());
    expect(await kids(b)).toEqual(await kids(a));
  });

  it("network reconciliation: one controller pass per tick, and a stray authorization corrected once", async () => {
    const NW = "8056c2e21c0000c1";
    central.addToken("jobs-central-token-1a2b3c", [NW]);
    central.addNetwork(NW, { name: "jobs" });
    central.addMember(NW, "f00dfeed77", { authorized: true, lastSeen: Date.now() });
    const { orgId, token } = await orgWithMembers(0);
    const passes: number[] = [];
    let seen = 0;
    const stamp = setInterval(() => {
      for (; seen < central.requests.length; seen++) if (central.requests[seen]!.method === "GET" && central.requests[seen]!.path === `/network/${NW}/member`) passes.push(Date.now());
    }, 10);
    try {
      expect((await json(a.url, `/api/v1/organizations/${orgId}/zerotier-config`, { method: "PUT", body: { zt_api_mode: "central", zt_api_token: "jobs-central-token-1a2b3c" }, token })).status).toBe(200);
      expect((await json(b.url, `/api/v1/organizations/${orgId}/zerotier/import-networks`, { body: { zerotier_network_ids: [NW] }, token })).status).toBe(201);
      await sleep(5.5 * TICK);
    } finally {
      clearInterval(stamp);
    }
    // Two instances ticking each second, unguarded, pass twice a second (ten or more here), some
    // passes half a tick apart or closer; the lease keeps one pass per tick, claimed 0.9 tick apart
    // at least (the margin below is for a slow database between the claim and the call).
    expect(passes.length).toBeGreaterThanOrEqual(4);
    expect(passes.length).toBeLessThanOrEqual(7);
    const gaps = passes.slice(1).map((t, i) => t - passes[i]!);
    expect(Math.min(...gaps)).toBeGreaterThan(0.5 * TICK);
    expect(central.member(NW, "f00dfeed77")!.config.authorized).toBe(false);
    expect(central.requests.filter((r) => r.method === "POST" && r.path === `/network/${NW}/member/f00dfeed77`)).toHaveLength(1);
    expect(await sql`select id from audit_logs where action = 'network.reconcile.correction' and organization_id = ${orgId}`).toHaveLength(1);
  });
});
