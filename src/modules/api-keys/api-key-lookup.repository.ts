import { and, eq, isNull } from "drizzle-orm";
import { apiKeys, organizations } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

/**
 * The key a presented secret's hash names. It matches the hash in SQL and returns no hash, so it
 * is no credential reader (no *.secrets.repository.ts): a key's hash is written, never read back.
 * Callers get `authenticate(secret)` from the API-key service, never a hash.
 */
export const apiKeysPrivilegedRepository = {
  /** The live, unrevoked key with this hash, of a live organization: a key dies with its organization. */
  async findKeyByHashPrivileged(db: Executor, keyHash: string): Promise<{ id: string; organizationId: string } | undefined> {
    const [row] = await db
      .select({ id: apiKeys.id, organizationId: apiKeys.organizationId })
      .from(apiKeys)
      .innerJoin(organizations, and(eq(organizations.id, apiKeys.organizationId), live(organizations)))
      .where(and(eq(apiKeys.keyHash, keyHash), live(apiKeys), isNull(apiKeys.revokedAt)));
    return row;
  },
};
