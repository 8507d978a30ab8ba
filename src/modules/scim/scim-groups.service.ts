import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { isUniqueViolation } from "../../infra/db-errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { requireApiKey } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { provisionedDepartments as departments, provisionedMembership } from "../orgs/index.js";
import { matches, parseFilter, type AttributeCatalog } from "./scim-filter.js";
import { readOperations, type Op } from "./scim-patch.js";
import { optionalString, project } from "./scim-user.js";
import { scimGroupsRepository as repo, type DepartmentRecord, type GroupMember } from "./scim-groups.repository.js";
import { SCIM, ScimErrors } from "./scim.errors.js";
import { intParam, listParam, SCIM_MAX_RESULTS, type ListQuery, type Projection, type ScimAnswer } from "./scim-users.service.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_MEMBERS_PER_REQUEST = 1000;

export const GROUP_CATALOG: AttributeCatalog = {
  paths: ["id", "externalId", "displayName", "members", "members.value", "members.display", "meta.created", "meta.lastModified"],
  schemas: [SCIM.group],
  caseExact: ["id", "members.value"],
};

interface GroupState {
  displayName: string;
  members: Set<string>;
}

export interface ScimGroupsDeps {
  db: Db;
  clock: Clock;
  audit: AuditService;
  baseUrl: string;
}

/**
 * SCIM Groups as the organization's departments (issue 36): displayName is the department's name,
 * members are the organization's managed accounts in it (people added by hand who are not managed
 * are neither listed nor removed). externalId is not stored: clients match groups by displayName.
 */
export class ScimGroupsService {
  constructor(private readonly deps: ScimGroupsDeps) {}

  private orgOf(ctx: RequestContext): string {
    return requireApiKey(ctx, "scim").organizationId;
  }

  private resource(dept: DepartmentRecord, members: GroupMember[]) {
    const version = `W/"${dept.updatedAt.getTime().toString(36)}"`;
    return {
      resource: {
        schemas: [SCIM.group],
        id: dept.id,
        displayName: dept.name,
        members: members.map((m) => ({ value: m.userId, display: m.email, $ref: `${this.deps.baseUrl}/Users/${m.userId}` })),
        meta: { resourceType: "Group", created: dept.createdAt.toISOString(), lastModified: dept.updatedAt.toISOString(), location: `${this.deps.baseUrl}/Groups/${dept.id}`, version },
      } as Record<string, unknown>,
      etag: version,
      members: new Set(members.map((m) => m.userId)),
    };
  }

  /** The department as a Group, with its managed members (one statement). */
  private async load(db: Executor, orgId: string, dept: DepartmentRecord) {
    return this.resource(dept, (await repo.membersOf(db, orgId, [dept.id])).get(dept.id) ?? []);
  }

  async list(ctx: RequestContext, q: ListQuery): Promise<Record<string, unknown>> {
    const orgId = this.orgOf(ctx);
    const { db } = this.deps;
    if (q.filter !== undefined && typeof q.filter !== "string") throw ScimErrors.invalidFilter("filter must be a string");
    const filter = q.filter ? parseFilter(q.filter, GROUP_CATALOG) : null;
    const startIndex = Math.max(1, intParam(q.startIndex, "startIndex", 1));
    const count = Math.min(SCIM_MAX_RESULTS, Math.max(0, intParam(q.count, "count", 100)));
    const attributes = listParam(q.attributes);
    const excluded = listParam(q.excludedAttributes);
    // The filter, the count and the page in SQL, then the page's members in one statement.
    const found = await repo.search(db, orgId, filter, startIndex, count);
    const rest = found.rest;
    const members = await repo.membersOf(db, orgId, found.rows.map((d) => d.id));
    const answered = found.rows.map((d) => this.resource(d, members.get(d.id) ?? []).resource);
    const hits = rest ? answered.filter((r) => matches(rest, r, GROUP_CATALOG)) : answered;
    const page = (rest ? hits.slice(startIndex - 1, startIndex - 1 + count) : hits).map((r) => project(r, attributes, excluded));
    return { schemas: [SCIM.listResponse], totalResults: rest ? hits.length : found.total, startIndex, itemsPerPage: page.length, Resources: page };
  }

  async get(ctx: RequestContext, id: string, p: Projection = {}): Promise<ScimAnswer> {
    const orgId = this.orgOf(ctx);
    const a = await this.load(this.deps.db, orgId, await this.find(this.deps.db, orgId, id));
    return { resource: project(a.resource, listParam(p.attributes), listParam(p.excludedAttributes)), etag: a.etag };
  }

