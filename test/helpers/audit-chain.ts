import { sql, type SQL } from "drizzle-orm";
import { resultRows } from "../../src/infra/db.js";
import { systemContext } from "../../src/lib/request-context.js";
import { AuditAction } from "../../src/modules/audit/index.js";
import type { TestApp } from "./app.js";

/** Runs statements as an attacker with database write access would: the append-only trigger off. */
export async function tamper(app: TestApp, ...statements: SQL[]): Promise<void> {
  await app.container.db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    for (const s of statements) await tx.execute(s);
  });
}

export const query = async <T>(app: TestApp, statement: SQL): Promise<T[]> => resultRows<T>(await app.container.db.execute(statement));

/** `n` audit records, spread over the given organizations (and none), then chained. */
export async function seedChain(app: TestApp, n: number, orgIds: (string | null)[] = [null]): Promise<void> {
  for (let i = 0; i < n; i++) {
    // The chain orders records by time, then by id: one millisecond apart, they keep the order
    // they were written in (tests name a record by its place).
    const written = app.clock.now().getTime();
    while (app.clock.now().getTime() === written) await new Promise((r) => setImmediate(r));
    await app.services.audit.record(app.container.db, systemContext(`seed-${i}`), AuditAction.userLogin, { organizationId: orgIds[i % orgIds.length], metadata: { i, nested: { b: 1, a: [i, "x"] } } });
  }
  await app.services.auditChain.chainAll();
}

/** The record at a place in the global chain. */
export async function atSeq(app: TestApp, seq: number): Promise<{ id: string; organization_id: string | null; org_seq: number | null }> {
  const [row] = await query<{ id: string; organization_id: string | null; org_seq: string | number | null }>(app, sql`select id, organization_id, org_seq from audit_logs where seq = ${seq}`);
  return { id: row!.id, organization_id: row!.organization_id, org_seq: row!.org_seq === null ? null : Number(row!.org_seq) };
}

export const verify = (app: TestApp) => app.services.auditVerify.verifyAsOperator(systemContext("test-verify"));

const TABLES = ["audit_logs", "audit_chain_anchors", "audit_signing_keys"] as const;

/** Keeps the audit tables as they are now, so each test can tamper and start again from them. */
export async function snapshotAudit(app: TestApp): Promise<void> {
  for (const t of TABLES) await app.container.db.execute(sql.raw(`create table snap_${t} as select * from ${t}`));
}

export async function restoreAudit(app: TestApp): Promise<void> {
  await tamper(app, ...TABLES.flatMap((t) => [sql.raw(`delete from ${t}`), sql.raw(`insert into ${t} select * from snap_${t}`)]));
  app.clock.reset();
}

/** Empties the audit log (records written while the app started), so sequence numbers start at 1. */
export const wipeAudit = (app: TestApp) => tamper(app, ...TABLES.map((t) => sql.raw(`delete from ${t}`)));
