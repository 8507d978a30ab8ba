import type { Executor } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import { OrgErrors } from "./orgs.errors.js";
import { countActiveMembershipsWithin } from "../access/index.js";

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
    current = await tx.transaction((sp) => countActiveMembershipsWithin(sp, userId, config.countTimeoutMs));
  } catch (err) {
    logger.warn({ err, userId }, "organization count failed: the per-user organization limit was not enforced");
    return;
  }
  if (current >= config.maxOrgsPerUser) throw OrgErrors.limitReached(config.maxOrgsPerUser);
}
