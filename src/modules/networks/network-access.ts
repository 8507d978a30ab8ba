import type { Executor } from "../../infra/db.js";
import { CommonErrors } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId } from "../../lib/validation.js";
import { NetworkErrors } from "./networks.errors.js";
import { deviceMembershipsRepository } from "./device-memberships.repository.js";
import { portalNetworksRepository } from "./portal-networks.repository.js";
import type { PortalNetworkRow } from "./networks.repository.js";
import { can, getActiveMembership, type OrgAccess, requireOrgAccess, roleRank } from "../access/index.js";

/** A member's view of one of the organization's live networks (another organization's is "not found"). */
export async function requireNetwork(db: Executor, ctx: RequestContext, orgId: string, networkId: unknown): Promise<OrgAccess & { network: PortalNetworkRow }> {
  const access = await requireOrgAccess(db, ctx, orgId, "networks.use");
  const network = await portalNetworksRepository.network(db, access.orgId, parseId(networkId, NetworkErrors.networkNotFound));
  if (!network) throw NetworkErrors.networkNotFound();
  return { ...access, network };
}

/**
 * Network managers: the organization's owners and admins, and the people it names as managers of
 * this network (while they are members). Everyone else is refused.
 */
export async function isNetworkManager(db: Executor, access: OrgAccess, networkId: string): Promise<boolean> {
  return can(access.membership.role, "networks.manage") || (await portalNetworksRepository.isNamedManager(db, networkId, access.actor.userId));
}

export async function requireNetworkManager(db: Executor, ctx: RequestContext, orgId: string, networkId: unknown): Promise<OrgAccess & { network: PortalNetworkRow }> {
  const found = await requireNetwork(db, ctx, orgId, networkId);
  if (!(await isNetworkManager(db, found, found.network.id))) throw NetworkErrors.notManager();
  return found;
}

/** Kill switches: owners and superadmins act on anyone; other managers only on people below their own role. */
export async function requireOutranks(db: Executor, access: OrgAccess, targetUserId: string): Promise<void> {
  if (access.actor.isSuperadmin || access.membership.role === "owner") return;
  const target = await getActiveMembership(db, targetUserId, access.orgId);
  if (target && roleRank(access.membership.role) <= roleRank(target.role)) {
    throw CommonErrors.forbidden("You can only use the kill switch on people below your role");
  }
}

/** The activation's length: the request (or the network's default), within the network's maximum. */
export function activationMinutes(network: PortalNetworkRow, requested: number | undefined, strict: boolean): number {
  const minutes = requested ?? network.defaultActivationLifetimeMinutes;
  const max = network.maxActivationLifetimeMinutes;
  if (max != null && minutes > max) {
    if (strict) throw NetworkErrors.lifetimeTooLong(max);
    return max;
  }
  return minutes;
}

/** The networks a kill switch covers: the organization's, the named ones (of this organization), or all of the person's. */
export async function killSwitchNetworks(tx: Executor, orgId: string, scope: "organization" | "global" | "selected_networks", named: string[], userId: string): Promise<string[]> {
  if (scope === "global") return deviceMembershipsRepository.networkIdsOfPerson(tx, userId);
  const own = (await portalNetworksRepository.listNetworks(tx, orgId, true)).map((n) => n.id);
  if (scope === "organization") return own;
  const unknown = named.filter((id) => !own.includes(id));
  if (unknown.length > 0) throw NetworkErrors.networkNotFound();
  return [...new Set(named)];
}
