import { readFileSync } from "node:fs";
import type { PGlite } from "@electric-sql/pglite";
import type { Config } from "./config/index.js";
import { systemClock, useApplicationClock, type Clock } from "./infra/clock.js";
import { openDatabase, type StatementObserver } from "./infra/db.js";
import { createMemoryKv, createRedisKv } from "./infra/kv.js";
import { createLogger, type Logger } from "./infra/logger.js";
import { createMetrics } from "./infra/metrics.js";
import { databaseSource, redisSource } from "./infra/metrics-sources.js";
import { projectPath } from "./infra/paths.js";
import { connectRedis } from "./infra/redis.js";
import { createSessionStores } from "./infra/session-store.js";
import { createPasswordHasher, createSecretBox, deriveKey, type PasswordHasher } from "./lib/crypto/index.js";
import { createOriginMatcher } from "./lib/origins.js";
import { createAccessRequestsModule } from "./modules/access-requests/index.js";
import { createAdminModule } from "./modules/admin/index.js";
import { createApiKeysModule } from "./modules/api-keys/index.js";
import { createAuditModule } from "./modules/audit/index.js";
import { createAuthModule } from "./modules/auth/index.js";
import { createDomainsModule } from "./modules/domains/index.js";
import { createContactModule } from "./modules/contact/index.js";
import { createEmailModule, createEmailTransport, type EmailTransport } from "./modules/email/index.js";
import { createHealthModule } from "./modules/health/index.js";
import { createKeysModule } from "./modules/keys/index.js";
import { type ClientFactory, createNetworksModule } from "./modules/networks/index.js";
import { createExternalAuthModule } from "./modules/external-auth/index.js";
import { createOidcModule } from "./modules/oidc-clients/index.js";
import { createOffboardingModule } from "./modules/offboarding/index.js";
import { createOrgsModule, type MemberRemovalPort } from "./modules/orgs/index.js";
import { createRateLimitModule } from "./modules/rate-limit/index.js";
import { createSshCaModule } from "./modules/ssh-ca/index.js";
import { createSshHostsModule } from "./modules/ssh-hosts/index.js";
import { createSshKeysModule } from "./modules/ssh-keys/index.js";
import { createScimModule, offboardingDeprovisioner } from "./modules/scim/index.js";
import { createSsoLinkConsent, createSsoModule, createSsoRequirement, listSsoIdentitiesOf } from "./modules/sso/index.js";
import { createUserProfiles, createUsersModule } from "./modules/users/index.js";
import { createMembershipCache } from "./modules/access/index.js";

export interface ContainerOverrides {
  clock?: Clock;
  logger?: Logger;
  emailTransport?: EmailTransport;
  /** Wraps ZeroTier controller clients (tests and benches count calls); the real client by default. */
  controllerClient?: ClientFactory;
  /** Hears every statement sent to the database (tests and benches count a screen's statements). */
  onStatement?: StatementObserver;
  /** The password hasher (tests count the hash work a sign-in does); argon2id with config.password by default. */
  passwordHasher?: PasswordHasher;
  /** An in-memory embedded database starts from this dump (tests: one migrated database for all apps). */
  embeddedSnapshot?: Blob;
  /** An open in-memory embedded database, used as it is and left open at close (tests: a pool per worker). */
  embeddedClient?: PGlite;
}

const VERSION = (JSON.parse(readFileSync(projectPath("package.json"), "utf8")) as { version: string }).version;

/**
 * The composition root: infrastructure first, then one factory per module (src/modules/<x>/index.ts),
 * each given only what it uses. Tests call the same function with their own settings and clock.
 */
