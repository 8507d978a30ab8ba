import { sql } from "drizzle-orm";
import { resultRows } from "../../src/infra/db.js";
import type { TestApp } from "../helpers/app.js";

/**
 * Tables a refused request may still write to, and which rows: a refusal that is a security event
 * leaves an audit row saying it failed (failed sign-in, bad proof of possession, refused signing,
 * which the certificate log records too).
 */
const ALLOWED_ON_REFUSAL: Record<string, string> = { audit_logs: "not success", certificate_audit_logs: "not success" };

interface TableState {
  rows: number;
}

/**
 * Proves that a batch of refused requests wrote nothing, cheaply. PostgreSQL (PGlite too) hands out
 * a transaction id only to transactions that write, so if the first unassigned id
 * (`pg_snapshot_xmax`) did not move, nothing was inserted, updated or deleted anywhere: one tiny
 * query per batch. When it moved, every table is compared with its row count before and the rows
 * whose `xmin` (the id of the transaction that last wrote the row) is new; only the allowed rows
 * above may differ.
 */
export class WriteTracker {
  private tables: string[] = [];
  private xmax = 0n;
  private counts = new Map<string, TableState>();

  constructor(private readonly app: TestApp) {}

  private async query<T>(text: string): Promise<T[]> {
    return resultRows<T>(await this.app.container.db.execute(sql.raw(text)));
  }

  private async nextXid(): Promise<bigint> {
    const [row] = await this.query<{ x: string }>("select pg_snapshot_xmax(pg_current_snapshot())::text as x");
    return BigInt(row!.x);
  }

  /** Takes the current state as the reference (after setup, or after a batch that was allowed to write). */
  async baseline(): Promise<void> {
    if (!this.tables.length) {
      const rows = await this.query<{ t: string }>("select table_name as t from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1");
      this.tables = rows.map((r) => r.t);
    }
    this.xmax = await this.nextXid();
    const detail = await this.detail(this.xmax);
    this.counts = new Map(detail.map((d) => [d.t, { rows: d.n }]));
  }

  private async detail(since: bigint) {
    // xmin is the 32-bit id; a test cluster never wraps around, so compare within the current epoch.
    const low = since & 0xffffffffn;
    const parts = this.tables.map(
      (t) =>
        `select '${t}' as t, count(*)::int as n, (count(*) filter (where xmin::text::bigint >= ${low}))::int as changed, ` +
        `(count(*) filter (where xmin::text::bigint >= ${low} and (${ALLOWED_ON_REFUSAL[t] ?? "false"})))::int as allowed from "${t}"`,
    );
    return this.query<{ t: string; n: number; changed: number; allowed: number }>(parts.join(" union all "));
  }

  /**
   * After a batch: null when nothing was written that the batch may not write. `refusedOnly`: every
   * request of the batch was refused, so only the allowed rows may have appeared; otherwise the
   * batch may write anything and the state is simply taken as the new reference.
   */
  async check(refusedOnly: boolean): Promise<string | null> {
    const now = await this.nextXid();
    if (now === this.xmax) return null;
    const detail = await this.detail(this.xmax);
    const problems: string[] = [];
    for (const d of detail) {
      const before = this.counts.get(d.t)?.rows ?? 0;
      const clean = d.changed === d.allowed && d.n === before + d.allowed;
      if (refusedOnly && !clean) problems.push(`${d.t}: ${before} → ${d.n} rows, ${d.changed} inserted or updated (${d.allowed} allowed)`);
    }
    this.xmax = now;
    this.counts = new Map(detail.map((d) => [d.t, { rows: d.n }]));
    return problems.length ? problems.join("; ") : null;
  }
}
