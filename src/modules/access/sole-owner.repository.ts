import { and, inArray, ne } from "drizzle-orm";
import { orgMemberships } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import { getActiveMemberships } from "./memberships.repository.js";
import type { OrgRole } from "./permissions.js";

/** Live memberships of the given organizations held by anyone but `userId` (stored roles: owners are never lent). */
const othersIn = (db: Executor, organizationIds: string[], userId: string): Promise<Array<{ organizationId: string; role: OrgRole }>> =>
  organizationIds.length === 0
    ? Promise.resolve([])
    : db
        .select({ organizationId: orgMemberships.organizationId, role: orgMemberships.role })
        .from(orgMemberships)
        .where(and(inArray(orgMemberships.organizationId, organizationIds), ne(orgMemberships.userId, userId), live(orgMemberships)));

/**
 * Organizations the user is the only owner of, split by whether anyone else is in them: those
 * with others block deleting the account; those with nobody else go with it.
 */
export async function soleOwnedOrganizations(db: Executor, userId: string) {
  // Owners by the stored role: owner is never lent (a role grant is admin at most), and a temporary role must not count here.
  const owned = (await getActiveMemberships(db, userId)).filter((m) => m.storedRole === "owner");
  if (owned.length === 0) return { withOthers: [], alone: [] };
  const others = await othersIn(db, owned.map((o) => o.organizationId), userId);
  const withOthers: Array<{ id: string; name: string }> = [];
  const alone: Array<{ id: string; name: string }> = [];
  for (const o of owned) {
    const rest = others.filter((m) => m.organizationId === o.organizationId);
    if (rest.length === 0) alone.push({ id: o.organizationId, name: o.organizationName });
    else if (!rest.some((m) => m.role === "owner")) withOthers.push({ id: o.organizationId, name: o.organizationName });
  }
  return { withOthers, alone };
}
