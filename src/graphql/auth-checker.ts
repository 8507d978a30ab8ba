import type { AuthChecker } from "type-graphql";
import { requireSuperadmin, requireUser } from "../modules/auth/guards.js";
import type { GqlContext } from "./context.js";

export const SUPERADMIN = "SUPERADMIN";

/**
 * `@Authorized()` = signed in, `@Authorized(SUPERADMIN)` = superadmin. It throws the services' own
 * errors, so GraphQL and REST answer the same code (AUTH_REQUIRED / AUTHORIZATION_ERROR).
 */
export const authChecker: AuthChecker<GqlContext> = ({ context }, roles) => {
  if (roles.includes(SUPERADMIN)) requireSuperadmin(context.ctx);
  else requireUser(context.ctx);
  return true;
};
