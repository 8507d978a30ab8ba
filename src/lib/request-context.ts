import type { ApiKeyScope } from "./api-key-scopes.js";

/** Who is calling. Built once per request by the actor resolver; services decide what it may do. */
export type Actor =
  | { kind: "anonymous" }
  | ApiKeyActor
  | {
      kind: "user";
      userId: string;
      email: string;
      isSuperadmin: boolean;
      /** Public id of the session the request came through (null for API keys / tokens). */
      sessionId: string | null;
      /** When that session's sign-in happened (ms since the epoch); absent for other credentials. */
      signedInAt?: number;
      /**
       * Present when the caller is an OIDC access token acting for the user: only the operations
       * its scopes name, never a session's full power (and never superadmin).
       */
      delegation?: Delegation;
    };

/**
 * An organization API key (`Authorization: Bearer kwk_…`): a machine speaking for one organization,
 * never for a person. It reaches only the routes and operations that declare keys, within its scopes.
 */
export interface ApiKeyActor {
  kind: "apiKey";
  keyId: string;
  organizationId: string;
  /** The key's public start ("kwk_ab12cd34"), so records and logs can name it. */
  prefix: string;
  scopes: ReadonlySet<ApiKeyScope>;
}

/** An OIDC access token acting on the user's behalf. */
export interface Delegation {
  clientId: string;
  grantId: string;
  scopes: ReadonlySet<string>;
}

export interface RequestContext {
  actor: Actor;
  requestId: string;
  ip: string | null;
  userAgent: string | null;
  /**
   * Set by the tenancy guard when the caller acts there with a role held through a time-bounded
   * role grant (issue 37): audit records in that organization name it next to the stored role.
   */
  elevation?: { organizationId: string; role: string; storedRole: string; until: string };
}

export type UserActor = Extract<Actor, { kind: "user" }>;

export const anonymousContext = (requestId: string, ip: string | null = null, userAgent: string | null = null): RequestContext => ({
  actor: { kind: "anonymous" },
  requestId,
  ip,
  userAgent,
});

/** Context for work the service does on its own behalf (jobs, bootstrap tasks). */
export const systemContext = (requestId = "system"): RequestContext => anonymousContext(requestId);

/** The same request, attributed to `user` (a sign-in that just proved who is calling). */
export const actingAs = (ctx: RequestContext, user: { id: string; email: string; isSuperadmin: boolean }, sessionId: string | null = null): RequestContext => ({
  ...ctx,
  actor: { kind: "user", userId: user.id, email: user.email, isSuperadmin: user.isSuperadmin, sessionId },
});
