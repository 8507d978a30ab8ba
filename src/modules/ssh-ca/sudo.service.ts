import type { Db } from "../../infra/db.js";
import { AppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import type { ApiKeysService } from "../api-keys/api-keys.service.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";
import { directoryRepository } from "../orgs/directory.repository.js";
import { usersRepository } from "../users/users.repository.js";
import { certificatesRepository } from "./certificates.repository.js";
import { sudoCheckSchema } from "./ssh-ca.schemas.js";
import { getActiveMembership } from "../access/index.js";

export const SudoErrors = {
  unauthorized: () => new AppError("UNAUTHORIZED", 401, "Invalid or revoked API key"),
  notFound: () => new AppError("NOT_FOUND", 404, "No certificate with that serial in this organization"),
};

/**
 * The "sudo department" check a server runs (with its organization's API key) for the user behind
 * an SSH certificate: may they sudo? Only live, unrevoked, unexpired certificates of active
 * members count.
 */
export class SudoService {
  constructor(
    private readonly db: Db,
    private readonly apiKeys: ApiKeysService,
    private readonly audit: AuditService,
    private readonly now: () => Date,
  ) {}

  async check(ctx: RequestContext, input: unknown) {
    const data = parseInput(sudoCheckSchema, input);
    const key = await this.apiKeys.authenticate(data.apiKey);
    if (!key) throw SudoErrors.unauthorized();
    const serial = BigInt(String(data.certificateSerial));
    const cert = await certificatesRepository.findBySerial(this.db, key.organizationId, serial);
    if (!cert || !cert.userId || cert.certType !== "user") throw SudoErrors.notFound();
    const user = await usersRepository.findById(this.db, cert.userId);
    const member = user ? await getActiveMembership(this.db, user.id, key.organizationId) : undefined;
    const departments = user ? await directoryRepository.userDepartments(this.db, user.id, [key.organizationId]) : [];
    const sudoers = departments.filter((d) => d.canSudo);
    const live = !cert.revokedAt && cert.validBefore > this.now() && user?.status === "active" && !!member;
    const canSudo = live && sudoers.length > 0;
    await this.audit.record(this.db, ctx, AuditAction.sudoCheck, {
      organizationId: key.organizationId,
      userId: cert.userId,
      resourceType: "ssh_certificate",
      resourceId: cert.id,
      metadata: { serial: serial.toString(), can_sudo: canSudo, api_key_id: key.keyId },
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
}
