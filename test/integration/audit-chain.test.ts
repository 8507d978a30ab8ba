import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { systemContext } from "../../src/lib/request-context.js";
import { AuditAction } from "../../src/modules/audit/index.js";
import { linkHash, GENESIS } from "../../src/modules/audit/chain-hash.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { atSeq, query, restoreAudit, seedChain, snapshotAudit, tamper, verify, wipeAudit } from "../helpers/audit-chain.js";

/**
 * The audit hash chain against an attacker with write access to the database (the append-only
 * trigger switched off): every kind of change is caught, and the first broken link is named.
 */
let app: TestApp;
const ORG_A = "00000000-0000-4000-8000-00000000000a";
const ORG_B = "00000000-0000-4000-8000-00000000000b";

// One app; every test starts from the same 30 chained records (restored after the last test's tampering).
beforeAll(async () => {
  app = await startTestApp();
  await wipeAudit(app);
  await seedChain(app, 30, [null, ORG_A, ORG_B]);
  await snapshotAudit(app);
});
beforeEach(() => restoreAudit(app));
afterAll(() => app?.close());

describe("an intact chain", () => {
  it("verifies the global chain and each organization's, and reports the unchained tail", async () => {
    const before = await verify(app);
    expect(before).toMatchObject({ ok: true, firstBreak: null, organizationsChecked: 2, unchained: 0 });
    // The verification itself was audited (unchained until the next pass).
    expect(before.global).toMatchObject({ chain: "global", ok: true, fromSeq: 0, records: 30, headSeq: 30 });
    const after = await verify(app);
    expect(after.unchained).toBe(1);
    await app.services.auditChain.chainAll();
    const chained = await verify(app);
    // Both verifications' records are chained now: none was pending when this one looked.
    expect(chained).toMatchObject({ ok: true, unchained: 0 });
    expect(chained.global.headSeq).toBe(32);
    const [row] = await query<{ action: string }>(app, sql`select action from audit_logs where seq = 31`);
    expect(row!.action).toBe("audit.chain.verified");
  });

  it("still refuses ordinary changes and deletions (the trigger lets only the chain job fill its columns once)", async () => {
    await expect(app.container.db.execute(sql`update audit_logs set action = 'x' where seq = 1`)).rejects.toThrow();
    await expect(app.container.db.execute(sql`update audit_logs set hash = ${GENESIS} where seq = 1`)).rejects.toThrow();
    await expect(app.container.db.execute(sql`delete from audit_logs where seq = 1`)).rejects.toThrow();
  });
});

describe("concurrency", () => {
  it("chain passes racing from several instances give every record exactly one place", async () => {
    const ctx = systemContext("race");
    // Writers keep inserting while three passes (as three instances would) chain.
    const writers = Promise.all(Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; i < 150; i++) await app.services.audit.record(app.container.db, ctx, AuditAction.userLogin, { organizationId: [ORG_A, ORG_B, null][(w + i) % 3] });
    }));
    const passes = Promise.all([0, 1, 2].map(async () => {
      for (let i = 0; i < 10; i++) await app.services.auditChain.chainBatch();
    }));
    await Promise.all([writers, passes]);
    await app.services.auditChain.chainAll();
    const report = await verify(app);
    expect(report).toMatchObject({ ok: true, unchained: 0 });
    expect(report.global).toMatchObject({ records: 630, headSeq: 630 });
    const [dupes] = await query<{ n: string | number }>(app, sql`select count(*) as n from (select seq from audit_logs where seq is not null group by seq having count(*) > 1) d`);
    expect(Number(dupes!.n)).toBe(0);
  });
});

