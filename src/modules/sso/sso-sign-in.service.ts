import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import { pkceChallenge, randomToken, type SecretBox, sealContexts } from "../../lib/crypto/index.js";
import { type AppError, isAppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { requirePersonalUser } from "../access/index.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { DomainsService } from "../domains/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { SsoIdpError, type LogoutTokenClaims, type OidcClaims, type OidcConnectionClient } from "./oidc-connection.client.js";
import { oidcConfigOf } from "./sso-connections.service.js";
import { ssoConnectionsRepository, type ConnectionRow } from "./sso-connections.repository.js";
import { findConnectionSecretPrivileged } from "./sso-connections.secrets.repository.js";
import type { SsoFlow, SsoFlowStore } from "./sso-flow.store.js";
import { newTrace, safeNext, type SsoCallbackOutcome, type SsoIdentityService } from "./sso-identity.service.js";
import type { SamlSignInService } from "./saml-sign-in.service.js";
import { oidcIdpSession, type SsoSessionIndex } from "./sso-sessions.store.js";
import { SsoErrors } from "./sso.errors.js";
import { ssoCallbackQuerySchema, ssoDiscoverSchema, ssoStartQuerySchema, type SsoCallbackQueryInput, type SsoDiscoverInput, type SsoStartQueryInput } from "./sso.schemas.js";

export interface SsoSignInDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  box: SecretBox;
  audit: AuditService;
  limits: RateLimitService;
  client: OidcConnectionClient;
  flows: SsoFlowStore;
  domains: Pick<DomainsService, "findVerifiedOrganizationForEmail">;
  identity: SsoIdentityService;
  saml: SamlSignInService;
  index: SsoSessionIndex;
  config: { publicUrl: string; rate: RateRule; discoverRate: RateRule };
}

/** Home-realm discovery's answer: the same shape (and, without SSO, the same value) for every address. */
export interface SsoDiscovery {
  sso: boolean;
  startUrl: string | null;
}

export interface SsoFlowStarted {
  /** Where the browser goes next: the provider's authorization endpoint, or the IdP's SSO URL with a SAMLRequest. */
  authorizationUrl: string;
  kind: "oidc" | "saml";
  /** The browser-binding value to keep in an HttpOnly cookie until the callback. */
  binding: string;
  /** SAML over HTTP-POST: the fields the browser posts to `authorizationUrl` (an auto-submitting form) instead of a redirect. */
  post?: { SAMLRequest: string; RelayState: string };
}

const BINDING = /^[A-Za-z0-9_-]{43}$/;

/**
 * Sign-in through an organization's own identity provider (issue 35): home-realm discovery by
 * email, then for OpenID Connect the code flow with state, nonce and PKCE pinned to one connection
 * (a SAML connection goes to SamlSignInService). The person behind the answer is resolved by
 * SsoIdentityService, the same for both protocols.
 */
export class SsoSignInService {
  constructor(private readonly deps: SsoSignInDeps) {}

  /**
   * Home-realm discovery. An address whose domain has no enabled connection (unclaimed, claimed but
   * unverified, or verified without a connection) gets one answer, SSO_NOT_AVAILABLE: it reveals
   * only what following a sign-in link would, and never whether an account exists.
   */
  async startByEmail(ctx: RequestContext, input: SsoStartQueryInput, binding: string | undefined): Promise<SsoFlowStarted> {
    await this.deps.limits.consume("sso-start", this.deps.config.rate, ctx.ip ?? "unknown");
    const { email, next } = parseInput(ssoStartQuerySchema, input);
    const connection = email ? await this.routeFor(email) : undefined;
    if (!connection) throw SsoErrors.notAvailable();
    return this.begin(connection, "login", null, binding, email, safeNext(next));
  }

  async startByConnection(ctx: RequestContext, connectionId: string, binding: string | undefined, query: Pick<SsoStartQueryInput, "next"> = {}): Promise<SsoFlowStarted> {
    await this.deps.limits.consume("sso-start", this.deps.config.rate, ctx.ip ?? "unknown");
    const { next } = parseInput(ssoStartQuerySchema, query);
    const connection = await this.enabledConnection(connectionId);
    return this.begin(connection, "login", null, binding, undefined, safeNext(next));
  }

  /**
   * Home-realm discovery without starting a flow: does this address's domain route to an enabled
   * connection of the organization that verified it? Decided by the domain alone (never by whether
   * an account exists), so every address without SSO gets the same answer; limited per client
   * address like sign-in attempts, not like flow starts.
   */
  async discover(ctx: RequestContext, input: SsoDiscoverInput): Promise<SsoDiscovery> {
    await this.deps.limits.consume("sso-discover", this.deps.config.discoverRate, ctx.ip ?? "unknown");
    const { email } = parseInput(ssoDiscoverSchema, input);
    const connection = await this.routeFor(email);
    if (!connection) return { sso: false, startUrl: null };
    const startUrl = new URL("/sso/start", this.deps.config.publicUrl);
    startUrl.searchParams.set("email", email);
    return { sso: true, startUrl: startUrl.toString() };
  }

  private async routeFor(email: string): Promise<ConnectionRow | undefined> {
    const orgId = await this.deps.domains.findVerifiedOrganizationForEmail(normalizeEmail(email));
    return orgId ? await ssoConnectionsRepository.findEnabledForOrganization(this.deps.db, orgId) : undefined;
  }

