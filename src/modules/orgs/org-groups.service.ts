import type { z } from "zod";
import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { uniqueOr } from "../../infra/db-errors.js";
import type { AppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId, parseInput } from "../../lib/validation.js";
import type { AuditActionName, AuditService } from "../audit/index.js";
import { findOrgMemberByEmail } from "./directory-members.js";
import { DirectoryErrors } from "./directory.errors.js";
import { emailSchema, type EmailInput } from "./orgs.schemas.js";
import { type Capability, requireOrgAccess, requireOrgCaller, requireStoredRole } from "../access/index.js";

type Row = { id: string; name: string };
type Schema = z.ZodType<Record<string, unknown>>;

/**
 * What makes a kind of organization group (departments, principals) itself: its capabilities,
 * input schemas, errors, audit actions and repository functions. The rules are the same for all.
 */
export interface OrgGroupKind<R extends Row, C extends Schema, U extends Schema> {
  resourceType: "department" | "principal";
  read: Capability;
  manage: Capability;
  createSchema: C;
  updateSchema: U;
  /** The live-name unique constraint and the error it becomes. */
  nameTaken: { constraint: string; error: () => AppError };
  notFound: () => AppError;
  alreadyMember: () => AppError;
  actions: { create: AuditActionName; update: AuditActionName; delete: AuditActionName; memberAdd: AuditActionName; memberRemove: AuditActionName };
  repo: {
    list(db: Executor, orgId: string): Promise<R[]>;
    find(db: Executor, orgId: string, id: string): Promise<R | undefined>;
    insert(db: Executor, v: z.output<C> & { organizationId: string; now: Date }): Promise<R>;
    update(db: Executor, orgId: string, id: string, values: z.output<U> & { updatedAt: Date }): Promise<R | undefined>;
    /** Marks the live group deleted; undefined when there is none. */
    softDelete(db: Executor, orgId: string, id: string, now: Date): Promise<R | undefined>;
    /** Drops the group's memberships and department-principal links (it is being deleted). */
    deleteLinks(db: Executor, id: string): Promise<void>;
    listMembers(db: Executor, id: string): Promise<Array<{ userId: string; email: string; fullName: string | null; addedAt: Date }>>;
    /** False when the user was already in it. */
    addMember(db: Executor, id: string, userId: string, now: Date): Promise<boolean>;
    /** False when the user was not in it. */
    removeMember(db: Executor, id: string, userId: string): Promise<boolean>;
  };
}

/**
 * A named group of an organization's members, managed by its admins: list, create, rename,
 * delete, and who is in it. Departments and principals are this with their own extras.
 */
export class OrgGroupService<R extends Row, C extends Schema, U extends Schema> {
  constructor(
    protected readonly db: Db,
    protected readonly clock: Clock,
    protected readonly audit: AuditService,
    private readonly kind: OrgGroupKind<R, C, U>,
  ) {}

  /** Also for the organization's API keys whose scopes grant the kind's read capability (rule 17). */
  async list(ctx: RequestContext, orgId: string): Promise<R[]> {
    const { orgId: id } = await requireOrgCaller(this.db, ctx, orgId, this.kind.read);
    return this.kind.repo.list(this.db, id);
  }

  async get(ctx: RequestContext, orgId: string, groupId: string): Promise<R> {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, this.kind.read);
    return this.find(id, groupId);
  }

  async create(ctx: RequestContext, orgId: string, input: z.input<C>): Promise<R> {
    const { kind } = this;
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, kind.manage);
    const data = parseInput(kind.createSchema, input);
    return uniqueOr(
      () =>
        this.db.transaction(async (tx) => {
          const row = await kind.repo.insert(tx, { ...data, organizationId: id, now: this.clock.now() });
          await this.audit.record(tx, ctx, kind.actions.create, { organizationId: id, resourceType: kind.resourceType, resourceId: row.id, metadata: data });
          return row;
        }),
      { [kind.nameTaken.constraint]: kind.nameTaken.error },
    );
  }

  async update(ctx: RequestContext, orgId: string, groupId: string, input: z.input<U>): Promise<R> {
    const { kind } = this;
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, kind.manage);
    const gid = parseId(groupId, kind.notFound);
    const data = parseInput(kind.updateSchema, input);
    return uniqueOr(
      () =>
        this.db.transaction(async (tx) => {
          const row = await kind.repo.update(tx, id, gid, { ...data, updatedAt: this.clock.now() });
          if (!row) throw kind.notFound();
          await this.audit.record(tx, ctx, kind.actions.update, { organizationId: id, resourceType: kind.resourceType, resourceId: gid, metadata: data });
          return row;
        }),
      { [kind.nameTaken.constraint]: kind.nameTaken.error },
    );
  }

  /** Soft-deletes the group; its memberships and links go with it. */
  async delete(ctx: RequestContext, orgId: string, groupId: string): Promise<void> {
    const { kind } = this;
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, kind.manage);
    const gid = parseId(groupId, kind.notFound);
    await this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const row = await kind.repo.softDelete(tx, id, gid, now);
      if (!row) throw kind.notFound();
      await kind.repo.deleteLinks(tx, gid);
      await this.audit.record(tx, ctx, kind.actions.delete, { organizationId: id, resourceType: kind.resourceType, resourceId: gid, metadata: { name: row.name } });
    });
  }

  async listMembers(ctx: RequestContext, orgId: string, groupId: string) {
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, this.kind.read);
    const group = await this.find(id, groupId);
    return this.kind.repo.listMembers(this.db, group.id);
  }

  /** Adds a member of the organization, found by email (anyone else is "not a member"). */
  async addMember(ctx: RequestContext, orgId: string, groupId: string, input: EmailInput) {
    const { kind } = this;
    const access = await requireOrgAccess(this.db, ctx, orgId, kind.manage);
    // A lasting holding: never given on a role held through a time-bounded grant (issue 37).
    requireStoredRole(access, kind.manage, `add members to a ${kind.resourceType}`);
    const id = access.orgId;
    const { email } = parseInput(emailSchema, input);
    return this.db.transaction(async (tx) => {
      const group = await this.find(id, groupId, tx);
      const user = await findOrgMemberByEmail(tx, id, email);
      if (!(await kind.repo.addMember(tx, group.id, user.id, this.clock.now()))) throw kind.alreadyMember();
      await this.audit.record(tx, ctx, kind.actions.memberAdd, { organizationId: id, userId: user.id, resourceType: kind.resourceType, resourceId: group.id });
      return { userId: user.id, email: user.email, fullName: user.fullName };
    });
  }

  async removeMember(ctx: RequestContext, orgId: string, groupId: string, userId: string): Promise<void> {
    const { kind } = this;
    const { orgId: id } = await requireOrgAccess(this.db, ctx, orgId, kind.manage);
    const target = parseId(userId, DirectoryErrors.notAMember);
    await this.db.transaction(async (tx) => {
      const group = await this.find(id, groupId, tx);
      if (!(await kind.repo.removeMember(tx, group.id, target))) throw DirectoryErrors.notAMember();
      await this.audit.record(tx, ctx, kind.actions.memberRemove, { organizationId: id, userId: target, resourceType: kind.resourceType, resourceId: group.id });
    });
  }

  /** The organization's live group with that id; not found for a malformed id or another tenant's. */
  async find(orgId: string, groupId: string, db: Executor = this.db): Promise<R> {
    const row = await this.kind.repo.find(db, orgId, parseId(groupId, this.kind.notFound));
    if (!row) throw this.kind.notFound();
    return row;
  }
}
