import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import type { RequestContext, UserActor } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { toPage, type Page } from "../../lib/pagination.js";
import { type AuditEntryView, AuditAction, type AuditService } from "../audit/index.js";
import { UserErrors } from "./users.errors.js";
import { type Offboarding, AccessErrors, type MembershipReader, requirePersonalUser, requireUser, soleOwnedOrganizations } from "../access/index.js";
import type { ProfileReader } from "./user-cache.js";
import { usersRepository } from "./users.repository.js";
import { auditQuerySchema, deleteMeSchema, updateMeSchema, type UpdateMeInput, type DeleteMeInput, type AuditQueryInput } from "./users.schemas.js";
import { toUserView, type MeView, type MyOrganizationView, type UserView } from "./users.views.js";

/**
 * What the account's own service asks of the modules above it (sign-in, organizations, external
 * identities), declared here and wired in the container, so that `users` imports none of them:
 * they all read accounts through this module.
 */
export interface UsersDeps extends Offboarding {
  db: Db;
  profiles: ProfileReader;
  memberships: MembershipReader;
  clock: Clock;
  audit: AuditService;
  /** Asks for the current password before a destructive step (auth's credentials). */
  credentials: { confirmCurrentPassword(ctx: RequestContext, actor: UserActor, password: string | undefined, withoutPassword: "pass"): Promise<void> };
  /** Ends every session of the account (auth's sessions). */
  sessions: { revokeAll(userId: string): Promise<unknown> };
  /** How the account signs in, for GET /users/me: its authenticator app (auth), its linked providers (oauth). */
  signInFacts: { totpEnabled(userId: string): Promise<boolean>; linkedProviders(userId: string): Promise<string[]> };
  /** Removes an organization nobody else is in, in the caller's transaction (orgs). */
  organizations: { removeWithLastMember(tx: Executor, organizationId: string, now: Date): Promise<void> };
}

/** The signed-in user's own account. */
export class UsersService {
  constructor(private readonly deps: UsersDeps) {}

  async getMe(ctx: RequestContext): Promise<MeView> {
    const actor = requireUser(ctx);
    // Usually the row the caller was resolved from a moment ago, from memory.
    const user = await this.deps.profiles.get(actor.userId);
    if (!user) throw UserErrors.notFound();
    return {
      ...toUserView(user),
      hasPassword: Boolean(user.hasPassword),
      managedBy: user.managedByOrganizationId && user.managedByName ? { id: user.managedByOrganizationId, name: user.managedByName } : null,
    };
  }

  /**
   * The signed-in user with the organizations they are a member of (GET /auth/me, as the original
   * API answered it), both usually from memory: the most frequent authenticated request makes no
   * PostgreSQL round trip.
   */
  async getMeWithOrganizations(ctx: RequestContext): Promise<{ user: MeView; organizations?: MyOrganizationView[] }> {
    const actor = requireUser(ctx);
    // A delegated token sees the list only with orgs:read (profile:read lets it call this at all).
    if (actor.delegation && !actor.delegation.scopes.has("orgs:read")) return { user: await this.getMe(ctx) };
    const [user, memberships] = await Promise.all([this.getMe(ctx), this.deps.memberships.get(actor.userId)]);
    return { user, organizations: (memberships ?? []).map((m) => ({ id: m.organizationId, name: m.organizationName, slug: m.organizationSlug, role: m.role })) };
  }

  /**
   * The signed-in user's profile as GET /users/me answers it (the original API's shape): with
   * whether an authenticator app is on and which providers are linked. A delegated token gets the
   * profile alone: those two describe how the account signs in, not who it is.
   */
  async getProfile(ctx: RequestContext): Promise<MeView & { totpEnabled?: boolean; linkedProviders?: string[] }> {
    const actor = requireUser(ctx);
    if (actor.delegation) return this.getMe(ctx);
    const { signInFacts } = this.deps;
    const [me, totpEnabled, linkedProviders] = await Promise.all([this.getMe(ctx), signInFacts.totpEnabled(actor.userId), signInFacts.linkedProviders(actor.userId)]);
    return { ...me, totpEnabled, linkedProviders };
  }