  private async find(db: Executor, orgId: string, id: string) {
    if (!UUID.test(id)) throw ScimErrors.notFound("Group");
    const d = await departments.find(db, orgId, id);
    if (!d) throw ScimErrors.notFound("Group");
    return d;
  }

  async create(ctx: RequestContext, body: unknown): Promise<ScimAnswer> {
    const orgId = this.orgOf(ctx);
    const { db, clock, audit } = this.deps;
    const o = groupBody(body);
    const displayName = nameOf(o.displayName);
    const id = await db
      .transaction(async (tx) => {
        if (!(await provisionedMembership.lockOrganization(tx, orgId))) throw ScimErrors.notFound("Organization");
        const now = clock.now();
        const members = memberIds(o.members, await this.managedIn(tx, orgId, body));
        const dept = await departments.create(tx, { organizationId: orgId, name: displayName, now });
        for (const m of members) await departments.addMember(tx, dept.id, m, now);
        await audit.record(tx, ctx, AuditAction.scimGroupCreated, { organizationId: orgId, resourceType: "department", resourceId: dept.id, metadata: { name: displayName, members: [...members].slice(0, 200) } });
        return dept.id;
      })
      .catch(nameTaken);
    return this.get(ctx, id);
  }

  async replace(ctx: RequestContext, id: string, body: unknown, ifMatch?: string): Promise<ScimAnswer> {
    return this.change(ctx, id, ifMatch, body, (_state, managed) => {
      const o = groupBody(body);
      return { displayName: nameOf(o.displayName), members: memberIds(o.members, managed) };
    });
  }

  async patch(ctx: RequestContext, id: string, body: unknown, ifMatch?: string): Promise<ScimAnswer> {
    return this.change(ctx, id, ifMatch, body, (state, managed) => applyGroupPatch(state, body, managed));
  }

  async remove(ctx: RequestContext, id: string, ifMatch?: string): Promise<void> {
    const orgId = this.orgOf(ctx);
    const { db, clock, audit } = this.deps;
    await db.transaction(async (tx) => {
      await provisionedMembership.lockOrganization(tx, orgId);
      const dept = await this.find(tx, orgId, id);
      const current = await this.load(tx, orgId, dept);
      checkIfMatch(ifMatch, current.etag);
      await departments.remove(tx, orgId, dept.id, clock.now());
      await audit.record(tx, ctx, AuditAction.scimGroupDeleted, { organizationId: orgId, resourceType: "department", resourceId: dept.id, metadata: { name: dept.name } });
    });
  }

  /** The organization's managed accounts among the ids the body names (members are named by id): one statement. */
  private managedIn(db: Executor, orgId: string, body: unknown): Promise<Set<string>> {
    return repo.managedAmong(db, orgId, idsIn(body));
  }

  private async change(ctx: RequestContext, id: string, ifMatch: string | undefined, body: unknown, next: (s: GroupState, managed: Set<string>) => GroupState): Promise<ScimAnswer> {
    const orgId = this.orgOf(ctx);
    const { db, clock, audit } = this.deps;
    await db
      .transaction(async (tx) => {
        await provisionedMembership.lockOrganization(tx, orgId);
        const dept = await this.find(tx, orgId, id);
        const managed = await this.managedIn(tx, orgId, body);
        const current = await this.load(tx, orgId, dept);
        checkIfMatch(ifMatch, current.etag);
        const state = next({ displayName: dept.name, members: new Set(current.members) }, managed);
        const now = clock.now();
        const added = [...state.members].filter((m) => !current.members.has(m));
        const removed = [...current.members].filter((m) => !state.members.has(m));
        if (state.displayName !== dept.name) await departments.rename(tx, orgId, dept.id, state.displayName, now);
        else await departments.touch(tx, orgId, dept.id, now);
        for (const m of added) await departments.addMember(tx, dept.id, m, now);
        for (const m of removed) await departments.removeMember(tx, dept.id, m);
        await audit.record(tx, ctx, AuditAction.scimGroupUpdated, { organizationId: orgId, resourceType: "department", resourceId: dept.id, metadata: { name: state.displayName, previousName: dept.name, added: added.slice(0, 200), removed: removed.slice(0, 200) } });
      })
      .catch(nameTaken);
    return this.get(ctx, id);
  }
}

const MAX_IDS_PER_REQUEST = 5000;

/** Every id-shaped string in a body (bounded): the Users a Group body may name. */
function idsIn(body: unknown): string[] {
  const ids = new Set<string>();
  const walk = (v: unknown, depth: number): void => {
    if (depth > 8) return;
    if (typeof v === "string") {
      if (UUID.test(v)) ids.add(v.toLowerCase());
    } else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (v && typeof v === "object") for (const x of Object.values(v)) walk(x, depth + 1);
  };
  walk(body, 0);
  if (ids.size > MAX_IDS_PER_REQUEST) throw ScimErrors.invalidValue(`At most ${MAX_IDS_PER_REQUEST} Users per request`);
  return [...ids];
}