export async function createContainer(config: Config, overrides: ContainerOverrides = {}) {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? systemClock;
  // Membership reads decide roles by time (role grants): they take the same clock.
  useApplicationClock(clock);
  const database = await openDatabase({ url: config.db.url, dataDir: config.db.dataDir, poolSize: config.db.poolSize, onStatement: overrides.onStatement, snapshot: overrides.embeddedSnapshot, client: overrides.embeddedClient });
  const db = database.db;
  const profiles = await createUserProfiles(database, config.cache.ttlMs);
  const memberships = await createMembershipCache(database, config.cache.ttlMs);
  const redis = config.redis.url ? connectRedis(config.redis.url, logger) : undefined;
  const kv = redis ? createRedisKv(redis, config.redis.keyPrefix) : createMemoryKv();
  const sessionStores = createSessionStores(redis, config.redis.keyPrefix);
  const box = createSecretBox(config.crypto.encryptionKeys);
  const caBox = createSecretBox(config.crypto.caKeys);
  const corsOrigins = createOriginMatcher(config.cors.origins);
  // Prometheus metrics exist only when something may scrape them (METRICS_PORT or METRICS_TOKEN).
  const metrics = config.metrics.enabled ? createMetrics({ version: VERSION }) : undefined;
  const { limits } = createRateLimitModule({
    enabled: config.rateLimits.enabled,
    redis,
    prefix: config.redis.keyPrefix,
    clock,
    keySecret: deriveKey(config.crypto.encryptionKeys[0]!.key, "keyward rate-limit keys"),
    metrics,
  });
  const base = { db, clock, logger };

  const { audit, activity, auditChain, auditVerify, auditExport } = createAuditModule({ ...base, metrics, box, chain: config.audit });
  const transport = overrides.emailTransport ?? createEmailTransport(config, logger);
  const mail = createEmailModule({ ...base, box, audit, transport, brand: { ...config.email.brand, publicUrl: config.http.publicUrl }, from: config.email.from, maxAttempts: config.email.maxAttempts });
  const { email } = mail;
  const oidc = createOidcModule({ ...base, box, audit, changes: database, config });
  const hasher = overrides.passwordHasher ?? createPasswordHasher(config.password);
  const { apiKeys } = createApiKeysModule({ ...base, audit });
  // Organizations that require SSO for their verified domains refuse other sign-ins (a port into auth).
  const ssoRequirement = createSsoRequirement(db, config.http.publicUrl);
  // An SSO sign-in that found an existing unlinked account: its holder confirms by signing in (a port into auth).
  const ssoLinkConsent = createSsoLinkConsent({ ...base, kv, audit });
  const auth = createAuthModule({ ...base, kv, box, hasher, audit, email, limits, sessionRecords: sessionStores.records, corsOrigins, profiles, delegatedTokens: oidc.delegatedTokens, apiKeys, ssoRequirement, ssoLinks: ssoLinkConsent, config });
  const networkConfig = { ...config.networks, appUrl: config.http.appUrl };
  const networks = createNetworksModule({ ...base, audit, email, box, config: networkConfig, makeClient: overrides.controllerClient });
  // Offboarding (removal, suspension, deletion) revokes certificates and network access.
  // Just-in-time access requests; signing asks it for the grants in force (a port into ssh-ca).
  const jit = createAccessRequestsModule({ ...base, audit, email, config: { appUrl: config.http.appUrl } });
  const sshCa = createSshCaModule({ ...base, audit, limits, apiKeys, caBox, config, grants: jit.activeGrants });
  const offboarding = { certificates: sshCa.certificates, networks: networks.networkOffboarding };
  const sshHosts = createSshHostsModule({ ...base, audit, ca: sshCa, config: { hostPrincipalPatterns: config.ssh.hostPrincipalPatterns, challengeKey: deriveKey(config.crypto.encryptionKeys[0]!.key, "keyward host renewal challenges") } });
  const { credentials, sessions } = auth;
  // Offboarding as one action: every cut above through one service call, with one receipt.
  const offboardingModule = createOffboardingModule({ ...base, audit, orgLimit: config.orgs, sessions, delegatedTokens: oidc.delegatedTokens, apiKeys, enrollmentTokens: sshHosts.hostEnrollment, certificates: sshCa.certificates, networks: networks.networkOffboarding });
  // Removing a member is offboarding with mode remove (a port: orgs sits below offboarding).
  const removal: MemberRemovalPort = {
    removeInTransaction: (tx, ctx, orgId, userId, v) =>
      offboardingModule.offboarding.cutInTransaction(tx, ctx, orgId, userId, "remove", v.reason, { authorize: v.authorize, revocationReason: v.revocationReason }),
  };
  const orgs = createOrgsModule({ ...base, ...offboarding, removal, audit, email, config, invites: { accounts: auth.accounts, credentials, sessions, limits } });
  const oauth = createExternalAuthModule({ ...base, kv, box, audit, limits, credentials, sessions, issuer: auth.issuer, pending: auth.pendingLogins, orgs: orgs.orgs, ssoRequirement, ssoIdentities: { listOf: listSsoIdentitiesOf }, config });
  const domains = createDomainsModule({ ...base, audit, limits, config: config.domains });
  const ext = config.externalAuth;
  const sso = createSsoModule({
    ...base,
    kv,
    box,
    audit,
    limits,
    domains: domains.domains,
    credentials,
    issuer: auth.issuer,
    sessions,
    signInMethods: oauth.linkedAccounts,
    email,
    links: ssoLinkConsent,
    login: auth.login,
    config: { publicUrl: config.http.publicUrl, appUrl: config.http.appUrl, flowTtl: ext.flowTtl, rate: ext.rate, discoverRate: config.rateLimits.loginIp, samlMetadataRefreshMs: 12 * 3600 * 1000 },
  });
  // SCIM provisioning (issue 36); active=false, active=true and DELETE are offboarding (one receipt each).
  const scim = createScimModule({
    ...base,
    audit,
    credentials,
    domains: domains.domains,
    deprovisioner: offboardingDeprovisioner({ clock, offboarding: offboardingModule.offboardingPort }),
    config: { publicUrl: config.http.publicUrl },
  });

  const services = {
    ...auth,
    ...createUsersModule({
      ...base,
      ...offboarding,
      profiles,
      memberships,
      audit,
      credentials,
      sessions,
      signInFacts: { totpEnabled: (id) => auth.mfa.totpEnabled(id), linkedProviders: (id) => oauth.linkedAccounts.providersOf(id) },
      organizations: orgs.orgs,
    }),
    ...createAdminModule({ ...base, ...offboarding, audit, credentials, sessions, email, mfa: auth.mfa }),
    ...orgs,
    ...oidc,
    ...oauth,
    ...networks,
    ...sshCa,
    accessRequests: jit.accessRequests,
    ...sshHosts,
    ...offboardingModule,
    ...createSshKeysModule({ ...base, audit, config: { verifyChallengeTtl: config.ssh.verifyChallengeTtl } }),
    ...domains,
    ...sso,
    ...scim,
    ...createContactModule({ ...base, email, limits, config: { notifyEmail: config.email.contactNotifyEmail, rate: config.rateLimits.contact } }),
    ...createHealthModule({ version: VERSION, database, redis }),
    ...createKeysModule({ db, box, caBox, audit }),
    outbox: mail.outbox,
    apiKeys,
    activity,
    audit,
    auditChain,
    auditVerify,
    auditExport,
    email,
    limits,
  };

  metrics?.setSources({ outbox: () => mail.outboxStats.snapshot(), database: databaseSource(database), redis: redis && redisSource(redis) });

  const sessionStore = sessionStores.expressStore;
  return {
    config, logger, clock, database, db, redis, kv, sessionStore, corsOrigins, box, services, metrics, version: VERSION,
    async close() {
      profiles.close();
      memberships.close();
      services.oidcClients.close();
      await transport.close?.();
      await redis?.quit().catch(() => redis.disconnect());
      await database.close();
    },
  };
}

export type Container = Awaited<ReturnType<typeof createContainer>>;
export type Services = Container["services"];
