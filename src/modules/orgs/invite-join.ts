import type { Clock } from "../../infra/clock.js";
import type { Executor } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import type { AppError } from "../../lib/errors.js";
import { actingAs, type RequestContext } from "../../lib/request-context.js";
import { getActiveMembership } from "../access/index.js";
import { AuditAction, type AuditActionName, type AuditService } from "../audit/index.js";
import { userAccounts, type UserRow, toUserView } from "../users/index.js";
import { admitMember, type AdmissionConfig } from "./admission.js";
import { InviteErrors } from "./invites.errors.js";
import { invitesRepository, type InviteRow } from "./invites.repository.js";
import type { InviteMail } from "./invite-mail.js";
import type { AcceptResult } from "./invites.views.js";
import { membershipsRepository } from "./memberships.repository.js";
import { OrgErrors } from "./orgs.errors.js";

/** What joining needs of the invitations service's dependencies. */
export interface JoinDeps {
  clock: Clock;
  logger: Logger;
  mail: InviteMail;
  audit: AuditService;
  config: { limit: AdmissionConfig };
}

/**
 * Joining an organization by an invitation, whichever way it was accepted (the emailed link, a new
 * account made from it, or the invitee's own list), and the audit record every invitation step writes.
 */
export async function joinByInvite(
  deps: JoinDeps,
  tx: Executor,
  ctx: RequestContext,
  invite: InviteRow & { organizationName: string },
  user: UserRow,
  options: { proveEmail: boolean; gone: () => AppError },
): Promise<Omit<AcceptResult, "session">> {
  const { clock, logger, config } = deps;
  const now = clock.now();
  // A membership change like any other, in the same order: the organization first (an owner
  // deleting their account decides under this lock whether the organization goes with it),
  // then the single-use guard (concurrent accepts queue on this row and all but one fail).
  if (!(await membershipsRepository.lockOrganization(tx, invite.organizationId))) throw options.gone();
  if (!(await invitesRepository.markAccepted(tx, invite.id, user.id, now))) throw InviteErrors.alreadyUsed();
  await userAccounts.lock(tx, user.id);
  if (await getActiveMembership(tx, user.id, invite.organizationId)) throw OrgErrors.alreadyMember();
  // Following the emailed link proved the address (before admission, which asks for a proven one).
  const joined = options.proveEmail ? await userAccounts.markEmailVerified(tx, user, "email_link", now) : user;
  await admitMember(tx, user.id, config.limit, logger);
  await membershipsRepository.insert(tx, { organizationId: invite.organizationId, userId: user.id, role: invite.role, invitedBy: invite.invitedBy, now });
  const inviter = await userAccounts.find(tx, invite.invitedBy);
  if (inviter) await deps.mail.sendAccepted(tx, inviter, user, invite);
  await recordInvite(deps.audit, tx, actingAs(ctx, user), AuditAction.orgInviteAccepted, invite, { invited_by: invite.invitedBy });
  return {
    organization: { id: invite.organizationId, name: invite.organizationName },
    role: invite.role,
    user: toUserView(joined),
  };
}

/** Every step of an invitation is audited alike: on its organization, naming the address and the role. */
export function recordInvite(audit: AuditService, tx: Executor, ctx: RequestContext, action: AuditActionName, invite: InviteRow, extra: Record<string, unknown> = {}): Promise<void> {
  const metadata = { email: invite.email, role: invite.role, ...extra };
  return audit.record(tx, ctx, action, { organizationId: invite.organizationId, resourceType: "invite", resourceId: invite.id, metadata });
}
