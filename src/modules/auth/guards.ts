import { CommonErrors } from "../../lib/errors.js";
import type { RequestContext, UserActor } from "../../lib/request-context.js";

/** The caller must be a signed-in user. */
export function requireUser(ctx: RequestContext): UserActor {
  if (ctx.actor.kind !== "user") throw CommonErrors.authRequired();
  return ctx.actor;
}

/** The caller must be a superadmin (an operator of this Keyward installation). */
export function requireSuperadmin(ctx: RequestContext): UserActor {
  const actor = requireUser(ctx);
  if (!actor.isSuperadmin) throw CommonErrors.forbidden("Superadmin access required");
  return actor;
}
