import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { PasswordHasher } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction } from "../audit/audit.actions.js";
import type { AuditService } from "../audit/audit.service.js";
import type { LockoutRule, RateLimitService, RateRule } from "../rate-limit/rate-limit.service.js";
import { usersRepository } from "../users/users.repository.js";
import { toUserView, type UserView } from "../users/users.views.js";
import { AuthErrors } from "./auth.errors.js";
import { loginSchema } from "./auth.schemas.js";
import { credentialsRepository } from "./credentials.repository.js";
import type { SessionsService } from "./sessions/sessions.service.js";

export interface LoginResult {
  user: UserView;
  token: string;
  expiresAt: Date;
  sessionId: string;
  /** Remember-me: the cookie should outlive the browser session. */
  persistent: boolean;
}

export interface LoginDeps {
  db: Db;
  clock: Clock;
  hasher: PasswordHasher;
  audit: AuditService;
  limits: RateLimitService;
  sessions: SessionsService;
  config: { loginIp: RateRule; lockout: LockoutRule };
}

export class LoginService {
  constructor(private readonly deps: LoginDeps) {}

  /**
   * Password sign-in. Guard order matters: throttle first, then the password, and only then the
   * account state, so a guesser learns nothing about an account whose password they do not have.
   */
  async loginWithPassword(ctx: RequestContext, input: unknown): Promise<LoginResult> {
    const { db, clock, hasher, audit, limits, sessions, config } = this.deps;
    // Slows password spraying from one address.
    await limits.consume("login-ip", config.loginIp, ctx.ip ?? "unknown");
    const data = parseInput(loginSchema, input);
    const email = normalizeEmail(data.email);
    // Locks an account after repeated failures, whatever address the guesses come from.
    await limits.assertNotLocked("login", email);

    const user = await usersRepository.findByEmail(db, email);
    const hash = user ? await credentialsRepository.findPasswordHash(db, user.id) : undefined;
    // Unknown accounts spend the same time on a dummy hash: no timing oracle.
    const valid = hash ? await hasher.verify(hash, data.password) : (await hasher.verifyDummy(data.password), false);
    if (!user || !valid) {
      await limits.recordFailure("login", config.lockout, email);
      await audit.record(db, ctx, AuditAction.userLoginFailed, {
        userId: user?.id ?? null,
        success: false,
        metadata: { email, reason: "invalid_credentials" },
      });
      throw AuthErrors.invalidCredentials();
    }
    await limits.clearFailures("login", email);
    // Suspension blocks sign-in (the password was right, so saying so leaks nothing).
    if (user.status === "suspended") {
      await audit.record(db, ctx, AuditAction.userLoginFailed, { userId: user.id, success: false, metadata: { reason: "suspended" } });
      throw AuthErrors.accountSuspended();
    }

    const now = clock.now();
    // Parameters were raised since this hash was made: upgrade it while we hold the password.
    const rehash = hasher.needsRehash(hash!) ? await hasher.hash(data.password) : null;
    const session = await sessions.create(user.id, { rememberMe: data.rememberMe, ip: ctx.ip, userAgent: ctx.userAgent });
    const updated = await db.transaction(async (tx) => {
      if (rehash) await credentialsRepository.setPasswordHash(tx, user.id, rehash, now);
      const row = await usersRepository.update(tx, user.id, { lastLoginAt: now, lastLoginIp: ctx.ip?.slice(0, 45) ?? null });
      const actor = { kind: "user", userId: user.id, email: user.email, isSuperadmin: user.isSuperadmin, sessionId: session.session.id } as const;
      await audit.record(tx, { ...ctx, actor }, AuditAction.userLogin, {
        metadata: { method: "password", remember_me: data.rememberMe, session_id: session.session.id },
      });
      return row!;
    });
    return { user: toUserView(updated), token: session.token, expiresAt: session.expiresAt, sessionId: session.session.id, persistent: data.rememberMe };
  }

  /** Ends the session the request came through. */
  async logout(ctx: RequestContext): Promise<void> {
    if (ctx.actor.kind !== "user" || !ctx.actor.sessionId) return;
    if (await this.deps.sessions.revoke(ctx.actor.userId, ctx.actor.sessionId)) {
      await this.deps.audit.record(this.deps.db, ctx, AuditAction.userLogout, { metadata: { session_id: ctx.actor.sessionId } });
    }
  }
}
