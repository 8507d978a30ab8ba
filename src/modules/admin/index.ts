import { type AdminUsersDeps, AdminUsersService } from "./admin-users.service.js";
export { reachUser } from "./admin-reach.js";

/** Acting on other people's accounts, under the one admin-reach rule (admin-reach.ts, rule 16). */
export function createAdminModule(deps: AdminUsersDeps) {
  return { adminUsers: new AdminUsersService(deps) };
}
