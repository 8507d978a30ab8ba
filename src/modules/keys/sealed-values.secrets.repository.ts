import { sql } from "drizzle-orm";
import { resultRows, type Executor } from "../../infra/db.js";
import { keyIdOf, SEALED_KINDS, type SealedKind, type SealedKindName, type SealedValue } from "./sealed-values.repository.js";

const c = (name: string) => sql.identifier(name);

/**
 * Privileged (ARCHITECTURE rule 7): reads the ciphertext of every sealed value, so only the reseal
 * service imports it (eslint.config.js enforces it).
 */
export const sealedValuesSecretsRepository = {
  /** Up to `limit` values of a kind sealed under another key than `currentKeyId`. */
  async staleBatch(db: Executor, name: SealedKindName, currentKeyId: string, limit: number): Promise<SealedValue[]> {
    const k: SealedKind = SEALED_KINDS[name];
    const keyCols = sql.join(k.keys.map((col, i) => sql`${c(col)}::text as ${c(`k${i}`)}`), sql`, `);
    const rows = resultRows<Record<string, string>>(
      await db.execute(sql`select ${keyCols}, ${k.sealed} as sealed from ${c(k.table)} where ${k.sealed} is not null and ${keyIdOf(k)} <> ${currentKeyId} limit ${limit}`),
    );
    return rows.map((r) => ({ keys: k.keys.map((_, i) => r[`k${i}`]!), sealed: r.sealed! }));
  },
};
