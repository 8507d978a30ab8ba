import { z } from "zod";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { KeyValueStore } from "../../infra/kv.js";
import type { Logger } from "../../infra/logger.js";
import { randomToken, sha256Hex } from "../../lib/crypto/index.js";
import { AppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { userAccounts } from "../users/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import type { SessionIssuer } from "./session-issuer.js";
import type { SessionsService } from "./sessions/sessions.service.js";
import { requirePersonalUser } from "../access/index.js";

export const CliErrors = {
  missingRedirect: () => new AppError("MISSING_REDIRECT_URL", 400, "redirect_url is required, e.g. http://127.0.0.1:8250/?token="),
  invalidRedirect: () =>
    new AppError(
      "INVALID_REDIRECT_URL",
      400,
      "redirect_url must be http://127.0.0.1:<port>/<path> (or localhost, [::1]) with no query other than token= and no fragment: the token only ever goes to this computer",
    ),
  browserRequired: () =>
    new AppError("BROWSER_SESSION_REQUIRED", 403, "Confirm a command-line sign-in from the browser where you are signed in"),
  tokenNotFound: () => new AppError("TOKEN_NOT_FOUND", 404, "This command-line sign-in is unknown, has expired or was already used. Run the login command again."),
  unavailable: () => new AppError("SERVICE_UNAVAILABLE", 503, "Sign-in for the command-line client is unavailable right now. Try again shortly."),
};

export const cliStartSchema = z.object({ redirectUrl: z.string().max(2048).optional() });
export type CliStartInput = z.input<typeof cliStartSchema>;
export const cliLookupSchema = z.object({ token: z.string().min(1).max(128) });
export type CliLookupInput = z.input<typeof cliLookupSchema>;
export const cliAuthorizeSchema = z.object({ cliToken: z.string().min(1).max(128) });
export type CliAuthorizeInput = z.input<typeof cliAuthorizeSchema>;

interface PendingCliLogin {
  redirectUrl: string;
  createdAt: number;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export interface CliLoginDeps {
  db: Db;
  limits: RateLimitService;
  clock: Clock;
  kv: KeyValueStore;
  logger: Logger;
  audit: AuditService;
  issuer: SessionIssuer;
  /** The approving browser session (an SSO session bounds the CLI's). */
  sessions: Pick<SessionsService, "find">;
  config: { publicUrl: string; appUrl: string; ttl: number; rate: RateRule };
}

/**
 * The command-line client's browser sign-in (the original API's /token_please bridge). The CLI
 * listens on a loopback port; the user signs in in the browser and confirms; the CLI then receives
 * a session of its own (revocable on its own) at that loopback address, and nowhere else.
 */
export class CliLoginService {
  constructor(private readonly deps: CliLoginDeps) {}

  /** Records where the CLI listens and sends the browser to sign in. */
  async start(ctx: RequestContext, input: CliStartInput): Promise<{ loginUrl: string }> {
    await this.deps.limits.consume("cli-login", this.deps.config.rate, ctx.ip ?? "unknown");
    const { redirectUrl } = parseInput(cliStartSchema, input);
    if (!redirectUrl) throw CliErrors.missingRedirect();
    // Only this computer, and only its listener: never another host, nor a URL that forwards on.
    const target = loopbackTarget(redirectUrl);
    if (!target) throw CliErrors.invalidRedirect();
    const cliToken = randomToken(32);
    const pending: PendingCliLogin = { redirectUrl: target, createdAt: this.deps.clock.now().getTime() };
    await this.kvCall(() => this.deps.kv.set(this.key(cliToken), JSON.stringify(pending), this.deps.config.ttl));
    const { publicUrl, appUrl } = this.deps.config;
    // A separate web app gets the original API's /login?cli_token=; the hosted pages go straight to
    // the confirmation page, which asks for a sign-in first when the browser has no session.
    const login = appUrl === publicUrl ? new URL("/cli/authorize", publicUrl) : new URL("/login", appUrl);
    login.searchParams.set("cli_token", cliToken);
    return { loginUrl: login.toString() };
  }

  /** Where the CLI waits (the original API's lookup), for the signed-in user's confirmation page. */
  async redirectUrl(ctx: RequestContext, input: CliLookupInput): Promise<{ redirectUrl: string }> {
    requirePersonalUser(ctx);
    const { token } = parseInput(cliLookupSchema, input);
    const pending = await this.pending(token, false);
    return { redirectUrl: pending.redirectUrl };
  }

  /**
   * The signed-in user confirmed: the pending sign-in is spent, a new session is issued for the CLI,
   * and the browser is given the loopback URL carrying its token.
   */
  async authorize(ctx: RequestContext, input: CliAuthorizeInput, via: "cookie" | "bearer" | null): Promise<{ redirectUrl: string; expiresAt: Date }> {
    const actor = requirePersonalUser(ctx);
    // Only the signed-in browser confirms: a token-holding client (a CLI session, a script) must
    // not mint itself further sessions.
    if (via !== "cookie") throw CliErrors.browserRequired();
    const { cliToken } = parseInput(cliAuthorizeSchema, input);
    const pending = await this.pending(cliToken, true);
    const user = await userAccounts.find(this.deps.db, actor.userId);
    if (!user) throw CliErrors.tokenNotFound();
    // The CLI's session is listed as the CLI's, not as another browser.
    const cliCtx = { ...ctx, userAgent: "Keyward command-line client (browser sign-in)" };
    // An SSO session ends when its organization's bound says (issue 35): the CLI's ends with it.
    const source = actor.sessionId ? await this.deps.sessions.find(actor.userId, actor.sessionId) : null;
    const bound = source?.method === "sso" ? Math.max(1, Math.floor((source.absoluteExpiresAt - this.deps.clock.now().getTime()) / 1000)) : undefined;
    const session = await this.deps.issuer.issue(
      cliCtx,
      user,
      true,
      "cli",
      async (tx) => {
        await this.deps.audit.record(tx, ctx, AuditAction.cliLogin, { metadata: { redirect_url: pending.redirectUrl, approved_by_session: actor.sessionId } });
      },
      undefined,
      bound,
    );
    const url = new URL(pending.redirectUrl);
    url.searchParams.set("token", session.token);
    return { redirectUrl: url.toString(), expiresAt: session.expiresAt };
  }

  private async pending(cliToken: string, take: boolean): Promise<PendingCliLogin> {
    const raw = await this.kvCall(() => (take ? this.deps.kv.take(this.key(cliToken)) : this.deps.kv.get(this.key(cliToken))));
    if (!raw) throw CliErrors.tokenNotFound();
    const pending = JSON.parse(raw) as PendingCliLogin;
    if (this.deps.clock.now().getTime() - pending.createdAt > this.deps.config.ttl * 1000) throw CliErrors.tokenNotFound();
    return pending;
  }

  /** The shared store is down: say so (503) rather than fail obscurely. */
  private async kvCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      this.deps.logger.error({ err }, "CLI sign-in store unavailable");
      throw CliErrors.unavailable();
    }
  }

  private key(cliToken: string): string {
    return `cli-login:${sha256Hex(cliToken)}`;
  }
}

/**
 * The normalised loopback URL the CLI listens on, or null: http on 127.0.0.1, localhost or [::1]
 * with an explicit port, no credentials, no fragment, and no query other than an empty `token=`
 * (the original CLI's form). The token is later set as that parameter, never concatenated.
 */
function loopbackTarget(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" || !LOOPBACK.has(url.hostname) || !url.port || url.username || url.password || url.hash || value.includes("#")) return null;
  const params = [...url.searchParams];
  if (params.length > 1 || (params.length === 1 && (params[0]![0] !== "token" || params[0]![1] !== ""))) return null;
  url.search = "";
  return url.toString();
}
