import type { Executor } from "../../infra/db.js";
import type { AppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { caRepository } from "./ca.repository.js";
import { CaErrors } from "./ssh-ca.errors.js";
import { type ActiveMembership, can, type Capability, getActiveMemberships, requireOrgAccess, requireUser } from "../access/index.js";

export interface OrganizationChoice {
  /** The org_id the caller named, if any. */
  orgId: string | undefined;
  /** What the caller must be allowed to do there; without org_id, only such organizations are candidates. */
  capability: Capability;
  /** Without org_id, only organizations with a live CA of this type are candidates. */
  withCa?: "user" | "host";
  /** The error when no organization is a candidate. */
  none: () => AppError;
}

/**
 * The one choice of organization for an SSH request (signing, host signing, the effective policy,
 * the CA public key). Guard order: a named org_id must be one the caller may act in with the
 * capability; without it, exactly one candidate is used; several are ambiguous and listed
 * (MULTIPLE_ORGS_AMBIGUOUS, so the CLI can offer them); none is `choice.none()`.
 */
export async function chooseOrganization(db: Executor, ctx: RequestContext, choice: OrganizationChoice): Promise<ActiveMembership> {
  if (choice.orgId) return (await requireOrgAccess(db, ctx, choice.orgId, choice.capability)).membership;
  const actor = requireUser(ctx);
  const allowed = (await getActiveMemberships(db, actor.userId)).filter((m) => can(m.role, choice.capability));
  const withCa = choice.withCa ? new Set(await caRepository.orgsWithCa(db, allowed.map((m) => m.organizationId), choice.withCa)) : null;
  const candidate = soleCandidate(withCa ? allowed.filter((m) => withCa.has(m.organizationId)) : allowed, (m) => m, choice.none);
  // An organization found implicitly passes the same checks as a named one: leaving out org_id
  // must not skip an organization's MFA deadline or a delegated token's limits.
  return (await requireOrgAccess(db, ctx, candidate.organizationId, choice.capability)).membership;
}

/**
 * Without org_id: the one candidate (in organization-name order); several are ambiguous and listed
 * (MULTIPLE_ORGS_AMBIGUOUS, so the CLI can offer them); none is `none()`.
 */
export function soleCandidate<T>(candidates: T[], membershipOf: (c: T) => ActiveMembership, none: () => AppError): T {
  if (candidates.length === 0) throw none();
  if (candidates.length > 1) throw CaErrors.ambiguous(candidates.map(membershipOf).map((m) => ({ id: m.organizationId, name: m.organizationName })));
  return candidates[0]!;
}