describe("tampering names the first broken link", () => {
  it("edited: a field changed after chaining", async () => {
    const r = await atSeq(app, 11);
    expect(r.organization_id).toBe(ORG_A);
    await tamper(app, sql`update audit_logs set metadata = '{"i": 999}'::jsonb where id = ${r.id}`);
    const report = await verify(app);
    expect(report.ok).toBe(false);
    expect(report.firstBreak).toMatchObject({ chain: "global", kind: "edited", seq: 11, recordId: r.id });
    // Its organization's chain breaks at the same record.
    expect(report.brokenOrganizations.map((o) => o.break)).toEqual([expect.objectContaining({ chain: r.organization_id, kind: "edited", seq: r.org_seq, recordId: r.id })]);
  });

  it("deleted: a record removed", async () => {
    const gone = await atSeq(app, 7);
    const next = await atSeq(app, 8);
    await tamper(app, sql`delete from audit_logs where id = ${gone.id}`);
    expect((await verify(app)).firstBreak).toMatchObject({ chain: "global", kind: "deleted", seq: 7, recordId: next.id });
  });

  it("deleted: the newest record removed (the signed head still names it)", async () => {
    const last = await atSeq(app, 30);
    await tamper(app, sql`delete from audit_logs where id = ${last.id}`);
    expect((await verify(app)).firstBreak).toMatchObject({ chain: "global", kind: "deleted", seq: 30, recordId: null });
  });

  it("inserted: a forged record given a place in the chain", async () => {
    const [forged] = await query<{ id: string }>(app, sql`insert into audit_logs (action, seq, prev_hash, hash) values ('user.login', 12, ${GENESIS}, ${GENESIS}) returning id`);
    const report = await verify(app);
    expect(report.firstBreak).toMatchObject({ chain: "global", kind: "inserted", seq: 12, recordId: forged!.id });
  });

  it("reordered: two records' places swapped", async () => {
    const a = await atSeq(app, 12);
    const b = await atSeq(app, 13);
    await tamper(app, sql`update audit_logs set seq = 13 where id = ${a.id}`, sql`update audit_logs set seq = 12 where id = ${b.id}`);
    expect((await verify(app)).firstBreak).toMatchObject({ chain: "global", kind: "reordered", seq: 12, recordId: b.id });
  });

  it("reordered within one organization's chain only", async () => {
    const rows = await query<{ id: string; org_seq: string }>(app, sql`select id, org_seq from audit_logs where organization_id = ${ORG_B} and org_seq in (3, 4) order by org_seq`);
    await tamper(app, sql`update audit_logs set org_seq = 4 where id = ${rows[0]!.id}`, sql`update audit_logs set org_seq = 3 where id = ${rows[1]!.id}`);
    const report = await verify(app);
    expect(report.global.ok).toBe(true);
    expect(report.firstBreak).toMatchObject({ chain: ORG_B, kind: "reordered", seq: 3, recordId: rows[1]!.id });
  });

  it("bad signature: the head rewritten", async () => {
    await tamper(app, sql`update audit_chain_anchors set seq = 29 where chain = 'global' and kind = 'head'`);
    expect((await verify(app)).firstBreak).toMatchObject({ chain: "global", kind: "bad_signature" });
  });

  it("bad signature: a record edited and the whole chain recomputed without the signing key", async () => {
    await tamper(app, sql`update audit_logs set action = 'user.logout' where seq = 5`);
    // The attacker recomputes every hash after the edit, as the algorithm is public.
    const rows = await query<Record<string, unknown>>(app, sql`select * from audit_logs where seq is not null order by seq`);
    let prev = GENESIS;
    for (const r of rows) {
      const record = { id: r.id, createdAt: new Date(r.created_at as string), action: r.action, actorId: r.actor_id, userId: r.user_id, organizationId: r.organization_id, resourceType: r.resource_type, resourceId: r.resource_id, success: r.success, ipAddress: r.ip_address, userAgent: r.user_agent, requestId: r.request_id, metadata: r.metadata, errorMessage: r.error_message } as Parameters<typeof linkHash>[3];
      const hash = linkHash("global", Number(r.seq), prev, record);
      await tamper(app, sql`update audit_logs set prev_hash = ${prev}, hash = ${hash} where id = ${r.id as string}`);
      prev = hash;
    }
    await tamper(app, sql`update audit_chain_anchors set hash = ${prev} where chain = 'global' and kind = 'head'`);
    const report = await verify(app);
    expect(report.firstBreak).toMatchObject({ chain: "global", kind: "bad_signature" });
  });

  it("bad signature: a signing key of the attacker's own (not sealed under this installation's key)", async () => {
    await tamper(app, sql`update audit_signing_keys set public_key = replace(public_key, 'MCowBQYDK2VwAyEA', 'MCowBQYDK2VwAyEB')`);
    expect((await verify(app)).firstBreak).toMatchObject({ chain: "global", kind: "bad_signature", detail: expect.stringContaining("not sealed") });
  });
});

describe("retention", () => {
  it("prunes behind signed checkpoints; the rest still verifies, and later tampering is still caught", async () => {
    app.clock.advance(40 * 86_400);
    await seedChain(app, 6, [ORG_A, null]);
    const result = await app.services.auditChain.prune(systemContext("test-prune"), 30);
    expect(result).toEqual({ pruned: 30, throughSeq: 30 });
    await app.services.auditChain.chainAll();
    const report = await verify(app);
    expect(report).toMatchObject({ ok: true, firstBreak: null });
    expect(report.global).toMatchObject({ fromSeq: 30, headSeq: 37, records: 7 });
    const [pruneRow] = await query<{ action: string; metadata: { pruned: number } }>(app, sql`select action, metadata from audit_logs where action = 'audit.chain.pruned'`);
    expect(pruneRow!.metadata.pruned).toBe(30);
    // Removing the first record after the checkpoint is a deletion, not a new start.
    const first = await atSeq(app, 31);
    await tamper(app, sql`delete from audit_logs where id = ${first.id}`);
    expect((await verify(app)).firstBreak).toMatchObject({ chain: "global", kind: "deleted", seq: 31 });
  });

  it("prunes nothing (and records nothing) while every record is within the retention", async () => {
    expect(await app.services.auditChain.prune(systemContext("test-prune"), 30)).toEqual({ pruned: 0, throughSeq: null });
    expect(await query(app, sql`select 1 from audit_logs where action = 'audit.chain.pruned'`)).toEqual([]);
    expect((await verify(app)).global).toMatchObject({ ok: true, fromSeq: 0 });
  });

  it("refuses a forged checkpoint", async () => {
    await app.services.auditChain.prune(systemContext("test-prune"), 0);
    await tamper(app, sql`update audit_chain_anchors set seq = seq + 1 where chain = 'global' and kind = 'base'`);
    expect((await verify(app)).firstBreak).toMatchObject({ chain: "global", kind: "bad_signature" });
  });
});
