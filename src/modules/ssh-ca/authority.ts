import type { Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { OrgErrors } from "../orgs/index.js";
import { parseId } from "../../lib/validation.js";
import { caRepository, type CaKeyRow, type CaRow } from "./ca.repository.js";
import { chooseOrganization, soleCandidate } from "./choose-organization.js";
import type { SigningOrganization } from "./signing-context.repository.js";
import { CaErrors } from "./ssh-ca.errors.js";
import { type ActiveMembership, can, checkOrgAccess, getActiveMemberships, requireUser } from "../access/index.js";

/** Who signs: the organization (and the caller's membership in it), its CA and the CA's active key. */
export interface Authority {
  orgId: string;
  orgName: string;
  orgSlug: string;
  membership: ActiveMembership;
  ca: CaRow;
  caKey: CaKeyRow;
}

/** What an error names of the organization (its id, name and slug). */
export const orgOf = (m: ActiveMembership) => ({ id: m.organizationId, name: m.organizationName, slug: m.organizationSlug });

const authorityOf = (membership: ActiveMembership, ca: CaRow, caKey: CaKeyRow): Authority => ({
  orgId: membership.organizationId,
  orgName: membership.organizationName,
  orgSlug: membership.organizationSlug,
  membership,
  ca,
  caKey,
});

/**
 * User certificates: the organization and its active user CA, chosen from what the signing
 * context read (see signing-context.repository.ts) with chooseOrganization's rules. A named org_id
 * must be one the caller may sign in; without it, exactly one organization the caller may sign in
 * that has a live user CA; either way the tenancy guard's checks (membership, MFA deadline,
 * delegation, role) apply, as requireOrgAccess applies them.
 */
export function userAuthority(ctx: RequestContext, orgId: string | undefined, organizations: SigningOrganization[]): { authority: Authority; organization: SigningOrganization } {
  const actor = requireUser(ctx);
  const id = orgId ? parseId(orgId, OrgErrors.notFound) : undefined;
  const chosen = id
    ? organizations.find((o) => o.membership.organizationId === id)
    : soleCandidate(
        organizations.filter((o) => can(o.membership.role, "ssh.sign") && o.ca),
        (o) => o.membership,
        () => CaErrors.noneConfigured("user"),
      );
  // Refuses a missing membership (so `chosen` is known past this line), an MFA deadline, a delegation, a role.
  checkOrgAccess(actor, id ?? chosen!.membership.organizationId, chosen?.membership, chosen?.pastMfaDeadline ?? false, "ssh.sign");
  const { membership, ca, caKey } = chosen!;
  if (!ca || !caKey) throw CaErrors.notConfiguredFor("user", orgOf(membership));
  return { authority: authorityOf(membership, ca, caKey), organization: chosen! };
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
  const membership = await chooseOrganization(db, ctx, { orgId, capability: "ca.manage", withCa: "host", none: () => CaErrors.noneConfigured("host") });
  const ca = caId ? await caRepository.find(db, membership.organizationId, caId) : await caRepository.findByType(db, membership.organizationId, "host");
  if (!ca) throw caId ? CaErrors.notFound() : CaErrors.notConfiguredFor("host", orgOf(membership));
  if (ca.caType !== "host") throw CaErrors.wrongCaType();
  const caKey = await caRepository.activeKey(db, ca.id);
  if (!caKey) throw CaErrors.notConfiguredFor("host", orgOf(membership));
  return authorityOf(membership, ca, caKey);
}
