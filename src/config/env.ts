import { z } from "zod";

/**
 * Every environment variable Keyward reads, parsed once, each with its meaning: `.env.example` and
 * docs/configuration.md are generated from these sections (`npm run config:docs`; a test fails when
 * they drift). Nothing outside src/config reads process.env. Durations are seconds unless the name
 * says _MS. Secret lists are comma-separated with the current secret first, so they can rotate.
 */
export interface VarDoc {
  /** How the value is written, for the reference. */
  kind: string;
  /** The value when unset, as written in the environment ("" when there is none). */
  fallback: string;
  description: string;
}

const doc = <T extends z.ZodType>(schema: T, kind: string, fallback: string, description: string): T =>
  schema.meta({ keyward: { kind, fallback, description } satisfies VarDoc });

/** The documentation of one variable's schema (every entry of ENV_SECTIONS has one). */
export const varDoc = (schema: z.ZodType): VarDoc => (schema.meta() as { keyward: VarDoc }).keyward;

const bool = (fallback: boolean, description: string) =>
  doc(
    z
      .enum(["true", "false", "1", "0", "yes", "no"])
      .optional()
      .transform((v) => (v === undefined ? fallback : ["true", "1", "yes"].includes(v))),
    "boolean",
    String(fallback),
    description,
  );

const int = (fallback: number, min: number, description: string) =>
  doc(z.coerce.number().int().min(min).default(fallback), `integer ≥ ${min}`, String(fallback), description);

function str(fallback: string, description: string): z.ZodDefault<z.ZodString>;
function str(fallback: undefined, description: string): z.ZodOptional<z.ZodString>;
function str(fallback: string | undefined, description: string): z.ZodType {
  return fallback === undefined ? doc(z.string().optional(), "string", "", description) : doc(z.string().default(fallback), "string", fallback, description);
}

/**
 * An http(s) URL. `new URL("localhost:8080")` parses (its scheme would be "localhost:"), so the
 * scheme is checked: a forgotten "https://" is a configuration error, not a failure deep inside a
 * library seconds later.
 */
const httpUrl = () => z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL, e.g. https://id.example.com" });

function url(fallback: string, description: string): z.ZodDefault<z.ZodURL>;
function url(fallback: undefined, description: string): z.ZodOptional<z.ZodURL>;
function url(fallback: string | undefined, description: string): z.ZodType {
  return fallback === undefined ? doc(httpUrl().optional(), "URL", "", description) : doc(httpUrl().default(fallback), "URL", fallback, description);
}

const oneOf = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number], description: string) =>
  doc(z.enum(values).default(fallback as never), values.join(" | "), fallback, description);

const list = (description: string) =>
  doc(
    z
      .string()
      .optional()
      .transform((v) => (v ?? "").split(",").map((s) => s.trim()).filter(Boolean)),
    "comma-separated list",
    "",
    description,
  );

/** "<points>/<seconds>", e.g. "3/3600" = 3 per hour. */
const rate = (fallback: string, description: string) =>
  doc(
    z
      .string()
      .default(fallback)
      .refine((v) => /^\d+\/\d+$/.test(v), "expected <points>/<seconds>, e.g. 5/3600")
      .transform((v) => {
        const [points, duration] = v.split("/").map(Number) as [number, number];
        return { points, duration };
      }),
    "<points>/<seconds>",
    fallback,
    description,
  );

const runtime = {
  NODE_ENV: oneOf(["development", "production", "test"], "development", "production refuses development secrets and keys"),
  HOST: str(undefined, "the address to listen on; default 127.0.0.1 (this machine only) on the embedded database, which runs with development secrets unless they are set, and 0.0.0.0 (every interface) with DATABASE_URL"),
  PORT: int(8080, 0, "the port to listen on"),
  WORKERS: int(1, 1, "processes serving the port (node:cluster), e.g. the number of cores; above 1 needs DATABASE_URL and REDIS_URL"),
  PUBLIC_URL: url(undefined, "the origin users reach (issuer, cookies, links); default http://localhost:PORT; https => Secure __Host- cookie + HSTS"),
  APP_URL: url(undefined, "where email links point (web app); default PUBLIC_URL"),
  LOG_LEVEL: oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"], "info", "JSON log level on stdout"),
  TRUST_PROXY: str("false", 'Express "trust proxy": false, true, a hop count, or proxy addresses/subnets'),
  BODY_LIMIT: str("100kb", "request body limit, JSON and forms (413 beyond); the OIDC endpoints take at most 56kb whatever this says"),
  HTTP_HEADERS_TIMEOUT: int(20, 1, "a request's headers must arrive within this; a slower client gets 408 and the connection closes"),
  HTTP_REQUEST_TIMEOUT: int(60, 1, "a whole request, body included, must arrive within this (60 s carries a 100 kB body at 14 kbit/s); a slower client gets 408 and the connection closes; not less than HTTP_HEADERS_TIMEOUT"),
  HTTP_KEEP_ALIVE_TIMEOUT: int(5, 1, "an idle keep-alive connection closes after this; behind a load balancer that reuses connections, set it above the balancer's idle timeout"),
};

