import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { CommonErrors } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { z } from "zod";
import { requirePersonalUser, requireSuperadmin } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { organizationsByIds } from "../orgs/index.js";
import { UserErrors, userAccounts, toUserView, type UserView } from "../users/index.js";
import { AdminErrors } from "./admin-reach.js";

const ids = z.array(z.string().max(64)).max(200).default([]).transform((list) => [...new Set(list.filter((v) => z.uuid().safeParse(v).success))]);
const lookupSchema = z.object({ userIds: ids, organizationIds: ids });
export type LookupInput = z.input<typeof lookupSchema>;

/**
 * Operators (superadmins): who holds operator power, given and taken by operators only (or by
 * `npm run admin` and SUPERADMIN_EMAILS at start), and the names operators' screens show beside ids.
 */
export class OperatorsService {
  constructor(private readonly deps: { db: Db; clock: Clock; audit: AuditService }) {}

  /** Makes an account an operator (superadmins only): it must be active with a verified address. */
  async promote(ctx: RequestContext, userId: string): Promise<UserView> {
    return this.change(ctx, userId, true);
  }

  /** Takes operator power away (superadmins only, never from themselves: Keyward keeps an operator). */
  async demote(ctx: RequestContext, userId: string): Promise<UserView> {
    return this.change(ctx, userId, false);
  }

  /**
   * Names of accounts and organizations by id, deleted ones included (superadmins: the system audit
   * log and the kill switch history name who did what). Two statements whatever the count.
   */
  async lookup(ctx: RequestContext, input: LookupInput): Promise<{ users: Array<{ id: string; email: string; fullName: string | null; deleted: boolean }>; organizations: Array<{ id: string; name: string; slug: string }> }> {
    requireSuperadmin(ctx);
    const q = parseInput(lookupSchema, input);
    const [users, organizations] = await Promise.all([userAccounts.namesByIds(this.deps.db, q.userIds), organizationsByIds(this.deps.db, q.organizationIds)]);
    return { users, organizations: organizations.map((o) => ({ id: o.id, name: o.name, slug: o.slug })) };
  }

  private async change(ctx: RequestContext, userId: string, value: boolean): Promise<UserView> {
    const { db, clock, audit } = this.deps;
    const actor = requirePersonalUser(ctx);
    // Operators are made and unmade by operators only.
    if (!actor.isSuperadmin) throw CommonErrors.forbidden("Superadmin access required");
    const id = parseId(userId, UserErrors.notFound);
    // Not oneself: demoting oneself could leave the installation without an operator.
    if (id === actor.userId) throw AdminErrors.ownOperatorRole();
    return db.transaction(async (tx) => {
      if (!(await userAccounts.lock(tx, id))) throw UserErrors.notFound();
      const user = (await userAccounts.find(tx, id))!;
      if (value && user.isSuperadmin) throw AdminErrors.alreadySuperadmin();
      if (!value && !user.isSuperadmin) throw AdminErrors.notSuperadmin();
      if (value) {
        // Operator power goes to a person who can sign in now and proved their address.
        if (user.status !== "active") throw AdminErrors.notActive(user.status);
        if (!user.emailVerifiedAt) throw AdminErrors.unverified();
      }
      const updated = await userAccounts.setSuperadmin(tx, id, value, clock.now());
      if (!updated) throw UserErrors.notFound();
      await audit.record(tx, ctx, value ? AuditAction.userPromoted : AuditAction.userDemoted, { userId: id, resourceType: "user", resourceId: id, metadata: { via: "superadmin" } });
      return toUserView(updated);
    });
  }

  /** Grants or revokes superadmin (used by `npm run admin -- promote|demote <email>`). */
  async setSuperadmin(ctx: RequestContext, email: string, value: boolean): Promise<UserView> {
    return this.deps.db.transaction(async (tx) => {
      const user = await userAccounts.findByEmail(tx, normalizeEmail(email));
      if (!user) throw UserErrors.notFound();
      const updated = await userAccounts.setSuperadmin(tx, user.id, value, this.deps.clock.now());
      if (!updated) throw UserErrors.notFound();
      await this.deps.audit.record(tx, ctx, value ? AuditAction.userPromoted : AuditAction.userDemoted, { userId: user.id });
      return toUserView(updated);
    });
  }

  /**
   * At start: promotes the accounts whose address is in SUPERADMIN_EMAILS once their owner proved it
   * through the mailed link. A provider's claim or anyone's word is not enough for operator power;
   * such accounts wait (or are promoted with `npm run admin -- promote`).
   */
  async bootstrapSuperadmins(ctx: RequestContext, emails: readonly string[]): Promise<number> {
    let promoted = 0;
    for (const email of emails) {
      const user = await userAccounts.findByEmail(this.deps.db, normalizeEmail(email));
      if (!user || user.isSuperadmin || user.emailVerifiedVia !== "email_link") continue;
      await this.setSuperadmin(ctx, user.email, true);
      promoted++;
    }
    return promoted;
  }
}
