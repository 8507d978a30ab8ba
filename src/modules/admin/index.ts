import { type AdminUsersDeps, AdminUsersService } from "./admin-users.service.js";
import { OperatorsService } from "./operators.service.js";
export { reachUser } from "./admin-reach.js";

/**
 * Acting on other people's accounts, under the one admin-reach rule (the access core's
 * admin-reach.ts, rule 16), and operators: who is a superadmin.
 */
export function createAdminModule(deps: AdminUsersDeps) {
  return { adminUsers: new AdminUsersService(deps), operators: new OperatorsService(deps) };
}
