import { eq } from "drizzle-orm";
import { caKeys } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";

/**
 * Privileged (ARCHITECTURE rule 7): the sealed private key of a CA key, the only read of
 * `ca_keys.private_key_sealed`. Only the signing service imports this file; it unseals the value
 * in memory, signs with it, and never returns or logs it.
 */
export async function readCaPrivateKeyPrivileged(db: Executor, caKeyId: string): Promise<string | undefined> {
  const [row] = await db.select({ sealed: caKeys.privateKeySealed }).from(caKeys).where(eq(caKeys.id, caKeyId));
  return row?.sealed;
}
