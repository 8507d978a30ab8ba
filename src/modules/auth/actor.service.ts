import type { SessionAuth, StoredSession } from "../../infra/session-store.js";
import { API_KEY_PREFIX } from "../../lib/api-key-scopes.js";
import { CommonErrors } from "../../lib/errors.js";
import type { ApiKeyActor, Delegation, RequestContext } from "../../lib/request-context.js";
import type { ProfileReader } from "../users/index.js";
import { SESSION_TOKEN_PREFIX, type SessionsService } from "./sessions/sessions.service.js";

/** Checks an OIDC access token for Keyward's API (the oidc-clients module implements it). */
export interface DelegatedTokenVerifier {
  verify(value: string): Promise<(Delegation & { userId: string }) | null>;
}

/** Checks an organization API key (the api-keys module implements it; the container wires it). */
export interface ApiKeyVerifier {
  authenticate(secret: string): Promise<Omit<ApiKeyActor, "kind"> | null>;
}

export interface ActorSource {
  /** Value of `Authorization: Bearer …`, if any. */
  bearer?: string | null;
  /**
   * Whether an OIDC access token may stand for the user here (the API doors, which check each
   * operation's scope). Elsewhere (hosted pages, the provider's own pages) only sessions count.
   */
  acceptDelegated?: boolean;
  /**
   * Whether an organization API key may be the caller here (the API doors, where each route and
   * operation declares whether it takes keys). Elsewhere a key is refused as an invalid token.
   */
  acceptApiKeys?: boolean;
  /** Session token from the signed cookie, with the record express-session already loaded. */
  cookieToken?: string | null;
  cookieSession?: StoredSession | null;
  requestId: string;
  ip: string | null;
  userAgent: string | null;
}

/**
 * The one place that turns credentials into an actor: both transports call it with plain header
 * values. A bad bearer token is an error (the client asked to be someone); a stale cookie is not.
 */
export class ActorService {
  constructor(
    // The account behind a credential, usually from memory (src/modules/users/user-cache.ts).
    private readonly profiles: ProfileReader,
    private readonly sessions: SessionsService,
    private readonly delegated: DelegatedTokenVerifier,
    private readonly apiKeys: ApiKeyVerifier,
  ) {}

  async resolve(source: ActorSource): Promise<RequestContext> {
    const base = { requestId: source.requestId, ip: source.ip, userAgent: source.userAgent };
    const anonymous: RequestContext = { ...base, actor: { kind: "anonymous" } };

    if (source.bearer?.startsWith(API_KEY_PREFIX)) {
      // Unknown, revoked, of a deleted organization, or not accepted here: one answer for all.
      const key = source.acceptApiKeys ? await this.apiKeys.authenticate(source.bearer) : null;
      if (!key) throw CommonErrors.invalidToken();
      return { ...base, actor: { kind: "apiKey", ...key } };
    }
    if (source.bearer && !source.bearer.startsWith(SESSION_TOKEN_PREFIX)) {
      const ctx = source.acceptDelegated ? await this.fromAccessToken(source.bearer, base) : null;
      if (!ctx) throw CommonErrors.invalidToken();
      return ctx;
    }
    if (source.bearer) {
      const ctx = await this.fromSessionToken(source.bearer, null, base);
      if (!ctx) throw CommonErrors.invalidToken();
      return ctx;
    }
    if (source.cookieToken && source.cookieSession?.auth) {
      return (await this.fromSessionToken(source.cookieToken, source.cookieSession, base)) ?? anonymous;
    }
    return anonymous;
  }

  /**
   * The browser's sign-in and its session record (when it began, how): the OIDC provider reuses
   * it for single sign-on and reports it in `auth_time` and `amr`.
   */
  async resolveBrowserSession(source: ActorSource): Promise<{ ctx: RequestContext; session: SessionAuth } | null> {
    if (!source.cookieToken || !source.cookieSession?.auth) return null;
    const base = { requestId: source.requestId, ip: source.ip, userAgent: source.userAgent };
    const ctx = await this.fromSessionToken(source.cookieToken, source.cookieSession, base);
    return ctx ? { ctx, session: source.cookieSession.auth } : null;
  }

  /** A delegated caller: the user, limited to the token's scopes, never superadmin, no session. */
  private async fromAccessToken(token: string, base: Omit<RequestContext, "actor">): Promise<RequestContext | null> {
    const delegation = await this.delegated.verify(token);
    if (!delegation) return null;
    const user = await this.profiles.get(delegation.userId);
    // Suspended and deleted accounts' tokens stop at once, whatever their expiry.
    if (!user || user.status !== "active") return null;
    const { userId: _userId, ...rest } = delegation;
    return { ...base, actor: { kind: "user", userId: user.id, email: user.email, isSuperadmin: false, sessionId: null, delegation: rest } };
  }

  private async fromSessionToken(
    token: string,
    preloaded: StoredSession | null,
    base: Omit<RequestContext, "actor">,
  ): Promise<RequestContext | null> {
    const session = await this.sessions.resolve(token, preloaded);
    if (!session) return null;
    const user = await this.profiles.get(session.userId);
    // A session outliving its user's suspension or deletion must not authenticate anything.
    if (!user || user.status !== "active") {
      await this.sessions.revokeAll(session.userId);
      return null;
    }
    return {
      ...base,
      actor: { kind: "user", userId: user.id, email: user.email, isSuperadmin: user.isSuperadmin, sessionId: session.id, signedInAt: session.createdAt },
    };
  }
}
