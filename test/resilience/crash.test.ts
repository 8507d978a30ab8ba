import { createHash } from "node:crypto";
import type postgres from "postgres";
import { connectPostgres } from "../../src/infra/db.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSmtpSink, type SmtpSink } from "../helpers/smtp-sink.js";
import { startCluster, type Cluster, type Instance } from "./cluster.js";
import { call, driveLoad, PASSWORD, prepare, refresh, type Fixture, type Ledger } from "./load.js";

/**
 * A crash under write load (issue 18 item 2): one Keyward process on PostgreSQL and Redis signs
 * certificates, takes invitations, registers accounts and rotates refresh tokens in parallel, and
 * is killed with SIGKILL in the middle of it. Afterwards every write it acknowledged is in the
 * database whole, no write is there in part (each is one transaction, or one statement), and a
 * restarted process serves again, including the refresh tokens and invitations left behind.
 */
let cluster: Cluster;
let mail: SmtpSink;
let sql: postgres.Sql;
let first: Instance;
let fixture: Fixture;
let ledger: Ledger;

const CHAINS = 4;
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

beforeAll(async () => {
  mail = await startSmtpSink();
  cluster = await startCluster({
    EMAIL_PROVIDER: "smtp",
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: String(mail.port),
    EMAIL_WORKER_INTERVAL_MS: "100",
    RATE_LIMIT_ENABLED: "false",
    SSH_REQUIRE_VERIFIED_KEYS: "false",
  });
  sql = connectPostgres(cluster.env.DATABASE_URL!, { max: 2, onnotice: () => {} });
  first = await cluster.start();
  fixture = await prepare(first.url, mail, { chains: CHAINS, invites: 40 });
}, 120_000);
afterAll(async () => {
  await sql?.end();
  await cluster?.close();
  await mail?.close();
});

const enough = (l: Ledger) => l.certificates.length >= 10 && l.accepted.length >= 4 && l.registered.length >= 4 && l.chains.every((c) => c.length >= 4);

