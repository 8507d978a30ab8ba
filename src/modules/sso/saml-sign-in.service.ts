import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { KeyValueStore } from "../../infra/kv.js";
import type { Logger } from "../../infra/logger.js";
import { randomToken, type SecretBox } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import { buildAuthnRequest, isSamlError, type SamlAssertionResult, spMetadata, validateResponse } from "../../lib/saml/index.js";
import { normalizeEmail } from "../../lib/strings.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { authnRequestTarget, enabledSamlConnection, pinnedCerts, samlConfigOf, spUrls } from "./saml-config.js";
import { openSamlSpKeys, type SamlSpKeys } from "./saml-connection.builder.js";
import type { ConnectionRow } from "./sso-connections.repository.js";
import { findConnectionSecretPrivileged } from "./sso-connections.secrets.repository.js";
import type { SsoFlow, SsoFlowStore } from "./sso-flow.store.js";
import { samlIdpSession, type SsoSessionIndex } from "./sso-sessions.store.js";
import { newTrace, type FederatedClaims, type SsoCallbackOutcome, type SsoIdentityService, type Trace } from "./sso-identity.service.js";
import { SsoErrors } from "./sso.errors.js";
import { CLOCK_SKEW_SECONDS, kvReplayStore } from "./saml-replay.store.js";

const PERSISTENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";

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
  limits: RateLimitService;
  flows: SsoFlowStore;
  identity: SsoIdentityService;
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
    const connection = await enabledSamlConnection(this.deps.db, connectionId);
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
      const connection = await enabledSamlConnection(this.deps.db, connectionId);
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

  private async keys(connectionId: string): Promise<SamlSpKeys> {
    return openSamlSpKeys(this.deps.box, await findConnectionSecretPrivileged(this.deps.db, connectionId), connectionId);
  }
}
