import type { Executor } from "../../infra/db.js";
import { normalizeEmail } from "../../lib/strings.js";
import { userAccounts } from "../users/index.js";
import { DirectoryErrors } from "./directory.errors.js";
import { getActiveMembership } from "../access/index.js";

/** The user behind an email, provided they are an active member of the organization. */
export async function findOrgMemberByEmail(db: Executor, orgId: string, email: string) {
  const user = await userAccounts.findByEmail(db, normalizeEmail(email));
  if (!user || !(await getActiveMembership(db, user.id, orgId))) throw DirectoryErrors.notAMember();
  return user;
}
