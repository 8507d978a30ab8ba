import type { Response } from "express";
import type Provider from "oidc-provider";
import { errors, type KoaContextWithOIDC } from "oidc-provider";
import type { Config } from "../config/index.js";
import type { Db } from "../infra/db.js";
import type { Logger } from "../infra/logger.js";
import { clearSessionCookie } from "../http/session.js";
import { AuditAction, type AuditActionName, type AuditEntry, type AuditService } from "../modules/audit/index.js";
import type { LoginService } from "../modules/auth/index.js";
import type { OidcIdentityService } from "../modules/oidc-clients/index.js";
import { pageCsp } from "../pages/layout.js";
import type { KeywardUserReader } from "./keyward-session.js";
import { refreshRotationRetried, settleTokenIssuance } from "./token-issuance.js";
import { replaceSilentLogout } from "./logout.js";
import { conformTokenErrors } from "./token-errors.js";
import { hideKeywardMetadata } from "./registration.js";
import { requestContext } from "./request-context.js";
import { asProviderError, TemporarilyUnavailable } from "./outage.js";
import { errorPage } from "./views.js";

export interface HookDeps {
  config: Config;
  db: Db;
  logger: Logger;
  audit: AuditService;
  identity: OidcIdentityService;
  login: LoginService;
  keywardUser: KeywardUserReader;
}

type OidcError = errors.OIDCProviderError & { error_detail?: string };
type State = { error?: OidcError; authorized?: boolean; outage?: boolean };

const ERROR_EVENTS = [
  "authorization.error",
  "grant.error",
  "userinfo.error",
  "introspection.error",
  "revocation.error",
  "end_session.error",
  "end_session_confirm.error",
  "device_authorization.error",
  "code_verification.error",
  "pushed_authorization_request.error",
  "discovery.error",
  "jwks.error",
  "registration_create.error",
  "registration_read.error",
  "registration_update.error",
  "registration_delete.error",
] as const;

const originsOf = (uris: unknown): string[] =>
  (Array.isArray(uris) ? uris : []).flatMap((u) => {
    try {
      return [new URL(String(u)).origin];
    } catch {
      return [];
    }
  });

/**
 * What Keyward adds around every provider request: the hosted-page CSP, the audit trail of
 * grants, token issuance, refresh-token reuse, revocations and errors, suspended users' tokens
 * reported inactive, and RP-initiated logout ending the Keyward session too, once confirmed.
 */
export function decorateProvider(provider: Provider, deps: HookDeps): void {
  const state = (ctx: KoaContextWithOIDC) => ctx.state as State;
  // Listeners run synchronously inside the request: they only note what happened for the middleware below.
  const events = provider as unknown as NodeJS.EventEmitter;
  for (const event of ERROR_EVENTS) {
    events.on(event, (ctx: KoaContextWithOIDC, err: OidcError) => {
      state(ctx).error = err;
    });
  }
  provider.on("authorization.success", (ctx: KoaContextWithOIDC) => {
    state(ctx).authorized = true;
  });
  provider.on("server_error", (ctx: KoaContextWithOIDC, err: Error) => {
    // An outage that reached the provider's own handlers (not through an adapter or a hook of
    // ours, which report it as TemporarilyUnavailable): answered as one below.
    if (asProviderError(err) instanceof TemporarilyUnavailable) {
      state(ctx).outage = true;
      deps.logger.warn({ err: { message: err.message, code: (err as { code?: unknown }).code } }, "oidc provider: a dependency is unavailable");
    } else deps.logger.error({ err }, "oidc provider error");
  });

  provider.use(async (ctx, next) => {
    // oidc-provider adds the hashes of its own auto-submit scripts to script-src.
    ctx.set("Content-Security-Policy", pageCsp());
    await next();
    const c = ctx as KoaContextWithOIDC;
    const oidc = c.oidc as KoaContextWithOIDC["oidc"] | undefined;
    // RFC 6749 §5.2's codes where the provider answers otherwise (token-errors.ts): decided before
    // the outcome is recorded or anything held is written.
    const conformed = oidc?.route ? conformTokenErrors(c, state(c).error) : undefined;
    if (conformed) state(c).error = conformed as OidcError;
    // The token endpoint's outcome is known once the answer is built: its record can go to the
    // database with the token it describes.
    let record = oidc?.route === "token" ? outcomeRecord(c, state(c), deps) : undefined;
    // What the grant left held: a refresh-token rotation, a client-credentials token (saved with
    // its record). Written with a success, dropped with a refusal.
    let recorded = false;
    try {
      recorded = await settleTokenIssuance(!state(c).error && ctx.status < 400, record);
    } catch (err) {
      const refused = asProviderError(err);
      if (refused instanceof TemporarilyUnavailable) {
        // The rotation or the token could not be stored: nothing was issued; the client tries again.
        state(c).error = refused as OidcError;
        ctx.status = refused.statusCode;
        ctx.body = { error: refused.error, error_description: refused.error_description };
      } else if (err instanceof errors.OIDCProviderError && err.statusCode < 500) {
        // Refused as the provider refuses (a refresh token another request spent first): its answer.
        state(c).error = err as OidcError;
        ctx.status = err.statusCode;
        ctx.body = { error: err.error, error_description: err.error_description };
      } else {
        // Not stored, so not issued: the answer becomes the provider's own server_error, as when a
        // save inside the grant fails, and the record says so.
        const failure = Object.assign(new Error("server_error"), { error: "server_error", error_description: "oops! something went wrong" });
        state(c).error = failure as OidcError;
        ctx.status = 500;
        ctx.body = { error: failure.error, error_description: failure.error_description };
        provider.emit("server_error", ctx, err);
      }
      record = outcomeRecord(c, state(c), deps);
    }
    if (state(c).outage || state(c).error instanceof TemporarilyUnavailable) return answerOutage(c, deps);
    if (!oidc?.route) return;
    hideKeywardMetadata(c);
    if (oidc.client && ctx.response.is("html")) allowClientFormTargets(c);
    if (oidc.route === "introspection") await hideSuspended(c, deps);
    if (oidc.route === "end_session" && !state(c).error) await replaceSilentLogout(c, { brand: deps.config.email.brand.name, keywardUser: deps.keywardUser });
    // Only a confirmation the provider accepted (its xsrf secret matched) ends the Keyward session.
    if (oidc.route === "end_session_confirm" && oidc.params?.logout && !state(c).error && ctx.status === 303) await signOutKeyward(c, deps);
    if (recorded) return;
    const outcome = record ?? outcomeRecord(c, state(c), deps);
    if (!outcome) return;
    await deps.audit.write(deps.db, outcome).catch((err: unknown) => deps.logger.error({ err }, "oidc audit failed"));
  });
}

