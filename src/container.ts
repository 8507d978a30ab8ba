import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import type { Config } from "./config/index.js";
import { systemClock, type Clock } from "./infra/clock.js";
import { openDatabase, type Database } from "./infra/db.js";
import { createMemoryKv, createRedisKv, type KeyValueStore } from "./infra/kv.js";
import { createLogger, type Logger } from "./infra/logger.js";
import { projectPath } from "./infra/paths.js";
import { connectRedis } from "./infra/redis.js";
import { createSessionStores } from "./infra/session-store.js";
import { createPasswordHasher, createSecretBox, deriveKey } from "./lib/crypto/index.js";
import { createOriginMatcher } from "./lib/origins.js";
import { AdminUsersService } from "./modules/admin/admin-users.service.js";
import { AuditService } from "./modules/audit/audit.service.js";
import { AccountsService } from "./modules/auth/accounts.service.js";
import { ActorService } from "./modules/auth/actor.service.js";
import { createNetworksModule } from "./modules/networks/index.js";
import type { ClientFactory } from "./modules/networks/controller-config.service.js";
import { CredentialsService } from "./modules/auth/credentials.service.js";
import { LoginService } from "./modules/auth/login.service.js";
import { CliLoginService } from "./modules/auth/cli-login.service.js";
import { MfaLoginService } from "./modules/auth/mfa/mfa-login.service.js";
import { MfaService } from "./modules/auth/mfa/mfa.service.js";
import { PendingLoginStore } from "./modules/auth/mfa/pending-login.js";
import { SessionIssuer } from "./modules/auth/session-issuer.js";
import { MfaPolicyService } from "./modules/orgs/mfa-policy.service.js";
import { DelegatedTokensService } from "./modules/oidc-clients/delegated-tokens.service.js";
import { OidcClientAdminService } from "./modules/oidc-clients/client-admin.service.js";
import { apiResource } from "./lib/api-scopes.js";
import { MySessionsService } from "./modules/auth/sessions/my-sessions.service.js";
import { SessionsService } from "./modules/auth/sessions/sessions.service.js";
import { EmailService } from "./modules/email/email.service.js";
import { EmailRenderer } from "./modules/email/render.js";
import { createEmailTransport } from "./modules/email/transports/index.js";
import type { EmailTransport } from "./modules/email/transports/transport.js";
import { HealthService } from "./modules/health/health.service.js";
import { RateLimitService } from "./modules/rate-limit/rate-limit.service.js";
import { UsersService } from "./modules/users/users.service.js";
import { ContactService } from "./modules/contact/contact.service.js";
import { OutboxAdminService } from "./modules/email/outbox-admin.service.js";
import { CasService } from "./modules/ssh-ca/cas.service.js";
import { CertificatesService } from "./modules/ssh-ca/certificates.service.js";
import { SigningService } from "./modules/ssh-ca/signing.service.js";
import { SudoService } from "./modules/ssh-ca/sudo.service.js";
import { SshKeysService } from "./modules/ssh-keys/ssh-keys.service.js";
import { ApiKeysService } from "./modules/api-keys/api-keys.service.js";
import { ActivityService } from "./modules/orgs/activity.service.js";
import { DepartmentsService } from "./modules/orgs/departments.service.js";
import { InvitesService } from "./modules/orgs/invites.service.js";
import { MembersService } from "./modules/orgs/members.service.js";
import { MyDirectoryService } from "./modules/orgs/my-directory.service.js";
import { OrgsService } from "./modules/orgs/orgs.service.js";
import { PrincipalsService } from "./modules/orgs/principals.service.js";
import { OidcClientsService } from "./modules/oidc-clients/oidc-clients.service.js";
import { OidcIdentityService } from "./modules/oidc-clients/oidc-identity.service.js";
import { OidcSigningKeysService } from "./modules/oidc-clients/signing-keys.service.js";
import { ExternalAuthService } from "./modules/oauth/external-auth.service.js";
import { LinkedAccountsService } from "./modules/oauth/linked-accounts.service.js";
import { OAuthFlowStore } from "./modules/oauth/oauth-flow.store.js";
import { OAuthProvidersService } from "./modules/oauth/oauth-providers.service.js";
import { GithubClient } from "./modules/oauth/providers/github.client.js";
import { GoogleClient } from "./modules/oauth/providers/google.client.js";

