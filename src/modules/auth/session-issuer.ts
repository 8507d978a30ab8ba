import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { RequestContext } from "../../lib/request-context.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { type UserRow, toUserView, type UserView } from "../users/index.js";
import type { SessionsService } from "./sessions/sessions.service.js";
import { AuthErrors } from "./auth.errors.js";
import { signInRepository } from "./sign-in.repository.js";

export interface SessionIssued {
  user: UserView;
  token: string;
  expiresAt: Date;
  sessionId: string;
  /** Remember-me: the cookie should outlive the browser session. */
  persistent: boolean;
}

/** The last step of every sign-in (password, second factor, passkey): a new session, audited. */
export class SessionIssuer {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly sessions: SessionsService,
  ) {}

  /**
   * `passwordFingerprint`: the password the sign-in checked (CredentialsService.verifySignIn); the
   * sign-in fails if the account's password is no longer that one.
   */
  async issue(
    ctx: RequestContext,
    user: UserRow,
    rememberMe: boolean,
    method: string,
    extra?: (tx: Parameters<Parameters<Db["transaction"]>[0]>[0]) => Promise<void>,
    passwordFingerprint?: string,
    /** A bound below the session policy (an SSO connection's session lifetime). */
    maxAgeSeconds?: number,
  ): Promise<SessionIssued> {
    const now = this.clock.now();
    const session = await this.sessions.create(user.id, { rememberMe, ip: ctx.ip, userAgent: ctx.userAgent, method, ...(maxAgeSeconds ? { maxAgeSeconds } : {}) });
    const actor = { kind: "user", userId: user.id, email: user.email, isSuperadmin: user.isSuperadmin, sessionId: session.session.id } as const;
    const audit = this.audit.entry({ ...ctx, actor }, AuditAction.userLogin, { metadata: { method, remember_me: rememberMe, session_id: session.session.id } });
    // The last sign-in and its record: one statement, inside the caller's transaction when it
    // has more to write with them.
    const signIn = { now, ip: ctx.ip?.slice(0, 45) ?? null, passwordFingerprint };
    let updated: UserRow | undefined;
    // Deleted, suspended or its password changed since its credentials were checked: no sign-in,
    // and no record of one.
    const unavailable = () => Object.assign(AuthErrors.invalidCredentials(), { accountUnavailable: true });
    try {
      updated = extra
        ? await this.db.transaction(async (tx) => {
            await extra(tx);
            const row = await signInRepository.recordSignIn(tx, user.id, signIn, audit.row);
            // Nothing the caller wrote stands for a sign-in that did not happen.
            if (!row) throw unavailable();
            return row;
          })
        : await signInRepository.recordSignIn(this.db, user.id, signIn, audit.row);
      if (!updated) throw unavailable();
    } catch (e) {
      // The token was never handed out; if even this fails, it dies with its expiry unused.
      await this.sessions.revoke(user.id, session.session.id).catch(() => undefined);
      if ((e as { accountUnavailable?: boolean } | undefined)?.accountUnavailable) {
        await this.audit.record(this.db, ctx, AuditAction.userLoginFailed, { userId: user.id, success: false, metadata: { method, reason: "account_unavailable" } });
      }
      throw e;
    }
    audit.written();
    return { user: toUserView(updated), token: session.token, expiresAt: session.expiresAt, sessionId: session.session.id, persistent: rememberMe };
  }
}
