import type { AuthChecker } from "type-graphql";
import type { GqlContext } from "./context.js";
import { requireSuperadmin, requireUser } from "../modules/access/index.js";

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
