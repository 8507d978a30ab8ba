import { z } from "zod";

/**
 * Every environment variable Keyward reads, parsed once. Nothing outside src/config reads process.env.
 * Durations are seconds. Secret lists are comma-separated with the current secret first, so they can rotate.
 */
const bool = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0", "yes", "no"])
    .optional()
    .transform((v) => (v === undefined ? fallback : ["true", "1", "yes"].includes(v)));

const int = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

const list = z
  .string()
  .optional()
  .transform((v) => (v ?? "").split(",").map((s) => s.trim()).filter(Boolean));

/** "<points>/<seconds>", e.g. "3/3600" = 3 per hour. */
const rate = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .refine((v) => /^\d+\/\d+$/.test(v), "expected <points>/<seconds>, e.g. 5/3600")
    .transform((v) => {
      const [points, duration] = v.split("/").map(Number) as [number, number];
      return { points, duration };
    });

export const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  HOST: z.string().default("0.0.0.0"),
  PORT: int(8080),
  PUBLIC_URL: z.url().optional(),
  APP_URL: z.url().optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  TRUST_PROXY: z.string().default("false"),
  BODY_LIMIT: z.string().default("100kb"),

  DATABASE_URL: z.string().optional(),
  DATA_DIR: z.string().default("./data"),
  MIGRATE_ON_START: bool(true),
  REDIS_URL: z.string().optional(),
  REDIS_KEY_PREFIX: z.string().default("keyward:"),

  SESSION_SECRET: list,
  SESSION_COOKIE_NAME: z.string().optional(),
  SESSION_IDLE_TIMEOUT: int(8 * 3600, 60),
  SESSION_ABSOLUTE_TIMEOUT: int(24 * 3600, 60),
  SESSION_REMEMBER_ME_IDLE_TIMEOUT: int(7 * 24 * 3600, 60),
  SESSION_REMEMBER_ME_ABSOLUTE_TIMEOUT: int(30 * 24 * 3600, 60),
  ENCRYPTION_KEYS: list,
  CA_KEY_ENCRYPTION_KEY: list,

  SSH_REQUIRE_VERIFIED_KEYS: bool(true),
  SSH_VERIFY_CHALLENGE_TTL: int(24 * 3600, 60),
  SSH_CERT_BACKDATE_SECONDS: int(300, 0),
  SSH_CA_ROTATION_OVERLAP_HOURS: int(7 * 24, 0),
  SSH_MAX_PRINCIPALS: int(256, 1),
  SSH_CA_MAX_PREVIOUS_KEYS: int(2, 0),
  ZEROTIER_CONTROLLER_URLS: list,
  ZEROTIER_CENTRAL_URL: z.url().optional(),
  NETWORK_RECONCILE_INTERVAL_MS: int(60_000, 1000),
  NETWORK_CONTROLLER_TIMEOUT_MS: int(5000, 100),
  NETWORK_CONTROLLER_RETRIES: int(3, 0),
  RATE_LIMIT_CA_KEYGEN: rate("10/3600"),

  ARGON2_MEMORY_KIB: int(19456, 19456),
  ARGON2_TIME_COST: int(2, 2),
  ARGON2_PARALLELISM: int(1, 1),

  EMAIL_VERIFICATION_TTL: int(24 * 3600, 60),
  PASSWORD_RESET_TTL: int(2 * 3600, 60),
  ACTIVATION_TTL: int(72 * 3600, 60),
  INVITE_TTL: int(7 * 24 * 3600, 60),

  MAX_ORGS_PER_USER: int(10, 1),
  ORG_COUNT_TIMEOUT_MS: int(2000, 1),

  CORS_ORIGINS: list,
  CORS_SUPPORTS_CREDENTIALS: bool(true),

  SUPERADMIN_EMAILS: list,
  WEBAUTHN_RP_ID: z.string().optional(),
  WEBAUTHN_RP_NAME: z.string().optional(),
  WEBAUTHN_ORIGINS: list,
  MFA_PENDING_TTL: int(300, 30),
  RATE_LIMIT_MFA: rate("10/900"),
  GRAPHQL_MAX_DEPTH: int(10, 2),
  GRAPHQL_MAX_COMPLEXITY: int(1000, 10),
  GRAPHQL_IDE: bool(false),

  OIDC_CODE_TTL: int(600, 10),
  OIDC_REQUIRE_PKCE: bool(true),
  OIDC_DEVICE_CODE_TTL: int(600, 60),
  OIDC_SESSION_TTL: int(14 * 24 * 3600, 300),
  OIDC_KEY_ROTATION_DAYS: int(90, 1),
  OIDC_KEY_GRACE_DAYS: int(30, 1),
  OIDC_PURGE_INTERVAL_MS: int(15 * 60 * 1000, 1000),
  RATE_LIMIT_OIDC_AUTHORIZE: rate("60/60"),
  RATE_LIMIT_OIDC_TOKEN: rate("600/60"),
  RATE_LIMIT_OIDC_USERINFO: rate("600/60"),

  // Sign in with GitHub / Google. Client credentials here are the fallback when a superadmin has
  // not configured the provider; base URLs point tests at local stand-ins.
  GITHUB_CLIENT_ID: z.string().optional(),
  GITHUB_CLIENT_SECRET: z.string().optional(),
  GITHUB_SCOPES: z.string().default("read:user user:email"),
  GITHUB_OAUTH_URL: z.url().default("https://github.com"),
  GITHUB_API_URL: z.url().default("https://api.github.com"),
  GOOGLE_CLIENT_ID: z.string().optional(),
  GOOGLE_CLIENT_SECRET: z.string().optional(),
  GOOGLE_SCOPES: z.string().default("openid email profile"),
  GOOGLE_ISSUER: z.url().default("https://accounts.google.com"),
  OAUTH_FLOW_TTL: int(600, 30),
  CLI_LOGIN_TTL: int(600, 30),
  RATE_LIMIT_CLI_LOGIN: rate("30/300"),
  RATE_LIMIT_OAUTH: rate("60/300"),

  RATE_LIMIT_ENABLED: bool(true),
  RATE_LIMIT_LOGIN_IP: rate("100/3600"),
  RATE_LIMIT_LOGIN_ACCOUNT_FAILURES: int(5, 1),
  RATE_LIMIT_LOGIN_LOCKOUT_BASE: int(30, 1),
  RATE_LIMIT_LOGIN_LOCKOUT_MAX: int(3600, 1),
  RATE_LIMIT_LOGIN_ACCOUNT_WIDE: rate("20/900"),
  RATE_LIMIT_LOGIN_ACCOUNT_WIDE_LOCK: int(120, 1),
  RATE_LIMIT_REGISTER: rate("50/3600"),
  RATE_LIMIT_FORGOT_PASSWORD: rate("20/3600"),
  RATE_LIMIT_RESET_PASSWORD: rate("30/3600"),
  RATE_LIMIT_RESEND_VERIFICATION: rate("3/3600"),
  RATE_LIMIT_INVITES: rate("100/3600"),
  RATE_LIMIT_CONTACT: rate("5/3600"),
  RATE_LIMIT_API_IP: rate("1200/60"),

  EMAIL_PROVIDER: z.enum(["log", "smtp", "resend", "sendgrid"]).default("log"),
  RESEND_API_KEY: z.string().optional(),
  RESEND_BASE_URL: z.url().default("https://api.resend.com"),
  SENDGRID_API_KEY: z.string().optional(),
  SENDGRID_BASE_URL: z.url().default("https://api.sendgrid.com"),
  CONTACT_NOTIFY_EMAIL: z.string().optional(),
  EMAIL_FROM: z.string().default("Keyward <no-reply@keyward.local>"),
  SMTP_HOST: z.string().default("localhost"),
  SMTP_PORT: int(587, 1),
  SMTP_SECURE: bool(false),
  SMTP_REQUIRE_TLS: bool(false),
  SMTP_USERNAME: z.string().optional(),
  SMTP_PASSWORD: z.string().optional(),
  EMAIL_WORKER_INTERVAL_MS: int(2000, 50),
  EMAIL_MAX_ATTEMPTS: int(8, 1),
  BRAND_NAME: z.string().default("Keyward"),
  BRAND_LOGO_URL: z.url().optional(),
  SUPPORT_EMAIL: z.string().default("support@keyward.local"),
});

export type Env = z.input<typeof envSchema>;
export type ParsedEnv = z.output<typeof envSchema>;
