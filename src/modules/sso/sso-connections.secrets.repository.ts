import { and, eq } from "drizzle-orm";
import { ssoConnections } from "../../../schema/index.js";
import type { Executor } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";

/**
 * Privileged (ARCHITECTURE rule 7): the only read of `sso_connections.secret_sealed` (OIDC: a client
 * secret, or the private key for private_key_jwt; SAML: the SP signing and encryption keys, as
 * JSON). Only the OIDC and SAML sign-in services and the SAML logout service import it
 * (eslint.config.js enforces it), to authenticate to the organization's identity provider, sign
 * AuthnRequests and logout messages, and decrypt assertions.
 */
export async function findConnectionSecretPrivileged(db: Executor, id: string): Promise<string | null> {
  const [row] = await db.select({ sealed: ssoConnections.secretSealed }).from(ssoConnections).where(and(eq(ssoConnections.id, id), live(ssoConnections)));
  return row?.sealed ?? null;
}
