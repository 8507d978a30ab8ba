import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { isUniqueViolation } from "../../infra/db-errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { requireApiKey } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { CredentialsService } from "../auth/index.js";
import type { DomainsService } from "../domains/index.js";
import { provisionedDepartments, provisionedMembership } from "../orgs/index.js";
import { userAccounts } from "../users/index.js";
import type { AfterCommit, ScimDeprovisioner } from "./scim-deprovisioner.js";
import { matches, parseFilter } from "./scim-filter.js";
import { applyPatch } from "./scim-patch.js";
import { etagOf, project, stateFromResource, toUserResource, USER_CATALOG, type ScimUserRecord, type ScimUserState } from "./scim-user.js";
import { scimGroupsRepository as groupsRepo } from "./scim-groups.repository.js";
import { scimUsersRepository as repo } from "./scim-users.repository.js";
import { SCIM, ScimErrors } from "./scim.errors.js";

/** The most resources one page answers (ServiceProviderConfig's filter.maxResults). */
export const SCIM_MAX_RESULTS = 200;
const DEFAULT_COUNT = 100;

export interface ScimUsersDeps {
  db: Db;
  clock: Clock;
  audit: AuditService;
  credentials: Pick<CredentialsService, "createAccount">;
  domains: Pick<DomainsService, "findVerifiedOrganizationForEmail">;
  deprovisioner: ScimDeprovisioner;
  /** The public base URL of the SCIM door (…/scim/v2), for meta.location. */
  baseUrl: string;
}

export interface ListQuery {
  filter?: unknown;
  startIndex?: unknown;
  count?: unknown;
  attributes?: unknown;
  excludedAttributes?: unknown;
}

export interface Projection {
  attributes?: unknown;
  excludedAttributes?: unknown;
}

/** A User as answered, with its weak ETag (the door sets the ETag header). */
export interface ScimAnswer {
  resource: Record<string, unknown>;
  etag: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function listParam(v: unknown): string[] | null {
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string" || v.length > 2048) throw ScimErrors.invalidValue("attributes and excludedAttributes are comma-separated attribute names");
  return v.split(",").map((s) => s.trim()).filter(Boolean);
}

export function intParam(v: unknown, name: string, fallback: number): number {
  if (v === undefined || v === "") return fallback;
  if (typeof v !== "string" || !/^-?\d{1,12}$/.test(v)) throw ScimErrors.invalidValue(`${name} must be an integer`);
  return Number(v);
}

/** The account's full name from what the client said: formatted, else given + family, else the display name. */
const fullNameOf = (s: ScimUserState): string | null => (s.formatted ?? ([s.givenName, s.familyName].filter(Boolean).join(" ") || s.displayName || null))?.slice(0, 255) ?? null;

/**
 * SCIM Users of the organization whose API key calls (issue 36; rules 16, 17, 19): its managed
 * accounts, created as the organization's, with a membership that is never an owner's; an
 * existing account that the organization does not manage is never taken over. Every write is one
 * transaction and one audit record by the key.
 */
export class ScimUsersService {
  constructor(private readonly deps: ScimUsersDeps) {}

  /** The organization the caller speaks for: only a key with the scim scope. */
  private orgOf(ctx: RequestContext): string {
    return requireApiKey(ctx, "scim").organizationId;
  }

  private answer(u: ScimUserRecord, p: Projection = {}): ScimAnswer {
    return { resource: project(toUserResource(u, this.deps.baseUrl), listParam(p.attributes), listParam(p.excludedAttributes)), etag: etagOf(u) };
  }

