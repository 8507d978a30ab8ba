import type { Executor } from "../../infra/db.js";
import { directoryRepository } from "./directory.repository.js";
import { memberStanding } from "./member-standing.js";
import { membershipsRepository } from "./memberships.repository.js";

/**
 * Memberships a provisioning client (SCIM, issue 36) makes and ends inside its own transaction.
 * It admits as a member and never as an owner (ARCHITECTURE rule 19); ending a membership ends the
 * department and principal grants that came with it and the organization's management of the
 * account, as leaving does (MembersService.removeLocked).
 */
export const provisionedMembership = {
  /** A live membership with the member role, unless there is one already (its role is kept). */
  admit: (tx: Executor, v: { organizationId: string; userId: string; now: Date }): Promise<boolean> =>
    membershipsRepository.insertIfAbsent(tx, { organizationId: v.organizationId, userId: v.userId, role: "member", now: v.now }),
  /** Serialises membership changes of the organization (a live organization: true). */
  lockOrganization: (tx: Executor, organizationId: string): Promise<boolean> => membershipsRepository.lockOrganization(tx, organizationId),
  async end(tx: Executor, organizationId: string, userId: string, now: Date): Promise<void> {
    await memberStanding.cut(tx, organizationId, userId, now, { keepManagement: false });
  },
};

/**
 * Departments as a provisioning client's groups (SCIM Groups, issue 36): read and changed inside
 * its transaction, always within one organization. Membership changes name people by id; the
 * caller admits only the organization's own managed accounts.
 */
export const provisionedDepartments = {
  list: (db: Executor, organizationId: string) => directoryRepository.listDepartments(db, organizationId),
  find: (db: Executor, organizationId: string, id: string) => directoryRepository.findDepartment(db, organizationId, id),
  create: (tx: Executor, v: { organizationId: string; name: string; now: Date }) => directoryRepository.insertDepartment(tx, { organizationId: v.organizationId, name: v.name, canSudo: false, now: v.now }),
  rename: (tx: Executor, organizationId: string, id: string, name: string, now: Date) => directoryRepository.updateDepartment(tx, organizationId, id, { name, updatedAt: now }),
  touch: (tx: Executor, organizationId: string, id: string, now: Date) => directoryRepository.updateDepartment(tx, organizationId, id, { updatedAt: now }),
  async remove(tx: Executor, organizationId: string, id: string, now: Date): Promise<boolean> {
    const row = await directoryRepository.updateDepartment(tx, organizationId, id, { deletedAt: now, updatedAt: now });
    if (row) await directoryRepository.deleteDepartmentLinks(tx, id);
    return row !== undefined;
  },
  members: (db: Executor, departmentId: string) => directoryRepository.listDepartmentMembers(db, departmentId),
  addMember: (tx: Executor, departmentId: string, userId: string, now: Date) => directoryRepository.addDepartmentMember(tx, departmentId, userId, now),
  removeMember: (tx: Executor, departmentId: string, userId: string) => directoryRepository.removeDepartmentMember(tx, departmentId, userId),
};
