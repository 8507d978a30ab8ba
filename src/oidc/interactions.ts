import { Router, type NextFunction, type Request, type Response } from "express";
import { errors, type InteractionResults } from "oidc-provider";
import type { OidcIdentityService } from "../modules/oidc-clients/index.js";
import type { Clock } from "../infra/clock.js";
import type { KeyValueStore } from "../infra/kv.js";
import { pageCsp } from "../pages/layout.js";
import { amrOf, type KeywardUserReader } from "./keyward-session.js";
import { isApiScope } from "../lib/api-scopes.js";
import { isBuiltIn, OIDC_PREFIX, SCOPES } from "./provider.js";
import type { OidcRuntime } from "./runtime.js";
import { consentPage, errorPage } from "./views.js";

export interface InteractionDeps {
  runtime: OidcRuntime;
  identity: OidcIdentityService;
  keywardUser: KeywardUserReader;
  brand: string;
  publicOrigin: string;
  clock: Clock;
  kv: KeyValueStore;
}

type Details = Awaited<ReturnType<OidcRuntime["provider"]["interactionDetails"]>>;

const interactionPath = (uid: string) => `${OIDC_PREFIX}/interaction/${encodeURIComponent(uid)}`;

/** Origins a client may be sent back to: a consent form's redirect chain ends there. */
function redirectOrigins(details: Details): string[] {
  const uri = details.params.redirect_uri;
  try {
    return typeof uri === "string" ? [new URL(uri).origin] : [];
  } catch {
    return [];
  }
}

/**
 * The OpenID scopes the request asks for, in SCOPES order. Keyward's own CLI gets a refresh token
 * on either of its flows (provider.ts, issueRefreshToken), though the loopback request loses
 * offline_access on the way (OpenID Connect keeps it only with prompt=consent) and the device
 * request keeps it: `offline_access` counts as asked for in both, so both consent pages say the
 * same and a consent given on one flow covers the other.
 */
async function requestedOidcScopes(runtime: OidcRuntime, found: Details): Promise<string[]> {
  const asked = new Set(String(found.params.scope ?? "").split(" "));
  if (isBuiltIn(await runtime.provider.Client.find(String(found.params.client_id)))) asked.add("offline_access");
  return SCOPES.filter((s) => asked.has(s));
}

/** Keyward API scopes the request asks for and the grant lacks (the provider kept only those the client is allowed). */
const missingApiScopes = (found: Details): string[] =>
  Object.values((found.prompt.details.missingResourceScopes as Record<string, string[]> | undefined) ?? {})
    .flat()
    .filter(isApiScope);

/**
 * The provider's interaction steps, answered by Keyward's own sign-in: the login step reuses the
 * browser's Keyward session (the hosted sign-in page, with MFA, creates it), and the consent step
 * is remembered per client and scope set.
 */
