import type { Db } from "../../../infra/db.js";
import { parseInput } from "../../../lib/validation.js";
import { type OriginMatcher, originOf } from "../../../lib/origins.js";
import type { RequestContext } from "../../../lib/request-context.js";
import { AuditAction, type AuditService } from "../../audit/index.js";
import { AuthErrors } from "../auth.errors.js";
import { tokenRedirectSchema, type TokenRedirectInput } from "../auth.schemas.js";
import type { SessionsService, SessionView } from "./sessions.service.js";
import { requirePersonalUser } from "../../access/index.js";

/** What a signed-in user can do with their own sessions. */
export class MySessionsService {
  constructor(
    private readonly db: Db,
    private readonly sessions: SessionsService,
    private readonly audit: AuditService,
    private readonly allowedOrigins: OriginMatcher,
  ) {}

  list(ctx: RequestContext): Promise<SessionView[]> {
    const actor = requirePersonalUser(ctx);
    return this.sessions.list(actor.userId, actor.sessionId);
  }

  async revoke(ctx: RequestContext, sessionId: string): Promise<void> {
    const actor = requirePersonalUser(ctx);
    // Another user's session id is reported exactly like an unknown one.
    if (!(await this.sessions.revoke(actor.userId, sessionId))) throw AuthErrors.sessionNotFound();
    await this.audit.record(this.db, ctx, AuditAction.sessionRevoke, { resourceType: "session", resourceId: sessionId });
  }

  /** Signs out every other session of the caller (all of them when the call carries none); the count ended. */
  async revokeOthers(ctx: RequestContext): Promise<{ revoked: number }> {
    const actor = requirePersonalUser(ctx);
    const revoked = await this.sessions.revokeAll(actor.userId, actor.sessionId);
    await this.audit.record(this.db, ctx, AuditAction.sessionRevokeOthers, { resourceType: "session", metadata: { revoked } });
    return { revoked };
  }

  /**
   * Hands the current session token to a client that needs it (the CLI, a companion app): as data,
   * or by redirect to a URL whose origin CORS_ORIGINS allows (wildcard entries included).
   */
  tokenHandoff(ctx: RequestContext, token: string, input: TokenRedirectInput): { token: string } | { redirectUrl: string } {
    requirePersonalUser(ctx);
    const { redirect } = parseInput(tokenRedirectSchema, input);
    if (!redirect) return { token };
    const origin = originOf(redirect);
    if (!origin || !this.allowedOrigins.allows(origin)) throw AuthErrors.invalidRedirect();
    const url = new URL(redirect);
    url.searchParams.set("token", token);
    return { redirectUrl: url.toString() };
  }
}
