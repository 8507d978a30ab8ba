import { CommonErrors } from "../../lib/errors.js";
import type { ApiScope } from "../../lib/api-scopes.js";
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

/**
 * A delegated caller (an OIDC access token) may use an operation only when the operation declares
 * a scope and the token carries it. Sessions pass: they are the user's full power.
 */
export function requireScope(ctx: RequestContext, scope: ApiScope | undefined): void {
  const delegation = ctx.actor.kind === "user" ? ctx.actor.delegation : undefined;
  if (delegation && (!scope || !delegation.scopes.has(scope))) throw CommonErrors.insufficientScope(scope);
}

/**
 * The caller must be the user in person (a session), not a token acting for them: minting
 * sessions, passkeys, API keys or credentials is never delegated (defence behind the route table).
 */
export function requirePersonalUser(ctx: RequestContext): UserActor {
  const actor = requireUser(ctx);
  if (actor.delegation) throw CommonErrors.insufficientScope(undefined);
  return actor;
}
