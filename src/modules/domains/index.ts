import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { AuditService } from "../audit/index.js";
import type { RateLimitService } from "../rate-limit/index.js";
import { createChallengeLookup, type DnsSettings } from "./dns-txt.js";
import { DomainsService, type DomainsSettings } from "./domains.service.js";

export { DomainErrors } from "./domains.errors.js";
export { addDomainSchema } from "./domains.schemas.js";
export type { DomainsService, DomainView } from "./domains.service.js";
export type { DomainStatus } from "./domains.repository.js";

/** Verified domains: claims proved by DNS TXT records, re-checked periodically, and the lookup sign-in routing uses. */
export function createDomainsModule(deps: { db: Db; clock: Clock; audit: AuditService; limits: RateLimitService; config: DomainsSettings & DnsSettings }) {
  const { resolvers, timeoutMs, ...settings } = deps.config;
  return { domains: new DomainsService(deps.db, deps.clock, deps.audit, deps.limits, createChallengeLookup({ resolvers, timeoutMs }), settings) };
}

export type DomainsModule = ReturnType<typeof createDomainsModule>;
