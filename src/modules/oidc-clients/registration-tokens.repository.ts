import { and, desc, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import { oidcRegistrationTokens, organizations } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { live } from "../../infra/soft-delete.js";

/** Everything about an initial access token but its hash. */
const columns = pickColumns(oidcRegistrationTokens, ["id", "organizationId", "name", "prefix", "maxUses", "uses", "expiresAt", "lastUsedAt", "revokedAt", "createdBy", "createdAt", "updatedAt"]);

export type RegistrationTokenRow = Pick<typeof oidcRegistrationTokens.$inferSelect, keyof typeof columns>;

/** A token that may register one more client now: not revoked, not expired, uses left, its organization live. */
const usable = (now: Date) =>
  and(
    isNull(oidcRegistrationTokens.revokedAt),
    gt(oidcRegistrationTokens.expiresAt, now),
    or(isNull(oidcRegistrationTokens.maxUses), lt(oidcRegistrationTokens.uses, oidcRegistrationTokens.maxUses)),
    sql`exists (select 1 from ${organizations} where ${organizations.id} = ${oidcRegistrationTokens.organizationId} and ${live(organizations)})`,
  );

/** Initial access tokens for Dynamic Client Registration, scoped to their organization. The hash is matched, never read. */
export const registrationTokensRepository = {
  listForOrganization: (db: Executor, organizationId: string): Promise<RegistrationTokenRow[]> =>
    db.select(columns).from(oidcRegistrationTokens).where(eq(oidcRegistrationTokens.organizationId, organizationId)).orderBy(desc(oidcRegistrationTokens.createdAt)),

  async find(db: Executor, organizationId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<RegistrationTokenRow | undefined> {
    const query = db.select(columns).from(oidcRegistrationTokens).where(idInOrg(oidcRegistrationTokens, organizationId, id));
    const [row] = opts.forUpdate ? await query.for("update") : await query;
    return row;
  },

  async insert(db: Executor, v: { organizationId: string; name: string; prefix: string; tokenHash: string; maxUses: number | null; expiresAt: Date; createdBy: string; now: Date }): Promise<RegistrationTokenRow> {
    const [row] = await db
      .insert(oidcRegistrationTokens)
      .values({ organizationId: v.organizationId, name: v.name, prefix: v.prefix, tokenHash: v.tokenHash, maxUses: v.maxUses, expiresAt: v.expiresAt, createdBy: v.createdBy, createdAt: v.now, updatedAt: v.now })
      .returning(columns);
    return row!;
  },

  async revoke(db: Executor, id: string, now: Date): Promise<RegistrationTokenRow> {
    const [row] = await db.update(oidcRegistrationTokens).set({ revokedAt: now, updatedAt: now }).where(eq(oidcRegistrationTokens.id, id)).returning(columns);
    return row!;
  },

  /** The usable token with this hash, if any (the registration endpoint's first check). */
  async findUsable(db: Executor, tokenHash: string, now: Date): Promise<RegistrationTokenRow | undefined> {
    const [row] = await db.select(columns).from(oidcRegistrationTokens).where(and(eq(oidcRegistrationTokens.tokenHash, tokenHash), usable(now)));
    return row;
  },

  /**
   * Spends one use of the token with this hash, if it is still usable: the check and the count in
   * one statement, so registrations racing for the last use cannot both have it.
   */
  async spendUse(db: Executor, tokenHash: string, now: Date): Promise<RegistrationTokenRow | undefined> {
    const [row] = await db
      .update(oidcRegistrationTokens)
      .set({ uses: sql`${oidcRegistrationTokens.uses} + 1`, lastUsedAt: now, updatedAt: now })
      .where(and(eq(oidcRegistrationTokens.tokenHash, tokenHash), usable(now)))
      .returning(columns);
    return row;
  },

  /** Whether a live organization has this id (superadmins issue tokens for organizations they are not in). */
  async organizationIsLive(db: Executor, id: string): Promise<boolean> {
    const [row] = await db.select({ id: organizations.id }).from(organizations).where(and(eq(organizations.id, id), live(organizations)));
    return row !== undefined;
  },
};
