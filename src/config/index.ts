import { existsSync } from "node:fs";
import { envSchema, type ParsedEnv } from "./env.js";
import { ConfigError, DEV_ENCRYPTION_KEY, DEV_SESSION_SECRET, isDnsServer, parseEncryptionKeys, providerUrl, type RateRule } from "./values.js";

export { ConfigError, type EncryptionKey, type RateRule } from "./values.js";

/** ZeroTier Central's API (production always uses it; ZEROTIER_CENTRAL_URL points development at a local one). */
export const CENTRAL_API_URL = "https://api.zerotier.com/api/v1";

function buildConfig(env: ParsedEnv) {
  const problems: string[] = [];
  const warnings: string[] = [];
  const production = env.NODE_ENV === "production";
  const publicUrl = new URL(env.PUBLIC_URL ?? `http://localhost:${env.PORT}`);
  // The embedded default runs with development secrets: it listens on this machine only unless HOST says otherwise.
  const host = env.HOST ?? (env.DATABASE_URL ? "0.0.0.0" : "127.0.0.1");
  // Relying parties and emailed links would be told to go to localhost: say so before anyone trusts that issuer.
  if (production && !env.PUBLIC_URL) {
    warnings.push(`PUBLIC_URL is not set: the OpenID issuer, cookies and emailed links fall back to ${publicUrl.origin}; set PUBLIC_URL to the https URL people reach`);
  }
  const https = publicUrl.protocol === "https:";

  // Over plain http the session cookie cannot be Secure or __Host-, and HSTS is off: production
  // only allows it on loopback (a local smoke test), never on an address users reach.
  if (production && !https && !["localhost", "127.0.0.1", "[::1]"].includes(publicUrl.hostname)) {
    problems.push(`PUBLIC_URL must be https in production (${publicUrl.origin} would send session cookies without Secure); terminate TLS at the proxy and give its https URL`);
  }

  // Worker processes share nothing but the database and Redis: the embedded database opens in one
  // process, and in-process sessions and rate limits would be per worker.
  if (env.WORKERS > 1 && (!env.DATABASE_URL || !env.REDIS_URL)) problems.push("WORKERS above 1 needs DATABASE_URL and REDIS_URL (workers share only PostgreSQL and Redis)");

  let sessionSecrets = env.SESSION_SECRET;
  if (sessionSecrets.length === 0) {
    if (production) problems.push("SESSION_SECRET is required in production");
    else warnings.push("SESSION_SECRET is not set: using a development secret (never do this in production)");
    sessionSecrets = [DEV_SESSION_SECRET];
  } else if (sessionSecrets[0]!.length < 32) {
    problems.push("SESSION_SECRET: the current secret must be at least 32 characters");
  }

  let encryptionEntries = env.ENCRYPTION_KEYS;
  if (encryptionEntries.length === 0) {
    if (production) problems.push("ENCRYPTION_KEYS is required in production");
    else warnings.push("ENCRYPTION_KEYS is not set: using a development key (never do this in production)");
    encryptionEntries = [DEV_ENCRYPTION_KEY];
  }
  const encryptionKeys = parseEncryptionKeys(encryptionEntries, problems);
  // CA private keys may have their own master key; without one they use ENCRYPTION_KEYS.
  const caKeys = env.CA_KEY_ENCRYPTION_KEY.length > 0 ? parseEncryptionKeys(env.CA_KEY_ENCRYPTION_KEY, problems) : encryptionKeys;

  // Node refuses a headers timeout longer than the whole request's.
  if (env.HTTP_HEADERS_TIMEOUT > env.HTTP_REQUEST_TIMEOUT) problems.push("HTTP_HEADERS_TIMEOUT must not be longer than HTTP_REQUEST_TIMEOUT");
  if (env.SESSION_ABSOLUTE_TIMEOUT < env.SESSION_IDLE_TIMEOUT) {
    problems.push("SESSION_ABSOLUTE_TIMEOUT must not be shorter than SESSION_IDLE_TIMEOUT");
  }
  if (env.EMAIL_PROVIDER === "resend" && !env.RESEND_API_KEY) problems.push("RESEND_API_KEY is required with EMAIL_PROVIDER=resend");
  if (env.EMAIL_PROVIDER === "sendgrid" && !env.SENDGRID_API_KEY) problems.push("SENDGRID_API_KEY is required with EMAIL_PROVIDER=sendgrid");
  if (env.EMAIL_PROVIDER === "log" && production) {
    warnings.push("EMAIL_PROVIDER=log in production: emails are only written to the log");
  }
  const providerUrls = {
    githubOauth: providerUrl("GITHUB_OAUTH_URL", env.GITHUB_OAUTH_URL, problems),
    githubApi: providerUrl("GITHUB_API_URL", env.GITHUB_API_URL, problems),
    google: providerUrl("GOOGLE_ISSUER", env.GOOGLE_ISSUER, problems),
  };
  // /metrics is never public: its own port, or the main port with a long bearer token.
  if (env.METRICS_TOKEN !== undefined && env.METRICS_TOKEN.length < 32) problems.push("METRICS_TOKEN: must be at least 32 characters");
  if (env.METRICS_PORT !== undefined && env.METRICS_PORT === env.PORT) problems.push("METRICS_PORT must differ from PORT (use METRICS_TOKEN to serve /metrics on the main port)");
  const dnsResolvers = env.DNS_RESOLVER.filter((server) => {
    if (isDnsServer(server)) return true;
    problems.push(`DNS_RESOLVER: "${server}" is not an IP address with an optional port (10.0.0.53, 127.0.0.1:5353, [::1]:53)`);
    return false;
  });
  if (problems.length > 0) throw new ConfigError(problems);

  const trustProxy = ((): boolean | number | string => {
    if (env.TRUST_PROXY === "false") return false;
    if (env.TRUST_PROXY === "true") return true;
    if (/^\d+$/.test(env.TRUST_PROXY)) return Number(env.TRUST_PROXY);
    return env.TRUST_PROXY;
  })();

  return {
    env: env.NODE_ENV,
    isProduction: production,
    isDevelopment: env.NODE_ENV === "development",
    warnings,
    workers: env.WORKERS,
    http: {
      host,
      port: env.PORT,
      publicUrl: publicUrl.origin,
      appUrl: (env.APP_URL ? new URL(env.APP_URL).origin : publicUrl.origin) as string,
      https,
      trustProxy,
      bodyLimit: env.BODY_LIMIT,
      timeouts: { headersMs: env.HTTP_HEADERS_TIMEOUT * 1000, requestMs: env.HTTP_REQUEST_TIMEOUT * 1000, keepAliveMs: env.HTTP_KEEP_ALIVE_TIMEOUT * 1000 },
    },
    logLevel: env.LOG_LEVEL,
    metrics: {
      // Collected only when something can scrape them (a metrics port or a token).
      enabled: env.METRICS_PORT !== undefined || env.METRICS_TOKEN !== undefined,
      port: env.METRICS_PORT,
      host: env.METRICS_HOST ?? host,
      token: env.METRICS_TOKEN,
    },
    db: { url: env.DATABASE_URL, dataDir: env.DATA_DIR, poolSize: env.DATABASE_POOL_SIZE, migrateOnStart: env.MIGRATE_ON_START },
    redis: { url: env.REDIS_URL, keyPrefix: env.REDIS_KEY_PREFIX },
    cache: { ttlMs: env.CACHE_TTL_MS },
    session: {
      secrets: sessionSecrets,
      cookieName: env.SESSION_COOKIE_NAME ?? (https ? "__Host-keyward.sid" : "keyward.sid"),
      secureCookie: https,
      idleTimeout: env.SESSION_IDLE_TIMEOUT,
      absoluteTimeout: env.SESSION_ABSOLUTE_TIMEOUT,
      rememberMeIdleTimeout: env.SESSION_REMEMBER_ME_IDLE_TIMEOUT,
      rememberMeAbsoluteTimeout: env.SESSION_REMEMBER_ME_ABSOLUTE_TIMEOUT,
    },
    crypto: { encryptionKeys, caKeys },
    ssh: {
      requireVerifiedKeys: env.SSH_REQUIRE_VERIFIED_KEYS,
      hostPrincipalPatterns: env.SSH_HOST_PRINCIPAL_PATTERNS,
      verifyChallengeTtl: env.SSH_VERIFY_CHALLENGE_TTL,
      backdateSeconds: env.SSH_CERT_BACKDATE_SECONDS,
      rotationOverlapHours: env.SSH_CA_ROTATION_OVERLAP_HOURS,
      maxPrincipals: env.SSH_MAX_PRINCIPALS,
      maxPreviousKeys: env.SSH_CA_MAX_PREVIOUS_KEYS,
      keygenRate: env.RATE_LIMIT_CA_KEYGEN,
    },
    password: {
      memoryCost: env.ARGON2_MEMORY_KIB,
      timeCost: env.ARGON2_TIME_COST,
      parallelism: env.ARGON2_PARALLELISM,
    },
    tokens: {
      emailVerificationTtl: env.EMAIL_VERIFICATION_TTL,
      passwordResetTtl: env.PASSWORD_RESET_TTL,
      activationTtl: env.ACTIVATION_TTL,
      inviteTtl: env.INVITE_TTL,
    },
    audit: { chainIntervalMs: env.AUDIT_CHAIN_INTERVAL_MS, batchSize: env.AUDIT_CHAIN_BATCH, retentionDays: env.AUDIT_RETENTION_DAYS },
    orgs: { maxOrgsPerUser: env.MAX_ORGS_PER_USER, countTimeoutMs: env.ORG_COUNT_TIMEOUT_MS, requireVerifiedEmail: env.REQUIRE_VERIFIED_EMAIL },
    cors: { origins: env.CORS_ORIGINS, credentials: env.CORS_SUPPORTS_CREDENTIALS },
    superadminEmails: env.SUPERADMIN_EMAILS.map((e) => e.toLowerCase()),
    mfa: {
      rp: {
        // WebAuthn needs a domain name (not an IP address): by default, PUBLIC_URL's host.
        id: env.WEBAUTHN_RP_ID ?? publicUrl.hostname,
        name: env.WEBAUTHN_RP_NAME ?? env.BRAND_NAME,
        origins: env.WEBAUTHN_ORIGINS.length > 0 ? env.WEBAUTHN_ORIGINS : [publicUrl.origin],
      },
      totpIssuer: env.BRAND_NAME,
      pendingTtl: env.MFA_PENDING_TTL,
      complianceIntervalMs: env.MFA_COMPLIANCE_INTERVAL_MS,
      rate: env.RATE_LIMIT_MFA,
    },
    networks: {
      // ZeroTier Central's address is fixed in production; other modes may point at a stand-in.
      centralUrl: env.NODE_ENV === "production" || !env.ZEROTIER_CENTRAL_URL ? CENTRAL_API_URL : env.ZEROTIER_CENTRAL_URL.replace(/\/+$/, ""),
      allowedControllerUrls: env.ZEROTIER_CONTROLLER_URLS,
      reconcileIntervalMs: env.NETWORK_RECONCILE_INTERVAL_MS,
      controllerTimeoutMs: env.NETWORK_CONTROLLER_TIMEOUT_MS,
      controllerRetries: env.NETWORK_CONTROLLER_RETRIES,
    },
    oidc: {
      // The issuer is the public origin: relying parties discover it at /.well-known/openid-configuration.
      issuer: publicUrl.origin,
      codeTtl: env.OIDC_CODE_TTL,
      requirePkce: env.OIDC_REQUIRE_PKCE,
      dynamicRegistration: env.OIDC_DYNAMIC_REGISTRATION,
      deviceCodeTtl: env.OIDC_DEVICE_CODE_TTL,
      sessionTtl: env.OIDC_SESSION_TTL,
      keyRotationDays: env.OIDC_KEY_ROTATION_DAYS,
      keyGraceDays: env.OIDC_KEY_GRACE_DAYS,
      refreshRetryGrace: env.OIDC_REFRESH_RETRY_GRACE,
      purgeIntervalMs: env.OIDC_PURGE_INTERVAL_MS,
      keyCheckIntervalMs: env.OIDC_KEY_CHECK_INTERVAL_MS,
      rate: { authorize: env.RATE_LIMIT_OIDC_AUTHORIZE, token: env.RATE_LIMIT_OIDC_TOKEN, userinfo: env.RATE_LIMIT_OIDC_USERINFO },
    },
    externalAuth: {
      // The callback is always ours, derived from PUBLIC_URL: callers never choose where codes go.
      callbackBase: `${publicUrl.origin}/api/v1/auth/external`,
      flowTtl: env.OAUTH_FLOW_TTL,
      cliLoginTtl: env.CLI_LOGIN_TTL,
      cliLoginRate: env.RATE_LIMIT_CLI_LOGIN,
      rate: env.RATE_LIMIT_OAUTH,
      github: {
        clientId: env.GITHUB_CLIENT_ID,
        clientSecret: env.GITHUB_CLIENT_SECRET,
        scopes: env.GITHUB_SCOPES.split(/\s+/).filter(Boolean),
        oauthUrl: providerUrls.githubOauth,
        apiUrl: providerUrls.githubApi,
      },
      google: {
        clientId: env.GOOGLE_CLIENT_ID,
        clientSecret: env.GOOGLE_CLIENT_SECRET,
        scopes: env.GOOGLE_SCOPES.split(/\s+/).filter(Boolean),
        issuer: providerUrls.google,
      },
    },
    graphql: {
      maxDepth: env.GRAPHQL_MAX_DEPTH,
      maxComplexity: env.GRAPHQL_MAX_COMPLEXITY,
      // The IDE and introspection are open in development; elsewhere only superadmins get them.
      ideForEveryone: env.NODE_ENV === "development" || env.GRAPHQL_IDE,
    },
    rateLimits: {
      enabled: env.RATE_LIMIT_ENABLED,
      loginIp: env.RATE_LIMIT_LOGIN_IP,
      loginAccountFailures: env.RATE_LIMIT_LOGIN_ACCOUNT_FAILURES,
      loginLockoutBase: env.RATE_LIMIT_LOGIN_LOCKOUT_BASE,
      loginLockoutMax: env.RATE_LIMIT_LOGIN_LOCKOUT_MAX,
      loginAccountWide: env.RATE_LIMIT_LOGIN_ACCOUNT_WIDE,
      loginAccountWideLock: env.RATE_LIMIT_LOGIN_ACCOUNT_WIDE_LOCK,
      register: env.RATE_LIMIT_REGISTER,
      forgotPassword: env.RATE_LIMIT_FORGOT_PASSWORD,
      resetPassword: env.RATE_LIMIT_RESET_PASSWORD,
      resendVerification: env.RATE_LIMIT_RESEND_VERIFICATION,
      invites: env.RATE_LIMIT_INVITES,
      contact: env.RATE_LIMIT_CONTACT,
      apiIp: env.RATE_LIMIT_API_IP,
    } satisfies Record<string, RateRule | number | boolean>,
    domains: {
      resolvers: dnsResolvers,
      timeoutMs: env.DNS_TIMEOUT_MS,
      recheckIntervalMs: env.DOMAIN_RECHECK_INTERVAL * 1000,
      tickMs: env.DOMAIN_RECHECK_TICK_MS,
      lapseAfter: env.DOMAIN_LAPSE_AFTER,
      verifyRate: env.RATE_LIMIT_DOMAIN_VERIFY,
    },
    email: {
      provider: env.EMAIL_PROVIDER,
      from: env.EMAIL_FROM,
      smtp: {
        host: env.SMTP_HOST,
        port: env.SMTP_PORT,
        secure: env.SMTP_SECURE,
        requireTls: env.SMTP_REQUIRE_TLS,
        username: env.SMTP_USERNAME,
        password: env.SMTP_PASSWORD,
      },
      resend: { apiKey: env.RESEND_API_KEY ?? "", baseUrl: env.RESEND_BASE_URL },
      sendgrid: { apiKey: env.SENDGRID_API_KEY ?? "", baseUrl: env.SENDGRID_BASE_URL },
      contactNotifyEmail: env.CONTACT_NOTIFY_EMAIL ?? env.SUPPORT_EMAIL,
      workerIntervalMs: env.EMAIL_WORKER_INTERVAL_MS,
      maxAttempts: env.EMAIL_MAX_ATTEMPTS,
      brand: {
        name: env.BRAND_NAME,
        logoUrl: env.BRAND_LOGO_URL,
        supportEmail: env.SUPPORT_EMAIL,
      },
    },
  };
}

export type Config = Readonly<ReturnType<typeof buildConfig>>;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Buffer.isBuffer(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Parses the environment once; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable means "not set" (as in `DATABASE_URL= npm start`).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(present);
  if (parsed.success) return deepFreeze(buildConfig(parsed.data));
  const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  // One list in one pass: the checks across variables (secret lengths, TLS, timeouts) still run,
  // on the variables that parsed and the defaults of the ones that did not. What they say about a
  // variable already refused (its default standing in) is left out.
  const refused = new Set(parsed.error.issues.map((i) => String(i.path[0])));
  const rest = envSchema.safeParse(Object.fromEntries(Object.entries(present).filter(([k]) => !refused.has(k))));
  if (rest.success) {
    try {
      buildConfig(rest.data);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      problems.push(...e.problems.filter((p) => ![...refused].some((name) => new RegExp(`\\b${name}\\b`).test(p))));
    }
  }
  throw new ConfigError(problems);
}

/** Loads `.env` into the environment when the file exists (values already set win). */
export function loadDotEnvFile(path = ".env"): void {
  if (existsSync(path)) process.loadEnvFile(path);
}
