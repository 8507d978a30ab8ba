import type { Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { checkKeyOrgAccess } from "../access/index.js";
import { type Caller, requireManager } from "./offboarding.access.js";
import { type Authorize, type Cut, OffboardingService, type OffboardingDeps } from "./offboarding.service.js";

export { offboardSchema, receiptsQuerySchema, type OffboardInput, type OffboardMode, type ReceiptsQueryInput } from "./offboarding.schemas.js";
export { type Cut, type CutOptions, type OffboardingService, type ReinstateResult } from "./offboarding.service.js";
export { type CutList, type OffboardingReceipt } from "./receipt.js";

/**
 * What provisioning (SCIM) calls, inside its own transaction: `active=false`, `active=true` and
 * DELETE of a person of the organization its API key speaks for. Each runs the same cut as an
 * admin's "Offboard" (one receipt), with the key as the actor: a key with the `scim` scope of this
 * organization (SCIM's own door), or any caller who may manage the organization's members.
 */
export interface OffboardingPort {
  /** Takes offboarding's locks in its order (the organization, then its certificates), before any account row. */
  prepare(tx: Executor, organizationId: string): Promise<void>;
  deactivate(tx: Executor, ctx: RequestContext, organizationId: string, userId: string, reason?: string): Promise<Cut>;
  /** Lifts the suspension; what runs after the commit (nothing today). */
  reactivate(tx: Executor, ctx: RequestContext, organizationId: string, userId: string): Promise<() => Promise<void>>;
  /** Removes a member, or someone suspended here (DELETE after active=false, as Okta and Entra ID send it). */
  remove(tx: Executor, ctx: RequestContext, organizationId: string, userId: string, reason?: string): Promise<Cut>;
  /** Suspended here: not a member, with a suspension no reinstatement lifted. */
  isSuspended(tx: Executor, organizationId: string, userId: string): Promise<boolean>;
}

/** SCIM's key speaks for its organization (404 for any other); anyone else must manage its members. */
const provisioner = (ctx: RequestContext, orgId: string): Authorize => async (tx): Promise<Caller> => {
  if (ctx.actor.kind === "apiKey" && ctx.actor.scopes.has("scim")) {
    if (ctx.actor.organizationId !== orgId) checkKeyOrgAccess(ctx.actor, orgId, "members.manage");
    return { kind: "key" };
  }
  return requireManager(tx, ctx, orgId);
};

/** Offboarding as one action with a receipt (rule 15: one factory, one door). */
export function createOffboardingModule(deps: OffboardingDeps) {
  const offboarding = new OffboardingService(deps);
  const offboardingPort: OffboardingPort = {
    prepare: (tx, org) => offboarding.lock(tx, org),
    deactivate: (tx, ctx, org, user, reason) => offboarding.cutInTransaction(tx, ctx, org, user, "suspend", reason ?? "Deactivated by provisioning", { authorize: provisioner(ctx, org) }),
    reactivate: async (tx, ctx, org, user) => {
      await offboarding.reinstateInTransaction(tx, ctx, org, user, provisioner(ctx, org));
      return async () => {};
    },
    remove: (tx, ctx, org, user, reason) => offboarding.cutInTransaction(tx, ctx, org, user, "remove", reason ?? "Removed by provisioning", { authorize: provisioner(ctx, org) }),
    isSuspended: (tx, org, user) => offboarding.isSuspended(tx, org, user),
  };
  return { offboarding, offboardingPort };
}

export type OffboardingModule = ReturnType<typeof createOffboardingModule>;
