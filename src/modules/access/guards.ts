import { CommonErrors } from "../../lib/errors.js";
import type { ApiKeyScope } from "../../lib/api-key-scopes.js";
import type { ApiScope } from "../../lib/api-scopes.js";
import type { ApiKeyActor, RequestContext, UserActor } from "../../lib/request-context.js";

/** The caller must be a signed-in user. */
export function requireUser(ctx: RequestContext): UserActor {
  // An organization API key is a caller, but never a person: refused, not asked to sign in.
  if (ctx.actor.kind === "apiKey") throw CommonErrors.apiKeyRefused();
  if (ctx.actor.kind !== "user") throw CommonErrors.authRequired();
  return ctx.actor;
}

/**
 * An organization API key may use a route only when the route declares keys with a scope and the
 * key holds it (ARCHITECTURE rule 17). Other callers pass: their own rules apply.
 */
export function requireApiKeyScope(ctx: RequestContext, scope: ApiKeyScope | undefined): void {
  if (ctx.actor.kind !== "apiKey") return;
  // Undeclared: keys reach nothing a route did not open to them.
  if (!scope) throw CommonErrors.apiKeyRefused();
  if (!ctx.actor.scopes.has(scope)) throw CommonErrors.apiKeyRefused(scope);
}

/** The caller must be an organization API key holding `scope` (operations of keys alone, e.g. the sudo check). */
export function requireApiKey(ctx: RequestContext, scope: ApiKeyScope): ApiKeyActor {
  if (ctx.actor.kind !== "apiKey") throw CommonErrors.authRequired();
  if (!ctx.actor.scopes.has(scope)) throw CommonErrors.apiKeyRefused(scope);
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
