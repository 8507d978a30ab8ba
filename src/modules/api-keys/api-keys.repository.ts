import { and, desc, eq, isNull } from "drizzle-orm";
import { apiKeys } from "../../../schema/index.js";
import { pickColumns } from "../../infra/columns.js";
import type { Executor } from "../../infra/db.js";
import { idInOrg } from "../../infra/org-scope.js";
import { live } from "../../infra/soft-delete.js";

/** Everything about a key but its hash. */
const columns = pickColumns(apiKeys, ["id", "organizationId", "name", "description", "prefix", "scopes", "createdBy", "lastUsedAt", "revokedAt", "revokeReason", "createdAt", "updatedAt"]);

export type ApiKeyRow = Pick<typeof apiKeys.$inferSelect, keyof typeof columns>;

/** Organization API keys, always scoped to their organization. The hash is written, never read, here. */
export const apiKeysRepository = {
  listForOrganization: (db: Executor, organizationId: string): Promise<ApiKeyRow[]> =>
    db.select(columns).from(apiKeys).where(and(eq(apiKeys.organizationId, organizationId), live(apiKeys))).orderBy(desc(apiKeys.createdAt)),

  async find(db: Executor, organizationId: string, id: string): Promise<ApiKeyRow | undefined> {
    const [row] = await db.select(columns).from(apiKeys).where(and(idInOrg(apiKeys, organizationId, id), live(apiKeys)));
    return row;
  },

  async insert(db: Executor, v: { organizationId: string; name: string; description?: string; prefix: string; scopes: string[]; keyHash: string; createdBy: string; now: Date }): Promise<ApiKeyRow> {
    const [row] = await db
      .insert(apiKeys)
      .values({ organizationId: v.organizationId, name: v.name, description: v.description, prefix: v.prefix, scopes: v.scopes, keyHash: v.keyHash, createdBy: v.createdBy, createdAt: v.now, updatedAt: v.now })
      .returning(columns);
    return row!;
  },

  /** Renames, redescribes or rescopes a live key of the organization; undefined when there is none. */
  async update(db: Executor, organizationId: string, id: string, values: { name?: string; description?: string | null; scopes?: string[]; updatedAt: Date }): Promise<ApiKeyRow | undefined> {
    const [row] = await db
      .update(apiKeys)
      .set(values)
      .where(and(idInOrg(apiKeys, organizationId, id), live(apiKeys)))
      .returning(columns);
    return row;
  },

  async revoke(db: Executor, id: string, reason: string | null, now: Date): Promise<ApiKeyRow> {
    const [row] = await db.update(apiKeys).set({ revokedAt: now, revokeReason: reason, updatedAt: now }).where(eq(apiKeys.id, id)).returning(columns);
    return row!;
  },

  /** Revokes the live keys one person created in an organization (their offboarding); their ids. */
  async revokeCreatedBy(db: Executor, organizationId: string, userId: string, reason: string, now: Date): Promise<string[]> {
    const rows = await db
      .update(apiKeys)
      .set({ revokedAt: now, revokeReason: reason, updatedAt: now })
      .where(and(eq(apiKeys.organizationId, organizationId), eq(apiKeys.createdBy, userId), isNull(apiKeys.revokedAt), live(apiKeys)))
      .returning({ id: apiKeys.id });
    return rows.map((r) => r.id);
  },

  /** Records a use of the key and reads, in the same statement, what a caller needs of it. */
  async touchLastUsed(db: Executor, id: string, now: Date): Promise<{ prefix: string; scopes: string[] } | undefined> {
    const [row] = await db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, id)).returning({ prefix: apiKeys.prefix, scopes: apiKeys.scopes });
    return row;
  },
};
