import type { Config } from "../../config/index.js";
import type { KeyValueStore } from "../../infra/kv.js";
import type { Logger } from "../../infra/logger.js";
import type { CredentialsService, PendingLoginStore, SessionIssuer, SessionsService, SsoRequirementPort } from "../auth/index.js";
import type { OrgsService } from "../orgs/index.js";
import type { SealingDeps } from "../module-deps.js";
import type { RateLimitService } from "../rate-limit/index.js";
import { ExternalAuthService } from "./external-auth.service.js";
import { LinkedAccountsService, type SsoIdentitiesPort } from "./linked-accounts.service.js";
import { OAuthFlowStore } from "./oauth-flow.store.js";
import { OAuthProvidersService } from "./oauth-providers.service.js";
import { GithubClient } from "./providers/github.client.js";
import { GoogleClient } from "./providers/google.client.js";
export { type FlowStarted } from "./external-auth.service.js";
export type { SsoIdentitiesPort, SsoIdentityView } from "./linked-accounts.service.js";
export { authorizeQuerySchema, callbackQuerySchema, providerConfigSchema } from "./external-auth.schemas.js";

export interface ExternalAuthModuleDeps extends SealingDeps {
  kv: KeyValueStore;
  logger: Logger;
  limits: RateLimitService;
  credentials: CredentialsService;
  sessions: SessionsService;
  issuer: SessionIssuer;
  pending: PendingLoginStore;
  orgs: OrgsService;
  ssoRequirement?: SsoRequirementPort;
  ssoIdentities?: SsoIdentitiesPort;
  config: Pick<Config, "externalAuth" | "http">;
}

/** Sign-in with GitHub and Google: providers' configuration, the flows, and linked accounts (rule 15). */
export function createExternalAuthModule(deps: ExternalAuthModuleDeps) {
  const { db, clock, box, audit, config } = deps;
  const ext = config.externalAuth;
  const oauthProviders = new OAuthProvidersService({
    db,
    clock,
    box,
    audit,
    clients: { github: new GithubClient(ext.github), google: new GoogleClient(ext.google.issuer) },
    env: { github: ext.github, google: ext.google },
    callbackBase: ext.callbackBase,
  });
  const externalAuth = new ExternalAuthService({
    ...deps,
    providers: oauthProviders,
    flows: new OAuthFlowStore(deps.kv, clock, ext.flowTtl),
    config: { publicUrl: config.http.publicUrl, appUrl: config.http.appUrl, rate: ext.rate },
  });
  const linkedAccounts = new LinkedAccountsService({ db, ssoIdentities: deps.ssoIdentities, credentials: deps.credentials, sessions: deps.sessions, audit, providers: oauthProviders });
  return { oauthProviders, externalAuth, linkedAccounts };
}
