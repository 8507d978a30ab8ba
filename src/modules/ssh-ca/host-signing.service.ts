import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import type { KeyObject } from "../../lib/crypto/index.js";
import { CommonErrors } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parsePublicKey, SshKeyError, type ParsedPublicKey } from "../../lib/ssh/index.js";
import { parseInput } from "../../lib/validation.js";
import type { AuditService } from "../audit/index.js";
import { requireUser } from "../access/index.js";
import { SshKeyErrors } from "../ssh-keys/index.js";
import { hostAuthority, type Authority } from "./authority.js";
import { caRepository } from "./ca.repository.js";
import { certificatesRepository } from "./certificates.repository.js";
import type { SignedCertificate } from "./certificates.views.js";
import { issueHostCertificates, type HostCertificateIssued, type HostIssueRequest } from "./host-issuance.js";
import { CaErrors } from "./ssh-ca.errors.js";
import { signHostSchema, type SignHostInput } from "./ssh-ca.schemas.js";

// Host certificates: an admin's request for a server's host key, and an enrolled host's
// (enrollment, renewal). SigningService owns the pipeline's last steps and the CA keys; it hands
// them here through SigningPipeline.

/** What one certificate is issued with, the modifiers applied (steps 4–5), for steps 6–8. */
export interface CertificateOrder {
  subject: ParsedPublicKey;
  sshKeyId: string | null;
  userId: string;
  type: "user" | "host";
  keyId: string;
  principals: string[];
  hours: number;
  /** The end of a grant the certificate carries: it never outlives it. */
  notAfter?: Date;
  extensions: string[];
  criticalOptions?: Record<string, string>;
}

/** What host signing asks of SigningService: sign, verify and persist (steps 6–8), and a CA's private key. */
export interface SigningPipeline {
  issue(ctx: RequestContext, authority: Authority, serial: bigint, order: CertificateOrder): Promise<SignedCertificate>;
  /** Privileged: unsealed for signing, never returned to a caller. */
  caPrivateKey(caKeyId: string, db: Executor): Promise<KeyObject>;
}

export class HostSigningService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly config: { backdateSeconds: number; hostPrincipalPatterns: boolean },
    private readonly pipeline: SigningPipeline,
  ) {}

  /** Host certificates: an organization admin certifies a server's host key for its names. */
  async signHostCertificate(ctx: RequestContext, input: SignHostInput): Promise<SignedCertificate> {
    const actor = requireUser(ctx);
    const req = parseInput(signHostSchema, input);
    // OpenSSH matches a host certificate's principals as patterns against the name it connects to:
    // "*" would make one server's certificate good for every host. Names only, unless the operator allows patterns.
    const patterns = this.config.hostPrincipalPatterns ? [] : req.principals.filter((p) => /[*?]/.test(p));
    if (patterns.length > 0) {
      throw CommonErrors.validation([
        { path: "principals", message: `${patterns.join(", ")}: a pattern (OpenSSH would accept this certificate for every host name it matches); name each host, or let the operator allow patterns (SSH_HOST_PRINCIPAL_PATTERNS=true)` },
      ]);
    }
    let subject: ParsedPublicKey;
    try {
      subject = parsePublicKey(req.hostPublicKey);
    } catch (e) {
      if (e instanceof SshKeyError) throw SshKeyErrors.invalid("WRONG_KEY_MATERIAL", e.message);
      throw e;
    }
    // sshd has no security-key host keys: such a "host key" is a person's key.
    if (subject.application !== null) throw SshKeyErrors.invalid("WRONG_KEY_MATERIAL", "A security key (sk-) is a person's key, never a host key: send the server's host key (/etc/ssh/ssh_host_*_key.pub)");
    const authority = await hostAuthority(this.db, ctx, req.orgId, req.caId);
    const hours = Math.min(req.validityHours ?? authority.ca.defaultValidityHours, authority.ca.maxValidityHours);
    if (req.validityHours && req.validityHours > authority.ca.maxValidityHours) throw CaErrors.expiryTooLong(authority.ca.maxValidityHours);
    return this.pipeline.issue(ctx, authority, await certificatesRepository.nextSerial(this.db), {
      subject,
      sshKeyId: null,
      userId: actor.userId,
      type: "host",
      keyId: `host:${req.principals[0]} [signed-by:${actor.email}]`,
      principals: [...new Set(req.principals)],
      hours,
      extensions: [],
      // Signed on a role held through a time-bounded grant: it ends with the grant, as a user certificate does.
      notAfter: authority.membership.elevatedUntil ?? undefined,
    });
  }

  /**
   * Host certificates for an enrolled host (its enrollment token, or at renewal the proof that it
   * holds its host key, stood in for an admin's request), in the caller's transaction: see
   * issueHostCertificates.
   */
  async issueForHost(tx: Executor, ctx: RequestContext, v: HostIssueRequest): Promise<HostCertificateIssued[]> {
    const ca = await caRepository.findByType(tx, v.organizationId, "host");
    const caKey = ca && (await caRepository.activeKey(tx, ca.id));
    if (!ca || !caKey) throw CaErrors.hostCaMissing(v.organizationId);
    const caPrivate = await this.pipeline.caPrivateKey(caKey.id, tx);
    return issueHostCertificates(tx, ctx, { clock: this.clock, audit: this.audit, backdateSeconds: this.config.backdateSeconds }, { ca, caKey, caPrivate }, v);
  }
}
