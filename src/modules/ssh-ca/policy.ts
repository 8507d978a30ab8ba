// The one default certificate policy (a department without a stored one; a member of no department)
// is the departments' own: signing applies exactly what the department policy page shows.
import { DEFAULT_CERT_POLICY } from "../orgs/index.js";

export { DEFAULT_CERT_POLICY };
import { SK_USER_PRESENCE, SK_USER_VERIFICATION } from "../../lib/ssh/index.js";
import { CaErrors } from "./ssh-ca.errors.js";

export interface StoredPolicy {
  allowUserExpiry: boolean;
  defaultExpiryHours: number;
  maxExpiryHours: number;
  allowedExtensions: string[];
  customExtensions: string[];
  requireHardwareKey: boolean;
  requireTouch: boolean;
  requireVerify: boolean;
  /** The department's name, for a refusal to name it (read at signing). */
  departmentName?: string;
}

export interface EffectivePolicy {
  allowUserExpiry: boolean;
  defaultExpiryHours: number;
  maxExpiryHours: number;
  extensions: string[];
  /** Any of the departments requires a FIDO2 security key … */
  requireHardwareKey: boolean;
  /** … whose proof showed a touch (no no-touch-required in the certificate) … */
  requireTouch: boolean;
  /** … or a PIN/biometric (verify-required in the certificate). */
  requireVerify: boolean;
}

const intersect = (lists: string[][]) => (lists.length === 0 ? [] : lists.reduce((acc, l) => acc.filter((x) => l.includes(x))));

/**
 * One policy from all of a user's departments, the strictest of each: choosing the expiry only
 * if every department allows it, the smallest hours, only the extensions all of them allow, and a
 * security key (touched, verified) if any of them requires it. No department (or none with a
 * policy) means the defaults. Admins may always choose the expiry, but stay under the maximum;
 * the key requirements bind them like everyone.
 */
export function mergePolicies(policies: StoredPolicy[], isAdmin: boolean): EffectivePolicy {
  const list = policies.length > 0 ? policies : [DEFAULT_CERT_POLICY];
  const maxExpiryHours = Math.min(...list.map((p) => p.maxExpiryHours));
  return {
    allowUserExpiry: isAdmin || list.every((p) => p.allowUserExpiry),
    maxExpiryHours,
    defaultExpiryHours: Math.min(maxExpiryHours, ...list.map((p) => p.defaultExpiryHours)),
    extensions: [...intersect(list.map((p) => p.allowedExtensions)), ...intersect(list.map((p) => p.customExtensions))],
    requireHardwareKey: list.some((p) => p.requireHardwareKey || p.requireTouch || p.requireVerify),
    requireTouch: list.some((p) => p.requireTouch),
    requireVerify: list.some((p) => p.requireVerify),
  };
}

/** What the key policy looks at: the key's type and, for a security key, the flags of its proof. */
export interface KeyFacts {
  keyType: string;
  skProofFlags: number | null;
}

/**
 * The key against each department's requirements, departments by name: the first one it fails is
 * refused, naming that department and requirement (HARDWARE_KEY_REQUIRED, 403).
 */
export function assertKeyAllowed(policies: StoredPolicy[], key: KeyFacts): void {
  const hardware = key.keyType.startsWith("sk-");
  const flags = key.skProofFlags;
  for (const p of [...policies].sort((a, b) => (a.departmentName ?? "").localeCompare(b.departmentName ?? ""))) {
    const department = p.departmentName ?? "your department";
    if ((p.requireHardwareKey || p.requireTouch || p.requireVerify) && !hardware) throw CaErrors.hardwareKeyRequired(department, "hardware_key", key.keyType);
    if (p.requireTouch && (flags === null || (flags & SK_USER_PRESENCE) === 0)) throw CaErrors.hardwareKeyRequired(department, "touch", key.keyType, flags === null);
    if (p.requireVerify && (flags === null || (flags & SK_USER_VERIFICATION) === 0)) throw CaErrors.hardwareKeyRequired(department, "verify", key.keyType, flags === null);
  }
}

/**
 * What the certificate says to sshd (PROTOCOL.certkeys): without `no-touch-required` sshd demands
 * a touch on every signature, so a department requiring touch strips it even when a custom
 * extension names it; `verify-required` makes sshd demand a PIN/biometric on every signature.
 */
export function keyModifiers(policy: EffectivePolicy): { extensions: string[]; criticalOptions: Record<string, string> } {
  return {
    extensions: policy.requireTouch ? policy.extensions.filter((e) => e !== "no-touch-required") : policy.extensions,
    criticalOptions: policy.requireVerify ? { "verify-required": "" } : {},
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
