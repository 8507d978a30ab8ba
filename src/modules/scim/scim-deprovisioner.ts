import type { Clock } from "../../infra/clock.js";
import type { Executor } from "../../infra/db.js";
import { AppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { getActiveMembership, getActiveMemberships } from "../access/index.js";
import type { OffboardingPort } from "../offboarding/index.js";
import { provisionedMembership } from "../orgs/index.js";
import { userAccounts } from "../users/index.js";
import { scimUsersRepository } from "./scim-users.repository.js";

/** A managed account of an organization, as SCIM names it. */
export interface ScimTarget {
  organizationId: string;
  userId: string;
}

/** What runs once the transaction has committed (sessions ended, network members deauthorized, the receipt). */
export type AfterCommit = () => Promise<void>;

/**
 * What SCIM's `active=false`, `active=true` and DELETE do to a person, inside the caller's
 * transaction (a PATCH that deactivates and renames is one change: all or none).
 */
export interface ScimDeprovisioner {
  /** Takes the locks the changes below need, in the order every offboarding takes them: before the account's row. */
  prepare(tx: Executor, t: ScimTarget): Promise<void>;
  deactivate(tx: Executor, ctx: RequestContext, t: ScimTarget): Promise<AfterCommit>;
  reactivate(tx: Executor, ctx: RequestContext, t: ScimTarget): Promise<AfterCommit>;
  remove(tx: Executor, ctx: RequestContext, t: ScimTarget): Promise<AfterCommit>;
}

/** The suspension reason SCIM writes (the account's own, when the person is a member nowhere else). */
export const SCIM_SUSPENSION_REASON = "Deactivated by the organization's SCIM provisioning";
const SCIM_REMOVAL_REASON = "Deleted by the organization's SCIM provisioning";

const noop: AfterCommit = async () => {};

/**
 * SCIM deprovisioning is offboarding (issue 36): `active=false` suspends the person in this
 * organization, `active=true` reinstates them, DELETE removes them, each through the offboarding
 * service's cut with the key as the actor and one receipt (`org.member.offboarded`). Everything
 * cut is this organization's: a person who is also a member elsewhere keeps that membership and
 * their sign-in (the account itself is suspended only when they are a member nowhere else).
 *
 * What SCIM adds: DELETE also forgets what the client said about the person and deletes the
 * account when it belongs to no organization any more (the organization provisioned it; a member
 * elsewhere keeps it, now its holder's alone).
 */
export function offboardingDeprovisioner(deps: { clock: Clock; offboarding: OffboardingPort }): ScimDeprovisioner {
  const { clock, offboarding } = deps;
  return {
    prepare: (tx, { organizationId }) => offboarding.prepare(tx, organizationId),

    async deactivate(tx, ctx, { organizationId, userId }) {
      return (await offboarding.deactivate(tx, ctx, organizationId, userId, SCIM_SUSPENSION_REASON)).afterCommit;
    },

    async reactivate(tx, ctx, { organizationId, userId }) {
      if (await offboarding.isSuspended(tx, organizationId, userId)) return offboarding.reactivate(tx, ctx, organizationId, userId);
      // Still a member, and `active` read false for the account's own suspension (an admin's): lifted.
      if (await getActiveMembership(tx, userId, organizationId)) await userAccounts.unsuspend(tx, userId, clock.now());
      return noop;
    },

    async remove(tx, ctx, { organizationId, userId }) {
      let after = noop;
      try {
        after = (await offboarding.remove(tx, ctx, organizationId, userId, SCIM_REMOVAL_REASON)).afterCommit;
      } catch (e) {
        // Managed but neither a member nor suspended here: only the management is left to end.
        if (!(e instanceof AppError) || e.code !== "MEMBER_NOT_FOUND") throw e;
        await provisionedMembership.end(tx, organizationId, userId, clock.now());
      }
      const suspension = await scimUsersRepository.suspensionReason(tx, userId);
      await scimUsersRepository.remove(tx, userId);
      const now = clock.now();
      if ((await getActiveMemberships(tx, userId)).length === 0) await userAccounts.softDelete(tx, userId, now);
      // A member elsewhere keeps the account, now its holder's alone; a suspension of ours ends with our management.
      else if (suspension === SCIM_SUSPENSION_REASON) await userAccounts.unsuspend(tx, userId, now);
      return after;
    },
  };
}
