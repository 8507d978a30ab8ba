import type { Config } from "../../config/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { SecretBox } from "../../lib/crypto/index.js";
import type { ApiKeysService } from "../api-keys/index.js";
import type { AuditService } from "../audit/index.js";
import type { RateLimitService } from "../rate-limit/index.js";
import { CasService } from "./cas.service.js";
import { CertificatesService } from "./certificates.service.js";
import { SigningService } from "./signing.service.js";
import type { ActiveGrantsPort } from "./signing-grants.js";
import { SudoService } from "./sudo.service.js";
export { type CertificateView } from "./certificates.views.js";
export type { ActiveGrantsPort } from "./signing-grants.js";
export type { HostCertificateIssued } from "./host-issuance.js";
export { certAuditQuerySchema, certListSchema, createCaSchema, orgCertListSchema, revokeSchema, rotateCaSchema, signHostSchema, signUserSchema, sudoCheckSchema, updateCaSchema } from "./ssh-ca.schemas.js";

export interface SshCaModuleDeps {
  db: Db;
  clock: Clock;
  audit: AuditService;
  limits: RateLimitService;
  apiKeys: ApiKeysService;
  /** Seals CA private keys under CA_KEY_ENCRYPTION_KEY (by default the ENCRYPTION_KEYS). */
  caBox: SecretBox;
  config: Pick<Config, "ssh">;
  /** Just-in-time grants signing includes while they last (the access-requests module). */
  grants?: ActiveGrantsPort;
}

/**
 * The per-organization SSH certificate authorities: CA keys (sealed under their own keys,
 * CA_ENCRYPTION_KEYS), the signing pipeline, issued certificates and revocation, sudo checks.
 */
export function createSshCaModule(deps: SshCaModuleDeps) {
  const { db, clock, audit, config, caBox } = deps;
  const ssh = config.ssh;
  return {
    certificates: new CertificatesService(db, clock, audit),
    cas: new CasService(db, clock, audit, caBox, deps.limits, { rotationOverlapHours: ssh.rotationOverlapHours, maxPreviousKeys: ssh.maxPreviousKeys, keygenRate: ssh.keygenRate }),
    signing: new SigningService(db, clock, audit, caBox, ssh, deps.grants),
    sudo: new SudoService(db, deps.apiKeys, audit, () => clock.now()),
  };
}

export type SshCaModule = ReturnType<typeof createSshCaModule>;
