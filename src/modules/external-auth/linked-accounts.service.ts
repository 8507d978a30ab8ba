import type { Db, Executor } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { reachUser } from "../admin/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { type CredentialsService, mfaMethodsOf, type SessionsService } from "../auth/index.js";
import { isAppError } from "../../lib/errors.js";
import { userAccounts } from "../users/index.js";
import { externalIdentitiesRepository, type IdentityRow } from "./external-identities.repository.js";
import { ExternalAuthErrors } from "./external-auth.errors.js";
import type { OAuthProvidersService } from "./oauth-providers.service.js";
import { PROVIDER_LABEL } from "./external-auth.schemas.js";
import { requirePersonalUser } from "../access/index.js";

export interface LinkedAccountView {
  provider: string;
  providerName: string;
  email: string | null;
  emailVerified: boolean;
  username: string | null;
  displayName: string | null;
  avatarUrl: string | null;
  linkedAt: Date;
  lastUsedAt: Date | null;
}

/**
 * One of a person's own SSO identities (its provider-side subject stays out), as the sso module
 * lists it through SsoIdentitiesPort (src/container.ts wires it) beside GitHub and Google.
 */
export interface SsoIdentityView {
  id: string;
  connectionId: string;
  connectionName: string;
  kind: "oidc" | "saml";
  organization: { id: string; name: string; slug: string };
  email: string | null;
  linkedAt: Date;
  lastUsedAt: Date | null;
  /** Why unlinking it is refused: the organization manages the account, or requires SSO for its address; null when the person may (the sso module still decides). */
  unlinkBlockedBy: "managed" | "sso_required" | null;
}

export interface SsoIdentitiesPort {
  listOf(db: Executor, userId: string): Promise<SsoIdentityView[]>;
}

export interface LinkedAccountsDeps {
  db: Db;
  /** The person's organizations' SSO identities, listed beside GitHub and Google. */
  ssoIdentities?: SsoIdentitiesPort;
  credentials: Pick<CredentialsService, "hasPassword">;
  sessions: SessionsService;
  audit: AuditService;
  providers: OAuthProvidersService;
}

const toView = (r: IdentityRow): LinkedAccountView => ({
  provider: r.provider,
  providerName: PROVIDER_LABEL[r.provider],
  email: r.email,
  emailVerified: r.emailVerified,
  username: r.username,
  displayName: r.displayName,
  avatarUrl: r.avatarUrl,
  linkedAt: r.createdAt,
  lastUsedAt: r.lastUsedAt,
});

/** The external identities linked to an account: listing and unlinking, by the user or an admin. */
export class LinkedAccountsService {
  constructor(private readonly deps: LinkedAccountsDeps) {}

  /** The providers an account is linked to, each once (its profile lists them). */
  async providersOf(userId: string): Promise<string[]> {
    return [...new Set((await externalIdentitiesRepository.listForUser(this.deps.db, userId)).map((i) => i.provider))];
  }

  async listMine(ctx: RequestContext): Promise<{ linkedAccounts: LinkedAccountView[]; unlinkAvailable: boolean; ssoIdentities: SsoIdentityView[] }> {
    const actor = requirePersonalUser(ctx);
    const rows = await externalIdentitiesRepository.listForUser(this.deps.db, actor.userId);
    // Unlinking is possible while some other way to sign in would remain.
    const others = await this.otherSignInMethods(this.deps.db, actor.userId);
    const ssoIdentities = (await this.deps.ssoIdentities?.listOf(this.deps.db, actor.userId)) ?? [];
    return { linkedAccounts: rows.map(toView), unlinkAvailable: rows.length > 1 || (rows.length === 1 && others > 0), ssoIdentities };
  }

  /** Ways in besides SSO identities: GitHub/Google identities, a password, passkeys (SSO unlinking asks, through a port). */
  async countBesidesSso(db: Executor, userId: string): Promise<number> {
    return (await externalIdentitiesRepository.listForUser(db, userId)).length + (await this.otherSignInMethods(db, userId));
  }

  /** Unlinks one provider, as long as the account keeps at least one way to sign in. */
  async unlinkMine(ctx: RequestContext, provider: unknown): Promise<void> {
    const actor = requirePersonalUser(ctx);
    const name = this.deps.providers.parseProvider(provider);
    const { db, audit } = this.deps;
    try {
      await db.transaction(async (tx) => {
        // One change to the account's ways in at a time: two concurrent unlinks cannot both pass.
        await userAccounts.lock(tx, actor.userId);
        const gone = await externalIdentitiesRepository.delete(tx, actor.userId, name);
        if (!gone) throw ExternalAuthErrors.notLinked(PROVIDER_LABEL[name]);
        // Would lock the owner out: no password, no passkey, no other linked identity.
        if ((await externalIdentitiesRepository.countOthers(tx, actor.userId, name)) === 0 && (await this.otherSignInMethods(tx, actor.userId)) === 0) {
          throw ExternalAuthErrors.lastSignInMethod();
        }
        await audit.record(tx, ctx, AuditAction.externalUnlinked, { metadata: { provider: name, subject: gone.subject } });
      });
    } catch (e) {
      if (isAppError(e)) await audit.record(db, ctx, AuditAction.externalUnlinked, { success: false, errorMessage: e.message, metadata: { provider: name, code: e.code } });
      throw e;
    }
  }

  async listForUser(ctx: RequestContext, userId: string): Promise<LinkedAccountView[]> {
    const actor = requirePersonalUser(ctx);
    const target = await reachUser(this.deps.db, actor, userId, { allowSelf: true });
    return (await externalIdentitiesRepository.listForUser(this.deps.db, target.id)).map(toView);
  }

  /**
   * An administrator removes a user's link (a compromised or departed external account) and ends
   * the user's sessions. Unlike the user, an admin may remove the last one: they can also set a
   * password for the account, and the user can reset theirs by email.
   */
  async unlinkForUser(ctx: RequestContext, userId: string, provider: unknown): Promise<void> {
    const actor = requirePersonalUser(ctx);
    const name = this.deps.providers.parseProvider(provider);
    const targetId = await this.deps.db.transaction(async (tx) => {
      const target = await reachUser(tx, actor, userId, { allowSelf: false, what: "unlink a provider from" });
      const gone = await externalIdentitiesRepository.delete(tx, target.id, name);
      if (!gone) throw ExternalAuthErrors.notLinked(PROVIDER_LABEL[name]);
      await this.deps.audit.record(tx, ctx, AuditAction.adminExternalUnlinked, {
        userId: target.id,
        resourceType: "user",
        resourceId: target.id,
        metadata: { provider: name, subject: gone.subject },
      });
      return target.id;
    });
    // A removed identity may be compromised: nothing it signed in may stay signed in.
    await this.deps.sessions.revokeAll(targetId);
  }

  /** Ways in besides external identities: a password, or a passkey (usernameless sign-in). */
  private async otherSignInMethods(db: Executor, userId: string): Promise<number> {
    const [password, mfa] = await Promise.all([this.deps.credentials.hasPassword(db, userId), mfaMethodsOf(db, userId)]);
    return (password ? 1 : 0) + mfa.webauthn;
  }
}
