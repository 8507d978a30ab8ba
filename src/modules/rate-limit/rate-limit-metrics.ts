import type { Metrics } from "../../infra/metrics.js";
import { isAppError } from "../../lib/errors.js";
import { type GuardedAttempt, type LockoutRule, type RateLimitOptions, type RateRule, RateLimitService } from "./rate-limit.service.js";

// Limits that stand in front of a password check: a refusal there is a sign-in outcome too.
const SIGN_IN_LIMITS = new Set(["login-ip", "login"]);

/**
 * The limiter, counting its refusals (`keyward_rate_limited_total{limit}`; limit names are
 * constants in the code, never keys). Refused password sign-ins are also `rate_limited` sign-ins,
 * since they never reach the audit log.
 */
export class MeteredRateLimitService extends RateLimitService {
  constructor(
    options: RateLimitOptions,
    private readonly metrics: Metrics,
  ) {
    super(options);
  }

  override async consume(name: string, rule: RateRule, key: string, points = 1): Promise<void> {
    try {
      await super.consume(name, rule, key, points);
    } catch (e) {
      this.refused(name, e);
      throw e;
    }
  }

  override async beginAttempt(name: string, rule: LockoutRule, account: string, client: string): Promise<GuardedAttempt> {
    try {
      return await super.beginAttempt(name, rule, account, client);
    } catch (e) {
      this.refused(name, e);
      throw e;
    }
  }

  private refused(name: string, e: unknown): void {
    if (!isAppError(e) || e.status !== 429) return;
    this.metrics.rateLimited.inc({ limit: name });
    if (SIGN_IN_LIMITS.has(name)) this.metrics.signIns.inc({ method: "password", result: "rate_limited" });
  }
}