  async updateMe(ctx: RequestContext, input: UpdateMeInput): Promise<UserView> {
    const actor = requirePersonalUser(ctx);
    const data = parseInput(updateMeSchema, input);
    return this.deps.db.transaction(async (tx) => {
      const updated = await usersRepository.update(tx, actor.userId, { ...data, updatedAt: this.deps.clock.now() });
      if (!updated) throw UserErrors.notFound();
      await this.deps.audit.record(tx, ctx, AuditAction.userUpdate, { metadata: { fields: Object.keys(data) } });
      return toUserView(updated);
    });
  }

  /**
   * Soft-deletes the caller's account (`deleted_at`): it can no longer sign in and disappears from
   * every query. A destructive step, so the current password is asked for when the account has one.
   */
  async deleteMe(ctx: RequestContext, input: DeleteMeInput): Promise<void> {
    const { db, clock, credentials, audit, sessions } = this.deps;
    const actor = requirePersonalUser(ctx);
    const { password } = parseInput(deleteMeSchema, input);
    await credentials.confirmCurrentPassword(ctx, actor, password, "pass");
    const offboarded = await db.transaction(async (tx) => {
      const now = clock.now();
      const offboarded: string[] = [];
      // Locks first, in the order every offboarding takes them (organizations, then the account,
      // then certificates), so a concurrent suspension, organization deletion or invitation
      // acceptance queues; what follows is decided under them.
      await this.deps.certificates.lockForRevocation(tx, { userId: actor.userId });
      const sole = await soleOwnedOrganizations(tx, actor.userId);
      // Deleting the only owner would strand the other members.
      if (sole.withOthers.length > 0) throw AccessErrors.soleOwner(sole.withOthers.map((o) => o.name));
      // Organizations with nobody else in them go with the account.
      const alone = sole.alone;
      for (const org of alone) await this.deps.organizations.removeWithLastMember(tx, org.id, now);
      await this.deps.networks.lockNetworksOf(tx, alone.map((o) => o.id));
      const deleted = await usersRepository.update(tx, actor.userId, { deletedAt: now, updatedAt: now });
      if (!deleted) throw UserErrors.notFound();
      for (const org of alone) {
        await this.deps.certificates.revokeAllOfOrganization(tx, ctx, org.id, "Organization deleted");
        offboarded.push(...(await this.deps.networks.organizationDeleted(tx, ctx, org.id)));
        await audit.record(tx, ctx, AuditAction.orgDelete, { organizationId: org.id, resourceType: "organization", resourceId: org.id, metadata: { reason: "owner account deleted" } });
      }
      await this.deps.certificates.revokeForOffboarding(tx, ctx, { userId: actor.userId, reason: "Account deleted" });
      offboarded.push(...(await this.deps.networks.personLeft(tx, ctx, { userId: actor.userId, why: "deleted" })));
      await audit.record(tx, ctx, AuditAction.userDelete, { resourceType: "user", resourceId: actor.userId, metadata: { organizations_deleted: sole.alone.map((o) => o.name) } });
      return offboarded;
    });
    await sessions.revokeAll(actor.userId);
    await this.deps.networks.apply(offboarded);
  }

  /** The caller's own activity: sign-ins, password changes, sessions revoked, … */
  async listMyAuditLog(ctx: RequestContext, input: AuditQueryInput): Promise<Page<AuditEntryView>> {
    const actor = requireUser(ctx);
    const q = parseInput(auditQuerySchema, input);
    const { items, total } = await this.deps.audit.listForUser(this.deps.db, actor.userId, q);
    return toPage(items, total, q.page, q.perPage);
  }
}
