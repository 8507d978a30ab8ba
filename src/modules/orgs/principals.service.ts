import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { uniqueOr } from "../../infra/db-errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";
import type { DepartmentsService } from "./departments.service.js";
import { findOrgMemberByEmail } from "./directory-members.js";
import { DirectoryErrors } from "./directory.errors.js";
import { directoryRepository, type PrincipalRow } from "./directory.repository.js";
import { requireOrgAccess } from "./org-access.js";
import { emailSchema, principalSchema, updatePrincipalSchema } from "./orgs.schemas.js";

/** Principals: the names certificates are valid for, granted directly or through departments. */
export class PrincipalsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly departments: DepartmentsService,
  ) {}

  async list(ctx: RequestContext, orgId: string): Promise<PrincipalRow[]> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.read");
    return directoryRepository.listPrincipals(this.db, id);
  }

  async get(ctx: RequestContext, orgId: string, principalId: string): Promise<PrincipalRow> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.read");
    return this.find(id, principalId);
  }

  async create(ctx: RequestContext, orgId: string, input: unknown): Promise<PrincipalRow> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.manage");
    const data = parseInput(principalSchema, input);
    return uniqueOr(
      () =>
        this.db.transaction(async (tx) => {
          const row = await directoryRepository.insertPrincipal(tx, { organizationId: id, ...data, now: this.clock.now() });
          await this.audit.record(tx, ctx, AuditAction.principalCreate, { organizationId: id, resourceType: "principal", resourceId: row.id, metadata: data });
          return row;
        }),
      { principals_org_name_live_uq: DirectoryErrors.principalExists },
    );
  }

  async update(ctx: RequestContext, orgId: string, principalId: string, input: unknown): Promise<PrincipalRow> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.manage");
    const pid = parseId(principalId, DirectoryErrors.principalNotFound);
    const data = parseInput(updatePrincipalSchema, input);
    return uniqueOr(
      () =>
        this.db.transaction(async (tx) => {
          const row = await directoryRepository.updatePrincipal(tx, id, pid, { ...data, updatedAt: this.clock.now() });
          if (!row) throw DirectoryErrors.principalNotFound();
          await this.audit.record(tx, ctx, AuditAction.principalUpdate, { organizationId: id, resourceType: "principal", resourceId: pid, metadata: data });
          return row;
        }),
      { principals_org_name_live_uq: DirectoryErrors.principalExists },
    );
  }

  async delete(ctx: RequestContext, orgId: string, principalId: string): Promise<void> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.manage");
    const pid = parseId(principalId, DirectoryErrors.principalNotFound);
    await this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const row = await directoryRepository.updatePrincipal(tx, id, pid, { deletedAt: now, updatedAt: now });
      if (!row) throw DirectoryErrors.principalNotFound();
      await directoryRepository.deletePrincipalLinks(tx, pid);
      await this.audit.record(tx, ctx, AuditAction.principalDelete, { organizationId: id, resourceType: "principal", resourceId: pid, metadata: { name: row.name } });
    });
  }

  async listMembers(ctx: RequestContext, orgId: string, principalId: string) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.read");
    return directoryRepository.listPrincipalMembers(this.db, (await this.find(id, principalId)).id);
  }

  async addMember(ctx: RequestContext, orgId: string, principalId: string, input: unknown) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.manage");
    const { email } = parseInput(emailSchema, input);
    return this.db.transaction(async (tx) => {
      const principal = await this.find(id, principalId, tx);
      const user = await findOrgMemberByEmail(tx, id, email);
      if (!(await directoryRepository.addPrincipalMember(tx, principal.id, user.id, this.clock.now()))) throw DirectoryErrors.alreadyHasPrincipal();
      await this.audit.record(tx, ctx, AuditAction.principalMemberAdd, { organizationId: id, userId: user.id, resourceType: "principal", resourceId: principal.id });
      return { userId: user.id, email: user.email, fullName: user.fullName };
    });
  }

  async removeMember(ctx: RequestContext, orgId: string, principalId: string, userId: string): Promise<void> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.manage");
    const target = parseId(userId, DirectoryErrors.notAMember);
    await this.db.transaction(async (tx) => {
      const principal = await this.find(id, principalId, tx);
      if (!(await directoryRepository.removePrincipalMember(tx, principal.id, target))) throw DirectoryErrors.notAMember();
      await this.audit.record(tx, ctx, AuditAction.principalMemberRemove, { organizationId: id, userId: target, resourceType: "principal", resourceId: principal.id });
    });
  }

  async listDepartments(ctx: RequestContext, orgId: string, principalId: string) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.read");
    return directoryRepository.listPrincipalDepartments(this.db, (await this.find(id, principalId)).id);
  }

  /** Grants the principal to every member of the department (both must belong to the organization). */
  async linkDepartment(ctx: RequestContext, orgId: string, principalId: string, deptId: string): Promise<void> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "principals.manage");
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

  private async find(orgId: string, principalId: string, db: Executor = this.db): Promise<PrincipalRow> {
    const row = await directoryRepository.findPrincipal(db, orgId, parseId(principalId, DirectoryErrors.principalNotFound));
    if (!row) throw DirectoryErrors.principalNotFound();
    return row;
  }
}
