import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { KeyValueStore } from "../../infra/kv.js";
import type { Logger } from "../../infra/logger.js";
import { randomToken, type SecretBox, sealContexts, sha256Hex } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import { SamlError, buildAuthnRequest, buildLogoutRequest, buildLogoutResponse, isSamlError, type SamlAssertionResult, spMetadata, validateLogoutRequest, validateLogoutResponse, validateResponse } from "../../lib/saml/index.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseId } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import type { SessionsService } from "../auth/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { authnRequestTarget, pinnedCerts, samlConfigOf, spUrls } from "./saml-config.js";
import type { SamlSpKeys } from "./saml-connection.builder.js";
import { ssoConnectionsRepository, type ConnectionRow } from "./sso-connections.repository.js";
import { findConnectionSecretPrivileged } from "./sso-connections.secrets.repository.js";
import type { SsoFlow, SsoFlowStore } from "./sso-flow.store.js";
import { ssoIdentitiesRepository as identities } from "./sso-identities.repository.js";
import { samlIdpSession, type SsoSessionIndex, type SsoSessionRecord } from "./sso-sessions.store.js";
import { newTrace, type FederatedClaims, type SsoCallbackOutcome, type SsoIdentityService, type Trace } from "./sso-identity.service.js";
import { SsoErrors } from "./sso.errors.js";
import { CLOCK_SKEW_SECONDS, kvReplayStore } from "./saml-replay.store.js";

const PERSISTENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";
/** How long Keyward waits for the IdP's answer to a LogoutRequest it sent. */
const LOGOUT_TTL_SECONDS = 600;

/** Where the browser goes with an AuthnRequest: a redirect, or (HTTP-POST binding) a form posted to `url`. */
export interface SamlStart {
  url: string;
  fields?: { SAMLRequest: string; RelayState: string };
}

export interface SamlSignInDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  kv: KeyValueStore;
  box: SecretBox;
  audit: AuditService;
  limits: RateLimitService;
  flows: SsoFlowStore;
  identity: SsoIdentityService;
  sessions: Pick<SessionsService, "revoke">;
  index: SsoSessionIndex;
  config: { publicUrl: string; rate: RateRule };
}

export interface SamlAcsInput {
  SAMLResponse?: unknown;
  RelayState?: unknown;
}

/**
 * Sign-in through an organization's SAML 2.0 IdP (issue 35): SP-initiated with a signed
 * AuthnRequest over HTTP-Redirect (RelayState is the id of a server-side flow bound to the browser,
 * never a URL), the answer checked by src/lib/saml against the connection's pinned certificates, and
 * the person resolved exactly as for OpenID Connect. IdP-initiated only when the admin allows it.
 */
export class SamlSignInService {
  constructor(private readonly deps: SamlSignInDeps) {}

  /**
   * Starts a flow and returns where the AuthnRequest goes: the IdP's SSO URL with it in the query
   * (HTTP-Redirect, the default), or, for an IdP that offers only HTTP-POST, a form to post there
   * (the request then carries an enveloped XML signature).
   */
  async begin(connection: ConnectionRow, kind: SsoFlow["flow"], userId: string | null, binding: string, next: string | null = null): Promise<SamlStart> {
    const c = samlConfigOf(connection);
    const sp = spUrls(this.deps.config.publicUrl, connection.id);
    const keys = c.signAuthnRequests ? await this.keys(connection.id) : null;
    const state = randomToken(32);
    const target = authnRequestTarget(c);
    const request = buildAuthnRequest({ spEntityId: sp.entityId, acsUrl: sp.acsUrl, idpSsoUrl: target.url, binding: target.binding, relayState: state, now: this.deps.clock.now(), ...(keys ? { signingKeyPem: keys.signingKeyPem } : {}) });
    await this.deps.flows.create({ connectionId: connection.id, flow: kind, userId, requestId: request.id, next }, binding, state);
    return request.binding === "post" ? { url: request.url, fields: request.fields } : { url: request.url };
  }

  /** The SP metadata of a connection, for its IdP (public: it holds only certificates and addresses). */
  async metadata(connectionId: string): Promise<string> {
    const connection = await this.samlConnection(connectionId);
    const c = samlConfigOf(connection);
    const sp = spUrls(this.deps.config.publicUrl, connection.id);
    return spMetadata({
      entityId: sp.entityId,
      acsUrl: sp.acsUrl,
      sloUrl: sp.sloUrl,
      signingCertPem: c.spSigningCertPem,
      ...(c.wantEncryptedAssertions ? { encryptionCertPem: c.spEncryptionCertPem } : {}),
      wantAssertionsSigned: true,
      authnRequestsSigned: c.signAuthnRequests,
    });
  }

  /** The IdP posted a response to this connection's ACS: whatever happens, the answer is a redirect. */
  async acs(ctx: RequestContext, connectionId: string, body: SamlAcsInput, binding: string | undefined): Promise<SsoCallbackOutcome> {
    const trace = newTrace();
    try {
      await this.deps.limits.consume("sso-start", this.deps.config.rate, ctx.ip ?? "unknown");
      const connection = await this.samlConnection(connectionId);
      trace.connection = connection;
      const relayState = typeof body.RelayState === "string" && body.RelayState.length <= 80 ? body.RelayState : undefined;
      const flow = await this.flowFor(connection, relayState, binding, trace);
      const result = await this.verify(connection, body.SAMLResponse, flow, trace);
      // One sign-in per flow: another answer to the same request (not this assertion again) is refused.
      if (relayState && flow && !(await this.deps.flows.claim(relayState))) throw SsoErrors.invalidState();
      const claims = this.claims(connection, result);
      trace.subject = claims.subject;
      if (flow?.flow === "link") return await this.deps.identity.link(ctx, connection, flow, claims, trace);
      // The assertion's NameID and SessionIndex: kept with the session, or with a pending link until its confirmation opens one.
      const idpSession = samlIdpSession(result);
      const outcome = await this.deps.identity.signIn(ctx, connection, claims, trace, { next: flow?.next ?? null, idpSession });
      if (outcome.session) await this.deps.index.issued(outcome.session.sessionId, connection, outcome.session.user.id, idpSession);
      return outcome;
    } catch (e) {
      return this.deps.identity.failed(ctx, trace, e);
    }
  }

