import { pino, type DestinationStream, type Logger } from "pino";

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

/** The service's logger; tests pass a destination to read the lines production would write. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: "keyward" }, redact: { paths: REDACT_PATHS, censor: "[REDACTED]" } };
  return destination ? pino(options, destination) : pino(options);
}
