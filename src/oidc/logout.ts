import type { KoaContextWithOIDC } from "oidc-provider";
import { escapeHtml } from "../pages/layout.js";
import type { KeywardUser, KeywardUserReader } from "./keyward-session.js";
import { logoutContinuePage, logoutPage } from "./views.js";

/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2, decided as Keycloak does).
 *
 * A request to the logout endpoint is a plain GET (or a form POST) any site can send, so on its own it ends
 * nothing: the browser gets a confirmation page whose form posts, same-origin and with the
 * provider's xsrf secret, to `/logout/confirm`. Only "Sign out" there ends the provider session
 * and the Keyward session.
 *
 * The one exception is a request the relying party proves it sent for this very sign-in: a valid
 * `id_token_hint` (signed by Keyward, audience a registered client; oidc-provider checks that)
 * naming the signed-in user, issued during the current Keyward sign-in to a client this browser
 * signed in to, with a `post_logout_redirect_uri` registered for that client. Then the page posts
 * the same form by itself, with no question, as Keycloak does with a valid hint.
 */
export interface LogoutDeps {
  brand: string;
  keywardUser: KeywardUserReader;
}

type IdTokenHint = { payload: { sub?: unknown; iat?: unknown } };

/**
 * Renders the logout endpoint's answer. `form` is the provider's form (`op.logoutForm`: the
 * confirm action and the xsrf secret); the buttons add `logout=yes` or leave it out.
 */
export async function renderLogout(ctx: KoaContextWithOIDC, form: string, deps: LogoutDeps): Promise<void> {
  const user = await deps.keywardUser(ctx.req);
  ctx.type = "html";
  ctx.body = user && hintConfirmsLogout(ctx, user) ? logoutContinuePage(deps.brand, form) : logoutPage(deps.brand, form, ctx.oidc.client?.clientName ?? null);
}

/**
 * oidc-provider asks nothing when its own session has no signed-in account: it answers with a page
 * that posts `logout=yes` by itself. With Keyward's single sign-on the Keyward session is what
 * would end, so that answer is replaced by the same decision as above whenever someone is signed in.
 */
export async function replaceSilentLogout(ctx: KoaContextWithOIDC, deps: LogoutDeps): Promise<void> {
  const session = ctx.oidc.session;
  if (!session || session.accountId) return; // logoutSource already rendered the decision
  // Nobody to sign out: the provider only clears an empty session. A POST, though, may come from
  // another site and then carries no Keyward cookie (SameSite=Lax) while the confirmation it posts
  // next, same-origin, would: nobody visible is no proof there, so it is asked about too.
  if (!(await deps.keywardUser(ctx.req)) && ctx.method !== "POST") return;
  const secret = (session.state as { secret?: unknown } | undefined)?.secret;
  if (typeof secret !== "string") return;
  await renderLogout(ctx, logoutForm(ctx.oidc.urlFor("end_session_confirm"), secret), deps);
}

/** The provider's own logout form markup (oidc-provider's end_session action builds the same). */
export const logoutForm = (action: string, secret: string) =>
  `<form id="op.logoutForm" method="post" action="${escapeHtml(action)}"><input type="hidden" name="xsrf" value="${escapeHtml(secret)}"/></form>`;

/** Does the request prove the relying party asked to sign this user out of this sign-in? */
function hintConfirmsLogout(ctx: KoaContextWithOIDC, user: KeywardUser): boolean {
  const { params, client, session } = ctx.oidc;
  const hint = ctx.oidc.entities.IdTokenHint as IdTokenHint | undefined;
  // No hint (or one oidc-provider could not validate, which never gets here): the user decides.
  if (!hint || !client || !session) return false;
  // Where the user lands must be registered for the hint's client (oidc-provider refuses an unregistered one).
  if (typeof params?.post_logout_redirect_uri !== "string") return false;
  // The hint names the Keyward user whose session would end, not someone else.
  if (hint.payload.sub !== user.userId) return false;
  // This browser's provider session is that user's and signed in to that client (§2: "belongs to the current OP session with the RP").
  if (session.accountId !== user.userId || !session.authorizations?.[client.clientId]) return false;
  // An ID token from an earlier sign-in (a leaked or logged one) does not end a later session.
  if (typeof hint.payload.iat !== "number" || hint.payload.iat < Math.floor(user.authAt / 1000)) return false;
  return true;
}