  /** The flow the RelayState names, if it is this browser's and this connection's. */
  private async flowFor(connection: ConnectionRow, relayState: string | undefined, binding: string | undefined, trace: Trace): Promise<SsoFlow | null> {
    const peeked = relayState ? await this.deps.flows.peek(relayState, binding) : null;
    const flow = peeked && !("refused" in peeked) ? peeked.flow : null;
    if (peeked && "refused" in peeked) trace.refusal = peeked.refused;
    // A flow of another connection: its response cannot be for this ACS.
    if (flow && flow.connectionId !== connection.id) throw SsoErrors.invalidState();
    trace.flow = flow;
    trace.userId = flow?.userId ?? null;
    // An unsolicited response is refused unless the admin allows IdP-initiated sign-in. A RelayState
    // whose flow is gone (expired, another browser's) is still checked, with no request
    // outstanding: the signature, then InResponseTo or the replay store refuse it, and say which.
    if (!flow && !relayState && !samlConfigOf(connection).allowIdpInitiated) throw SsoErrors.invalidState();
    return flow;
  }

  /** src/lib/saml's checks with this connection's pinned certificates, SP addresses and keys, and the shared replay store. */
  private async verify(connection: ConnectionRow, samlResponse: unknown, flow: SsoFlow | null, trace: Trace): Promise<SamlAssertionResult> {
    const c = samlConfigOf(connection);
    const keys = await this.keys(connection.id);
    const sp = spUrls(this.deps.config.publicUrl, connection.id);
    const now = this.deps.clock.now();
    try {
      return await validateResponse(typeof samlResponse === "string" ? samlResponse : "", {
        idpEntityId: c.idpEntityId,
        idpCertsPem: pinnedCerts(c, now),
        spEntityId: sp.entityId,
        acsUrl: sp.acsUrl,
        expectedRequestIds: flow?.requestId ? [flow.requestId] : [],
        allowIdpInitiated: !flow && c.allowIdpInitiated,
        now,
        clockSkewSeconds: CLOCK_SKEW_SECONDS,
        decryptionKeyPem: keys.encryptionKeyPem,
        replay: kvReplayStore(this.deps.kv, connection.id, () => this.deps.clock.now()),
      });
    } catch (e) {
      if (!isSamlError(e)) throw e;
      this.deps.logger.warn({ code: e.code, reason: e.message, connectionId: connection.id }, "SAML response refused");
      if (e.code === "SAML_REPLAY") trace.refusal = "replay";
      throw e.code === "SAML_REPLAY" ? SsoErrors.samlReplay() : SsoErrors.samlRefused(e.code);
    }
  }

  /**
   * Identity key (docs/enterprise-sign-in.md): a persistent NameID is the person's stable key at
   * the IdP; any other format (emailAddress, unspecified, transient) keys on the email address,
   * read from the connection's email attribute, else from the NameID when it is an address.
   */
  private claims(connection: ConnectionRow, r: SamlAssertionResult): FederatedClaims {
    const { attributes } = samlConfigOf(connection);
    const first = (name: string | null) => (name ? r.attributes[name]?.find((v) => v.trim() !== "") : undefined);
    const fromNameId = r.nameIdFormat !== PERSISTENT && r.nameId.includes("@") ? r.nameId : undefined;
    const email = first(attributes.email) ?? fromNameId ?? null;
    const persistent = r.nameIdFormat === PERSISTENT;
    if (!persistent && !email) throw SsoErrors.emailRequired();
    return {
      subject: persistent ? r.nameId : normalizeEmail(email!),
      email,
      name: first(attributes.name) ?? null,
      groups: (r.attributes[attributes.groups] ?? []).filter((g) => g.length > 0 && g.length <= 255).slice(0, 200),
    };
  }

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

  private logoutKey(connectionId: string, relayState: string): string {
    return `saml-logout:${connectionId}:${sha256Hex(relayState)}`;
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

  /**
   * IdP-initiated single logout (HTTP-Redirect, signed by a pinned certificate): ends the Keyward
   * sessions this connection issued to that person, and answers the IdP with a signed LogoutResponse.
   */
  async slo(ctx: RequestContext, connectionId: string, rawQuery: string): Promise<{ redirectTo: string }> {
    const connection = await this.samlConnection(connectionId);
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

  private async samlConnection(connectionId: string): Promise<ConnectionRow> {
    const id = parseId(connectionId, SsoErrors.notAvailable);
    const connection = await ssoConnectionsRepository.findById(this.deps.db, id);
    if (!connection?.enabled || connection.kind !== "saml") throw SsoErrors.notAvailable();
    return connection;
  }

  private async keys(connectionId: string): Promise<SamlSpKeys> {
    const sealed = await findConnectionSecretPrivileged(this.deps.db, connectionId);
    if (!sealed) throw SsoErrors.notAvailable();
    return JSON.parse(this.deps.box.decryptString(sealed, sealContexts.ssoConnectionSecret(connectionId))) as SamlSpKeys;
  }
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}