function checkIfMatch(ifMatch: string | undefined, etag: string): void {
  if (ifMatch && ifMatch.trim() !== "*" && !ifMatch.split(",").map((s) => s.trim()).includes(etag)) throw ScimErrors.preconditionFailed();
}

function nameTaken(e: unknown): never {
  if (isUniqueViolation(e, "departments_org_name_live_uq")) throw ScimErrors.uniqueness("A Group (department) with this displayName already exists");
  throw e;
}

function groupBody(body: unknown): Record<string, unknown> {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw ScimErrors.invalidSyntax("The body must be a JSON object");
  const o = body as Record<string, unknown>;
  if (!Array.isArray(o.schemas) || !o.schemas.some((s) => typeof s === "string" && s.toLowerCase() === SCIM.group.toLowerCase())) throw ScimErrors.invalidSyntax(`schemas must include ${SCIM.group}`);
  return o;
}

function nameOf(value: unknown): string {
  const name = optionalString(value, "displayName");
  if (!name) throw ScimErrors.invalidValue("displayName is required");
  return name;
}

/** Member references: ids of the organization's Users ([{value}] or one {value}); anyone else is refused. */
function memberIds(value: unknown, managed: Set<string>): Set<string> {
  if (value === undefined || value === null) return new Set();
  const list = Array.isArray(value) ? value : [value];
  if (list.length > MAX_MEMBERS_PER_REQUEST) throw ScimErrors.invalidValue(`At most ${MAX_MEMBERS_PER_REQUEST} members per request`);
  const ids = new Set<string>();
  for (const m of list) {
    const v = m && typeof m === "object" ? (m as { value?: unknown }).value : undefined;
    if (typeof v !== "string" || !managed.has(v)) throw ScimErrors.invalidValue(`members: ${JSON.stringify(String(v).slice(0, 60))} is not a User of this organization`);
    ids.add(v);
  }
  return ids;
}

const MEMBER_CATALOG: AttributeCatalog = { paths: ["value", "display"], schemas: [], caseExact: ["value"] };

/** A PatchOp on a Group: displayName, and members added, removed (by value filter or list) or replaced. All or none. */
export function applyGroupPatch(current: GroupState, body: unknown, managed: Set<string>): GroupState {
  const state: GroupState = { displayName: current.displayName, members: new Set(current.members) };
  for (const o of readOperations(body)) {
    if (o.path) {
      applyGroupAt(state, o.op, o.path, o.value, managed);
      continue;
    }
    if (o.op === "remove") throw ScimErrors.noTarget("remove needs a path");
    if (!o.value || typeof o.value !== "object" || Array.isArray(o.value)) throw ScimErrors.invalidValue("An operation without a path needs an object value");
    for (const [k, v] of Object.entries(o.value as Record<string, unknown>)) applyGroupAt(state, o.op, k, v, managed);
  }
  return state;
}

function applyGroupAt(state: GroupState, op: Op, rawPath: string, value: unknown, managed: Set<string>): void {
  const lower = rawPath.toLowerCase().replace(`${SCIM.group.toLowerCase()}:`, "");
  if (lower === "id" || lower === "externalid" || lower === "schemas" || lower === "meta") return;
  if (lower === "displayname") {
    if (op === "remove") throw ScimErrors.mutability("displayName cannot be removed");
    state.displayName = nameOf(value);
    return;
  }
  const filtered = /^members\[(.*)\]$/is.exec(rawPath.trim());
  if (filtered) {
    if (op !== "remove") throw ScimErrors.invalidPath("Only remove takes a members value filter");
    const f = parseFilter(filtered[1]!, MEMBER_CATALOG);
    const hit = [...state.members].filter((m) => matches(f, { value: m }, MEMBER_CATALOG));
    for (const m of hit) state.members.delete(m);
    return;
  }
  if (lower !== "members") throw ScimErrors.invalidPath(`No attribute ${JSON.stringify(rawPath.slice(0, 100))} on a Group`);
  if (op === "remove") {
    if (value === undefined) state.members.clear();
    else for (const m of memberIdsLoose(value)) state.members.delete(m);
    return;
  }
  const ids = memberIds(value, managed);
  if (op === "replace") state.members = ids;
  else for (const m of ids) state.members.add(m);
}

/** Members named for removal: ids that are not members are nothing to remove (no error). */
function memberIdsLoose(value: unknown): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((m) => (m && typeof m === "object" ? (m as { value?: unknown }).value : undefined)).filter((v): v is string => typeof v === "string");
}
