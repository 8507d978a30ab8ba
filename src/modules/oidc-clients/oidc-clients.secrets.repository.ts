import { and, eq, sql } from "drizzle-orm";
import { oidcClients, organizations } from "../../../schema/index.js";
import type { Db } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import { clientColumns, type ClientRow } from "./oidc-clients.repository.js";

export type ClientWithSealedSecret = ClientRow & { sealedSecret: string | null };

/**
 * Privileged (ARCHITECTURE rule 7): the only reader of `client_secret_sealed`. Imported by
 * OidcClientsService alone, whose `clientSecretPrivileged` unseals the value for oidc-provider's
 * client authentication; no API answer carries it.
 *
 * The provider reads its client on every request, so this is prepared once. A deleted
 * organization's clients stop working with it (built-in clients have no organization).
 */
export function prepareLiveClientWithSecretPrivileged(db: Db): { execute(v: { clientId: string }): Promise<ClientWithSealedSecret[]> } {
  return db
    .select({ ...clientColumns, sealedSecret: oidcClients.clientSecretSealed })
    .from(oidcClients)
    .leftJoin(organizations, eq(organizations.id, oidcClients.organizationId))
    .where(and(eq(oidcClients.clientId, sql.placeholder("clientId")), live(oidcClients), live(organizations)))
    .prepare("oidc_client_find_live");
}
