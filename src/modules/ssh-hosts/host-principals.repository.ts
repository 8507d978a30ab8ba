import { and, asc, eq } from "drizzle-orm";
import { hostPrincipalMaps } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";

const mapColumns = pickColumns(hostPrincipalMaps, ["id", "organizationId", "hostPattern", "login", "principals", "createdBy", "createdAt", "updatedAt"]);
export type HostPrincipalMapRow = Pick<typeof hostPrincipalMaps.$inferSelect, keyof typeof mapColumns>;

/** The organization's per-host principal mappings (AuthorizedPrincipalsFile), always within it. */
export const hostPrincipalsRepository = {
  list: (db: Executor, organizationId: string, limit: number): Promise<HostPrincipalMapRow[]> =>
    db.select(mapColumns).from(hostPrincipalMaps).where(eq(hostPrincipalMaps.organizationId, organizationId)).orderBy(asc(hostPrincipalMaps.hostPattern), asc(hostPrincipalMaps.login)).limit(limit),

  async find(db: Executor, organizationId: string, hostPattern: string, login: string): Promise<HostPrincipalMapRow | undefined> {
    const [row] = await db
      .select(mapColumns)
      .from(hostPrincipalMaps)
      .where(and(eq(hostPrincipalMaps.organizationId, organizationId), eq(hostPrincipalMaps.hostPattern, hostPattern), eq(hostPrincipalMaps.login, login)))
      .for("update");
    return row;
  },

  /** Creates or replaces the mapping of (pattern, login); one statement, so parallel writers end with one row. */
  async upsert(db: Executor, v: { organizationId: string; hostPattern: string; login: string; principals: string[]; by: string; now: Date }): Promise<HostPrincipalMapRow> {
    const [row] = await db
      .insert(hostPrincipalMaps)
      .values({ organizationId: v.organizationId, hostPattern: v.hostPattern, login: v.login, principals: v.principals, createdBy: v.by, createdAt: v.now, updatedAt: v.now })
      .onConflictDoUpdate({ target: [hostPrincipalMaps.organizationId, hostPrincipalMaps.hostPattern, hostPrincipalMaps.login], set: { principals: v.principals, updatedAt: v.now } })
      .returning(mapColumns);
    return row!;
  },

  async remove(db: Executor, organizationId: string, id: string): Promise<HostPrincipalMapRow | undefined> {
    const [row] = await db.delete(hostPrincipalMaps).where(idInOrg(hostPrincipalMaps, organizationId, id)).returning(mapColumns);
    return row;
  },
};