  async list(ctx: RequestContext, q: ListQuery): Promise<Record<string, unknown>> {
    const orgId = this.orgOf(ctx);
    if (q.filter !== undefined && typeof q.filter !== "string") throw ScimErrors.invalidFilter("filter must be a string");
    const filter = q.filter ? parseFilter(q.filter, USER_CATALOG) : null;
    const startIndex = Math.max(1, intParam(q.startIndex, "startIndex", 1));
    const count = Math.min(SCIM_MAX_RESULTS, Math.max(0, intParam(q.count, "count", DEFAULT_COUNT)));
    const attributes = listParam(q.attributes);
    const excluded = listParam(q.excludedAttributes);
    // The filter, the count and the page in SQL; a filter SQL cannot answer whole (gt/lt, meta dates) is finished here.
    const found = await repo.search(this.deps.db, orgId, filter, startIndex, count);
    const rest = found.rest;
    const answered = found.rows.map((u) => toUserResource(u, this.deps.baseUrl));
    const hits = rest ? answered.filter((r) => matches(rest, r, USER_CATALOG)) : answered;
    const totalResults = rest ? hits.length : found.total;
    const page = (rest ? hits.slice(startIndex - 1, startIndex - 1 + count) : hits).map((r) => project(r, attributes, excluded));
    return { schemas: [SCIM.listResponse], totalResults, startIndex, itemsPerPage: page.length, Resources: page };
  }

  async get(ctx: RequestContext, id: string, p: Projection = {}): Promise<ScimAnswer> {
    const orgId = this.orgOf(ctx);
    return this.answer(await this.load(this.deps.db, orgId, id), p);
  }

  private async load(db: Executor, orgId: string, id: string): Promise<ScimUserRecord> {
    if (!UUID.test(id)) throw ScimErrors.notFound();
    const found = await repo.find(db, orgId, id);
    if (!found) throw ScimErrors.notFound();
    return found;
  }

  async create(ctx: RequestContext, body: unknown): Promise<ScimAnswer> {
    const { db, clock, audit } = this.deps;
    const orgId = this.orgOf(ctx);
    const state = stateFromResource(body, null);
    // The organization's directory speaks for its own domains only (as enterprise sign-in's accounts).
    await this.checkDomain(orgId, state.userName);
    const existing = await userAccounts.findByEmail(db, state.userName);
    if (existing) return this.refuseExisting(ctx, orgId, existing);
    const taken = () => ScimErrors.uniqueness("A User with this userName already exists");
    let after: AfterCommit = async () => {};
    const id = await db
      .transaction(async (tx) => {
        if (!(await provisionedMembership.lockOrganization(tx, orgId))) throw ScimErrors.notFound("Organization");
        const now = clock.now();
        const user = await this.deps.credentials.createAccount(tx, { email: state.userName, fullName: fullNameOf(state), managedBy: orgId, verifiedVia: "provider" }, { emailTaken: taken });
        await provisionedMembership.admit(tx, { organizationId: orgId, userId: user.id, now });
        const ext = await this.enterprise(tx, ctx, orgId, user.id, { department: null, manager: null }, state, now);
        await repo.upsert(tx, { organizationId: orgId, userId: user.id, externalId: state.externalId, givenName: state.givenName, familyName: state.familyName, displayName: state.displayName, ...ext.columns, now });
        if (!state.active) after = await this.deps.deprovisioner.deactivate(tx, ctx, { organizationId: orgId, userId: user.id });
        await audit.record(tx, ctx, AuditAction.scimUserCreated, { organizationId: orgId, userId: user.id, resourceType: "user", resourceId: user.id, metadata: { externalId: state.externalId, active: state.active, ...ext.audit } });
        return user.id;
      })
      .catch(rethrowUnique);
    await after();
    return this.answer(await this.load(db, orgId, id));
  }

  /** The address has an account: the organization's own (a duplicate), or someone's that it may not take. */
  private async refuseExisting(ctx: RequestContext, orgId: string, existing: { id: string; managedByOrganizationId: string | null }): Promise<never> {
    if (existing.managedByOrganizationId === orgId) throw ScimErrors.uniqueness("A User with this userName already exists");
    await this.deps.audit.record(this.deps.db, ctx, AuditAction.scimUserConflict, { organizationId: orgId, userId: existing.id, success: false, errorMessage: "existing account not managed by the organization" });
    throw ScimErrors.uniqueness(
      "A Keyward account with this address already exists and is not managed by this organization: it is never taken over. Its holder joins by consent (an invitation, or linking at enterprise sign-in).",
    );
  }

