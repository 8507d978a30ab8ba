import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "../../src/infra/db.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { orgWithRoles } from "../factories/orgs.js";

/**
 * The activity listing must stay an index walk as the audit log grows: no sequential scan of
 * audit_logs and no sort of its rows. (npm run bench:activity times it at 10^6 rows.)
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

async function plan(query: ReturnType<typeof sql>): Promise<string> {
  const rows = resultRows<Record<string, string>>(await app.container.db.execute(sql`explain ${query}`));
  return rows.map((r) => Object.values(r)[0]).join("\n");
}

describe("organization activity query plan", () => {
  it("walks an index for the first page, a filter and a deep cursor", async () => {
    const { org, member } = await orgWithRoles(app);
    // 60,000 rows, half of them the organization's, then fresh statistics.
    await app.container.db.execute(sql`
      insert into audit_logs (created_at, action, organization_id, user_id, metadata)
      select now() - (g || ' seconds')::interval,
             (array['org.update','principal.created','user.login','department.created'])[1 + g % 4],
             case when g % 2 = 0 then ${org.id}::uuid else ('00000000-0000-4000-8000-' || lpad((g % 60)::text, 12, '0'))::uuid end,
             case when g % 3 = 0 then ${member.id}::uuid else null end,
             '{}'::jsonb
      from generate_series(1, 60000) g`);
    await app.container.db.execute(sql`analyze audit_logs`);

    const cursorAt = new Date(Date.now() - 30_000_000).toISOString();
    const queries = {
      firstPage: sql`select id from audit_logs where organization_id = ${org.id} order by created_at desc, id desc limit 51`,
      byUser: sql`select id from audit_logs where organization_id = ${org.id} and user_id = ${member.id} order by created_at desc, id desc limit 51`,
      byAction: sql`select id from audit_logs where organization_id = ${org.id} and action = 'user.login' order by created_at desc, id desc limit 51`,
      deepCursor: sql`select id from audit_logs where organization_id = ${org.id} and (created_at, id) < (${cursorAt}::timestamptz, '00000000-0000-4000-8000-000000000000'::uuid)
        order by created_at desc, id desc limit 51`,
    };
    for (const [name, query] of Object.entries(queries)) {
      const text = await plan(query);
      expect(text, name).toMatch(/Index (Only )?Scan (Backward )?using audit_logs_\w+_idx/);
      expect(text, name).not.toMatch(/Seq Scan on audit_logs/);
      // A full sort of the organization's rows is what must never happen (an incremental sort of ties is fine).
      expect(text, name).not.toMatch(/(^|->\s+)Sort\s+\(/m);
    }
  });
});
