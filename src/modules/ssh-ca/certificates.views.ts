import type { CertRow } from "./certificates.repository.js";

export interface CertificateView {
  id: string;
  organizationId: string;
  caId: string;
  userId: string | null;
  sshKeyId: string | null;
  certType: "user" | "host";
  /** A decimal string: serials are 64-bit. */
  serial: string;
  keyId: string;
  principals: string[];
  extensions: string[];
  validAfter: Date;
  validBefore: Date;
  publicKeyFingerprint: string;
  certificate: string;
  status: "active" | "expired" | "revoked";
  revoked: boolean;
  revokedAt: Date | null;
  revokeReason: string | null;
  createdAt: Date;
}

/** A certificate just signed, with what the signer is told besides: its id and organization's name. */
export interface SignedCertificate extends CertificateView {
  certId: string;
  organizationName: string;
}

export const toCertificateView = (c: CertRow, now: Date): CertificateView => ({
  id: c.id,
  organizationId: c.organizationId,
  caId: c.caId,
  userId: c.userId,
  sshKeyId: c.sshKeyId,
  certType: c.certType,
  serial: c.serial.toString(),
  keyId: c.keyId,
  principals: c.principals,
  extensions: c.extensions,
  validAfter: c.validAfter,
  validBefore: c.validBefore,
  publicKeyFingerprint: c.publicKeyFingerprint,
  certificate: c.certificate,
  status: c.revokedAt ? "revoked" : c.validBefore <= now ? "expired" : "active",
  revoked: c.revokedAt !== null,
  revokedAt: c.revokedAt,
  revokeReason: c.revokeReason,
  createdAt: c.createdAt,
});
