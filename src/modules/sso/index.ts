import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { KeyValueStore } from "../../infra/kv.js";
import type { Logger } from "../../infra/logger.js";
import type { SecretBox } from "../../lib/crypto/index.js";
import type { AuditService } from "../audit/index.js";
import type { CredentialsService, LoginService, SessionIssuer, SessionsService } from "../auth/index.js";
import type { EmailService } from "../email/index.js";
import type { DomainsService } from "../domains/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { OidcConnectionClient } from "./oidc-connection.client.js";
import { SsoConnectionsService } from "./sso-connections.service.js";
import { SsoFlowStore } from "./sso-flow.store.js";
import { SsoSignInService } from "./sso-sign-in.service.js";
import { SamlMetadataRefresher } from "./saml-metadata.job.js";
import { SamlSignInService } from "./saml-sign-in.service.js";
import { SamlLogoutService } from "./saml-logout.service.js";
import { SsoIdentityService } from "./sso-identity.service.js";
import { SsoLinksService, type SignInMethodsPort } from "./sso-links.service.js";
import { SsoLinkConfirmService } from "./sso-link-confirm.service.js";
import { SsoLinkConsent, type SsoLinkConsentDeps } from "./sso-link-consent.js";
import { SsoLogoutService } from "./sso-logout.service.js";
import { SsoSessionIndex } from "./sso-sessions.store.js";

export { createSsoRequirement } from "./sso-requirement.js";
export { listSsoIdentitiesOf, type MemberSsoConnectionView, type SignInMethodsPort, type SsoLinksService, type SsoUnlinkBlock } from "./sso-links.service.js";
export { SsoErrors } from "./sso.errors.js";
export {
  createOidcConnectionSchema,
  createSamlConnectionSchema,
  groupMappingSchema,
  ssoCallbackQuerySchema,
  ssoDiscoverSchema,
  ssoLinkMailConfirmSchema,
  ssoLinkMailSchema,
  ssoStartQuerySchema,
  updateSsoConnectionSchema,
} from "./sso.schemas.js";
export type { SsoLinkConsent } from "./sso-link-consent.js";
export type { PendingLinkView, SsoLinkConfirmService } from "./sso-link-confirm.service.js";
export type { SsoConnectionView, SsoConnectionsService } from "./sso-connections.service.js";
export type { SsoDiscovery, SsoFlowStarted, SsoSignInService } from "./sso-sign-in.service.js";

/**
 * Pending SSO links (issue 35), made before the auth module: its password and passkey sign-ins
 * confirm them through a port, and the SSO module stores them.
 */
export function createSsoLinkConsent(deps: SsoLinkConsentDeps): SsoLinkConsent {
  return new SsoLinkConsent(deps);
}
export type { SsoCallbackOutcome } from "./sso-identity.service.js";
export type { SamlSignInService } from "./saml-sign-in.service.js";
export type { SamlLogoutService } from "./saml-logout.service.js";
export type { SignedOut, SsoLogoutService } from "./sso-logout.service.js";
export type { SamlConnectionView } from "./saml-config.js";

export interface SsoModuleDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  kv: KeyValueStore;
  box: SecretBox;
  audit: AuditService;
  limits: RateLimitService;
  domains: Pick<DomainsService, "findVerifiedOrganizationForEmail">;
  credentials: Pick<CredentialsService, "createAccount" | "hasPassword">;
  issuer: SessionIssuer;
  sessions: Pick<SessionsService, "revoke">;
  /** Ways into an account besides SSO (unlinking the last one is refused). */
  signInMethods: SignInMethodsPort;
  email: EmailService;
  links: SsoLinkConsent;
  login: Pick<LoginService, "logout">;
  config: { publicUrl: string; appUrl: string; flowTtl: number; rate: RateRule; discoverRate: RateRule; samlMetadataRefreshMs: number };
}

/** Enterprise sign-in per organization (issue 35): its connections, and sign-in through them (rule 15). */
export function createSsoModule(deps: SsoModuleDeps) {
  const client = new OidcConnectionClient();
  const { db, clock, box, audit, config } = deps;
  const flows = new SsoFlowStore(deps.kv, clock, config.flowTtl);
  const index = new SsoSessionIndex(deps.kv);
  const identity = new SsoIdentityService({ ...deps, config: { publicUrl: config.publicUrl, appUrl: config.appUrl } });
  const samlSignIn = new SamlSignInService({ ...deps, flows, identity, index, config: { publicUrl: config.publicUrl, rate: config.rate } });
  const samlLogout = new SamlLogoutService({ ...deps, index, config: { publicUrl: config.publicUrl } });
  const ssoSignIn = new SsoSignInService({ ...deps, client, flows, identity, index, saml: samlSignIn, config: { publicUrl: config.publicUrl, rate: config.rate, discoverRate: config.discoverRate } });
  return {
    ssoConnections: new SsoConnectionsService({ db, clock, box, audit, client, publicUrl: config.publicUrl }),
    ssoSignIn,
    ssoLinkConfirm: new SsoLinkConfirmService({ db, audit, email: deps.email, links: deps.links, credentials: deps.credentials, issuer: deps.issuer, config: { publicUrl: config.publicUrl } }),
    ssoLogout: new SsoLogoutService({ ...deps, index, oidc: ssoSignIn, saml: samlLogout, config: { rate: config.rate } }),
    samlSignIn,
    samlLogout,
    ssoLinks: new SsoLinksService({ db, audit, signInMethods: deps.signInMethods }),
    ssoLinkConsent: deps.links,
    samlMetadata: new SamlMetadataRefresher({ db, clock, logger: deps.logger, audit, intervalMs: config.samlMetadataRefreshMs }),
  };
}

export type SsoModule = ReturnType<typeof createSsoModule>;
