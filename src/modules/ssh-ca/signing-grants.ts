import type { Executor } from "../../infra/db.js";
import { memberDepartments } from "../orgs/index.js";
import { DEFAULT_CERT_POLICY, type StoredPolicy } from "./policy.js";

/**
 * Just-in-time grants (the access-requests module, wired by the container): the principals a person
 * holds for a bounded time in an organization, each with its end, and the department granted when
 * the principal comes with a department's grant (null: the principal itself was granted).
 */
export interface ActiveGrantsPort {
  activeGrants(userId: string, orgId: string, at: Date): Promise<ActiveGrant[]>;
}

export interface ActiveGrant {
  principal: string;
  endsAt: Date;
  departmentId: string | null;
}

/** The grants in force for a signer, and the policies of the departments granted through them. */
export interface GrantsInForce {
  grants: ActiveGrant[];
  /** Each granted department's certificate policy (the default when it stores none), named. */
  grantedPolicies: StoredPolicy[];
}

/**
 * The grant step of user signing: the grants in force at `at`, and for a department's grant that
 * department's certificate policy (it signs as if a member, so its policy counts in the merge).
 * `mayApply` false (the signing context found no approved grant whose window holds `at`) skips
 * the read: most signatures carry no grant.
 */
export async function grantsInForce(db: Executor, port: ActiveGrantsPort | undefined, userId: string, orgId: string, at: Date, mayApply: boolean): Promise<GrantsInForce> {
  const grants = port && mayApply ? await port.activeGrants(userId, orgId, at) : [];
  const departmentIds = [...new Set(grants.flatMap((g) => (g.departmentId ? [g.departmentId] : [])))];
  const granted = departmentIds.length ? await memberDepartments.policiesOf(db, orgId, departmentIds) : [];
  return { grants, grantedPolicies: granted.map((d) => ({ ...(d.policy ?? DEFAULT_CERT_POLICY), departmentName: d.departmentName })) };
}

/** The principals a signer may ask for: their standing ones and those granted in force. */
export function grantedPrincipals(standing: string[], grants: ActiveGrant[]): string[] {
  return grants.length ? [...new Set([...standing, ...grants.map((g) => g.principal)])] : standing;
}

/**
 * The end of the soonest grant among the principals a certificate carries only through grants (a
 * principal also held for good needs none; of several grants of one principal, the latest counts).
 */
export function grantEnd(grants: { principal: string; endsAt: Date }[], standing: string[], included: string[]): Date | undefined {
  const latest = new Map<string, number>();
  for (const g of grants) if (!standing.includes(g.principal) && included.includes(g.principal)) latest.set(g.principal, Math.max(latest.get(g.principal) ?? 0, g.endsAt.getTime()));
  return latest.size ? new Date(Math.min(...latest.values())) : undefined;
}
