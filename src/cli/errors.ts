/**
 * Exit codes and the one place that turns any failure into a one-line message and a code.
 * Scripts branch on the code, so each number means one thing (docs/cli.md, "Command-line client").
 */
export const ExitCode = {
  OK: 0,
  ERROR: 1,
  USAGE: 2,
  /** Not signed in, sign-in refused or expired, or the token does not allow the operation. */
  AUTH: 3,
  /** Several organizations could sign and none was chosen (no terminal to ask on). */
  ORG_CHOICE: 4,
  UNREACHABLE: 5,
  INTERRUPTED: 130,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure the CLI itself decided on, with the code it exits with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue = ExitCode.ERROR,
    readonly type = "CLI_ERROR",
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** A refusal in the REST envelope: `{success:false, code, message, error:{type, details}}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const SIGNED_OUT_BECAUSE = {
  none: "Not signed in to",
  expired: "The sign-in has expired at",
  ended: "The sign-in has ended at",
  refused: "The saved sign-in was refused by",
};

/** Exit 3: whatever the reason, the remedy is a new login. */
export const notSignedIn = (server: string, why: keyof typeof SIGNED_OUT_BECAUSE = "none") =>
  new CliError(`${SIGNED_OUT_BECAUSE[why]} ${server}: run \`keyward login\``, ExitCode.AUTH, "NOT_SIGNED_IN", { server, reason: why });

export interface Failure {
  exitCode: ExitCodeValue;
  type: string;
  message: string;
  details: Record<string, unknown>;
}

// Node's fetch reports a refused or unresolvable server as TypeError("fetch failed") with the
// system error as its cause; openid-client wraps it once more.
const NETWORK_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_SOCKET"]);

function networkCause(e: unknown): string | null {
  for (let cur = e as { code?: unknown; cause?: unknown; name?: unknown; message?: unknown } | undefined, depth = 0; cur && depth < 5; cur = cur.cause as typeof cur, depth++) {
    if (typeof cur.code === "string" && NETWORK_CODES.has(cur.code)) return cur.code;
    if (cur.name === "TimeoutError") return "timed out";
    // Any other network-level failure (a refused port, a TLS problem): name the innermost cause.
    if (cur.name === "TypeError" && cur.message === "fetch failed") {
      const inner = cur.cause as { code?: unknown; message?: unknown } | undefined;
      return String(inner?.code ?? inner?.message ?? "network error");
    }
  }
  return null;
}

const firstLine = (s: string) => s.split("\n").find((l) => l.trim())?.trim() ?? "Unexpected error";

/** OAuth error codes (RFC 6749, 8628) a sign-in or refresh can end with, in words. */
const OAUTH_MESSAGES: Record<string, string> = {
  access_denied: "Sign-in was denied",
  expired_token: "The sign-in code expired before it was approved: run `keyward login` again",
  invalid_grant: "The saved sign-in is no longer valid: run `keyward login`",
  invalid_client: "The server does not know the keyward-cli client",
};

export function toFailure(e: unknown): Failure {
  if (e instanceof CliError) return { exitCode: e.exitCode, type: e.type, message: e.message, details: e.details };
  if (e instanceof ApiError) {
    const base = { type: e.type, message: e.message, details: e.details };
    if (e.status === 401) return { ...base, exitCode: ExitCode.AUTH, message: `${e.message}: run \`keyward login\`` };
    if (e.type === "INSUFFICIENT_SCOPE") return { ...base, exitCode: ExitCode.AUTH, message: `${e.message} (this sign-in does not allow it: run \`keyward login\` again)` };
    if (e.type === "MULTIPLE_ORGS_AMBIGUOUS") return { ...base, exitCode: ExitCode.ORG_CHOICE };
    return { ...base, exitCode: ExitCode.ERROR };
  }
  const err = e as { name?: string; code?: string; error?: string; error_description?: string; message?: string; exitCode?: number };
  // commander's own errors: help and version are successes, the rest are usage mistakes.
  if (typeof err?.code === "string" && err.code.startsWith("commander.")) {
    const ok = err.code === "commander.helpDisplayed" || err.code === "commander.version" || (err.code === "commander.help" && err.exitCode === 0);
    return { exitCode: ok ? ExitCode.OK : ExitCode.USAGE, type: "USAGE", message: firstLine(err.message ?? ""), details: {} };
  }
  // @inquirer: Ctrl-C or a closed terminal during the organization choice.
  if (err?.name === "ExitPromptError" || err?.name === "AbortPromptError") return { exitCode: ExitCode.INTERRUPTED, type: "INTERRUPTED", message: "Interrupted", details: {} };
  const net = networkCause(e);
  if (net) return { exitCode: ExitCode.UNREACHABLE, type: "UNREACHABLE", message: `The server could not be reached (${net})`, details: { cause: net } };
  // openid-client's ResponseBodyError carries the OAuth error code of the token endpoint.
  if (typeof err?.error === "string") {
    const known = OAUTH_MESSAGES[err.error];
    const exitCode = err.error === "invalid_client" ? ExitCode.ERROR : ExitCode.AUTH;
    return { exitCode, type: err.error.toUpperCase(), message: known ?? firstLine(err.error_description ?? err.error), details: {} };
  }
  return { exitCode: ExitCode.ERROR, type: "ERROR", message: firstLine(err?.message ?? String(e)), details: {} };
}
