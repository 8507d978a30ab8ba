import { sql } from "drizzle-orm";
import type { Executor } from "../../infra/db.js";
import { resultRows } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import { countActiveMemberships } from "./memberships.repository.js";
import { OrgErrors } from "./orgs.errors.js";

export interface OrgLimitConfig {
  maxOrgsPerUser: number;
  /** How long the count may take before it is abandoned (and the limit not enforced). */
  countTimeoutMs: number;
}

/**
 * Refuses a new membership when the user already belongs to the maximum number of organizations.
 * Callers hold the user's row lock, so concurrent requests of one user are counted one at a time.
 *
 * The count is a guard, not a dependency: if it fails or times out, the change proceeds and a
 * warning is logged. It runs in a savepoint with its own statement timeout so that a failure does
 * not abort the caller's transaction.
 */
export async function assertBelowOrgLimit(tx: Executor, userId: string, config: OrgLimitConfig, logger: Logger): Promise<void> {
  let current: number;
  try {
    current = await tx.transaction(async (sp) => {
      const [previous] = resultRows<{ t: string }>(await sp.execute(sql`select current_setting('statement_timeout') as t`));
      await sp.execute(sql`select set_config('statement_timeout', ${String(config.countTimeoutMs)}, true)`);
      const n = await countActiveMemberships(sp, userId);
      await sp.execute(sql`select set_config('statement_timeout', ${previous?.t ?? "0"}, true)`);
      return n;
    });
  } catch (err) {
    logger.warn({ err, userId }, "organization count failed: the per-user organization limit was not enforced");
    return;
  }
  if (current >= config.maxOrgsPerUser) throw OrgErrors.limitReached(config.maxOrgsPerUser);
}
