import type { KeyValueStore } from "../../infra/kv.js";
import type { Logger } from "../../infra/logger.js";
import { randomToken, sha256Hex } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import { SamlError, buildLogoutRequest, buildLogoutResponse, isSamlError, validateLogoutRequest, validateLogoutResponse } from "../../lib/saml/index.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseId } from "../../lib/validation.js";
import { AuditAction } from "../audit/index.js";
import type { SessionsService } from "../auth/index.js";
import type { SealingDeps } from "../module-deps.js";
import { enabledSamlConnection, pinnedCerts, samlConfigOf, spUrls } from "./saml-config.js";
import { openSamlSpKeys, type SamlSpKeys } from "./saml-connection.builder.js";
import { CLOCK_SKEW_SECONDS } from "./saml-replay.store.js";
import { ssoConnectionsRepository, type ConnectionRow } from "./sso-connections.repository.js";
import { findConnectionSecretPrivileged } from "./sso-connections.secrets.repository.js";
import { ssoIdentitiesRepository as identities } from "./sso-identities.repository.js";
import type { SsoSessionIndex, SsoSessionRecord } from "./sso-sessions.store.js";
import { SsoErrors } from "./sso.errors.js";

/** How long Keyward waits for the IdP's answer to a LogoutRequest it sent. */
const LOGOUT_TTL_SECONDS = 600;

/** The database, clock, audit trail and secret box (the SP keys), and what single logout adds. */
export interface SamlLogoutDeps extends SealingDeps {
  logger: Logger;
  kv: KeyValueStore;
  sessions: Pick<SessionsService, "revoke">;
  index: SsoSessionIndex;
  config: { publicUrl: string };
}

/**
 * SAML 2.0 single logout (issue 35), both ways over HTTP-Redirect: the signed LogoutRequest a
 * Keyward sign-out sends the browser on with, the IdP's answer to it, and the IdP's own
 * LogoutRequest, which ends the Keyward sessions the connection issued to that person.
 */
export class SamlLogoutService {
  constructor(private readonly deps: SamlLogoutDeps) {}

  /**
   * SP-initiated single logout: the signed LogoutRequest (HTTP-Redirect) for a session that has
   * already ended, naming the assertion's NameID and SessionIndex; null when the IdP offers no
   * SingleLogoutService or the connection is gone. The request id waits for the IdP's answer under
   * the RelayState, once.
   */
  async logoutRequestUrl(record: SsoSessionRecord): Promise<string | null> {
    const id = parseId(record.connectionId, SsoErrors.notAvailable);
    const connection = await ssoConnectionsRepository.findById(this.deps.db, id);
    if (!connection?.enabled || connection.kind !== "saml" || !record.nameId) return null;
    const c = samlConfigOf(connection);
    if (!c.idpSloUrl) return null;
    const sp = spUrls(this.deps.config.publicUrl, connection.id);
    const keys = await this.keys(connection.id);
    const relayState = randomToken(32);
    const request = buildLogoutRequest({
      spEntityId: sp.entityId,
      idpSloUrl: c.idpSloUrl,
      nameId: record.nameId,
      ...(record.nameIdFormat ? { nameIdFormat: record.nameIdFormat } : {}),
      ...(record.sessionIndex ? { sessionIndex: record.sessionIndex } : {}),
      signingKeyPem: keys.signingKeyPem,
      relayState,
      now: this.deps.clock.now(),
    });
    await this.deps.kv.set(this.logoutKey(connection.id, relayState), JSON.stringify({ requestId: request.id, userId: record.userId }), LOGOUT_TTL_SECONDS);
    return request.url;
  }