  async replace(ctx: RequestContext, id: string, body: unknown, ifMatch?: string): Promise<ScimAnswer> {
    return this.change(ctx, id, ifMatch, (before) => stateFromResource(body, before));
  }

  async patch(ctx: RequestContext, id: string, body: unknown, ifMatch?: string): Promise<ScimAnswer> {
    return this.change(ctx, id, ifMatch, (before) => applyPatch(before, body));
  }

  async remove(ctx: RequestContext, id: string, ifMatch?: string): Promise<void> {
    const { db, audit } = this.deps;
    const orgId = this.orgOf(ctx);
    const after = await db.transaction(async (tx) => {
      const before = await this.lockAndLoad(tx, orgId, id, ifMatch);
      const done = await this.deps.deprovisioner.remove(tx, ctx, { organizationId: orgId, userId: before.id });
      await audit.record(tx, ctx, AuditAction.scimUserDeleted, { organizationId: orgId, userId: before.id, resourceType: "user", resourceId: before.id, metadata: { externalId: before.externalId } });
      return done;
    });
    await after();
  }

  private async lockAndLoad(tx: Executor, orgId: string, id: string, ifMatch?: string): Promise<ScimUserRecord> {
    // The organization's person (or 404) before any lock; then the locks in offboarding's order.
    await this.load(tx, orgId, id);
    await this.deps.deprovisioner.prepare(tx, { organizationId: orgId, userId: id });
    await userAccounts.lock(tx, id);
    const before = await this.load(tx, orgId, id);
    if (ifMatch && ifMatch.trim() !== "*" && !ifMatch.split(",").map((s) => s.trim()).includes(etagOf(before))) throw ScimErrors.preconditionFailed();
    return before;
  }

  /** The organization's directory speaks for its own verified domains only (as enterprise sign-in's accounts). */
  private async checkDomain(orgId: string, userName: string): Promise<void> {
    if ((await this.deps.domains.findVerifiedOrganizationForEmail(userName)) !== orgId) {
      throw ScimErrors.invalidValue("userName must be an address in one of the organization's verified domains");
    }
  }

  /**
   * A new userName (Entra ID renames people): an address in one of the organization's verified
   * domains (400 otherwise) that no other account has (409). The account's address follows and
   * stays verified, by the domain, as at creation; sessions and credentials are kept.
   */
  private async readdress(tx: Executor, userId: string, userName: string, now: Date): Promise<void> {
    const holder = await userAccounts.findByEmail(tx, userName);
    if (holder && holder.id !== userId) throw ScimErrors.uniqueness("A User or another Keyward account already has this userName");
    await userAccounts.readdress(tx, userId, userName, now);
  }

  /**
   * The enterprise extension (issue 36): `manager` must be another User of this organization (400
   * otherwise, whoever's id it is); `department` is the organization's department of that name (any
   * case), created when there is none, as Okta and Entra ID admins expect of a mapped attribute. The
   * membership it adds replaces the one the previous `department` added.
   */
  private async enterprise(tx: Executor, ctx: RequestContext, orgId: string, userId: string, before: Pick<ScimUserState, "department" | "manager">, state: ScimUserState, now: Date) {
    const changed: string[] = [];
    const audit: Record<string, unknown> = {};
    if (state.manager !== before.manager) {
      changed.push("manager");
      audit.manager = state.manager;
      if (state.manager !== null && (!UUID.test(state.manager) || state.manager.toLowerCase() === userId || !(await repo.find(tx, orgId, state.manager.toLowerCase())))) {
        throw ScimErrors.invalidValue("manager: not another User of this organization");
      }
    }
    const columns: { managerId: string | null; departmentId?: string | null } = { managerId: state.manager?.toLowerCase() ?? null };
    if ((state.department ?? "").toLowerCase() !== (before.department ?? "").toLowerCase()) {
      changed.push("department");
      audit.department = state.department;
      const previous = await repo.departmentOf(tx, userId);
      let next: string | null = null;
      if (state.department !== null) {
        const dept = await groupsRepo.findOrCreateByName(tx, orgId, state.department, now);
        if (dept.created) {
          audit.departmentCreated = dept.id;
          await this.deps.audit.record(tx, ctx, AuditAction.scimGroupCreated, { organizationId: orgId, resourceType: "department", resourceId: dept.id, metadata: { name: dept.name, members: [userId], via: "enterprise department" } });
        }
        await provisionedDepartments.addMember(tx, dept.id, userId, now);
        next = dept.id;
      }
      if (previous && previous !== next) await provisionedDepartments.removeMember(tx, previous, userId);
      columns.departmentId = next;
    }
    return { columns, changed, audit };
  }

