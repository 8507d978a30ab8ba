import type { Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { requireUser } from "../auth/guards.js";
import { getActiveMemberships, type ActiveMembership } from "../orgs/memberships.repository.js";
import { caRepository, type CaKeyRow, type CaRow } from "./ca.repository.js";
import { chooseOrganization } from "./choose-organization.js";
import { CaErrors } from "./ssh-ca.errors.js";

/** Who signs: the organization (and the caller's membership in it), its CA and the CA's active key. */
export interface Authority {
  orgId: string;
  orgName: string;
  orgSlug: string;
  membership: ActiveMembership;
  ca: CaRow;
  caKey: CaKeyRow;
}

const authorityOf = (membership: ActiveMembership, ca: CaRow, caKey: CaKeyRow): Authority => ({
  orgId: membership.organizationId,
  orgName: membership.organizationName,
  orgSlug: membership.organizationSlug,
  membership,
  ca,
  caKey,
});

/** User certificates: the organization (chooseOrganization among those the caller may sign in) and its active user CA. */
export async function userAuthority(db: Executor, ctx: RequestContext, orgId: string | undefined): Promise<Authority> {
  const membership = await chooseOrganization(db, ctx, { orgId, capability: "ssh.sign", withCa: "user", none: CaErrors.notConfigured });
  const ca = await caRepository.findByType(db, membership.organizationId, "user");
  const caKey = ca ? await caRepository.activeKey(db, ca.id) : undefined;
  if (!ca || !caKey) throw CaErrors.notConfiguredFor("user");
  return authorityOf(membership, ca, caKey);
}

/**
 * Host certificates: a named CA finds its organization among the caller's own; otherwise
 * chooseOrganization among the organizations the caller administers that have a host CA.
 */
export async function hostAuthority(db: Executor, ctx: RequestContext, orgId: string | undefined, caId: string | undefined): Promise<Authority> {
  const actor = requireUser(ctx);
  if (!orgId && caId) {
    // Find the organization through the CA, among the caller's own organizations only.
    for (const m of await getActiveMemberships(db, actor.userId)) {
      if (await caRepository.find(db, m.organizationId, caId)) {
        orgId = m.organizationId;
        break;
      }
    }
    if (!orgId) throw CaErrors.notFound();
  }
  const membership = await chooseOrganization(db, ctx, { orgId, capability: "ca.manage", withCa: "host", none: () => CaErrors.notConfiguredFor("host") });
  const ca = caId ? await caRepository.find(db, membership.organizationId, caId) : await caRepository.findByType(db, membership.organizationId, "host");
  if (!ca) throw caId ? CaErrors.notFound() : CaErrors.notConfiguredFor("host");
  if (ca.caType !== "host") throw CaErrors.wrongCaType();
  const caKey = await caRepository.activeKey(db, ca.id);
  if (!caKey) throw CaErrors.notConfiguredFor("host");
  return authorityOf(membership, ca, caKey);
}
