import type { Config } from "../../config/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import type { KeyValueStore } from "../../infra/kv.js";
import type { Logger } from "../../infra/logger.js";
import type { SessionRecordStore } from "../../infra/session-store.js";
import { deriveKey, type PasswordHasher, type SecretBox } from "../../lib/crypto/index.js";
import type { OriginMatcher } from "../../lib/origins.js";
import type { AuditService } from "../audit/index.js";
import type { EmailService } from "../email/index.js";
import type { RateLimitService } from "../rate-limit/index.js";
import type { ProfileReader } from "../users/index.js";
import { AccountLinks } from "./account-links.js";
import { AccountsService } from "./accounts.service.js";
import { ActorService, type ApiKeyVerifier, type DelegatedTokenVerifier } from "./actor.service.js";
import { CliLoginService } from "./cli-login.service.js";
import { CredentialsService } from "./credentials.service.js";
import { LoginService, type SsoLinkPort, type SsoRequirementPort } from "./login.service.js";
import { MfaLoginService } from "./mfa/mfa-login.service.js";
import { MfaPolicyService } from "./mfa/mfa-policy.service.js";
import { MfaService } from "./mfa/mfa.service.js";
import { PendingLoginStore } from "./mfa/pending-login.js";
import { mfaRepository, type MfaMethods } from "./mfa/mfa.repository.js";
import { SessionIssuer } from "./session-issuer.js";
import { MySessionsService } from "./sessions/my-sessions.service.js";
import { SessionsService } from "./sessions/sessions.service.js";
export { type AccountsService } from "./accounts.service.js";
export { type ActorService } from "./actor.service.js";
export { activateSchema, changeEmailSchema, changePasswordSchema, confirms, emailOnlySchema, loginSchema, registerSchema, resetPasswordSchema, tokenRedirectSchema, tokenSchema } from "./auth.schemas.js";
export { cliAuthorizeSchema, cliLookupSchema, cliStartSchema } from "./cli-login.service.js";
export { type CredentialsService } from "./credentials.service.js";
export { type LoginService, type MfaChallenge, type SsoLinkCarried, type SsoLinkConfirmed, type SsoLinkPort, type SsoRequirementPort, startMfaChallenge } from "./login.service.js";
export { assertionSchema, mfaLoginCodeSchema, mfaTokenSchema } from "./mfa/mfa-login.service.js";
export { compliancePageSchema, policySchema } from "./mfa/mfa-policy.service.js";
export { codeSchema, completeRegistrationSchema, type MfaService, passwordSchema, renameSchema } from "./mfa/mfa.service.js";
export { type PendingLoginStore } from "./mfa/pending-login.js";
export { type SessionIssued, type SessionIssuer } from "./session-issuer.js";
export { type SessionsService } from "./sessions/sessions.service.js";

/** Which second factors an account has (never their secrets): counts for the linked-accounts page. */
export function mfaMethodsOf(db: Executor, userId: string): Promise<MfaMethods> {
  return mfaRepository.methods(db, userId);
}

export interface AuthModuleDeps {
  db: Db;
  clock: Clock;
  kv: KeyValueStore;
  box: SecretBox;
  hasher: PasswordHasher;
  logger: Logger;
  audit: AuditService;
  email: EmailService;
  limits: RateLimitService;
  sessionRecords: SessionRecordStore;
  corsOrigins: OriginMatcher;
  /** Account profiles by id (the users module's cache): who a credential stands for. */
  profiles: ProfileReader;
  /** OIDC access tokens acting for a user (the oidc-clients module checks them). */
  delegatedTokens: DelegatedTokenVerifier & { revokeForUser(userId: string): Promise<unknown> };
  /** Organization API keys as bearer callers (the api-keys module, a port: it sits above this one). */
  apiKeys: ApiKeyVerifier;
  /** Whether an address must sign in through its organization's identity provider (the sso module, a port). */
  ssoRequirement?: SsoRequirementPort;
  /** Pending SSO links a password or passkey sign-in confirms (the sso module, a port). */
  ssoLinks?: SsoLinkPort;
  config: Pick<Config, "http" | "session" | "tokens" | "mfa" | "superadminEmails" | "rateLimits" | "externalAuth" | "crypto">;
}

/**
 * Who is calling and how they prove it: credentials, sessions (cookie and bearer), caller
 * resolution, sign-in with its second step, MFA with the organizations' MFA policy, and the
 * command-line sign-in bridge (rule 15).
 */
export function createAuthModule(deps: AuthModuleDeps) {
  const { db, clock, kv, box, audit, email, limits, logger, config } = deps;
  const rl = config.rateLimits;
  const sessions = new SessionsService(deps.sessionRecords, kv, clock, config.session);
  // Every "end all sessions" ends the OIDC tokens acting for the user too.
  sessions.onRevokeAll((userId) => deps.delegatedTokens.revokeForUser(userId));
  const lockout = { failures: rl.loginAccountFailures, baseSeconds: rl.loginLockoutBase, maxSeconds: rl.loginLockoutMax, account: rl.loginAccountWide, accountLockSeconds: rl.loginAccountWideLock };
  const credentials = new CredentialsService({ db, clock, hasher: deps.hasher, limits, lockout });
  const issuer = new SessionIssuer(db, clock, audit, sessions);
  const pending = new PendingLoginStore(kv, clock, config.mfa.pendingTtl);
  const appUrl = config.http.appUrl;
  const tokens = config.tokens;
  const accountsConfig = { appUrl, ...tokens, superadminEmails: config.superadminEmails, limits: rl };
  const backupCodeKeys = config.crypto.encryptionKeys.map((k) => ({ id: k.id, key: deriveKey(k.key, "keyward backup codes") }));
  const mfaPolicy = new MfaPolicyService(db, clock, audit, email, logger, { appUrl });
  const { rp, totpIssuer } = config.mfa;
  const ext = config.externalAuth;
  return {
    sessions,
    credentials,
    issuer,
    pendingLogins: pending,
    actors: new ActorService(deps.profiles, sessions, deps.delegatedTokens, deps.apiKeys),
    accounts: new AccountsService({ db, clock, audit, email, limits, credentials, sessions, links: new AccountLinks({ clock, email, config: accountsConfig }), config: accountsConfig }),
    login: new LoginService({ db, audit, limits, sessions, issuer, pending, credentials, ssoRequirement: deps.ssoRequirement, ssoLinks: deps.ssoLinks, config: { loginIp: rl.loginIp } }),
    mySessions: new MySessionsService(db, sessions, audit, deps.corsOrigins),
    mfa: new MfaService({ db, clock, kv, box, credentials, audit, rp, totpIssuer, backupCodeKeys, hooks: mfaPolicy }),
    mfaLogin: new MfaLoginService({ db, clock, kv, box, audit, limits, issuer, pending, rp, backupCodeKeys, rate: config.mfa.rate, ssoRequirement: deps.ssoRequirement, ssoLinks: deps.ssoLinks }),
    mfaPolicy,
    cliLogin: new CliLoginService({
      db,
      limits,
      clock,
      kv,
      logger,
      audit,
      issuer,
      sessions,
      config: { publicUrl: config.http.publicUrl, appUrl, ttl: ext.cliLoginTtl, rate: ext.cliLoginRate },
    }),
  };
}

export type AuthModule = ReturnType<typeof createAuthModule>;
