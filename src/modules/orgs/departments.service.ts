import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { isUniqueViolation } from "../../infra/db-errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";
import { findOrgMemberByEmail } from "./directory-members.js";
import { DirectoryErrors } from "./directory.errors.js";
import { directoryRepository, type DepartmentRow } from "./directory.repository.js";
import { requireOrgAccess } from "./org-access.js";
import { certPolicySchema, departmentSchema, emailSchema, STANDARD_EXTENSIONS, updateDepartmentSchema } from "./orgs.schemas.js";

export interface CertPolicyView {
  departmentId: string;
  allowUserExpiry: boolean;
  defaultExpiryHours: number;
  maxExpiryHours: number;
  allowedExtensions: string[];
  customExtensions: string[];
  /** allowed + custom: what a certificate from this department carries. */
  allExtensions: string[];
  standardExtensions: string[];
  isDefault: boolean;
}

/** Without a stored policy: users cannot pick their expiry, 1 h by default, 24 h at most, all five extensions. */
export const DEFAULT_CERT_POLICY = {
  allowUserExpiry: false,
  defaultExpiryHours: 1,
  maxExpiryHours: 24,
  allowedExtensions: [...STANDARD_EXTENSIONS] as string[],
  customExtensions: [] as string[],
};

export class DepartmentsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async list(ctx: RequestContext, orgId: string): Promise<DepartmentRow[]> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "departments.read");
    return directoryRepository.listDepartments(this.db, id);
  }

  async get(ctx: RequestContext, orgId: string, deptId: string): Promise<DepartmentRow> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "departments.read");
    return this.find(id, deptId);
  }

  async create(ctx: RequestContext, orgId: string, input: unknown): Promise<DepartmentRow> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "departments.manage");
    const data = parseInput(departmentSchema, input);
    try {
      return await this.db.transaction(async (tx) => {
        const dept = await directoryRepository.insertDepartment(tx, { organizationId: id, ...data, now: this.clock.now() });
        await this.audit.record(tx, ctx, AuditAction.departmentCreate, { organizationId: id, resourceType: "department", resourceId: dept.id, metadata: data });
        return dept;
      });
    } catch (e) {
      if (isUniqueViolation(e, "departments_org_name_live_uq")) throw DirectoryErrors.departmentExists();
      throw e;
    }
  }

  async update(ctx: RequestContext, orgId: string, deptId: string, input: unknown): Promise<DepartmentRow> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "departments.manage");
    const dept = parseId(deptId, DirectoryErrors.departmentNotFound);
    const data = parseInput(updateDepartmentSchema, input);
    try {
      return await this.db.transaction(async (tx) => {
        const row = await directoryRepository.updateDepartment(tx, id, dept, { ...data, updatedAt: this.clock.now() });
        if (!row) throw DirectoryErrors.departmentNotFound();
        await this.audit.record(tx, ctx, AuditAction.departmentUpdate, { organizationId: id, resourceType: "department", resourceId: dept, metadata: data });
        return row;
      });
    } catch (e) {
      if (isUniqueViolation(e, "departments_org_name_live_uq")) throw DirectoryErrors.departmentExists();
      throw e;
    }
  }

  async delete(ctx: RequestContext, orgId: string, deptId: string): Promise<void> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "departments.manage");
    const dept = parseId(deptId, DirectoryErrors.departmentNotFound);
    await this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const row = await directoryRepository.updateDepartment(tx, id, dept, { deletedAt: now, updatedAt: now });
      if (!row) throw DirectoryErrors.departmentNotFound();
      await directoryRepository.deleteDepartmentLinks(tx, dept);
      await this.audit.record(tx, ctx, AuditAction.departmentDelete, { organizationId: id, resourceType: "department", resourceId: dept, metadata: { name: row.name } });
    });
  }

  async listMembers(ctx: RequestContext, orgId: string, deptId: string) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "departments.read");
    const dept = await this.find(id, deptId);
    return directoryRepository.listDepartmentMembers(this.db, dept.id);
  }

  async addMember(ctx: RequestContext, orgId: string, deptId: string, input: unknown) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "departments.manage");
    const { email } = parseInput(emailSchema, input);
    return this.db.transaction(async (tx) => {
      const dept = await this.find(id, deptId, tx);
      const user = await findOrgMemberByEmail(tx, id, email);
      if (!(await directoryRepository.addDepartmentMember(tx, dept.id, user.id, this.clock.now()))) throw DirectoryErrors.alreadyInDepartment();
      await this.audit.record(tx, ctx, AuditAction.departmentMemberAdd, { organizationId: id, userId: user.id, resourceType: "department", resourceId: dept.id });
      return { userId: user.id, email: user.email, fullName: user.fullName };
    });
  }

  async removeMember(ctx: RequestContext, orgId: string, deptId: string, userId: string): Promise<void> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "departments.manage");
    const target = parseId(userId, DirectoryErrors.notAMember);
    await this.db.transaction(async (tx) => {
      const dept = await this.find(id, deptId, tx);
      if (!(await directoryRepository.removeDepartmentMember(tx, dept.id, target))) throw DirectoryErrors.notAMember();
      await this.audit.record(tx, ctx, AuditAction.departmentMemberRemove, { organizationId: id, userId: target, resourceType: "department", resourceId: dept.id });
    });
  }

  async listPrincipals(ctx: RequestContext, orgId: string, deptId: string) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "departments.read");
    const dept = await this.find(id, deptId);
    return directoryRepository.listDepartmentPrincipals(this.db, dept.id);
  }

  async getCertPolicy(ctx: RequestContext, orgId: string, deptId: string): Promise<CertPolicyView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "cert_policy.read");
    const dept = await this.find(id, deptId);
    return this.policyView(dept.id, await directoryRepository.findCertPolicy(this.db, dept.id));
  }

  /** Updates any subset of the policy; the result must keep default ≤ max. */
  async putCertPolicy(ctx: RequestContext, orgId: string, deptId: string, input: unknown): Promise<CertPolicyView> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, "cert_policy.manage");
    const data = parseInput(certPolicySchema, input);
    return this.db.transaction(async (tx) => {
      const dept = await this.find(id, deptId, tx);
      const current = (await directoryRepository.findCertPolicy(tx, dept.id)) ?? DEFAULT_CERT_POLICY;
      const next = {
        allowUserExpiry: data.allowUserExpiry ?? current.allowUserExpiry,
        defaultExpiryHours: data.defaultExpiryHours ?? current.defaultExpiryHours,
        maxExpiryHours: data.maxExpiryHours ?? current.maxExpiryHours,
        allowedExtensions: [...new Set(data.allowedExtensions ?? current.allowedExtensions)],
        customExtensions: [...new Set(data.customExtensions ?? current.customExtensions)],
      };
      if (next.defaultExpiryHours > next.maxExpiryHours) {
        throw DirectoryErrors.invalidPolicy(`default_expiry_hours (${next.defaultExpiryHours}) must not exceed max_expiry_hours (${next.maxExpiryHours})`);
      }
      await directoryRepository.upsertCertPolicy(tx, dept.id, { ...next, now: this.clock.now() });
      await this.audit.record(tx, ctx, AuditAction.departmentCertPolicyUpdate, { organizationId: id, resourceType: "department", resourceId: dept.id, metadata: next });
      return this.policyView(dept.id, next);
    });
  }

  private policyView(departmentId: string, stored: typeof DEFAULT_CERT_POLICY | undefined): CertPolicyView {
    const p = stored ?? DEFAULT_CERT_POLICY;
    return {
      departmentId,
      allowUserExpiry: p.allowUserExpiry,
      defaultExpiryHours: p.defaultExpiryHours,
      maxExpiryHours: p.maxExpiryHours,
      allowedExtensions: p.allowedExtensions,
      customExtensions: p.customExtensions,
      allExtensions: [...p.allowedExtensions, ...p.customExtensions],
      standardExtensions: [...STANDARD_EXTENSIONS],
      isDefault: !stored,
    };
  }

  async find(orgId: string, deptId: string, db: Executor = this.db): Promise<DepartmentRow> {
    const dept = await directoryRepository.findDepartment(db, orgId, parseId(deptId, DirectoryErrors.departmentNotFound));
    if (!dept) throw DirectoryErrors.departmentNotFound();
    return dept;
  }
}
