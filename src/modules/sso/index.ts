import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { KeyValueStore } from "../../infra/kv.js";
import type { Logger } from "../../infra/logger.js";
import type { SecretBox } from "../../lib/crypto/index.js";
import type { AuditService } from "../audit/index.js";
import type { CredentialsService, SessionIssuer } from "../auth/index.js";
import type { DomainsService } from "../domains/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { OidcConnectionClient } from "./oidc-connection.client.js";
import { SsoConnectionsService } from "./sso-connections.service.js";
import { SsoFlowStore } from "./sso-flow.store.js";
import { SsoSignInService } from "./sso-sign-in.service.js";

export { createSsoRequirement } from "./sso-requirement.js";
export { SsoErrors } from "./sso.errors.js";
export { createOidcConnectionSchema, groupMappingSchema, ssoCallbackQuerySchema, ssoStartQuerySchema, updateSsoConnectionSchema } from "./sso.schemas.js";
export type { SsoConnectionView, SsoConnectionsService } from "./sso-connections.service.js";
export type { SsoCallbackOutcome, SsoFlowStarted, SsoSignInService } from "./sso-sign-in.service.js";

export interface SsoModuleDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  kv: KeyValueStore;
  box: SecretBox;
  audit: AuditService;
  limits: RateLimitService;
  domains: Pick<DomainsService, "findVerifiedOrganizationForEmail">;
  credentials: Pick<CredentialsService, "createAccount">;
  issuer: SessionIssuer;
  config: { publicUrl: string; appUrl: string; flowTtl: number; rate: RateRule };
}

/** Enterprise sign-in per organization (issue 35): its connections, and sign-in through them (rule 15). */
export function createSsoModule(deps: SsoModuleDeps) {
  const client = new OidcConnectionClient();
  const { db, clock, box, audit, config } = deps;
  return {
    ssoConnections: new SsoConnectionsService({ db, clock, box, audit, client, publicUrl: config.publicUrl }),
    ssoSignIn: new SsoSignInService({
      ...deps,
      client,
      flows: new SsoFlowStore(deps.kv, clock, config.flowTtl),
      config: { publicUrl: config.publicUrl, appUrl: config.appUrl, rate: config.rate },
    }),
  };
}

export type SsoModule = ReturnType<typeof createSsoModule>;
