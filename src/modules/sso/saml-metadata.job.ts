import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import { systemContext } from "../../lib/request-context.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { fetchIdpMetadata, fromMetadata, rolledOver, samlConfigOf } from "./saml-config.js";
import { ssoConnectionsRepository as repo } from "./sso-connections.repository.js";

/**
 * Re-reads the IdP metadata of SAML connections created from a metadata URL (issue 35: certificate
 * rollover). A certificate the IdP stops listing stays pinned for ROLLOVER_OVERLAP_MS, so responses
 * signed just before the switch still pass; a new one is pinned at once. A failed read keeps the
 * stored settings (logged): an IdP outage never unpins anything.
 */
export class SamlMetadataRefresher {
  constructor(private readonly deps: { db: Db; clock: Clock; logger: Logger; audit: AuditService; intervalMs: number }) {}

  async refreshDue(): Promise<number> {
    const now = this.deps.clock.now();
    let refreshed = 0;
    for (const row of await repo.listSamlWithMetadataUrl(this.deps.db)) {
      const c = samlConfigOf(row);
      if (!c.metadataUrl || (c.metadataFetchedAt && now.getTime() - Date.parse(c.metadataFetchedAt) < this.deps.intervalMs)) continue;
      try {
        const idp = fromMetadata(await fetchIdpMetadata(c.metadataUrl));
        const certs = rolledOver(c, idp.idpCertsPem, now);
        const changed = c.idpSsoUrl !== idp.idpSsoUrl || c.idpEntityId !== idp.idpEntityId || c.idpSloUrl !== idp.idpSloUrl || JSON.stringify(certs) !== JSON.stringify({ idpCertsPem: c.idpCertsPem, previousCertsPem: c.previousCertsPem });
        await this.deps.db.transaction(async (tx) => {
          await repo.update(tx, row.organizationId, row.id, { config: { ...c, ...idp, ...certs, metadataFetchedAt: now.toISOString() }, ...(changed ? { updatedAt: now } : {}) });
          if (changed) {
            await this.deps.audit.record(tx, systemContext(), AuditAction.ssoConnectionUpdated, {
              organizationId: row.organizationId,
              resourceType: "sso_connection",
              resourceId: row.id,
              metadata: { name: row.name, kind: row.kind, fields: ["idpMetadata"], certificates: certs.idpCertsPem.length, inOverlap: certs.previousCertsPem.length },
            });
          }
        });
        refreshed++;
      } catch (err) {
        this.deps.logger.warn({ err, connectionId: row.id }, "SAML metadata refresh failed: the stored settings stay");
      }
    }
    return refreshed;
  }
}
