import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { DepartmentsService } from "./departments.service.js";
import { DirectoryErrors } from "./directory.errors.js";
import { directoryRepository, type PrincipalRow } from "./directory.repository.js";
import { OrgGroupService, type OrgGroupKind } from "./org-groups.service.js";
import { principalSchema, updatePrincipalSchema } from "./orgs.schemas.js";
import { requireOrgAccess, requireStoredRole } from "../access/index.js";

const PRINCIPALS: OrgGroupKind<PrincipalRow, typeof principalSchema, typeof updatePrincipalSchema> = {
  resourceType: "principal",
  read: "principals.read",
  manage: "principals.manage",
  createSchema: principalSchema,
  updateSchema: updatePrincipalSchema,
  nameTaken: { constraint: "principals_org_name_live_uq", error: DirectoryErrors.principalExists },
  notFound: DirectoryErrors.principalNotFound,
  alreadyMember: DirectoryErrors.alreadyHasPrincipal,
  actions: {
    create: AuditAction.principalCreate,
    update: AuditAction.principalUpdate,
    delete: AuditAction.principalDelete,
    memberAdd: AuditAction.principalMemberAdd,
    memberRemove: AuditAction.principalMemberRemove,
  },
  repo: {
    list: directoryRepository.listPrincipals,
    find: directoryRepository.findPrincipal,
    insert: directoryRepository.insertPrincipal,
    update: directoryRepository.updatePrincipal,
    softDelete: (db, orgId, id, now) => directoryRepository.updatePrincipal(db, orgId, id, { deletedAt: now, updatedAt: now }),
    deleteLinks: directoryRepository.deletePrincipalLinks,
    listMembers: directoryRepository.listPrincipalMembers,
    addMember: directoryRepository.addPrincipalMember,
    removeMember: directoryRepository.removePrincipalMember,
  },
};

/** Principals: the names certificates are valid for, granted directly or through departments. */
export class PrincipalsService extends OrgGroupService<PrincipalRow, typeof principalSchema, typeof updatePrincipalSchema> {
  constructor(
    db: Db,
    clock: Clock,
    audit: AuditService,
    private readonly departments: DepartmentsService,
  ) {
    super(db, clock, audit, PRINCIPALS);
  }

  async listDepartments(ctx: RequestContext, orgId: string, principalId: string) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.read");
    return directoryRepository.listPrincipalDepartments(this.db, (await this.find(id, principalId)).id);
  }

  /** Grants the principal to every member of the department (both must belong to the organization). */
  async linkDepartment(ctx: RequestContext, orgId: string, principalId: string, deptId: string): Promise<void> {
    const access = await requireOrgAccess(this.db, ctx, orgId, "principals.manage");
    // Every member of the department holds the principal from now on: not on a temporary role.
    requireStoredRole(access, "principals.manage", "grant a principal to a department");
    const id = access.orgId;
    await this.db.transaction(async (tx) => {
      const principal = await this.find(id, principalId, tx);
      const dept = await this.departments.find(id, deptId, tx);
      if (!(await directoryRepository.linkPrincipal(tx, dept.id, principal.id, this.clock.now()))) throw DirectoryErrors.alreadyLinked();
      await this.audit.record(tx, ctx, AuditAction.departmentPrincipalLink, { organizationId: id, resourceType: "principal", resourceId: principal.id, metadata: { department_id: dept.id } });
    });
  }

  async unlinkDepartment(ctx: RequestContext, orgId: string, principalId: string, deptId: string): Promise<void> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.manage");
    await this.db.transaction(async (tx) => {
      const principal = await this.find(id, principalId, tx);
      const dept = await this.departments.find(id, deptId, tx);
      if (!(await directoryRepository.unlinkPrincipal(tx, dept.id, principal.id))) throw DirectoryErrors.notLinked();
      await this.audit.record(tx, ctx, AuditAction.departmentPrincipalUnlink, { organizationId: id, resourceType: "principal", resourceId: principal.id, metadata: { department_id: dept.id } });
    });
  }
}
