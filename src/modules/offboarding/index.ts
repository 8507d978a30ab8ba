import { AppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { OffboardingService, type OffboardingDeps } from "./offboarding.service.js";
import type { OffboardingReceipt } from "./receipt.js";

export { offboardSchema, receiptsQuerySchema, type OffboardInput, type OffboardMode, type ReceiptsQueryInput } from "./offboarding.schemas.js";
export { type OffboardingService, type ReinstateResult } from "./offboarding.service.js";
export { type CutList, type OffboardingReceipt } from "./receipt.js";

/**
 * What provisioning (SCIM) calls: `active=false`, `active=true` and DELETE of a person of the
 * organization its API key speaks for. Each runs the same service as an admin's "Offboard", with
 * the key as the actor (its scopes must grant managing members).
 */
export interface OffboardingPort {
  deactivate(ctx: RequestContext, organizationId: string, userId: string, reason?: string): Promise<OffboardingReceipt>;
  reactivate(ctx: RequestContext, organizationId: string, userId: string): Promise<void>;
  remove(ctx: RequestContext, organizationId: string, userId: string, reason?: string): Promise<OffboardingReceipt>;
}

/** Offboarding as one action with a receipt (rule 15: one factory, one door). */
export function createOffboardingModule(deps: OffboardingDeps) {
  const offboarding = new OffboardingService(deps);
  const offboardingPort: OffboardingPort = {
    deactivate: (ctx, org, user, reason) => offboarding.offboard(ctx, org, user, { mode: "suspend", reason: reason ?? "Deactivated by provisioning" }),
    reactivate: async (ctx, org, user) => void (await offboarding.reinstate(ctx, org, user)),
    remove: async (ctx, org, user, reason) => {
      const input = { mode: "remove" as const, reason: reason ?? "Removed by provisioning" };
      try {
        return await offboarding.offboard(ctx, org, user, input);
      } catch (e) {
        // DELETE after active=false (Okta, Entra ID): the suspended person is reinstated, then
        // removed, so the removal's receipt and its cuts are those of any removal. Not one step:
        // for that moment they are a member again, with no session, certificate or device.
        if (!(e instanceof AppError) || e.code !== "MEMBER_NOT_FOUND") throw e;
        await offboarding.reinstate(ctx, org, user).catch((r: unknown) => {
          // Not suspended either: not a member (the first answer stands).
          throw r instanceof AppError && r.code === "NOT_SUSPENDED" ? e : r;
        });
        return offboarding.offboard(ctx, org, user, input);
      }
    },
  };
  return { offboarding, offboardingPort };
}

export type OffboardingModule = ReturnType<typeof createOffboardingModule>;
