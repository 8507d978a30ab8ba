import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { anonymousContext } from "../../src/lib/request-context.js";
import { AuditAction } from "../../src/modules/audit/audit.actions.js";
import { startTestApp, type TestApp } from "../helpers/app.js";

/**
 * Records written through the pool by concurrent requests go to the database together
 * (audit.repository.ts, batchedInsert): each caller still waits for its own record, gets exactly
 * its own outcome, and a transaction's record still commits or rolls back with it.
 */
describe("audit records written by concurrent requests", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const stored = async (prefix: string) =>
    resultRows<{ request_id: string; metadata: Record<string, unknown>; success: boolean }>(
      await app.container.db.execute(sql`select request_id, metadata, success from audit_logs where request_id like ${`${prefix}%`} order by request_id`),
    );

  it("stores every record, each with its own values, once its caller is answered", async () => {
    const prefix = `batch-${Date.now()}-`;
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        app.services.audit.record(app.container.db, anonymousContext(`${prefix}${String(i).padStart(2, "0")}`, "203.0.113.7", "agent"), AuditAction.userLoginFailed, {
          success: false,
          metadata: { n: i, email: `n${i}@example.com` },
        }),
      ),
    );
    const rows = await stored(prefix);
    expect(rows).toHaveLength(40);
    expect(rows.map((r) => r.metadata.n)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(rows.every((r) => r.success === false)).toBe(true);
  });

  it("a record the database refuses fails its own caller only", async () => {
    const prefix = `refused-${Date.now()}-`;
    const results = await Promise.allSettled(
      Array.from({ length: 9 }, (_, i) =>
        app.services.audit.record(app.container.db, anonymousContext(`${prefix}${i}`), AuditAction.userLoginFailed, {
          // PostgreSQL's jsonb has no NUL character: this one record cannot be stored.
          metadata: i === 4 ? { note: "nul \u0000 inside" } : { n: i },
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled", "fulfilled"]);
    expect((await stored(prefix)).map((r) => r.request_id)).toEqual([0, 1, 2, 3, 5, 6, 7, 8].map((i) => `${prefix}${i}`));
  });

  it("a record written in a transaction commits or rolls back with it", async () => {
    const prefix = `tx-${Date.now()}-`;
    await app.container.db.transaction(async (tx) => {
      await app.services.audit.record(tx, anonymousContext(`${prefix}kept`), AuditAction.userLogout);
    });
    await expect(
      app.container.db.transaction(async (tx) => {
        await app.services.audit.record(tx, anonymousContext(`${prefix}dropped`), AuditAction.userLogout);
        throw new Error("the change fails");
      }),
    ).rejects.toThrow("the change fails");
    expect((await stored(prefix)).map((r) => r.request_id)).toEqual([`${prefix}kept`]);
  });
});
