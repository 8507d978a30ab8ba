import { and, eq, sql } from "drizzle-orm";
import { oidcClients, oidcConsents, organizations, users } from "../../../schema/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { live } from "../../infra/soft-delete.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId } from "../../lib/validation.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";
import { getActiveMembership } from "../orgs/memberships.repository.js";

export interface OidcAccount {
  userId: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  updatedAt: Date;
}

export interface OidcClientSummary {
  clientId: string;
  name: string;
  /** Null for Keyward's own built-in clients. */
  organizationName: string | null;
}

const none = () => new Error("not found");

/**
 * What the OIDC provider asks about people: who may receive tokens (active, not deleted users),
 * their claims, and the consents they gave.
 */
export class OidcIdentityService {
  /** Read on every token the provider issues: prepared once. */
  private readonly findActive = this.db
    .select({ userId: users.id, email: users.email, verifiedAt: users.emailVerifiedAt, name: users.fullName, updatedAt: users.updatedAt })
    .from(users)
    .where(and(eq(users.id, sql.placeholder("id")), eq(users.status, "active"), live(users)))
    .prepare("oidc_account_find");

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  /** The account behind a `sub`, or undefined when it is unknown, suspended, not yet activated or deleted. */
  async findActiveAccount(sub: string): Promise<OidcAccount | undefined> {
    let id: string;
    try {
      id = parseId(sub, none);
    } catch {
      return undefined;
    }
    const [row] = await this.findActive.execute({ id });
    return row ? { userId: row.userId, email: row.email, emailVerified: row.verifiedAt !== null, name: row.name, updatedAt: row.updatedAt } : undefined;
  }

  /**
   * The `organizations` claim for a client: only the user's membership in the organization that
   * registered the client (an empty list when there is none). One organization's application
   * must not learn which other organizations its users belong to. Still a list, so relying
   * parties parse it the same way if a consented wider view is added later.
   */
  async organizationsFor(userId: string, clientOrganizationId: string | undefined): Promise<{ id: string; name: string; role: string }[]> {
    if (!clientOrganizationId) return [];
    const m = await getActiveMembership(this.db, userId, clientOrganizationId);
    return m ? [{ id: m.organizationId, name: m.organizationName, role: m.role }] : [];
  }

  /** Name and owner of a client, for the consent and device pages. */
  async clientSummary(clientId: string): Promise<OidcClientSummary | undefined> {
    const [row] = await this.db
      .select({ clientId: oidcClients.clientId, name: oidcClients.name, organizationName: organizations.name })
      .from(oidcClients)
      .leftJoin(organizations, eq(organizations.id, oidcClients.organizationId))
      .where(and(eq(oidcClients.clientId, clientId), live(oidcClients)));
    return row;
  }

  /** The scopes this user already agreed to give this client. */
  async rememberedScopes(userId: string, clientId: string): Promise<Set<string>> {
    const [row] = await this.db
      .select({ scopes: oidcConsents.scopes })
      .from(oidcConsents)
      .where(and(eq(oidcConsents.userId, userId), eq(oidcConsents.clientId, clientId)));
    return new Set(row?.scopes ?? []);
  }

  /** Records consent (adding to what was given before) and audits it. */
  async rememberConsent(ctx: RequestContext, userId: string, clientId: string, scopes: string[]): Promise<void> {
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      await tx
        .insert(oidcConsents)
        .values({ userId, clientId, scopes: [...new Set(scopes)].sort(), createdAt: now, updatedAt: now })
        .onConflictDoUpdate({
          target: [oidcConsents.userId, oidcConsents.clientId],
          set: { scopes: sql`array(select distinct unnest(${oidcConsents.scopes} || excluded.scopes) order by 1)`, updatedAt: now },
        });
      await this.audit.record(tx, ctx, AuditAction.oidcConsentGiven, { userId, resourceType: "oidc_client", resourceId: clientId, metadata: { scopes } });
    });
  }
}
