import type { Executor } from "../../infra/db.js";
import { getActiveMembership, type OrgRole } from "../access/index.js";
import { directoryRepository } from "./directory.repository.js";
import { membershipsRepository } from "./memberships.repository.js";

export interface FederatedGrant {
  organizationId: string;
  userId: string;
  /** Never owner: the caller's type stops at admin (ARCHITECTURE rule 19). */
  role: Exclude<OrgRole, "owner">;
  /** The departments the identity provider's groups put the person in now. */
  departmentIds: string[];
  /** The connection granting it: only memberships it granted are ever taken away (never hand-made ones). */
  connectionId: string;
  now: Date;
}

export interface FederatedResult {
  joined: boolean;
  role: OrgRole;
  previousRole: OrgRole | null;
  departmentsAdded: string[];
  departmentsRemoved: string[];
}

/**
 * What an organization's identity provider says about a member, applied at each federated sign-in
 * (issue 35): a live membership with the mapped role, and the mapped departments. An owner stays an
 * owner (the provider neither makes nor unmakes owners). Departments of other organizations are ignored.
 */
export async function applyFederatedMembership(tx: Executor, g: FederatedGrant): Promise<FederatedResult> {
  let current = await getActiveMembership(tx, g.userId, g.organizationId);
  let role: OrgRole = g.role;
  let joined = false;
  if (!current) {
    joined = await membershipsRepository.insertIfAbsent(tx, { organizationId: g.organizationId, userId: g.userId, role: g.role, now: g.now });
    // A concurrent sign-in of the same person added it first: apply the grant to theirs.
    if (!joined) current = await getActiveMembership(tx, g.userId, g.organizationId);
  }
  // An owner stays an owner; anyone else gets the grant's role.
  if (current?.role === "owner") role = "owner";
  else if (current && current.role !== g.role) await membershipsRepository.setRole(tx, g.organizationId, g.userId, g.role, g.now);
  const own = new Set((await directoryRepository.listDepartments(tx, g.organizationId)).map((d) => d.id));
  const wanted = new Set(g.departmentIds.filter((d) => own.has(d)));
  const added: string[] = [];
  const removed: string[] = [];
  for (const d of wanted) if (await directoryRepository.grantDepartmentMember(tx, d, g.userId, g.connectionId, g.now)) added.push(d);
  // Whatever this connection granted and grants no more (a group left, a mapping removed or changed).
  removed.push(...(await directoryRepository.revokeDepartmentGrants(tx, g.userId, g.connectionId, [...wanted])));
  return { joined, role, previousRole: joined ? null : ((current?.role as OrgRole | undefined) ?? null), departmentsAdded: added, departmentsRemoved: removed };
}
