import { isDependencyOutage } from "../../infra/db-errors.js";
import type { CertRow, IssuedCertificate } from "./certificates.repository.js";

/** Signatures of one organization written together at most. */
const MAX_BATCH = 64;

interface Waiting {
  issued: IssuedCertificate;
  resolve: (row: CertRow | undefined) => void;
  reject: (e: unknown) => void;
}

/**
 * Signatures that reach their write in the same turn of the event loop go as one statement per
 * organization (one round trip, one commit) instead of one each: under load, several requests get
 * there together. Each request still answers only once its own rows are stored, or learns that
 * its signer was offboarded meanwhile (undefined: nothing of it was written). A batch holds one
 * organization, so it takes that organization's lock first and then its signers', as a single
 * signature does. A statement the database refuses is tried again one signature at a time, so a
 * row it cannot store fails its own request only; an outage fails them all (a retry could not
 * tell what was stored).
 */
export function issueBatcher(write: (batch: IssuedCertificate[]) => Promise<CertRow[]>): (issued: IssuedCertificate) => Promise<CertRow | undefined> {
  let pending = new Map<string, Waiting[]>();
  let scheduled = false;

  const settle = async (group: Waiting[]) => {
    try {
      const written = new Map((await write(group.map((w) => w.issued))).map((row) => [row.id, row]));
      for (const w of group) w.resolve(written.get(w.issued.cert.id));
    } catch (e) {
      if (group.length === 1 || isDependencyOutage(e)) {
        for (const w of group) w.reject(e);
        return;
      }
      await Promise.all(group.map((w) => write([w.issued]).then(([row]) => w.resolve(row), (err: unknown) => w.reject(err))));
    }
  };
  const flush = () => {
    const groups = [...pending.values()];
    pending = new Map();
    scheduled = false;
    for (const group of groups) void settle(group);
  };

  return (issued) =>
    new Promise<CertRow | undefined>((resolve, reject) => {
      const orgId = issued.cert.organizationId;
      const group = pending.get(orgId) ?? [];
      group.push({ issued, resolve, reject });
      pending.set(orgId, group);
      if (group.length >= MAX_BATCH) {
        pending.delete(orgId);
        void settle(group);
      } else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
