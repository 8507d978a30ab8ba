import { UsersService, type UsersDeps } from "./users.service.js";

/** The signed-in user's own account: profile, deletion, own audit log (rule 15). */
export function createUsersModule(deps: UsersDeps) {
  return { users: new UsersService(deps) };
}
