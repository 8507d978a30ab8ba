import { sql } from "drizzle-orm";
import { resultRows } from "../../src/infra/db.js";
import type { TestApp } from "./app.js";

/** Counts rows straight from the database (to prove that nothing was written). */
export async function countRows(app: TestApp, table: string, where = "true"): Promise<number> {
  const result = await app.container.db.execute(sql.raw(`select count(*)::int as n from ${table} where ${where}`));
  return Number(resultRows<{ n: number }>(result)[0]!.n);
}

export interface AuditRow {
  action: string;
  actor_id: string | null;
  user_id: string | null;
  success: boolean;
  ip_address: string | null;
  user_agent: string | null;
  request_id: string | null;
  metadata: Record<string, unknown>;
}

export async function auditRows(app: TestApp, userId: string): Promise<AuditRow[]> {
  const result = await app.container.db.execute(
    sql`select action, actor_id, user_id, success, ip_address, user_agent, request_id, metadata from audit_logs where user_id = ${userId} order by created_at, id`,
  );
  return resultRows<AuditRow>(result);
}