  /** One change of a User (PUT or PATCH): computed on a copy, then written all at once. */
  private async change(ctx: RequestContext, id: string, ifMatch: string | undefined, next: (before: ScimUserState) => ScimUserState): Promise<ScimAnswer> {
    const { db, clock, audit } = this.deps;
    const orgId = this.orgOf(ctx);
    // A new userName's domain is checked before the transaction (the domains service reads outside it).
    const current = await this.load(db, orgId, id);
    const intended = next(current).userName;
    if (intended !== current.userName) await this.checkDomain(orgId, intended);
    const { after } = await db
      .transaction(async (tx) => {
        const before = await this.lockAndLoad(tx, orgId, id, ifMatch);
        const state = next(before);
        if (state.userName !== before.userName && state.userName !== intended) throw ScimErrors.preconditionFailed();
        // A full name Keyward derived from the parts follows the parts (it was not the client's own).
        if (state.formatted === before.formatted && before.formatted === fullNameOf({ ...before, formatted: null })) state.formatted = null;
        const now = clock.now();
        const renamed = state.userName !== before.userName;
        if (renamed) await this.readdress(tx, before.id, state.userName, now);
        const target = { organizationId: orgId, userId: before.id };
        const fullName = fullNameOf(state);
        const effective = { ...state, formatted: fullName };
        const changed: string[] = (["userName", "externalId", "givenName", "familyName", "formatted", "displayName", "active"] as const).filter((k) => effective[k] !== before[k]);
        if (fullName !== before.formatted) await userAccounts.rename(tx, before.id, fullName, now);
        const ext = await this.enterprise(tx, ctx, orgId, before.id, before, state, now);
        changed.push(...ext.changed);
        await repo.upsert(tx, { ...target, externalId: state.externalId, givenName: state.givenName, familyName: state.familyName, displayName: state.displayName, ...ext.columns, now });
        let done: AfterCommit = async () => {};
        if (before.active && !state.active) {
          done = await this.deps.deprovisioner.deactivate(tx, ctx, target);
          await audit.record(tx, ctx, AuditAction.scimUserDeactivated, { organizationId: orgId, userId: before.id, resourceType: "user", resourceId: before.id });
        } else if (!before.active && state.active) {
          done = await this.deps.deprovisioner.reactivate(tx, ctx, target);
          await audit.record(tx, ctx, AuditAction.scimUserReactivated, { organizationId: orgId, userId: before.id, resourceType: "user", resourceId: before.id });
        }
        const attrs = changed.filter((k) => k !== "active");
        if (attrs.length) await audit.record(tx, ctx, AuditAction.scimUserUpdated, { organizationId: orgId, userId: before.id, resourceType: "user", resourceId: before.id, metadata: { changed: attrs, ...ext.audit, ...(renamed ? { previousUserName: before.userName, userName: state.userName } : {}) } });
        return { after: done };
      })
      .catch(rethrowUnique);
    await after();
    return this.answer(await this.load(db, orgId, id));
  }
}

function rethrowUnique(e: unknown): never {
  if (isUniqueViolation(e, "scim_users_org_external_uq")) throw ScimErrors.uniqueness("Another User of the organization has this externalId");
  if (isUniqueViolation(e, "users_email_live_uq")) throw ScimErrors.uniqueness("A User with this userName already exists");
  throw e;
}

