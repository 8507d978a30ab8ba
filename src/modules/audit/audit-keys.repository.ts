import { auditSigningKeys } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";

/** The chain-anchor signing keys, stored sealed; they are read by audit-keys.secrets.repository.ts only. */
export const auditKeysRepository = {
  async insert(db: Executor, v: { kid: string; publicKey: string; sealed: string; now: Date }): Promise<void> {
    await db.insert(auditSigningKeys).values({ kid: v.kid, publicKey: v.publicKey, privateKeySealed: v.sealed, createdAt: v.now }).onConflictDoNothing();
  },
};
