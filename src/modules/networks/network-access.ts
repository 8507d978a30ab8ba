import type { Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId } from "../../lib/validation.js";
import { requireOrgAccess, type OrgAccess } from "../orgs/org-access.js";
import { can } from "../orgs/permissions.js";
import { NetworkErrors } from "./networks.errors.js";
import { portalNetworksRepository } from "./portal-networks.repository.js";
import type { PortalNetworkRow } from "./networks.repository.js";

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
