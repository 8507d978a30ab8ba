import type { Executor } from "../../infra/db.js";
import type { OrgRole } from "../access/index.js";
import { userAccounts } from "../users/index.js";
import { directoryRepository } from "./directory.repository.js";
import { membershipsRepository } from "./memberships.repository.js";

/** What a membership held when it was cut: enough to list it on a receipt and to reinstate it. */
export interface CutStanding {
  departmentIds: string[];
  principalIds: string[];
}

/**
 * A person's standing in one organization, cut or restored inside the caller's transaction (the
 * caller holds the organization's lock: `lockOrganization`). Used by member removal and by
 * offboarding; nothing of any other organization is touched.
 */
export const memberStanding = {
  /** Takes the organization's row lock (every membership change takes it first); false when it is gone. */
  lockOrganization: (tx: Executor, organizationId: string): Promise<boolean> => membershipsRepository.lockOrganization(tx, organizationId),

  /** How many owners remain (under the lock): the last one is never cut. */
  countOwners: (tx: Executor, organizationId: string): Promise<number> => membershipsRepository.countOwners(tx, organizationId),

  /**
   * Ends the membership and the department and principal grants that came with it. With
   * `keepManagement` (a suspension) an account this organization manages stays its; otherwise it
   * becomes its owner's alone: management never outlives membership.
   */
  async cut(tx: Executor, organizationId: string, userId: string, now: Date, opts: { keepManagement: boolean }): Promise<CutStanding> {
    await membershipsRepository.softDelete(tx, organizationId, userId, now);
    if (!opts.keepManagement) await userAccounts.releaseFromOrganization(tx, userId, organizationId);
    return directoryRepository.removeUserFromOrganization(tx, organizationId, userId);
  },

  /**
   * A suspended membership comes back with its role, and with the departments and principals it
   * held that still exist (credentials revoked meanwhile stay revoked).
   */
  async restore(tx: Executor, v: { organizationId: string; userId: string; role: OrgRole; departmentIds: string[]; principalIds: string[]; now: Date }): Promise<void> {
    await membershipsRepository.insert(tx, { organizationId: v.organizationId, userId: v.userId, role: v.role, invitedBy: null, now: v.now });
    for (const id of v.departmentIds) {
      if (await directoryRepository.findDepartment(tx, v.organizationId, id)) await directoryRepository.addDepartmentMember(tx, id, v.userId, v.now);
    }
    for (const id of v.principalIds) {
      if (await directoryRepository.findPrincipal(tx, v.organizationId, id)) await directoryRepository.addPrincipalMember(tx, id, v.userId, v.now);
    }
  },
};
