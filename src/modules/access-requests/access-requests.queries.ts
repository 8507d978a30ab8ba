import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import type { AuditService } from "../audit/index.js";
import { requireOrgAccess, requireStoredRole, requireUser } from "../access/index.js";
import { accessRequestsRepository as repo } from "./access-requests.repository.js";
import { lapsePending } from "./access-requests.decisions.js";
import { listRequestsSchema, type ListRequestsInput } from "./access-requests.schemas.js";
import { toRequestView, type AccessRequestView } from "./access-requests.views.js";

// The request lists: the caller's own, an organization's, and those waiting for the caller's
// decision. Those an approver reads first let lapsed requests expire, so none is shown as pending.

/** What these need of the service's dependencies (AccessRequestsDeps). */
interface Deps {
  db: Db;
  clock: Clock;
  audit: AuditService;
}

/** The caller's own requests and grants, in every organization they belong to. */
export async function listMine(deps: Pick<Deps, "db" | "clock">, ctx: RequestContext): Promise<AccessRequestView[]> {
  const actor = requireUser(ctx);
  const now = deps.clock.now();
  return (await repo.ofUser(deps.db, actor.userId)).map((r) => toRequestView(r.request, now, r));
}

/** An organization's requests (admins and owners): everyone's, optionally in one state. */
export async function listOrganization(deps: Deps, ctx: RequestContext, orgId: string, query: ListRequestsInput = {}): Promise<AccessRequestView[]> {
  const access = await requireOrgAccess(deps.db, ctx, orgId, "principals.manage");
  const q = parseInput(listRequestsSchema, query ?? {});
  const now = deps.clock.now();
  await lapsePending(deps, deps.db, now, { orgIds: [access.orgId] });
  return (await repo.ofOrganizations(deps.db, [access.orgId], q.state)).map((r) => toRequestView(r.request, now, r));
}

/**
 * Requests waiting for the caller's decision: pending ones in the organizations where they
 * approve (one, or all of them), never their own.
 */
export async function listPending(deps: Deps, ctx: RequestContext, orgId?: string | null): Promise<AccessRequestView[]> {
  const actor = requireUser(ctx);
  // Where the caller decides, by the role kept on the membership (a temporary admin decides nothing).
  let approves: Array<{ id: string; role: string }>;
  if (orgId) {
    const access = await requireOrgAccess(deps.db, ctx, orgId, "principals.manage");
    requireStoredRole(access, "principals.manage", "decide access requests");
    approves = [{ id: access.orgId, role: access.membership.storedRole }];
  } else approves = await repo.approverOrgIds(deps.db, actor.userId);
  const orgIds = approves.map((a) => a.id);
  const owns = new Set(approves.filter((a) => a.role === "owner").map((a) => a.id));
  const now = deps.clock.now();
  await lapsePending(deps, deps.db, now, { orgIds });
  return (await repo.ofOrganizations(deps.db, orgIds, "pending"))
    .filter((r) => r.request.userId !== actor.userId && (r.request.kind !== "role" || owns.has(r.request.organizationId)))
    .map((r) => toRequestView(r.request, now, r));
}
