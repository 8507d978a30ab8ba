import type { Clock } from "../../infra/clock.js";
import type { Executor } from "../../infra/db.js";
import type { HostCertEntry } from "../../../schema/index.js";
import type { HostCertificateIssued, SshCaModule } from "../ssh-ca/index.js";
import { authorizedPrincipalsOf, type AuthorizedPrincipals } from "./host-principals.service.js";
import { hostsRepository, type EnrollmentTokenRow, type HostRow } from "./hosts.repository.js";

export interface HostsSettings {
  /** Host certificates may name patterns (`*`, `?`): SSH_HOST_PRINCIPAL_PATTERNS. */
  hostPrincipalPatterns: boolean;
  /** Keys the stateless renewal challenges (derived from the encryption key). */
  challengeKey: Buffer;
}

/** What the hosts module needs of the SSH CA module (the container wires it). */
export interface HostsCa {
  signing: Pick<SshCaModule["signing"], "issueForHost">;
  certificates: Pick<SshCaModule["certificates"], "revokeHostKeys">;
  cas: Pick<SshCaModule["cas"], "trustedUserCaKeysFor">;
}

export type TokenStatus = "active" | "used" | "expired" | "revoked";
export interface EnrollmentTokenView extends EnrollmentTokenRow {
  status: TokenStatus;
}
export type HostView = HostRow & { status: "active" | "expired" | "retired" };

/** What a host writes: its certificates, what its sshd trusts and where the KRL is. */
export interface HostCredentials {
  host: HostView;
  renewed: boolean;
  renewAfter: Date | null;
  certificates: Array<{ fingerprint: string; keyType: string; publicKey: string; serial: string; certificate: string; validBefore: Date }>;
  trustedUserCaKeys: string;
  krlPath: string;
  /** Per local account, the principals this host's sshd accepts (AuthorizedPrincipalsFile); empty: none mapped, sshd's default. */
  authorizedPrincipals: AuthorizedPrincipals[];
  /** Hosts this enrollment replaced (a reinstall under the same name): retired, their certificates revoked. */
  replacedHosts: string[];
}

export const LIST_LIMIT = 500;

export const tokenStatus = (t: EnrollmentTokenRow, now: Date): TokenStatus => (t.revokedAt ? "revoked" : t.usedAt ? "used" : t.expiresAt <= now ? "expired" : "active");
export const hostView = (h: HostRow, now: Date): HostView => ({ ...h, status: h.retiredAt ? "retired" : h.certValidBefore && h.certValidBefore > now ? "active" : "expired" });

/**
 * When a renewal is due: the last third of the certificates' lifetime, counted from when they were
 * issued (their validity starts earlier, SSH_CERT_BACKDATE_SECONDS, for clock skew).
 */
export function renewAfter(h: HostRow): Date | null {
  if (!h.certValidBefore) return null;
  const issued = (h.lastRenewedAt ?? h.enrolledAt).getTime();
  return new Date(h.certValidBefore.getTime() - (h.certValidBefore.getTime() - issued) / 3);
}

/** Stores freshly issued certificates on the host row (enrollment and renewal alike). */
export async function saveCertificates(tx: Executor, hostId: string, issued: HostCertificateIssued[], renewedAt: Date | null): Promise<HostRow> {
  const certificates: HostCertEntry[] = issued.map((c) => ({ fingerprint: c.fingerprint, certificateId: c.certificateId, serial: c.serial, validBefore: c.validBefore.toISOString(), certificate: c.certificate }));
  return hostsRepository.setCertificates(tx, hostId, { certificates, validAfter: issued[0]!.validAfter, validBefore: issued[0]!.validBefore, renewedAt });
}

/** The answer a host writes to disk: the new certificates (or its current ones), its trusted user CAs and the KRL's path. */
export async function hostCredentials(db: Executor, ca: HostsCa, clock: Clock, host: HostRow, issued: HostCertificateIssued[] | null, renewed: boolean, replacedHosts: string[] = []): Promise<HostCredentials> {
  const keys = await ca.cas.trustedUserCaKeysFor(host.organizationId);
  const authorizedPrincipals = await authorizedPrincipalsOf(db, host.organizationId, host.names);
  const byFingerprint = new Map(host.hostKeys.map((k) => [k.fingerprint, k]));
  const certificates = issued
    ? issued.map((c) => ({ fingerprint: c.fingerprint, keyType: c.keyType, publicKey: c.publicKey, serial: c.serial, certificate: c.certificate, validBefore: c.validBefore }))
    : host.certificates.map((c) => {
        const key = byFingerprint.get(c.fingerprint);
        return { fingerprint: c.fingerprint, keyType: key?.keyType ?? "", publicKey: key?.publicKey ?? "", serial: c.serial, certificate: c.certificate, validBefore: new Date(c.validBefore) };
      });
  return {
    host: hostView(host, clock.now()),
    renewed,
    renewAfter: renewAfter(host),
    certificates,
    trustedUserCaKeys: keys.join("\n") + (keys.length ? "\n" : ""),
    krlPath: `/api/v1/organizations/${host.organizationId}/ssh/krl`,
    authorizedPrincipals,
    replacedHosts,
  };
}