export function interactionRouter(deps: InteractionDeps): Router {
  const { runtime, identity, keywardUser, brand } = deps;
  const router = Router();

  const finish = async (req: Request, res: Response, result: InteractionResults, merge: boolean) => {
    await runtime.provider.interactionFinished(req, res, result, { mergeWithLastSubmission: merge });
  };

  const details = async (req: Request, res: Response): Promise<Details> => {
    const found = await runtime.provider.interactionDetails(req, res);
    // The cookie names one interaction; a URL naming another is stale or forged.
    if (found.uid !== req.params.uid) throw new errors.SessionNotFound("interaction mismatch");
    return found;
  };

  router.get("/interaction/:uid", async (req, res) => {
    const found = await details(req, res);
    const user = await keywardUser(req);
    const toLogin = () => res.redirect(303, `/login?next=${encodeURIComponent(interactionPath(found.uid))}`);

    if (found.prompt.name === "login") {
      if (found.prompt.reasons.includes("login_prompt")) {
        // prompt=login: the session that was there when the request came is not enough; any
        // newer one is. The stale session's id is kept server-side for this interaction.
        const key = `oidc:fresh:${found.uid}`;
        const stale = await deps.kv.get(key);
        if (stale === null) {
          await deps.kv.set(key, user?.sessionId ?? "-", 3600);
          return toLogin();
        }
        if (!user || user.sessionId === stale) return toLogin();
      }
      if (!user) return toLogin();
      // max_age: the sign-in must be at most that old.
      const maxAge = found.params.max_age === undefined ? undefined : Number(found.params.max_age);
      if (maxAge !== undefined && user.authAt < deps.clock.now().getTime() - maxAge * 1000) return toLogin();
      return finish(req, res, { login: { accountId: user.userId, ts: Math.floor(user.authAt / 1000), amr: amrOf(user.method), remember: true } }, false);
    }

    if (found.prompt.name === "consent") {
      const accountId = found.session?.accountId;
      // The person consenting must be the one the provider signed in.
      if (!user || user.userId !== accountId) return finish(req, res, { error: "login_required", error_description: "The signed-in user changed" }, false);
      const clientId = String(found.params.client_id);
      const missing = [...((found.prompt.details.missingOIDCScope as string[] | undefined) ?? []), ...missingApiScopes(found)];
      const remembered = await identity.rememberedScopes(accountId, clientId);
      if (!found.prompt.reasons.includes("consent_prompt") && missing.every((s) => remembered.has(s))) {
        return approve(req, res, found, user.ctx);
      }
      const client = await identity.clientSummary(clientId);
      if (!client) return finish(req, res, { error: "invalid_client", error_description: "The client no longer exists" }, false);
      const requested = [...(await requestedOidcScopes(runtime, found)), ...missingApiScopes(found)];
      res.setHeader("Content-Security-Policy", pageCsp(redirectOrigins(found)));
      res.setHeader("Cache-Control", "no-store");
      return res.type("html").send(consentPage(brand, { uid: found.uid, clientName: client.name, organizationName: client.organizationName, email: user.email, scopes: requested }));
    }

    return finish(req, res, { error: "invalid_request", error_description: `Unsupported interaction: ${found.prompt.name}` }, false);
  });

  /** Consent and logout forms post from our own pages only (the interaction cookie is SameSite=Lax too). */
  const sameOrigin = (req: Request, _res: Response, next: NextFunction) => {
    const origin = req.get("origin");
    const site = req.get("sec-fetch-site");
    // With Referrer-Policy no-referrer, browsers send "Origin: null" on form posts; Sec-Fetch-Site still tells.
    if (origin === deps.publicOrigin || site === "same-origin" || (origin === undefined && site === undefined)) return next();
    throw new errors.InvalidRequest("cross-site form submission refused");
  };

  // The logout confirmation too: only the provider's own page may end a session (logout.ts).
  router.post("/logout/confirm", sameOrigin);

  router.post("/interaction/:uid/confirm", sameOrigin, async (req, res) => {
    const found = await details(req, res);
    const user = await keywardUser(req);
    if (found.prompt.name !== "consent") throw new errors.InvalidRequest("nothing to consent to");
    if (!user || user.userId !== found.session?.accountId) return finish(req, res, { error: "login_required", error_description: "The signed-in user changed" }, false);
    return approve(req, res, found, user.ctx);
  });

  router.post("/interaction/:uid/abort", sameOrigin, async (req, res) => {
    await details(req, res);
    return finish(req, res, { error: "access_denied", error_description: "The user denied the request" }, false);
  });

  /** Grants what the request asks for and remembers the consent, then resumes the authorization. */
  async function approve(req: Request, res: Response, found: Details, ctx: Parameters<OidcIdentityService["rememberConsent"]>[0]) {
    const { Grant } = runtime.provider;
    const accountId = found.session!.accountId;
    const clientId = String(found.params.client_id);
    const grant = (found.grantId ? await Grant.find(found.grantId) : undefined) ?? new Grant({ accountId, clientId });
    const d = found.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(" "));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(d.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(" "));
    const grantId = await grant.save();
    await identity.rememberConsent(ctx, accountId, clientId, [...(await requestedOidcScopes(runtime, found)), ...missingApiScopes(found)]);
    await finish(req, res, { consent: { grantId } }, true);
  }

  // Errors here are about the sign-in request (expired, opened in another browser): a page, not JSON.
  router.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (!(err instanceof errors.OIDCProviderError)) return next(err);
    const expired = err instanceof errors.SessionNotFound;
    res.status(err.statusCode).setHeader("Content-Security-Policy", pageCsp());
    res.type("html").send(
      errorPage(brand, {
        error: err.error,
        error_description: expired ? "This sign-in request has expired or was opened in another browser. Start again from the application." : err.error_description,
      }),
    );
  });
  return router;
}
