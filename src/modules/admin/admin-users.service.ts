import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";
import { requireSuperadmin } from "../auth/guards.js";
import type { SessionsService } from "../auth/sessions/sessions.service.js";
import { UserErrors } from "../users/users.errors.js";
import { usersRepository } from "../users/users.repository.js";
import { suspendSchema } from "../users/users.schemas.js";
import { toUserView, type UserView } from "../users/users.views.js";

/** Superadmin operations on any account. */
export class AdminUsersService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly sessions: SessionsService,
  ) {}

  /** Suspends an account: its sessions end at once and it cannot sign in until unsuspended. */
  async suspend(ctx: RequestContext, id: string, input: unknown): Promise<UserView> {
    const actor = requireSuperadmin(ctx);
    const userId = parseId(id, UserErrors.notFound);
    const { reason } = parseInput(suspendSchema, input);
    // Locking yourself out would leave nobody to undo it.
    if (actor.userId === userId) throw UserErrors.cannotSuspendSelf();
    const view = await this.db.transaction(async (tx) => {
      const user = await usersRepository.findById(tx, userId);
      if (!user) throw UserErrors.notFound();
      if (user.status === "suspended") throw UserErrors.alreadySuspended();
      const now = this.clock.now();
      const updated = await usersRepository.update(tx, userId, {
        status: "suspended",
        suspendedAt: now,
        suspendedReason: reason ?? null,
        updatedAt: now,
      });
      await this.audit.record(tx, ctx, AuditAction.userSuspend, { userId, resourceType: "user", resourceId: userId, metadata: { reason } });
      return toUserView(updated!);
    });
    await this.sessions.revokeAll(userId);
    return view;
  }

  async unsuspend(ctx: RequestContext, id: string): Promise<UserView> {
    requireSuperadmin(ctx);
    const userId = parseId(id, UserErrors.notFound);
    return this.db.transaction(async (tx) => {
      const user = await usersRepository.findById(tx, userId);
      if (!user) throw UserErrors.notFound();
      if (user.status !== "suspended") throw UserErrors.notSuspended();
      const now = this.clock.now();
      const updated = await usersRepository.update(tx, userId, { status: "active", suspendedAt: null, suspendedReason: null, updatedAt: now });
      await this.audit.record(tx, ctx, AuditAction.userUnsuspend, { userId, resourceType: "user", resourceId: userId });
      return toUserView(updated!);
    });
  }

  /** Grants or revokes superadmin (used by `npm run admin -- promote|demote <email>`). */
  async setSuperadmin(ctx: RequestContext, email: string, value: boolean): Promise<UserView> {
    return this.db.transaction(async (tx) => {
      const user = await usersRepository.findByEmail(tx, normalizeEmail(email));
      if (!user) throw UserErrors.notFound();
      const updated = await usersRepository.update(tx, user.id, { isSuperadmin: value, updatedAt: this.clock.now() });
      await this.audit.record(tx, ctx, value ? AuditAction.userPromoted : AuditAction.userDemoted, { userId: user.id });
      return toUserView(updated!);
    });
  }

  /** At start: promotes verified accounts whose address is in SUPERADMIN_EMAILS (unverified ones wait). */
  async bootstrapSuperadmins(ctx: RequestContext, emails: readonly string[]): Promise<number> {
    let promoted = 0;
    for (const email of emails) {
      const user = await usersRepository.findByEmail(this.db, normalizeEmail(email));
      if (!user || user.isSuperadmin || !user.emailVerifiedAt) continue;
      await this.db.transaction(async (tx) => {
        await usersRepository.update(tx, user.id, { isSuperadmin: true, updatedAt: this.clock.now() });
        await this.audit.record(tx, ctx, AuditAction.userPromoted, { userId: user.id, metadata: { source: "SUPERADMIN_EMAILS" } });
      });
      promoted++;
    }
    return promoted;
  }
}
