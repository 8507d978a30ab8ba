import { writeBatcher } from "../../infra/write-batcher.js";
import type { CertRow } from "./certificates.repository.js";
import type { IssuedCertificate } from "./issuance.repository.js";

/** Signatures of one organization written together at most. */
const MAX_BATCH = 64;

/**
 * Signatures that reach their write at once are stored with one statement per organization
 * (writeBatcher). A batch holds one organization, so it takes that organization's lock first and
 * then its signers', as a single signature does. Each request gets its own certificate, or
 * undefined when its signer was offboarded meanwhile (nothing of it was written).
 */
export function issueBatcher(write: (batch: IssuedCertificate[]) => Promise<CertRow[]>): (issued: IssuedCertificate) => Promise<CertRow | undefined> {
  return writeBatcher<IssuedCertificate, CertRow | undefined>(
    async (batch) => {
      const written = new Map((await write(batch)).map((row) => [row.id, row]));
      return batch.map((issued) => written.get(issued.cert.id));
    },
    { max: MAX_BATCH, groupOf: (issued) => issued.cert.organizationId },
  );
}
