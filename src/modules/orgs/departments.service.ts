import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { DirectoryErrors } from "./directory.errors.js";
import { directoryRepository, type DepartmentRow } from "./directory.repository.js";
import { OrgGroupService, type OrgGroupKind } from "./org-groups.service.js";
import { certPolicySchema, departmentSchema, STANDARD_EXTENSIONS, updateDepartmentSchema, type CertPolicyInput } from "./orgs.schemas.js";
import { requireOrgAccess } from "../access/index.js";

export interface CertPolicyView {
  departmentId: string;
  allowUserExpiry: boolean;
  defaultExpiryHours: number;
  maxExpiryHours: number;
  allowedExtensions: string[];
  customExtensions: string[];
  /** Only FIDO2 security keys (sk-ssh-ed25519, sk-ecdsa-sha2-nistp256) are certified. */
  requireHardwareKey: boolean;
  /** The security key's proof showed a touch; certificates never carry no-touch-required. */
  requireTouch: boolean;
  /** The security key's proof showed a PIN/biometric; certificates carry verify-required. */
  requireVerify: boolean;
  /** allowed + custom: what a certificate from this department carries. */
  allExtensions: string[];
  standardExtensions: string[];
  isDefault: boolean;
}

/** Without a stored policy: users cannot pick their expiry, 1 h by default, 24 h at most, all five extensions, any key type. */
export const DEFAULT_CERT_POLICY = {
  allowUserExpiry: false,
  defaultExpiryHours: 1,
  maxExpiryHours: 24,
  allowedExtensions: [...STANDARD_EXTENSIONS] as string[],
  customExtensions: [] as string[],
  requireHardwareKey: false,
  requireTouch: false,
  requireVerify: false,
};

const DEPARTMENTS: OrgGroupKind<DepartmentRow, typeof departmentSchema, typeof updateDepartmentSchema> = {
  resourceType: "department",
  read: "departments.read",
  manage: "departments.manage",
  createSchema: departmentSchema,
  updateSchema: updateDepartmentSchema,
  nameTaken: { constraint: "departments_org_name_live_uq", error: DirectoryErrors.departmentExists },
  notFound: DirectoryErrors.departmentNotFound,
  alreadyMember: DirectoryErrors.alreadyInDepartment,
  actions: {
    create: AuditAction.departmentCreate,
    update: AuditAction.departmentUpdate,
    delete: AuditAction.departmentDelete,
    memberAdd: AuditAction.departmentMemberAdd,
    memberRemove: AuditAction.departmentMemberRemove,
  },
  repo: {
    list: directoryRepository.listDepartments,
    find: directoryRepository.findDepartment,
    insert: directoryRepository.insertDepartment,
    update: directoryRepository.updateDepartment,
    softDelete: (db, orgId, id, now) => directoryRepository.updateDepartment(db, orgId, id, { deletedAt: now, updatedAt: now }),
    deleteLinks: directoryRepository.deleteDepartmentLinks,
    listMembers: directoryRepository.listDepartmentMembers,
    addMember: directoryRepository.addDepartmentMember,
    removeMember: directoryRepository.removeDepartmentMember,
  },
};

/** Departments: groups of members that principals are granted through, with a certificate policy and sudo. */
export class DepartmentsService extends OrgGroupService<DepartmentRow, typeof departmentSchema, typeof updateDepartmentSchema> {
  constructor(db: Db, clock: Clock, audit: AuditService) {
    super(db, clock, audit, DEPARTMENTS);
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
  async putCertPolicy(ctx: RequestContext, orgId: string, deptId: string, input: CertPolicyInput): Promise<CertPolicyView> {
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
        requireHardwareKey: data.requireHardwareKey ?? current.requireHardwareKey,
        requireTouch: data.requireTouch ?? current.requireTouch,
        requireVerify: data.requireVerify ?? current.requireVerify,
      };
      if (next.defaultExpiryHours > next.maxExpiryHours) {
        throw DirectoryErrors.invalidPolicy(`default_expiry_hours (${next.defaultExpiryHours}) must not exceed max_expiry_hours (${next.maxExpiryHours})`);
      }
      // Touch and PIN/biometric are what a security key's signature says: they need one.
      if ((next.requireTouch || next.requireVerify) && !next.requireHardwareKey) {
        throw DirectoryErrors.invalidPolicy("require_touch and require_verify apply to security keys: set require_hardware_key too");
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
      requireHardwareKey: p.requireHardwareKey,
      requireTouch: p.requireTouch,
      requireVerify: p.requireVerify,
      allExtensions: [...p.allowedExtensions, ...p.customExtensions],
      standardExtensions: [...STANDARD_EXTENSIONS],
      isDefault: !stored,
    };
  }
}
