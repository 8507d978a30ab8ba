import type { Clock } from "../../infra/clock.js";
import type { Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { getActiveMemberships, soleOwnedOrganizations, type Offboarding } from "../access/index.js";
import type { SessionsService } from "../auth/index.js";
import { provisionedMembership } from "../orgs/index.js";
import { userAccounts } from "../users/index.js";
import { scimUsersRepository } from "./scim-users.repository.js";
import { ScimError } from "./scim.errors.js";

/** A managed account of an organization, as SCIM names it. */
export interface ScimTarget {
  organizationId: string;
  userId: string;
}

/** What runs once the transaction has committed (sessions ended, network members deauthorized). */
export type AfterCommit = () => Promise<void>;

/**
 * What SCIM's `active=false`, `active=true` and DELETE do to a person, inside the caller's
 * transaction (a PATCH that deactivates and renames is one change). One port, so that the full
 * offboarding service (sessions, tokens, SSH certificates, network devices, a receipt) can take its
 * place in the container without touching SCIM.
 */
export interface ScimDeprovisioner {
  /** Takes the locks the changes below need, in the order every offboarding takes them: before the account's row. */
  prepare(tx: Executor, t: ScimTarget): Promise<void>;
  deactivate(tx: Executor, ctx: RequestContext, t: ScimTarget): Promise<AfterCommit>;
  reactivate(tx: Executor, ctx: RequestContext, t: ScimTarget): Promise<AfterCommit>;
  remove(tx: Executor, ctx: RequestContext, t: ScimTarget): Promise<AfterCommit>;
}

export interface BasicDeprovisionerDeps extends Offboarding {
  clock: Clock;
  sessions: Pick<SessionsService, "revokeAll">;
}

/** The suspension reason SCIM writes: a later DELETE knows the suspension was its own. */
export const SCIM_SUSPENSION_REASON = "Deactivated by the organization's SCIM provisioning";

/**
 * Deprovisioning with the operations that exist today: the account (which this organization
 * manages) suspended and reactivated as an admin's suspension does; removal ends the membership
 * and the management, and deletes the account unless it is a member elsewhere. SSH certificates and
 * network memberships are revoked for this organization only: nothing outside it is removed.
 */
export function basicScimDeprovisioner(deps: BasicDeprovisionerDeps): ScimDeprovisioner {
  const { clock, certificates, networks, sessions } = deps;
  const after = (userId: string, offboarded: string[], endSessions: boolean): AfterCommit => async () => {
    if (endSessions) await sessions.revokeAll(userId);
    await networks.apply(offboarded);
  };
  const prepare = async (tx: Executor, { organizationId, userId }: ScimTarget): Promise<void> => {
    await certificates.lockForRevocation(tx, { organizationIds: [organizationId], userId });
    await provisionedMembership.lockOrganization(tx, organizationId);
  };
  return {
    prepare,

    async deactivate(tx, ctx, { organizationId, userId }) {
      await prepare(tx, { organizationId, userId });
      await userAccounts.suspend(tx, userId, SCIM_SUSPENSION_REASON, clock.now());
      await certificates.revokeForOffboarding(tx, ctx, { userId, organizationId, reason: "Deactivated by SCIM provisioning" });
      const offboarded = await networks.personLeft(tx, ctx, { userId, organizationId, why: "suspended" });
      return after(userId, offboarded, true);
    },

    async reactivate(tx, _ctx, { userId }) {
      await userAccounts.unsuspend(tx, userId, clock.now());
      return async () => {};
    },

    async remove(tx, ctx, { organizationId, userId }) {
      await prepare(tx, { organizationId, userId });
      const sole = await soleOwnedOrganizations(tx, userId);
      if ([...sole.withOthers, ...sole.alone].some((o) => o.id === organizationId)) throw new ScimError(409, "This person is the organization's only owner: transfer ownership in Keyward first");
      const elsewhere = (await getActiveMemberships(tx, userId)).filter((m) => m.organizationId !== organizationId);
      const suspension = await scimUsersRepository.suspensionReason(tx, userId);
      const now = clock.now();
      await provisionedMembership.end(tx, organizationId, userId, now);
      await certificates.revokeForOffboarding(tx, ctx, { userId, organizationId, reason: "Deleted by SCIM provisioning" });
      const offboarded = await networks.personLeft(tx, ctx, { userId, organizationId, why: elsewhere.length ? "left" : "deleted" });
      await scimUsersRepository.remove(tx, userId);
      if (elsewhere.length === 0) {
        await userAccounts.softDelete(tx, userId, now);
        return after(userId, offboarded, true);
      }
      // A member elsewhere keeps the account, now its holder's alone; a suspension of ours ends with our management.
      if (suspension === SCIM_SUSPENSION_REASON) await userAccounts.unsuspend(tx, userId, now);
      return after(userId, offboarded, false);
    },
  };
}
