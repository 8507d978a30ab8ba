import type { Metrics } from "../../infra/metrics.js";
import { MeteredRateLimitService } from "./rate-limit-metrics.js";
import { RateLimitService, type RateLimitOptions } from "./rate-limit.service.js";

export { RateLimitService, type LockoutRule, type RateLimitOptions, type RateRule } from "./rate-limit.service.js";

/** The one limiter (rule 15's module factory): it counts its refusals when metrics are on. */
export function createRateLimitModule(options: RateLimitOptions & { metrics?: Metrics }) {
  const { metrics, ...limits } = options;
  return { limits: metrics ? new MeteredRateLimitService(limits, metrics) : new RateLimitService(limits) };
}