  /**
   * The connection's SLO endpoint (HTTP-Redirect): the IdP's answer to a logout Keyward started, or
   * an IdP-initiated LogoutRequest (signed by a pinned certificate), which ends the Keyward sessions
   * this connection issued to that person and is answered with a signed LogoutResponse.
   */
  async slo(ctx: RequestContext, connectionId: string, rawQuery: string): Promise<{ redirectTo: string }> {
    const connection = await enabledSamlConnection(this.deps.db, connectionId);
    const c = samlConfigOf(connection);
    const sp = spUrls(this.deps.config.publicUrl, connection.id);
    const now = this.deps.clock.now();
    // The answer to a logout Keyward started.
    if (/(^|&)SAMLResponse=/.test(rawQuery) && !/(^|&)SAMLRequest=/.test(rawQuery)) return this.logoutResponse(ctx, connection, rawQuery);
    let request: ReturnType<typeof validateLogoutRequest>;
    try {
      request = validateLogoutRequest(rawQuery, { idpEntityId: c.idpEntityId, idpCertsPem: pinnedCerts(c, now), sloUrl: sp.sloUrl, now, clockSkewSeconds: CLOCK_SKEW_SECONDS });
    } catch (e) {
      if (!isSamlError(e)) throw e;
      this.deps.logger.warn({ code: e.code, reason: e.message, connectionId: connection.id }, "SAML logout request refused");
      throw SsoErrors.samlRefused(e.code);
    }
    const identity = (await identities.findBySubject(this.deps.db, connection.id, request.nameId)) ?? (await identities.findBySubject(this.deps.db, connection.id, normalizeEmail(request.nameId)));
    let ended = 0;
    if (identity) {
      for (const sessionId of await this.deps.index.sessionsOf(connection.id, identity.userId)) {
        if (await this.deps.sessions.revoke(identity.userId, sessionId)) ended++;
        await this.deps.index.forget(sessionId, { connectionId: connection.id, userId: identity.userId });
      }
      await this.deps.audit.record(this.deps.db, ctx, AuditAction.ssoLogout, { userId: identity.userId, organizationId: connection.organizationId, metadata: { connectionId: connection.id, sessionsEnded: ended } });
    }
    const relay = /(?:^|&)RelayState=([^&]*)/.exec(rawQuery)?.[1];
    if (!c.idpSloUrl) return { redirectTo: new URL("/login", this.deps.config.publicUrl).toString() };
    const keys = c.signAuthnRequests ? await this.keys(connection.id) : null;
    const redirectTo = buildLogoutResponse({ spEntityId: sp.entityId, idpSloUrl: c.idpSloUrl, inResponseTo: request.id, now, ...(keys ? { signingKeyPem: keys.signingKeyPem } : {}), ...(relay ? { relayState: decodeURIComponent(relay) } : {}) });
    return { redirectTo };
  }

  /**
   * The IdP's LogoutResponse to a LogoutRequest Keyward sent: signed by a pinned certificate, for
   * this SLO endpoint, answering the request the RelayState names (once). The Keyward session ended
   * before the browser left, so this only closes the loop (audited) and lands on the sign-in page.
   */
  private async logoutResponse(ctx: RequestContext, connection: ConnectionRow, rawQuery: string): Promise<{ redirectTo: string }> {
    const c = samlConfigOf(connection);
    const sp = spUrls(this.deps.config.publicUrl, connection.id);
    const now = this.deps.clock.now();
    const relay = /(?:^|&)RelayState=([^&]*)/.exec(rawQuery)?.[1];
    const key = relay ? this.logoutKey(connection.id, safeDecode(relay)) : null;
    const pending = key ? (JSON.parse((await this.deps.kv.get(key)) ?? "null") as { requestId: string; userId: string } | null) : null;
    let answer: ReturnType<typeof validateLogoutResponse>;
    try {
      answer = validateLogoutResponse(rawQuery, { idpEntityId: c.idpEntityId, idpCertsPem: pinnedCerts(c, now), sloUrl: sp.sloUrl, now, clockSkewSeconds: CLOCK_SKEW_SECONDS, expectedRequestIds: pending ? [pending.requestId] : [] });
      // One answer per request: a second copy of the same LogoutResponse finds nothing to close.
      if (!key || (await this.deps.kv.take(key)) === null) throw new SamlError("SAML_IN_RESPONSE_TO", "no logout request waits for this answer (already answered)");
    } catch (e) {
      if (!isSamlError(e)) throw e;
      this.deps.logger.warn({ code: e.code, reason: e.message, connectionId: connection.id }, "SAML logout response refused");
      await this.deps.audit.record(this.deps.db, ctx, AuditAction.ssoLogout, { userId: pending?.userId ?? null, organizationId: connection.organizationId, success: false, errorMessage: "logout response refused", metadata: { connectionId: connection.id, initiatedBy: "sp", code: e.code } });
      throw SsoErrors.samlRefused(e.code);
    }
    await this.deps.audit.record(this.deps.db, ctx, AuditAction.ssoLogout, { userId: pending!.userId, organizationId: connection.organizationId, success: answer.success, metadata: { connectionId: connection.id, initiatedBy: "sp", idpConfirmed: answer.success } });
    const landing = new URL("/login", this.deps.config.publicUrl);
    landing.searchParams.set("signed_out", "1");
    return { redirectTo: landing.toString() };
  }

  private logoutKey(connectionId: string, relayState: string): string {
    return `saml-logout:${connectionId}:${sha256Hex(relayState)}`;
  }

  private async keys(connectionId: string): Promise<SamlSpKeys> {
    return openSamlSpKeys(this.deps.box, await findConnectionSecretPrivileged(this.deps.db, connectionId), connectionId);
  }
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}