describe("kill -9 under write load", () => {
  it("loses no acknowledged write and leaves none half-written", async () => {
    const load = driveLoad(first.url, fixture);
    ledger = load.ledger;
    for (let i = 0; i < 300 && !enough(ledger); i++) await new Promise((r) => setTimeout(r, 50));
    first.process.child.kill("SIGKILL");
    expect(await first.process.exited).toBeNull();
    await load.done;
    expect(enough(ledger), JSON.stringify({ certs: ledger.certificates.length, accepted: ledger.accepted.length, registered: ledger.registered.length })).toBe(true);
    expect(ledger.serverErrors).toEqual([]);

    // Certificates: each acknowledged serial is stored with its certificate audit row and its audit trail entry.
    const certs = await sql<{ id: string; serial: string; issued: number; audited: number }[]>`
      select c.id, c.serial::text as serial,
        (select count(*)::int from certificate_audit_logs l where l.certificate_id = c.id and l.action = 'issued') as issued,
        (select count(*)::int from audit_logs a where a.action = 'ssh.cert.issued' and a.resource_id = c.id::text) as audited
      from ssh_certificates c where c.organization_id = ${fixture.orgId}`;
    const byId = new Map(certs.map((c) => [c.id, c]));
    for (const ack of ledger.certificates) expect(byId.get(ack.certId)?.serial, `certificate ${ack.serial}`).toBe(ack.serial);
    expect(certs.filter((c) => c.issued !== 1 || c.audited !== 1)).toEqual([]);
    expect(new Set(certs.map((c) => c.serial)).size).toBe(certs.length);

    // Invitations: accepted ↔ account with a password ↔ membership ↔ audit entry, both ways.
    const invites = await sql<{ id: string; email: string; accepted_by: string | null; user_id: string | null; hash: boolean; member: boolean; audited: number }[]>`
      select i.id, i.email, i.accepted_by, u.id as user_id,
        exists (select 1 from password_credentials p where p.user_id = u.id) as hash,
        exists (select 1 from org_memberships m where m.user_id = u.id and m.organization_id = i.organization_id and m.deleted_at is null) as member,
        (select count(*)::int from audit_logs a where a.action = 'ORG_INVITE_ACCEPTED' and a.resource_id = i.id::text) as audited
      from org_invites i left join users u on u.email = i.email and u.deleted_at is null
      where i.organization_id = ${fixture.orgId}`;
    const inviteOf = new Map(invites.map((i) => [i.email, i]));
    for (const ack of ledger.accepted) expect(inviteOf.get(ack.email)?.accepted_by, ack.email).toBe(ack.userId);
    const partial = invites.filter((i) => (i.accepted_by ? !(i.accepted_by === i.user_id && i.hash && i.member && i.audited === 1) : i.user_id !== null || i.audited !== 0));
    expect(partial).toEqual([]);
    const members = await sql<{ user_id: string }[]>`select user_id from org_memberships where organization_id = ${fixture.orgId} and deleted_at is null and user_id <> ${fixture.owner.id}`;
    expect(members.map((m) => m.user_id).sort()).toEqual(invites.filter((i) => i.accepted_by).map((i) => i.accepted_by).sort());

    // Registrations: each acknowledged address has its account, password hash, verification link,
    // queued email and audit entry; and no account anywhere lacks any of them.
    const accounts = await sql<{ email: string; hash: boolean; link: boolean; mail: boolean; audited: boolean; invited: boolean }[]>`
      select u.email,
        exists (select 1 from password_credentials p where p.user_id = u.id) as hash,
        exists (select 1 from user_tokens t where t.user_id = u.id and t.purpose = 'email_verification') as link,
        exists (select 1 from email_outbox o where o.to_address = u.email) as mail,
        exists (select 1 from audit_logs a where a.action = 'user.register' and a.user_id = u.id) as audited,
        exists (select 1 from org_invites i where i.accepted_by = u.id) as invited
      from users u`;
    const accountOf = new Map(accounts.map((a) => [a.email, a]));
    for (const email of ledger.registered) expect(accountOf.get(email), email).toBeDefined();
    expect(accounts.filter((a) => !(a.hash && a.audited && (a.invited || (a.link && a.mail))))).toEqual([]);

    // Refresh rotations: every token handed out and then spent is consumed; each chain has exactly
    // one live token (its last one, or, when its last refresh got no answer, that one's successor).
    const records = await sql<{ id: string; consumed: boolean; named: boolean }[]>`
      select r.id, r.consumed_at is not null as consumed,
        exists (select 1 from oidc_payloads p where p.type = 'AccessToken' and p.id = r.access_token_id) as named
      from oidc_refresh_tokens r`;
    const record = new Map(records.map((r) => [r.id, r]));
    for (const chain of ledger.chains) for (const spent of chain.slice(0, -1)) expect(record.get(sha(spent))?.consumed).toBe(true);
    const live = records.filter((r) => !r.consumed);
    expect(live).toHaveLength(CHAINS);
    expect(live.every((r) => r.named)).toBe(true);
    ledger.chains.forEach((chain, i) => {
      if (!ledger.chainsInFlight.has(i)) expect(record.get(sha(chain.at(-1)!))?.consumed).toBe(false);
    });
    // Each answered refresh was audited before its answer left (no reuse was ever suspected).
    const audited = await sql<{ action: string; n: number }[]>`
      select action, count(*)::int as n from audit_logs where action in ('oidc.token.issued', 'oidc.refresh_token.reuse') and metadata->>'grant_type' = 'refresh_token' group by action`;
    const rotations = ledger.chains.reduce((n, c) => n + c.length - 1, 0);
    expect(audited.find((a) => a.action === "oidc.token.issued")?.n).toBeGreaterThanOrEqual(rotations);
    expect(audited.find((a) => a.action === "oidc.refresh_token.reuse")).toBeUndefined();
  });

  it("restarts on the same database and serves: sign-in, signing, refresh, invitations", async () => {
    // The same address: the issuer, and so the tokens it issued, stay the same.
    const second = await cluster.start({}, Number(new URL(first.url).port));
    expect((await call(second.url, "/api/ready")).status).toBe(200);
    const login = await call(second.url, "/api/v1/auth/login", { email: fixture.owner.email, password: PASSWORD });
    expect(login.status).toBe(200);
    const signed = await call(second.url, "/api/v1/ssh/sign", { key_id: fixture.keyId, principals: ["app"] }, String(login.data.token));
    expect(signed.status).toBe(201);
    // An invitee who joined before the crash signs in with the password set when accepting.
    expect((await call(second.url, "/api/v1/auth/login", { email: ledger.accepted[0]!.email, password: PASSWORD })).status).toBe(200);
    // An invitation nobody took before the crash can still be accepted.
    const open = await sql<{ email: string }[]>`select email from org_invites where organization_id = ${fixture.orgId} and accepted_at is null`;
    const left = fixture.invites.find((i) => open.some((o) => o.email === i.email));
    expect((await call(second.url, `/api/v1/invites/${left!.token}/accept`, { password: PASSWORD, full_name: "Late" })).status).toBe(200);
    // Each chain whose last answer arrived goes on rotating, on the new process.
    const settled = ledger.chains.filter((_, i) => !ledger.chainsInFlight.has(i));
    for (const chain of settled) {
      const next = await refresh(fixture.oidc, chain.at(-1)!);
      expect(next.status).toBe(200);
      expect((await refresh(fixture.oidc, next.refreshToken!)).status).toBe(200);
    }
  });
});
