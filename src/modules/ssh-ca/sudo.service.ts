import type { Db } from "../../infra/db.js";
import { AppError, CommonErrors } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import type { ApiKeysService } from "../api-keys/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { memberDepartments } from "../orgs/index.js";
import { userAccounts } from "../users/index.js";
import { certificatesRepository } from "./certificates.repository.js";
import { sudoCheckSchema, type SudoCheckInput } from "./ssh-ca.schemas.js";
import { getActiveMembership, requireApiKey } from "../access/index.js";

export const SudoErrors = {
  unauthorized: () => new AppError("UNAUTHORIZED", 401, "Invalid or revoked API key"),
  keyRequired: () => new AppError("AUTH_REQUIRED", 401, "An organization API key is required: as the bearer (Authorization: Bearer kwk_…) or as api_key"),
  twoKeys: () => CommonErrors.badRequest("Send the API key once: as the bearer or as api_key, not both"),
  notFound: () => new AppError("NOT_FOUND", 404, "No certificate with that serial in this organization"),
};

/**
 * The "sudo department" check a server runs (with its organization's API key, scope ssh:sudo) for
 * the user behind an SSH certificate: may they sudo? Only live, unrevoked, unexpired certificates
 * of active members count.
 */
export class SudoService {
  constructor(
    private readonly db: Db,
    private readonly apiKeys: ApiKeysService,
    private readonly audit: AuditService,
    private readonly now: () => Date,
  ) {}

  async check(ctx: RequestContext, input: SudoCheckInput) {
    const data = parseInput(sudoCheckSchema, input);
    const keyCtx = await this.keyCaller(ctx, data.apiKey);
    // Keys made for other work (reading members, the audit log) do not answer for sudo.
    const key = requireApiKey(keyCtx, "ssh:sudo");
    const serial = BigInt(String(data.certificateSerial));
    const cert = await certificatesRepository.findBySerial(this.db, key.organizationId, serial);
    if (!cert || !cert.userId || cert.certType !== "user") throw SudoErrors.notFound();
    const user = await userAccounts.find(this.db, cert.userId);
    const member = user ? await getActiveMembership(this.db, user.id, key.organizationId) : undefined;
    const departments = user ? await memberDepartments.of(this.db, user.id, [key.organizationId]) : [];
    const sudoers = departments.filter((d) => d.canSudo);
    const live = !cert.revokedAt && cert.validBefore > this.now() && user?.status === "active" && !!member;
    const canSudo = live && sudoers.length > 0;
    await this.audit.record(this.db, keyCtx, AuditAction.sudoCheck, {
      organizationId: key.organizationId,
      userId: cert.userId,
      resourceType: "ssh_certificate",
      resourceId: cert.id,
      // The key that asked is named by the record itself (metadata.actor, from keyCtx).
      metadata: { serial: serial.toString(), can_sudo: canSudo },
    });
    return {
      canSudo,
      userId: cert.userId,
      userEmail: user?.email ?? null,
      certificateSerial: serial.toString(),
      sudoerDepartments: live ? sudoers.map((d) => ({ id: d.id, name: d.name })) : [],
      allDepartmentsCount: departments.length,
    };
  }

  /** The key asking, as the caller: the bearer (resolved with the request), or the body's api_key. */
  private async keyCaller(ctx: RequestContext, bodyKey: string | undefined): Promise<RequestContext> {
    if (ctx.actor.kind === "apiKey") {
      // Two keys in one request: which of them speaks would be a guess.
      if (bodyKey !== undefined) throw SudoErrors.twoKeys();
      return ctx;
    }
    if (bodyKey === undefined) throw SudoErrors.keyRequired();
    const key = await this.apiKeys.authenticate(bodyKey);
    if (!key) throw SudoErrors.unauthorized();
    return { ...ctx, actor: { kind: "apiKey", ...key } };
  }
}