  /** Starts linking the signed-in account to its organization's identity provider (its consent). */
  async startLink(ctx: RequestContext, connectionId: string, binding: string | undefined): Promise<SsoFlowStarted> {
    const actor = requirePersonalUser(ctx);
    const connection = await this.enabledConnection(connectionId);
    const started = await this.begin(connection, "link", actor.userId, binding, actor.email);
    await this.deps.audit.record(this.deps.db, ctx, AuditAction.ssoLinkStarted, { organizationId: connection.organizationId, metadata: { connectionId: connection.id, connectionName: connection.name } });
    return started;
  }

  /** The provider sent the browser back: whatever happens, the answer is a redirect. */
  async complete(ctx: RequestContext, query: SsoCallbackQueryInput, binding: string | undefined): Promise<SsoCallbackOutcome> {
    const trace = newTrace();
    try {
      await this.deps.limits.consume("sso-start", this.deps.config.rate, ctx.ip ?? "unknown");
      const q = parseInput(ssoCallbackQuerySchema, query);
      const taken = q.state ? await this.deps.flows.take(q.state, binding) : { refused: "unknown_or_used" as const };
      trace.flow = taken.flow ?? null;
      trace.userId = taken.flow?.userId ?? null;
      if ("refused" in taken) {
        trace.refusal = taken.refused;
        throw SsoErrors.invalidState();
      }
      const flow = taken.flow;
      const connection = await ssoConnectionsRepository.findById(this.deps.db, flow.connectionId);
      // Removed or disabled while the person was at the provider.
      if (!connection?.enabled || connection.kind !== "oidc") throw SsoErrors.notAvailable();
      trace.connection = connection;
      if (q.error) throw q.error === "access_denied" ? SsoErrors.cancelled() : SsoErrors.providerError(q.error);
      if (!q.code) throw SsoErrors.invalidState();
      const claims = await this.exchange(connection, flow, q);
      trace.subject = claims.subject;
      if (flow.flow === "link") return await this.deps.identity.link(ctx, connection, flow, claims, trace);
      // Which sessions this connection issued (and in which provider session), for back-channel
      // logout: kept with the session, or with a pending link until its confirmation opens one.
      const idpSession = oidcIdpSession(claims);
      const outcome = await this.deps.identity.signIn(ctx, connection, claims, trace, { next: flow.next ?? null, idpSession });
      if (outcome.session) await this.deps.index.issued(outcome.session.sessionId, connection, outcome.session.user.id, idpSession);
      return outcome;
    } catch (e) {
      return this.deps.identity.failed(ctx, trace, e);
    }
  }

  /** Checks a back-channel logout token of an OpenID Connect connection with its settings (see OidcConnectionClient.verifyLogoutToken). */
  async verifyLogoutToken(connection: ConnectionRow, token: string, clockSkewSeconds: number): Promise<LogoutTokenClaims> {
    return this.deps.client.verifyLogoutToken(await this.settings(connection), token, clockSkewSeconds, this.deps.clock.now());
  }

  private async enabledConnection(connectionId: string): Promise<ConnectionRow> {
    const id = parseId(connectionId, SsoErrors.notAvailable);
    const connection = await ssoConnectionsRepository.findById(this.deps.db, id);
    // Unknown, removed and disabled connections answer alike.
    if (!connection?.enabled) throw SsoErrors.notAvailable();
    return connection;
  }

  private async begin(connection: ConnectionRow, kind: SsoFlow["flow"], userId: string | null, binding: string | undefined, loginHint?: string, next: string | null = null): Promise<SsoFlowStarted> {
    const bind = binding && BINDING.test(binding) ? binding : randomToken(32);
    if (connection.kind === "saml") {
      const start = await this.deps.saml.begin(connection, kind, userId, bind, next);
      return { authorizationUrl: start.url, kind: "saml", binding: bind, ...(start.fields ? { post: start.fields } : {}) };
    }
    const { state, flow } = await this.deps.flows.create({ connectionId: connection.id, flow: kind, userId, next }, bind);
    const settings = await this.settings(connection);
    const url = await this.deps.client
      .authorizationUrl(settings, { state, nonce: flow.nonce, codeChallenge: pkceChallenge(flow.codeVerifier), redirectUri: this.callbackUrl(), ...(loginHint ? { loginHint } : {}) })
      .catch((e: unknown) => {
        throw this.upstream(e);
      });
    return { authorizationUrl: url.toString(), kind: "oidc", binding: bind };
  }

  private callbackUrl(): string {
    return new URL("/sso/oidc/callback", this.deps.config.publicUrl).toString();
  }

  private async settings(connection: ConnectionRow) {
    const sealed = await findConnectionSecretPrivileged(this.deps.db, connection.id);
    const secret = sealed ? this.deps.box.decryptString(sealed, sealContexts.ssoConnectionSecret(connection.id)) : null;
    return { connectionId: connection.id, version: connection.updatedAt.toISOString(), config: oidcConfigOf(connection), secret };
  }

  private async exchange(connection: ConnectionRow, flow: SsoFlow, q: { code?: string; state?: string; iss?: string }): Promise<OidcClaims> {
    const redirectUri = this.callbackUrl();
    const callbackUrl = new URL(redirectUri);
    callbackUrl.search = new URLSearchParams({ code: q.code!, state: q.state!, ...(q.iss ? { iss: q.iss } : {}) }).toString();
    return this.deps.client
      .exchange(await this.settings(connection), { callbackUrl, state: q.state!, nonce: flow.nonce, codeVerifier: flow.codeVerifier, redirectUri })
      .catch((e: unknown) => {
        throw this.upstream(e);
      });
  }

  private upstream(e: unknown): AppError {
    if (isAppError(e)) return e;
    this.deps.logger.warn({ err: e instanceof SsoIdpError ? (e.detail ?? e.message) : e }, "identity provider call failed");
    return SsoErrors.providerError(e instanceof SsoIdpError ? e.reason : "unexpected response");
  }
}