export interface ContainerOverrides {
  clock?: Clock;
  logger?: Logger;
  emailTransport?: EmailTransport;
  /** Wraps ZeroTier controller clients (tests and benches count calls); the real client by default. */
  controllerClient?: ClientFactory;
}

const VERSION = (JSON.parse(readFileSync(projectPath("package.json"), "utf8")) as { version: string }).version;

/**
 * The composition root: infra → repositories → services, built once, by hand. Tests call the same
 * function with their own database settings and clock.
 */
export async function createContainer(config: Config, overrides: ContainerOverrides = {}) {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? systemClock;

  const database: Database = await openDatabase({ url: config.db.url, dataDir: config.db.dataDir });
  const redis: Redis | undefined = config.redis.url ? connectRedis(config.redis.url) : undefined;
  const kv: KeyValueStore = redis ? createRedisKv(redis, config.redis.keyPrefix) : createMemoryKv();
  const sessionStores = createSessionStores(redis, config.redis.keyPrefix);
  const db = database.db;

  const hasher = createPasswordHasher(config.password);
  const box = createSecretBox(config.crypto.encryptionKeys);
  const corsOrigins = createOriginMatcher(config.cors.origins);

  const audit = new AuditService(clock);
  const limits = new RateLimitService({ enabled: config.rateLimits.enabled, redis, prefix: config.redis.keyPrefix, clock });
  const emailTransport = overrides.emailTransport ?? createEmailTransport(config, logger);
  const email = new EmailService({
    db,
    clock,
    box,
    logger,
    transport: emailTransport,
    renderer: new EmailRenderer({ ...config.email.brand, publicUrl: config.http.publicUrl }),
    from: config.email.from,
    maxAttempts: config.email.maxAttempts,
  });

  const sessions = new SessionsService(sessionStores.records, kv, clock, config.session);
  const lockout = {
    failures: config.rateLimits.loginAccountFailures,
    baseSeconds: config.rateLimits.loginLockoutBase,
    maxSeconds: config.rateLimits.loginLockoutMax,
    account: config.rateLimits.loginAccountWide,
    accountLockSeconds: config.rateLimits.loginAccountWideLock,
  };
  const credentials = new CredentialsService({ db, clock, hasher, limits, lockout });
  const delegatedTokens = new DelegatedTokensService(db, clock, apiResource(config.http.publicUrl));
  sessions.onRevokeAll((userId) => delegatedTokens.revokeForUser(userId));
  const actors = new ActorService(db, sessions, delegatedTokens);
  const accounts = new AccountsService({
    db,
    clock,
    audit,
    email,
    limits,
    credentials,
    sessions,
    config: {
      appUrl: config.http.appUrl,
      emailVerificationTtl: config.tokens.emailVerificationTtl,
      passwordResetTtl: config.tokens.passwordResetTtl,
      activationTtl: config.tokens.activationTtl,
      superadminEmails: config.superadminEmails,
      limits: config.rateLimits,
    },
  });
  const issuer = new SessionIssuer(db, clock, audit, sessions);
  const pendingLogins = new PendingLoginStore(kv, clock, config.mfa.pendingTtl);
  const login = new LoginService({
    db,
    audit,
    limits,
    sessions,
    issuer,
    pending: pendingLogins,
    credentials,
    config: { loginIp: config.rateLimits.loginIp },
  });
  const mySessions = new MySessionsService(db, sessions, audit, corsOrigins);
  const networks = createNetworksModule({
    db,
    clock,
    audit,
    email,
    box,
    logger,
    config: { ...config.networks, appUrl: config.http.appUrl },
    makeClient: overrides.controllerClient,
  });
  // Offboarding (removal, suspension, deletion) revokes SSH certificates: built before those services.
  const certificates = new CertificatesService(db, clock, audit);
  const users = new UsersService({ db, clock, credentials, audit, sessions, certificates, networks: networks.networkOffboarding });
  const mfaPolicy = new MfaPolicyService(db, clock, audit, email, logger, { appUrl: config.http.appUrl });
  const backupCodeKeys = config.crypto.encryptionKeys.map((k) => ({ id: k.id, key: deriveKey(k.key, "keyward backup codes") }));
  const mfa = new MfaService({ db, clock, kv, box, credentials, audit, rp: config.mfa.rp, totpIssuer: config.mfa.totpIssuer, backupCodeKeys, hooks: mfaPolicy });
  const adminUsers = new AdminUsersService({ db, clock, credentials, mfa, audit, sessions, email, certificates, networks: networks.networkOffboarding });
  const orgLimit = config.orgs;
  const orgs = new OrgsService({ db, clock, audit, certificates, networks: networks.networkOffboarding, logger, limit: orgLimit });
  const members = new MembersService({ db, clock, audit, certificates, networks: networks.networkOffboarding });
  const invites = new InvitesService({
    db,
    accounts,
    clock,
    credentials,
    audit,
    email,
    sessions,
    limits,
    logger,
    config: { appUrl: config.http.appUrl, inviteTtl: config.tokens.inviteTtl, limit: orgLimit, rate: config.rateLimits.invites },
  });
  const departments = new DepartmentsService(db, clock, audit);
  const principals = new PrincipalsService(db, clock, audit, departments);
  const myDirectory = new MyDirectoryService(db);
  const activity = new ActivityService(db);
  const apiKeys = new ApiKeysService(db, clock, audit);
  const caBox = createSecretBox(config.crypto.caKeys);
  const sshKeys = new SshKeysService(db, clock, audit, { verifyChallengeTtl: config.ssh.verifyChallengeTtl });
  const cas = new CasService(db, clock, audit, caBox, limits, {
    rotationOverlapHours: config.ssh.rotationOverlapHours,
    maxPreviousKeys: config.ssh.maxPreviousKeys,
    keygenRate: config.ssh.keygenRate,
  });
  const signing = new SigningService(db, clock, audit, caBox, config.ssh);
  const sudo = new SudoService(db, apiKeys, audit, () => clock.now());
  const mfaLogin = new MfaLoginService({ db, clock, kv, box, audit, limits, issuer, pending: pendingLogins, rp: config.mfa.rp, backupCodeKeys, rate: config.mfa.rate });
  const contact = new ContactService(db, clock, email, limits, { notifyEmail: config.email.contactNotifyEmail, rate: config.rateLimits.contact });
  const outbox = new OutboxAdminService(db, clock, audit);
  const health = new HealthService(VERSION, database, redis);
  const oidcClients = new OidcClientsService(db, clock, audit, box);
  const oidcIdentity = new OidcIdentityService(db, clock, audit);
  const oidcClientAdmin = new OidcClientAdminService(db, clock, audit);
  const oidcKeys = new OidcSigningKeysService(db, clock, box, audit, { rotationDays: config.oidc.keyRotationDays, graceDays: config.oidc.keyGraceDays });
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
    db,
    clock,
    logger,
    audit,
    credentials,
    limits,
    providers: oauthProviders,
    flows: new OAuthFlowStore(kv, clock, ext.flowTtl),
    issuer,
    pending: pendingLogins,
    orgs,
    config: { publicUrl: config.http.publicUrl, appUrl: config.http.appUrl, rate: ext.rate },
  });
  const cliLogin = new CliLoginService({
    db,
    limits,
    clock,
    kv,
    logger,
    audit,
    issuer,
    config: { publicUrl: config.http.publicUrl, appUrl: config.http.appUrl, ttl: ext.cliLoginTtl, rate: ext.cliLoginRate },
  });
  const linkedAccounts = new LinkedAccountsService({ db, credentials, sessions, audit, providers: oauthProviders });

  return {
    config,
    logger,
    clock,
    database,
    db,
    redis,
    kv,
    sessionStore: sessionStores.expressStore,
    corsOrigins,
    box,
    services: {
      actors,
      accounts,
      login,
      sessions,
      mySessions,
      users,
      adminUsers,
      orgs,
      members,
      invites,
      departments,
      principals,
      myDirectory,
      activity,
      apiKeys,
      sshKeys,
      cas,
      signing,
      certificates,
      sudo,
      contact,
      outbox,
      mfa,
      mfaLogin,
      mfaPolicy,
      audit,
      email,
      limits,
      health,
      oidcClients,
      oidcClientAdmin,
      oidcIdentity,
      oidcKeys,
      oauthProviders,
      externalAuth,
      linkedAccounts,
      cliLogin,
      ...networks,
    },
    version: VERSION,
    async close() {
      await emailTransport.close?.();
      await redis?.quit().catch(() => redis.disconnect());
      await database.close();
    },
  };
}

export type Container = Awaited<ReturnType<typeof createContainer>>;
export type Services = Container["services"];
