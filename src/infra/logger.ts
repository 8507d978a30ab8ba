import { pino, type Logger } from "pino";

export type { Logger };

/** Field names whose values never reach a log line, at any of the first three nesting levels. */
const SECRET_FIELDS = [
  "authorization",
  "cookie",
  "password",
  "current_password",
  "new_password",
  "password_confirm",
  "token",
  "secret",
  "client_secret",
  "private_key",
  "privateKey",
  "api_key",
];

const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  'res.headers["set-cookie"]',
  ...SECRET_FIELDS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]),
];

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "keyward" },
    redact: { paths: REDACT_PATHS, censor: "[REDACTED]" },
  });
}
