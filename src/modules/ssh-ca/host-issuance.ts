import type { Clock } from "../../infra/clock.js";
import type { Executor } from "../../infra/db.js";
import { uuid, type KeyObject } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseCertificate, parsePublicKey, signCertificate, SshKeyError, type ParsedPublicKey } from "../../lib/ssh/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { SshKeyErrors } from "../ssh-keys/index.js";
import type { CaKeyRow, CaRow } from "./ca.repository.js";
import { certificatesRepository } from "./certificates.repository.js";
import { CaErrors } from "./ssh-ca.errors.js";

/** One host key certified for an enrolled host (enrollment or renewal). */
export interface HostCertificateIssued {
  certificateId: string;
  serial: string;
  fingerprint: string;
  keyType: string;
  publicKey: string;
  certificate: string;
  principals: string[];
  validAfter: Date;
  validBefore: Date;
}

export interface HostIssueRequest {
  organizationId: string;
  hostId: string;
  names: string[];
  hostKeys: string[];
  /** The admin behind the request (the enrollment token's creator), if any. */
  signerId: string | null;
}

/**
 * The organization's host CA certifies each key of an enrolled host for the host's names, with
 * the CA's default validity. Runs in the caller's transaction: the certificates, their
 * certificate-audit rows and audit records are written with whatever the caller changes (a spent
 * token, the host's row), or none of it.
 */
export async function issueHostCertificates(
  tx: Executor,
  ctx: RequestContext,
  deps: { clock: Clock; audit: AuditService; backdateSeconds: number },
  signer: { ca: CaRow; caKey: CaKeyRow; caPrivate: KeyObject },
  v: HostIssueRequest,
): Promise<HostCertificateIssued[]> {
  const { ca, caKey, caPrivate } = signer;
  const now = deps.clock.now();
  const validAfter = new Date(now.getTime() - deps.backdateSeconds * 1000);
  const validBefore = new Date(now.getTime() + ca.defaultValidityHours * 3600_000);
  const caBlob = Buffer.from(caKey.publicKey.split(" ")[1]!, "base64");
  const principals = [...new Set(v.names)];
  const keyId = `host:${principals[0]} [host:${v.hostId}]`;
  const issued: HostCertificateIssued[] = [];
  const rows: Parameters<typeof certificatesRepository.insertHostCertificates>[1] = [];
  for (const line of v.hostKeys) {
    let subject: ParsedPublicKey;
    try {
      subject = parsePublicKey(line);
    } catch (e) {
      if (e instanceof SshKeyError) throw SshKeyErrors.invalid("WRONG_KEY_MATERIAL", e.message);
      throw e;
    }
    const serial = await certificatesRepository.nextSerial(tx);
    const certificate = signCertificate(caPrivate, caBlob, { publicKey: subject.blob, serial, type: "host", keyId, principals, validAfter, validBefore, extensions: [] });
    const check = parseCertificate(certificate);
    if (!check.signatureValid || check.serial !== serial || !check.caKey.equals(caBlob)) throw CaErrors.signingFailed();
    const id = uuid();
    rows.push({
      id,
      organizationId: v.organizationId,
      caId: ca.id,
      caKeyId: caKey.id,
      userId: null,
      sshKeyId: null,
      certType: "host",
      serial,
      keyId,
      principals,
      extensions: [],
      criticalOptions: {},
      validAfter,
      validBefore,
      publicKeyFingerprint: subject.fingerprint,
      certificate,
      requestIp: ctx.ip?.slice(0, 45),
      requestUserAgent: ctx.userAgent,
      createdAt: now,
    });
    issued.push({ certificateId: id, serial: serial.toString(), fingerprint: subject.fingerprint, keyType: line.trim().split(/\s+/)[0]!, publicKey: line.trim(), certificate, principals, validAfter, validBefore });
  }
  await certificatesRepository.insertHostCertificates(tx, rows);
  for (const c of issued) {
    const metadata = { serial: c.serial, principals, cert_type: "host", key_id: keyId, valid_before: validBefore.toISOString(), host_id: v.hostId };
    await certificatesRepository.audit(tx, {
      organizationId: v.organizationId,
      certificateId: c.certificateId,
      userId: v.signerId,
      action: "issued",
      success: true,
      ipAddress: ctx.ip?.slice(0, 45),
      userAgent: ctx.userAgent,
      requestId: ctx.requestId,
      metadata,
      createdAt: now,
    });
    await deps.audit.record(tx, ctx, AuditAction.certIssued, { organizationId: v.organizationId, userId: null, resourceType: "ssh_certificate", resourceId: c.certificateId, metadata });
  }
  return issued;
}
