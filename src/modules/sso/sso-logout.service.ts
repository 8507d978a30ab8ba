import type { KeyValueStore } from "../../infra/kv.js";
import type { Logger } from "../../infra/logger.js";
import { sha256Hex } from "../../lib/crypto/index.js";
import { isAppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseId } from "../../lib/validation.js";
import { AuditAction } from "../audit/index.js";
import type { LoginService, SessionsService } from "../auth/index.js";
import type { CoreDeps } from "../module-deps.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { SsoIdpError } from "./oidc-connection.client.js";
import type { SamlLogoutService } from "./saml-logout.service.js";
import { ssoConnectionsRepository, type ConnectionRow } from "./sso-connections.repository.js";
import type { SsoSignInService } from "./sso-sign-in.service.js";
import { ssoIdentitiesRepository as identities } from "./sso-identities.repository.js";
import type { SsoSessionIndex } from "./sso-sessions.store.js";
import { SsoErrors } from "./sso.errors.js";

const CLOCK_SKEW_SECONDS = 90;
/** A jti is remembered longer than a logout token is accepted (max age + skew), so a replay always finds it. */
const JTI_TTL_SECONDS = 15 * 60;

export interface SsoLogoutDeps extends CoreDeps {
  logger: Logger;
  kv: KeyValueStore;
  limits: RateLimitService;
  index: SsoSessionIndex;
  oidc: Pick<SsoSignInService, "verifyLogoutToken">;
  saml: Pick<SamlLogoutService, "logoutRequestUrl">;
  login: Pick<LoginService, "logout">;
  sessions: Pick<SessionsService, "revoke">;
  config: { rate: RateRule };
}

export interface SignedOut {
  /** Where the browser goes next to end the IdP session too (SAML single logout); null when there is nowhere. */
  idpLogoutUrl: string | null;
}

/**
 * Logout across an organization's identity provider (issue 35): Keyward's own sign-out, which for a
 * session a SAML connection issued also sends the browser to the IdP with a LogoutRequest, and the
 * provider's OpenID Connect back-channel logout, which ends the sessions a connection issued.
 */
export class SsoLogoutService {
  constructor(private readonly deps: SsoLogoutDeps) {}

  /**
   * Signs out of the session the request came through. That session ends first, whatever the IdP
   * does later; the LogoutRequest is only a courtesy to the IdP, so a failure to build it is logged
   * and the sign-out still succeeds.
   */
  async signOut(ctx: RequestContext): Promise<SignedOut> {
    const sessionId = ctx.actor.kind === "user" ? ctx.actor.sessionId : undefined;
    const userId = ctx.actor.kind === "user" ? ctx.actor.userId : undefined;
    const record = sessionId ? await this.deps.index.of(sessionId).catch(() => null) : null;
    await this.deps.login.logout(ctx);
    // Another person's record under this id cannot happen; the check keeps it that way.
    if (!sessionId || !record || record.userId !== userId) return { idpLogoutUrl: null };
    try {
      // Of parallel sign-outs of one session, only the one that dropped its record goes on to the IdP.
      if (!(await this.deps.index.forget(sessionId, record))) return { idpLogoutUrl: null };
      if (record.kind !== "saml") return { idpLogoutUrl: null };
      return { idpLogoutUrl: await this.deps.saml.logoutRequestUrl(record) };
    } catch (err) {
      this.deps.logger.warn({ err, connectionId: record.connectionId }, "could not start single logout at the IdP: the Keyward session has ended");
      return { idpLogoutUrl: null };
    }
  }

  /**
   * OpenID Connect Back-Channel Logout 1.0: the provider posts a logout token for this connection.
   * Once it passes every check (OidcConnectionClient.verifyLogoutToken) and its jti is new, the
   * Keyward sessions this connection issued for that person (or within that provider session) end.
   */
  async backchannelLogout(ctx: RequestContext, connectionId: string, body: { logout_token?: unknown }): Promise<{ sessionsEnded: number }> {
    await this.deps.limits.consume("sso-backchannel-logout", this.deps.config.rate, ctx.ip ?? "unknown");
    const id = parseId(connectionId, () => SsoErrors.logoutTokenInvalid("unknown connection"));
    const connection = await ssoConnectionsRepository.findById(this.deps.db, id);
    // Unknown, disabled and SAML connections alike: nothing to end here.
    if (!connection?.enabled || connection.kind !== "oidc") throw SsoErrors.logoutTokenInvalid("unknown connection");
    const token = body.logout_token;
    try {
      if (typeof token !== "string" || token.length === 0 || token.length > 16_384) throw new SsoIdpError("logout_token is missing");
      const claims = await this.deps.oidc.verifyLogoutToken(connection, token, CLOCK_SKEW_SECONDS);
      // Replay: each logout token is acted on once (set-if-absent: of parallel copies, one passes).
      if (!(await this.deps.kv.add(`oidc-logout-jti:${connection.id}:${sha256Hex(claims.jti)}`, "1", JTI_TTL_SECONDS))) throw new SsoIdpError("the logout token was already used");
      return await this.endSessions(ctx, connection, claims);
    } catch (e) {
      const reason = e instanceof SsoIdpError ? e.reason : isAppError(e) ? e.message : "unexpected error";
      if (!(e instanceof SsoIdpError) && !isAppError(e)) this.deps.logger.error({ err: e, connectionId: connection.id }, "back-channel logout failed");
      else this.deps.logger.warn({ reason, connectionId: connection.id, detail: e instanceof SsoIdpError ? e.detail : undefined }, "back-channel logout refused");
      await this.deps.audit.record(this.deps.db, ctx, AuditAction.ssoLogout, {
        organizationId: connection.organizationId,
        success: false,
        errorMessage: reason,
        metadata: { connectionId: connection.id, initiatedBy: "idp", channel: "backchannel" },
      });
      throw SsoErrors.logoutTokenInvalid(reason);
    }
  }

  private async endSessions(ctx: RequestContext, connection: ConnectionRow, claims: { sub?: string; sid?: string }): Promise<{ sessionsEnded: number }> {
    const identity = claims.sub ? await identities.findBySubject(this.deps.db, connection.id, claims.sub) : undefined;
    // With a sid: that provider session's Keyward sessions (of that person when sub is given too); else all of the person's.
    const targets = claims.sid
      ? (await this.deps.index.sessionsWithSid(connection.id, claims.sid)).filter((t) => !claims.sub || t.userId === identity?.userId)
      : identity
        ? (await this.deps.index.sessionsOf(connection.id, identity.userId)).map((sessionId) => ({ sessionId, userId: identity.userId }))
        : [];
    let ended = 0;
    for (const t of targets) {
      if (await this.deps.sessions.revoke(t.userId, t.sessionId)) ended++;
      const record = await this.deps.index.of(t.sessionId);
      await this.deps.index.forget(t.sessionId, record ?? { connectionId: connection.id, userId: t.userId, ...(claims.sid ? { sid: claims.sid } : {}) });
    }
    const people = [...new Set(targets.map((t) => t.userId))];
    await this.deps.audit.record(this.deps.db, ctx, AuditAction.ssoLogout, {
      userId: people.length === 1 ? people[0]! : (identity?.userId ?? null),
      organizationId: connection.organizationId,
      metadata: { connectionId: connection.id, initiatedBy: "idp", channel: "backchannel", subject: claims.sub ?? null, bySid: Boolean(claims.sid), sessionsEnded: ended },
    });
    return { sessionsEnded: ended };
  }
}
