// The one default certificate policy (a department without a stored one; a member of no department)
// is the departments' own: signing applies exactly what the department policy page shows.
import { DEFAULT_CERT_POLICY } from "../orgs/index.js";

export { DEFAULT_CERT_POLICY };
import { CaErrors } from "./ssh-ca.errors.js";

export interface StoredPolicy {
  allowUserExpiry: boolean;
  defaultExpiryHours: number;
  maxExpiryHours: number;
  allowedExtensions: string[];
  customExtensions: string[];
}

export interface EffectivePolicy {
  allowUserExpiry: boolean;
  defaultExpiryHours: number;
  maxExpiryHours: number;
  extensions: string[];
}

const intersect = (lists: string[][]) => (lists.length === 0 ? [] : lists.reduce((acc, l) => acc.filter((x) => l.includes(x))));

/**
 * One policy from all of a user's departments, the strictest of each: choosing the expiry only
 * if every department allows it, the smallest hours, and only the extensions all of them allow.
 * No department (or none with a policy) means the defaults. Admins may always choose the expiry,
 * but stay under the maximum.
 */
export function mergePolicies(policies: StoredPolicy[], isAdmin: boolean): EffectivePolicy {
  const list = policies.length > 0 ? policies : [DEFAULT_CERT_POLICY];
  const maxExpiryHours = Math.min(...list.map((p) => p.maxExpiryHours));
  return {
    allowUserExpiry: isAdmin || list.every((p) => p.allowUserExpiry),
    maxExpiryHours,
    defaultExpiryHours: Math.min(maxExpiryHours, ...list.map((p) => p.defaultExpiryHours)),
    extensions: [...intersect(list.map((p) => p.allowedExtensions)), ...intersect(list.map((p) => p.customExtensions))],
  };
}

/**
 * The certificate lifetime in hours. Guard order: asking for a lifetime needs permission; it may
 * not exceed the policy's (or the CA's) cap; nothing asked means the default.
 */
export function resolveLifetimeHours(policy: EffectivePolicy, caMaxHours: number, requested: number | undefined): number {
  const cap = Math.min(policy.maxExpiryHours, caMaxHours);
  if (requested === undefined) return Math.min(policy.defaultExpiryHours, cap);
  if (!policy.allowUserExpiry) throw CaErrors.expiryNotAllowed();
  if (requested > cap) throw CaErrors.expiryTooLong(cap);
  return requested;
}

/** Requested principals must all be allowed; none requested means all allowed ones. */
export function resolvePrincipals(allowed: string[], requested: string[] | undefined): string[] {
  if (allowed.length === 0) throw CaErrors.noPrincipals();
  if (!requested || requested.length === 0) return [...allowed].sort();
  const unique = [...new Set(requested)];
  const refused = unique.filter((p) => !allowed.includes(p));
  if (refused.length > 0) throw CaErrors.unauthorizedPrincipals(refused);
  return unique;
}
