import type { Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";

/**
 * What ends with a person's standing in an organization (leaving, removal, suspension, account
 * deletion) or with the organization itself: their SSH certificates and their network access.
 * Called inside the service's transaction; `networks.apply` runs after it commits. One object,
 * built once in the container from the SSH CA's and the networks' services, for every service that
 * removes people or organizations. Declared here, below all of them, so that none imports those
 * modules to use it.
 */
export interface Offboarding {
  certificates: {
    /** Serialises revocations of these organizations' or this person's certificates (take it first). */
    lockForRevocation(tx: Executor, v: { organizationIds?: string[]; userId?: string }): Promise<void>;
    revokeForOffboarding(tx: Executor, ctx: RequestContext, v: { userId: string; organizationId?: string; reason: string }): Promise<number>;
    revokeAllOfOrganization(tx: Executor, ctx: RequestContext, organizationId: string, reason: string): Promise<number>;
  };
  networks: {
    /** The memberships to deauthorize on the controllers once the transaction commits (`apply`). */
    personLeft(tx: Executor, ctx: RequestContext, v: { userId: string; organizationId?: string; why: "left" | "suspended" | "deleted" }): Promise<string[]>;
    organizationDeleted(tx: Executor, ctx: RequestContext, organizationId: string): Promise<string[]>;
    lockNetworksOf(tx: Executor, organizationIds: string[]): Promise<void>;
    apply(membershipIds: string[]): Promise<void>;
  };
}
