import type { Ctx } from "../context.js";
import { chooseOrg } from "../org-choice.js";
import type { Result } from "../output.js";
import { localTime, relative } from "../time.js";
import { listOrgs } from "./orgs.js";

interface AccessRequest {
  id: string;
  organization_id: string;
  organization_name: string | null;
  kind: "principal" | "department" | "role";
  principal: string | null;
  department: string | null;
  role: string | null;
  state: string;
  reason: string;
  requested_minutes: number;
  granted_minutes: number | null;
  grant_ends_at: string | null;
  expires_at: string;
  decision_reason: string | null;
  revoked_at: string | null;
  revoke_reason: string | null;
  active: boolean;
}

export interface RequestOptions {
  orgId?: string;
  for: string;
  reason: string;
}

/** The organization to ask in: --org-id, the only one where the person may ask, or a choice. */
async function requestOrg(ctx: Ctx, orgId?: string): Promise<string> {
  if (orgId) return orgId;
  const candidates = (await listOrgs(ctx)).filter((o) => o.role !== "guest");
  if (candidates.length === 1) return candidates[0]!.id;
  return chooseOrg(ctx.io, candidates);
}

function describe(ctx: Ctx, r: AccessRequest): string {
  const c = ctx.io.out;
  if (r.active && r.grant_ends_at) return `${c.green("granted")} until ${localTime(new Date(r.grant_ends_at))} (${relative(new Date(r.grant_ends_at))})`;
  if (r.state === "pending") return `${c.yellow("pending")} approval (lapses ${relative(new Date(r.expires_at))})`;
  if (r.state === "approved") return r.revoked_at ? `ended early${r.revoke_reason ? `: ${r.revoke_reason}` : ""}` : "grant ended";
  return r.decision_reason ? `${r.state}: ${r.decision_reason}` : r.state;
}

/** What a request is for, as a person reads it. */
const what = (r: AccessRequest): string => (r.kind === "role" ? `role ${r.role}` : r.kind === "department" ? `department ${r.department}` : (r.principal ?? ""));

/** `keyward request principal <name> --for 2h --reason …`: ask for a principal for a bounded time. */
export function requestPrincipal(ctx: Ctx, principal: string, opts: RequestOptions): Promise<Result> {
  return ask(ctx, { principal }, opts);
}

/** `keyward request department <name> --for 2h --reason …`: ask for a department's grants (its principals). */
export function requestDepartment(ctx: Ctx, department: string, opts: RequestOptions): Promise<Result> {
  return ask(ctx, { department }, opts);
}

/** `keyward request role admin --for 2h --reason …`: ask for an organization role above yours for a bounded time. */
export function requestRole(ctx: Ctx, role: string, opts: RequestOptions): Promise<Result> {
  return ask(ctx, { role }, opts);
}

async function ask(ctx: Ctx, target: { principal: string } | { department: string } | { role: string }, opts: RequestOptions): Promise<Result> {
  const orgId = await requestOrg(ctx, opts.orgId);
  const { access_request: r } = await ctx.api.post<{ access_request: AccessRequest }>(`/organizations/${encodeURIComponent(orgId)}/access-requests`, {
    ...target,
    duration: opts.for,
    reason: opts.reason,
  });
  const c = ctx.io.out;
  const next =
    r.kind === "role"
      ? r.active
        ? `You hold the ${r.role} role until the grant ends (certificates signed meanwhile end with it).`
        : "The organization's owners were told; `keyward request list` shows the decision."
      : r.active
        ? `\`keyward ssh sign\` now includes ${r.kind === "department" ? "its principals" : "it"}; the certificate ends with the grant.`
        : "An approver of the organization was told; `keyward request list` shows the decision.";
  return {
    json: { access_request: r },
    text: [`${c.green("✓")} Requested ${c.bold(what(r))} for ${r.requested_minutes} minutes: ${describe(ctx, r)}`, `  ${next}`, `  ${c.dim(r.id)}`],
  };
}

/** `keyward request list`: your requests and grants, in every organization. */
export async function requestList(ctx: Ctx): Promise<Result> {
  const { access_requests: list } = await ctx.api.get<{ access_requests: AccessRequest[] }>("/access-requests");
  const c = ctx.io.out;
  return {
    json: { access_requests: list, count: list.length },
    text: list.length ? list.map((r) => `${c.bold(what(r))}  ${r.organization_name ?? r.organization_id}  ${describe(ctx, r)}  ${c.dim(r.id)}`) : ["No access requests"],
  };
}
