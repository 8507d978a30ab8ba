import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { prepareActiveAccount, prepareRefreshContext, type OidcAccountRow } from "./oidc-accounts.repository.js";
import { oidcClientsRepository } from "./oidc-clients.repository.js";
import { oidcConsentsRepository } from "./oidc-consents.repository.js";
import { getActiveMembership } from "../access/index.js";

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

/** A stored provider model: its payload and when it was consumed. */
export interface StoredPayload {
  payload: Record<string, unknown>;
  consumedAt: Date | null;
}

/** A refresh token with what the refresh grant reads next: its grant and its account. */
export interface RefreshTokenContext {
  token: StoredPayload;
  /** The grant the token names (`row` undefined: no live grant under that key); absent when it names none. */
  grant?: { key: string; row: StoredPayload | undefined };
  /** The token's account (`account` undefined: not an active account); absent when its id cannot name one. */
  account?: { sub: string; account: OidcAccount | undefined };
  /** A spent token's successor, stored by the rotation that spent it: its row key, and whether it is still unspent. */
  rotatedTo?: { key: string; unspent: boolean };
}

const none = () => new Error("not found");
const accountOf = (row: OidcAccountRow): OidcAccount => ({ userId: row.userId, email: row.email, emailVerified: row.verifiedAt !== null, name: row.name, updatedAt: row.updatedAt });

/**
 * What the OIDC provider asks about people: who may receive tokens (active, not deleted users),
 * their claims, and the consents they gave.
 */
export class OidcIdentityService {
  /** Read on every token the provider issues: prepared once. */
  private readonly findActive = prepareActiveAccount(this.db);
  /** Read on every refresh grant: prepared once. */
  private readonly findRefreshContext = prepareRefreshContext(this.db);

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
    return row ? accountOf(row) : undefined;
  }

  /**
   * A live refresh token by its row key, with its grant and its account as `findActiveAccount`
   * answers for it, read in one statement (the refresh grant asks for the three in turn).
   */
  async refreshTokenContext(key: string, now: Date): Promise<RefreshTokenContext | undefined> {
    const [row] = await this.findRefreshContext.execute({ id: key, now: now.toISOString() });
    if (!row) return undefined;
    const sub = row.payload.accountId;
    return {
      token: { payload: row.payload, consumedAt: row.consumedAt },
      ...(row.grantKey ? { grant: { key: row.grantKey, row: row.grantFound ? { payload: row.grantPayload!, consumedAt: row.grantConsumedAt } : undefined } } : {}),
      ...(row.accountLooked && typeof sub === "string"
        ? { account: { sub, account: row.userId ? accountOf({ userId: row.userId, email: row.email!, verifiedAt: row.verifiedAt, name: row.name, updatedAt: row.updatedAt! }) : undefined } }
        : {}),
      ...(row.successorKey ? { rotatedTo: { key: row.successorKey, unspent: row.successorUnspent } } : {}),
    };
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
    return oidcClientsRepository.summary(this.db, clientId);
  }

  /** The scopes this user already agreed to give this client. */
  async rememberedScopes(userId: string, clientId: string): Promise<Set<string>> {
    return new Set(await oidcConsentsRepository.scopesOf(this.db, userId, clientId));
  }

  /** Records consent (adding to what was given before) and audits it. */
  async rememberConsent(ctx: RequestContext, userId: string, clientId: string, scopes: string[]): Promise<void> {
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      await oidcConsentsRepository.add(tx, { userId, clientId, scopes, now });
      await this.audit.record(tx, ctx, AuditAction.oidcConsentGiven, { userId, resourceType: "oidc_client", resourceId: clientId, metadata: { scopes } });
    });
  }
}
