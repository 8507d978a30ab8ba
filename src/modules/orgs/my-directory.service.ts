import type { Db } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { directoryRepository } from "./directory.repository.js";
import { getActiveMemberships, isAdminRole, type OrgRole, requireUser } from "../access/index.js";

export interface PrincipalRef {
  id: string;
  name: string;
  description: string | null;
}

/** What the signed-in user holds in each of their organizations (the CLI reads this). */
export class MyDirectoryService {
  constructor(private readonly db: Db) {}

  /** Per organization: the user's departments, and principals direct or through a department. */
  async memberships(ctx: RequestContext) {
    const actor = requireUser(ctx);
    const { orgs, departments, direct, viaDepartment } = await this.load(actor.userId);
    return orgs.map((m) => ({
      orgId: m.organizationId,
      orgName: m.organizationName,
      role: m.role,
      departments: departments.filter((d) => d.organizationId === m.organizationId).map((d) => ({ id: d.id, name: d.name, description: d.description, canSudo: d.canSudo })),
      principals: this.merge(
        direct.filter((p) => p.organizationId === m.organizationId),
        viaDepartment.filter((p) => p.organizationId === m.organizationId),
      ).map((p) => ({ id: p.id, name: p.name, description: p.description, viaDepartment: p.viaDepartment })),
    }));
  }

  /** Per organization: my principals, and for admins every principal (they may request any). */
  async principals(ctx: RequestContext) {
    const actor = requireUser(ctx);
    const { orgs, direct, viaDepartment } = await this.load(actor.userId);
    const result = [];
    for (const m of orgs) {
      const isAdmin = isAdminRole(m.role);
      const all = isAdmin ? await directoryRepository.listPrincipals(this.db, m.organizationId) : [];
      const mine = this.merge(
        direct.filter((p) => p.organizationId === m.organizationId),
        viaDepartment.filter((p) => p.organizationId === m.organizationId),
      );
      result.push({
        orgId: m.organizationId,
        orgName: m.organizationName,
        role: m.role as OrgRole,
        isAdmin,
        myPrincipals: mine.map((p) => ({ id: p.id, name: p.name, description: p.description, direct: p.direct })),
        allPrincipals: all.map((p) => ({ id: p.id, name: p.name, description: p.description })),
      });
    }
    return result;
  }

  private async load(userId: string) {
    const orgs = await getActiveMemberships(this.db, userId);
    const ids = orgs.map((o) => o.organizationId);
    const [departments, direct, viaDepartment] = await Promise.all([
      directoryRepository.userDepartments(this.db, userId, ids),
      directoryRepository.userDirectPrincipals(this.db, userId, ids),
      directoryRepository.userDepartmentPrincipals(this.db, userId, ids),
    ]);
    return { orgs, departments, direct, viaDepartment };
  }

  /** One entry per principal: direct wins; otherwise the first department it came through. */
  private merge<P extends PrincipalRef & { organizationId: string }>(direct: P[], viaDepartment: Array<P & { departmentId: string }>) {
    const out = new Map<string, PrincipalRef & { direct: boolean; viaDepartment: string | null }>();
    for (const p of direct) out.set(p.id, { id: p.id, name: p.name, description: p.description, direct: true, viaDepartment: null });
    for (const p of viaDepartment) if (!out.has(p.id)) out.set(p.id, { id: p.id, name: p.name, description: p.description, direct: false, viaDepartment: p.departmentId });
    return [...out.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}