const metrics = {
  METRICS_PORT: doc(z.coerce.number().int().min(1).max(65535).optional(), "port 1–65535", "", "serve Prometheus /metrics alone on this separate port (unset: no metrics port)"),
  METRICS_HOST: str(undefined, "the address the metrics port binds; default HOST (keep it off the public network)"),
  METRICS_TOKEN: str(undefined, '>= 32 characters: /metrics on the main port with "Authorization: Bearer <token>", and asked on METRICS_PORT too; with neither set /metrics is 404'),
};

const storage = {
  DATABASE_URL: doc(
    z
      .string()
      .optional()
      .refine((v) => v === undefined || /^postgres(ql)?:\/\//i.test(v), "must be a PostgreSQL URL (postgres://user:password@host:5432/keyward); Keyward runs on PostgreSQL, or on its embedded database when this is unset"),
    "postgres:// URL",
    "",
    "postgres://user:pass@host:5432/keyward, or a Unix socket as libpq names it (postgres://user@localhost/keyward?host=/run/postgresql); unset: PGlite on disk under DATA_DIR",
  ),
  DATABASE_POOL_SIZE: int(10, 1, "connections each process keeps open to PostgreSQL (WORKERS processes keep this many each); queries beyond it are pipelined on busy connections"),
  DATA_DIR: str("./data", 'embedded database directory ("memory://" for a throw-away database)'),
  MIGRATE_ON_START: bool(true, "apply pending migrations at start (npm run db:migrate does it by hand)"),
  REDIS_URL: str(undefined, "redis://host:6379/0; unset: in-process session and rate-limit stores"),
  REDIS_KEY_PREFIX: str("keyward:", "prefix of every Redis key"),
  CACHE_TTL_MS: int(30_000, 0, "how long an instance may serve account profiles (who a session is, GET me) and OIDC clients from memory; every committed change reaches every instance at once through PostgreSQL notifications, this only bounds the unforeseen; 0 turns the caches off"),
};

const secrets = {
  SESSION_SECRET: list(">= 32 characters; a list rotates (the first signs cookies, all verify); required in production"),
  SESSION_COOKIE_NAME: str(undefined, "default keyward.sid (__Host-keyward.sid over https)"),
  SESSION_IDLE_TIMEOUT: int(8 * 3600, 60, "a session ends after this long without a request"),
  SESSION_ABSOLUTE_TIMEOUT: int(24 * 3600, 60, "a session ends this long after sign-in at the latest"),
  SESSION_REMEMBER_ME_IDLE_TIMEOUT: int(7 * 24 * 3600, 60, "idle timeout with remember-me"),
  SESSION_REMEMBER_ME_ABSOLUTE_TIMEOUT: int(30 * 24 * 3600, 60, "absolute timeout with remember-me"),
  ENCRYPTION_KEYS: list("secrets at rest (AES-256-GCM): id:base64(32 bytes),older-id:...; the first seals, all open; required in production"),
  CA_KEY_ENCRYPTION_KEY: list("master key(s) for SSH CA private keys, same format; default ENCRYPTION_KEYS"),
};

const ssh = {
  SSH_REQUIRE_VERIFIED_KEYS: bool(true, "only keys with a proof of possession (ssh-keygen -Y sign) get certificates"),
  SSH_HOST_PRINCIPAL_PATTERNS: bool(false, "host certificates may name patterns with * or ? (OpenSSH accepts such a certificate for every host name the pattern matches); off: host names and addresses only"),
  SSH_VERIFY_CHALLENGE_TTL: int(24 * 3600, 60, "how long a proof-of-possession challenge stays valid"),
  SSH_CERT_BACKDATE_SECONDS: int(300, 0, "certificates start this far in the past (clock skew)"),
  SSH_CA_ROTATION_OVERLAP_HOURS: int(7 * 24, 0, "after a rotation the previous CA key stays trusted this many hours"),
  SSH_MAX_PRINCIPALS: int(256, 1, "principals in one certificate at the most"),
  SSH_CA_MAX_PREVIOUS_KEYS: int(2, 0, "retired keys a CA still publishes during overlaps; older ones stop being trusted at the next rotation"),
  RATE_LIMIT_CA_KEYGEN: rate("10/3600", "CA creations + rotations per organization (each generates a key)"),
};

const networks = {
  ZEROTIER_CONTROLLER_URLS: list("allowed self-hosted controller URL prefixes, e.g. http://10.0.0.5:9993 (empty: ZeroTier Central only)"),
  ZEROTIER_CENTRAL_URL: url(undefined, "ZeroTier Central stand-in for tests; ignored in production (https://api.zerotier.com/api/v1)"),
  NETWORK_RECONCILE_INTERVAL_MS: int(60_000, 1000, "reconciliation tick (one instance per tick)"),
  NETWORK_CONTROLLER_TIMEOUT_MS: int(5000, 100, "per controller request"),
  NETWORK_CONTROLLER_RETRIES: int(3, 0, "retries of 429, 5xx and unreachable answers, with back-off"),
};

const passwords = {
  ARGON2_MEMORY_KIB: int(19456, 19456, "argon2id memory (OWASP minimum 19 MiB); raising a parameter rehashes at next sign-in"),
  ARGON2_TIME_COST: int(2, 2, "argon2id iterations"),
  ARGON2_PARALLELISM: int(1, 1, "argon2id lanes"),
  EMAIL_VERIFICATION_TTL: int(24 * 3600, 60, "verification links"),
  PASSWORD_RESET_TTL: int(2 * 3600, 60, "password reset links"),
  ACTIVATION_TTL: int(72 * 3600, 60, "activation links of accounts an admin created"),
  INVITE_TTL: int(7 * 24 * 3600, 60, "organization invitations"),
};

const orgs = {
  MAX_ORGS_PER_USER: int(10, 1, "creating or joining beyond it is refused (ORG_LIMIT_REACHED)"),
  REQUIRE_VERIFIED_EMAIL: bool(true, "an account creates or joins an organization (and so owns a CA or holds a certificate) only once it has proved its email address (EMAIL_NOT_VERIFIED); false only where mail cannot be delivered at all, e.g. benchmarks; invitations still need a verified address"),
  ORG_COUNT_TIMEOUT_MS: int(2000, 1, "if counting fails or takes longer, the change proceeds (logged)"),
  CORS_ORIGINS: list('exact origins, "*" or patterns like https://*.example.com; also the allow-list for /auth/token redirects'),
  CORS_SUPPORTS_CREDENTIALS: bool(true, 'with "*", the request\'s Origin is echoed instead of "*"'),
  SUPERADMIN_EMAILS: list("verified accounts with these addresses become superadmins"),
};

const mfa = {
  WEBAUTHN_RP_ID: str(undefined, "default: PUBLIC_URL's host name (WebAuthn needs a domain, not an IP)"),
  WEBAUTHN_RP_NAME: str(undefined, "default: BRAND_NAME"),
  WEBAUTHN_ORIGINS: list("origins allowed in ceremonies; default PUBLIC_URL"),
  MFA_PENDING_TTL: int(300, 30, "how long a password-verified sign-in waits for its second factor"),
  RATE_LIMIT_MFA: rate("10/900", "second-factor attempts per account"),
  MFA_COMPLIANCE_INTERVAL_MS: int(3600_000, 1000, "MFA policy pass: deadlines, reminders, restrictions (one instance per tick)"),
  GRAPHQL_MAX_DEPTH: int(10, 2, "deepest GraphQL selection accepted"),
  GRAPHQL_MAX_COMPLEXITY: int(1000, 10, "most expensive GraphQL operation accepted"),
  GRAPHQL_IDE: bool(false, "GraphiQL + introspection for everyone (always on in development; superadmins always)"),
};

const oidc = {
  OIDC_CODE_TTL: int(600, 10, "authorization code lifetime"),
  OIDC_REQUIRE_PKCE: bool(true, "PKCE (S256) for confidential clients too; public clients always need it"),
  OIDC_DYNAMIC_REGISTRATION: bool(false, "Dynamic Client Registration (RFC 7591/7592) at /api/v1/oidc/register, behind initial access tokens that organization admins or superadmins issue; never open registration"),
  OIDC_DEVICE_CODE_TTL: int(600, 60, "device authorization grant: how long a user code waits"),
  OIDC_SESSION_TTL: int(14 * 24 * 3600, 300, "the provider's own browser session (it also ends with the Keyward session)"),
  OIDC_KEY_ROTATION_DAYS: int(90, 1, "a new RS256 and ES256 signing key after this many days"),
  OIDC_KEY_GRACE_DAYS: int(30, 1, "a retired key stays in the JWKS this many days"),
  OIDC_REFRESH_RETRY_GRACE: doc(
    z.coerce.number().int().min(0).max(300).default(30),
    "integer 0–300",
    "30",
    "a client whose refresh answer was lost may present the just-rotated token again this long, while its successor is unused: it gets new tokens and that successor is retired; any other reuse revokes the grant (0: never)",
  ),
  OIDC_PURGE_INTERVAL_MS: int(15 * 60 * 1000, 1000, "how often expired codes, tokens and sessions are deleted"),
  OIDC_KEY_CHECK_INTERVAL_MS: int(60_000, 1000, "how often signing keys are checked for rotation (one instance rotates) and reloaded"),
  RATE_LIMIT_OIDC_AUTHORIZE: rate("60/60", "per client address: authorization, device and interaction pages"),
  RATE_LIMIT_OIDC_TOKEN: rate("600/60", "per client address: token, introspection, revocation, device authorization"),
  RATE_LIMIT_OIDC_USERINFO: rate("600/60", "per client address: userinfo"),
};

const external = {
  GITHUB_CLIENT_ID: str(undefined, "fallback when a superadmin has not configured GitHub (PUT /api/v1/admin/oauth/providers/github)"),
  GITHUB_CLIENT_SECRET: str(undefined, "with GITHUB_CLIENT_ID"),
  GITHUB_SCOPES: str("read:user user:email", "scopes asked of GitHub"),
  GITHUB_OAUTH_URL: url("https://github.com", "base URL: https, or http on loopback (local stand-ins)"),
  GITHUB_API_URL: url("https://api.github.com", "base URL of GitHub's API"),
  GOOGLE_CLIENT_ID: str(undefined, "fallback when a superadmin has not configured Google"),
  GOOGLE_CLIENT_SECRET: str(undefined, "with GOOGLE_CLIENT_ID"),
  GOOGLE_SCOPES: str("openid email profile", "scopes asked of Google"),
  GOOGLE_ISSUER: url("https://accounts.google.com", "discovery, keys and endpoints come from here"),
  OAUTH_FLOW_TTL: int(600, 30, "how long a started sign-in or link may take; state is single-use"),
  CLI_LOGIN_TTL: int(600, 30, "how long a command-line sign-in (/api/v1/token_please) waits for the browser"),
  RATE_LIMIT_CLI_LOGIN: rate("30/300", "command-line sign-ins started per client address"),
  RATE_LIMIT_OAUTH: rate("60/300", "flow starts and callbacks per client address"),
};

const limits = {
  RATE_LIMIT_ENABLED: bool(true, "every limit below on or off"),
  RATE_LIMIT_LOGIN_IP: rate("100/3600", "sign-in attempts per client address (and, counted apart, email-first SSO discovery calls)"),
  RATE_LIMIT_LOGIN_ACCOUNT_FAILURES: int(5, 1, "failed password checks on one account from one address before that address is locked out of it"),
  RATE_LIMIT_LOGIN_LOCKOUT_BASE: int(30, 1, "that address's first lock, doubling per further failure"),
  RATE_LIMIT_LOGIN_LOCKOUT_MAX: int(3600, 1, "the longest such lock"),
  RATE_LIMIT_LOGIN_ACCOUNT_WIDE: rate("20/900", "failures on one account from all addresses before a short lock for everyone"),
  RATE_LIMIT_LOGIN_ACCOUNT_WIDE_LOCK: int(120, 1, "that lock: kept short so a guesser cannot keep the owner out"),
  RATE_LIMIT_REGISTER: rate("50/3600", "registrations per client address"),
  RATE_LIMIT_FORGOT_PASSWORD: rate("20/3600", "reset requests per client address"),
  RATE_LIMIT_RESET_PASSWORD: rate("30/3600", "reset attempts per client address"),
  RATE_LIMIT_RESEND_VERIFICATION: rate("3/3600", "verification resends per account"),
  RATE_LIMIT_INVITES: rate("100/3600", "invitations sent per organization"),
  RATE_LIMIT_CONTACT: rate("5/3600", "contact-form submissions per client address"),
  RATE_LIMIT_API_IP: rate("1200/60", "coarse per-address limit on /api/v1"),
};

const email = {
  EMAIL_PROVIDER: oneOf(["log", "smtp", "resend", "sendgrid"], "log", "log writes emails to the log (embedded default)"),
  RESEND_API_KEY: str(undefined, "with EMAIL_PROVIDER=resend"),
  RESEND_BASE_URL: url("https://api.resend.com", "Resend's API"),
  SENDGRID_API_KEY: str(undefined, "with EMAIL_PROVIDER=sendgrid"),
  SENDGRID_BASE_URL: url("https://api.sendgrid.com", "SendGrid's API"),
  CONTACT_NOTIFY_EMAIL: str(undefined, "where contact-form messages go (default SUPPORT_EMAIL)"),
  EMAIL_FROM: str("Keyward <no-reply@keyward.local>", "sender of every email"),
  SMTP_HOST: str("localhost", "with EMAIL_PROVIDER=smtp"),
  SMTP_PORT: int(587, 1, "SMTP port"),
  SMTP_SECURE: bool(false, "implicit TLS (port 465)"),
  SMTP_REQUIRE_TLS: bool(false, "insist on STARTTLS"),
  SMTP_USERNAME: str(undefined, "SMTP authentication"),
  SMTP_PASSWORD: str(undefined, "SMTP authentication"),
  EMAIL_WORKER_INTERVAL_MS: int(2000, 50, "how often the outbox is sent"),
  EMAIL_MAX_ATTEMPTS: int(8, 1, "then the message is parked as dead"),
  BRAND_NAME: str("Keyward", "product name in emails and pages"),
  BRAND_LOGO_URL: url(undefined, "logo in emails"),
  SUPPORT_EMAIL: str("support@keyward.local", "shown in emails and pages"),
};

const audit = {
  AUDIT_CHAIN_INTERVAL_MS: int(5000, 100, "how often new audit records are hash-chained and the chains' heads signed (one instance per tick)"),
  AUDIT_CHAIN_BATCH: int(500, 1, "audit records chained per transaction"),
  AUDIT_RETENTION_DAYS: int(0, 0, "audit records older than this are pruned behind a signed checkpoint (0: kept forever)"),
};

const domains = {
  DNS_RESOLVER: list("DNS servers that verify organizations' domains (TXT records), e.g. 10.0.0.53 or 127.0.0.1:5353,[::1]:53; empty: the system's resolvers"),
  DNS_TIMEOUT_MS: int(3000, 100, "one DNS query's timeout (tried twice per server at most)"),
  DOMAIN_RECHECK_INTERVAL: int(24 * 3600, 60, "a verified domain's TXT record is looked up again this long after its last check"),
  DOMAIN_RECHECK_TICK_MS: int(300_000, 1000, "how often due re-checks are looked for (instances share the work, each domain checked once)"),
  DOMAIN_LAPSE_AFTER: int(3, 1, "re-checks in a row that do not find the record before a verified domain lapses"),
  RATE_LIMIT_DOMAIN_VERIFY: rate("30/3600", "verify-now DNS lookups per organization"),
};

/** The sections of the configuration reference, in order (title → variables). */
const SECTIONS: Record<string, Record<string, z.ZodType>> = {
  Runtime: runtime, "Metrics (Prometheus)": metrics, Storage: storage, "Sessions and secrets": secrets, "SSH certificate authority": ssh, "Network access (ZeroTier)": networks,
  "Passwords and links": passwords, "Organizations, cross-origin and operators": orgs, "MFA and GraphQL": mfa,
  "OpenID Connect provider (issuer = PUBLIC_URL's origin)": oidc,
  "Sign in with GitHub / Google (register PUBLIC_URL/api/v1/auth/external/{github|google}/callback)": external,
  "Rate limits (windows aligned to the clock)": limits, Email: email, "Audit log (hash chain and retention)": audit,
  "Verified domains (DNS TXT records)": domains,
};
export const ENV_SECTIONS: readonly { title: string; vars: Record<string, z.ZodType> }[] = Object.entries(SECTIONS).map(([title, vars]) => ({ title, vars }));

export const envSchema = z.object({ ...runtime, ...metrics, ...storage, ...secrets, ...ssh, ...networks, ...passwords, ...orgs, ...mfa, ...oidc, ...external, ...limits, ...email, ...audit, ...domains });

export type Env = z.input<typeof envSchema>;
export type ParsedEnv = z.output<typeof envSchema>;