/**
 * An outage's answer: 503 with Retry-After, `temporarily_unavailable` in the OAuth error body or on
 * the error page; a redirect that already carries it to the client (the provider had validated the
 * redirect URI) stays a redirect. Not audited: the audit log is in the database that is down.
 */
function answerOutage(ctx: KoaContextWithOIDC, deps: HookDeps): void {
  ctx.set("Retry-After", String(TemporarilyUnavailable.RETRY_AFTER_SECONDS));
  if (ctx.status >= 300 && ctx.status < 400) return;
  const out = new TemporarilyUnavailable();
  const answer = { error: out.error, error_description: out.error_description };
  const html = ctx.response.is("html");
  ctx.status = 503;
  if (html) {
    ctx.type = "html";
    ctx.body = errorPage(deps.config.email.brand.name, answer);
  } else {
    ctx.body = answer;
  }
}

/** Forms on provider pages may end at the client's redirect URIs (browsers check form-action on redirects). */
function allowClientFormTargets(ctx: KoaContextWithOIDC): void {
  const client = ctx.oidc.client!;
  const targets = [...originsOf(client.redirectUris), ...originsOf(client.postLogoutRedirectUris)];
  const csp = ctx.response.get("Content-Security-Policy");
  if (!csp || targets.length === 0) return;
  ctx.set("Content-Security-Policy", csp.replace(/form-action [^;]*/, (d) => `${d} ${[...new Set(targets)].join(" ")}`));
}

/** A suspended or deleted user's tokens are inactive at once, whatever their expiry. */
async function hideSuspended(ctx: KoaContextWithOIDC, deps: HookDeps): Promise<void> {
  const body = ctx.body as { active?: boolean; sub?: string } | undefined;
  if (ctx.status !== 200 || !body?.active || !body.sub) return;
  if (ctx.oidc.entities.ClientCredentials) return;
  if (!(await deps.identity.findActiveAccount(body.sub))) ctx.body = { active: false };
}

/** A confirmed sign-out at the provider (see logout.ts) signs the browser out of Keyward as well. */
async function signOutKeyward(ctx: KoaContextWithOIDC, deps: HookDeps): Promise<void> {
  const user = await deps.keywardUser(ctx.req);
  if (!user) return;
  await deps.login.logout(user.ctx);
  clearSessionCookie(ctx.res as Response, deps.config);
}

/** The audit record of a provider request's outcome, if it has one (not yet written). */
function outcomeRecord(ctx: KoaContextWithOIDC, s: State, deps: HookDeps): AuditEntry | undefined {
  const { route, client, entities, params } = ctx.oidc;
  let action: AuditActionName | undefined;
  let metadata: Record<string, unknown> = {};
  if (s.error) {
    const detail = s.error.error_detail ?? "";
    const reuse = route === "token" && /already used/.test(detail);
    // A refresh token or a code presented again: the provider (or the adapter, for two at once) revoked the grant.
    const revoked = reuse || (route === "token" && /already consumed/.test(detail));
    action = reuse ? AuditAction.oidcRefreshReuse : AuditAction.oidcError;
    metadata = { route, error: s.error.error, detail: s.error.error_detail ?? s.error.error_description, ...(revoked ? { grant_revoked: true } : {}), ...(route === "token" ? { grant_type: params?.grant_type } : {}) };
  } else if (route === "token" && ctx.status === 200) {
    action = AuditAction.oidcTokenIssued;
    // A refresh retried within the grace period (its first answer lost) says so: adapter.ts.
    metadata = { grant_type: params?.grant_type, scope: (ctx.body as { scope?: string } | undefined)?.scope, ...(refreshRotationRetried() ? { rotation_retry: true } : {}) };
  } else if (route === "revocation" && ctx.status === 200) {
    action = AuditAction.oidcRevocation;
  } else if (s.authorized) {
    action = AuditAction.oidcGrant;
    metadata = { scope: params?.scope };
  }
  if (!action) return undefined;
  const accountId = entities.Account?.accountId ?? (entities.Grant as { accountId?: string } | undefined)?.accountId;
  const organizationId = client ? ((client as unknown as Record<string, unknown>)["urn:keyward:organization_id"] as string | undefined) : undefined;
  return deps.audit.entry(requestContext(ctx), action, {
    userId: accountId ?? null,
    organizationId,
    resourceType: "oidc_client",
    resourceId: client?.clientId,
    success: !s.error,
    metadata: { client_id: client?.clientId, ...metadata },
  });
}
