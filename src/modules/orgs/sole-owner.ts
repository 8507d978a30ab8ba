import type { Executor } from "../../infra/db.js";
import { getActiveMemberships, membershipsRepository } from "./memberships.repository.js";

/**
 * Organizations the user is the only owner of, split by whether anyone else is in them: those
 * with others block deleting the account; those with nobody else go with it.
 */
export async function soleOwnedOrganizations(db: Executor, userId: string) {
  const owned = (await getActiveMemberships(db, userId)).filter((m) => m.role === "owner");
  if (owned.length === 0) return { withOthers: [], alone: [] };
  const others = await membershipsRepository.othersIn(db, owned.map((o) => o.organizationId), userId);
  const withOthers: Array<{ id: string; name: string }> = [];
  const alone: Array<{ id: string; name: string }> = [];
  for (const o of owned) {
    const rest = others.filter((m) => m.organizationId === o.organizationId);
    if (rest.length === 0) alone.push({ id: o.organizationId, name: o.organizationName });
    else if (!rest.some((m) => m.role === "owner")) withOthers.push({ id: o.organizationId, name: o.organizationName });
  }
  return { withOthers, alone };
}

