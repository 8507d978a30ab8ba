import { API_SCOPES } from "../lib/api-scopes.js";
import { escapeHtml as e, layout } from "../pages/layout.js";

/** What each scope gives the client, in the words the consent page uses. */
export const SCOPE_DESCRIPTIONS: Record<string, string> = {
  openid: "Know who you are (a stable user id)",
  email: "Your email address and whether it is verified",
  profile: "Your name",
  organizations: "Your membership and role in the organization that registered it",
  offline_access: "Stay connected when you are not using it (refresh tokens)",
  // Keyward's own API, on your behalf (delegated tokens).
  ...API_SCOPES,
};

export interface ConsentView {
  uid: string;
  clientName: string;
  /** Null for Keyward's own built-in clients. */
  organizationName: string | null;
  email: string;
  scopes: string[];
}

export function consentPage(brand: string, v: ConsentView): string {
  const items = v.scopes.map((s) => `<li>${e((Object.hasOwn(SCOPE_DESCRIPTIONS, s) ? SCOPE_DESCRIPTIONS[s] : undefined) ?? s)}</li>`).join("\n  ");
  const action = (what: string) => `/api/v1/oidc/interaction/${encodeURIComponent(v.uid)}/${what}`;
  return layout(
    brand,
    "Allow access",
    `<h1><span id="client-name">${e(v.clientName)}</span> wants to access your account</h1>
<p class="muted">${v.organizationName === null ? "Part of Keyward." : `Registered by ${e(v.organizationName)}.`} Signed in as ${e(v.email)}.</p>
<p>It will be able to:</p>
<ul id="scopes" class="plain scopes">
  ${items}
</ul>
<form method="post" action="${action("confirm")}"><button id="allow" type="submit">Allow</button></form>
<form method="post" action="${action("abort")}"><button id="deny" type="submit" class="secondary">Deny</button></form>`,
    false,
  );
}

export function messagePage(brand: string, title: string, message: string): string {
  return layout(brand, title, `<h1>${e(title)}</h1>\n<p id="message">${e(message)}</p>`, false);
}

export function deviceInputPage(brand: string, form: string, error: string | null): string {
  return layout(
    brand,
    "Connect a device",
    `<h1>Connect a device</h1>
<p class="muted">Enter the code shown on your device.</p>
${form}
<button type="submit" form="op.deviceInputForm">Continue</button>
<p id="alert" role="alert">${error ? e(error) : ""}</p>`,
    false,
  );
}

export function deviceConfirmPage(brand: string, form: string, clientName: string, userCode: string): string {
  return layout(
    brand,
    "Confirm the device",
    `<h1>Connect ${e(clientName)}?</h1>
<p>Check that your device shows this code:</p>
<p class="user-code"><code id="user-code">${e(userCode)}</code></p>
<p class="muted">If you did not start this, or the code differs, cancel.</p>
${form}
<button id="confirm" type="submit" form="op.deviceConfirmForm">Continue</button>
<button id="cancel" type="submit" form="op.deviceConfirmForm" name="abort" value="yes" class="secondary">Cancel</button>`,
    false,
  );
}

export function logoutPage(brand: string, form: string, clientName: string | null): string {
  return layout(
    brand,
    "Sign out",
    `<h1>Sign out${clientName ? ` of ${e(clientName)} and ${e(brand)}` : ` of ${e(brand)}`}?</h1>
${form}
<button id="logout" type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>
<button id="stay" type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>`,
    false,
  );
}

/**
 * The logout a valid id_token_hint already confirmed (see logout.ts): the form posts itself with
 * `logout=yes` (an external script, as the CSP allows no inline one); the button is for browsers
 * without JavaScript.
 */
export function logoutContinuePage(brand: string, form: string): string {
  const autoForm = form.replace('<form id="op.logoutForm"', '<form id="op.logoutForm" data-auto-submit').replace("</form>", '<input type="hidden" name="logout" value="yes"/></form>');
  return layout(
    brand,
    "Signing out",
    `<h1>Signing out of ${e(brand)}</h1>
${autoForm}
<button id="continue" type="submit" form="op.logoutForm">Continue</button>
<script src="/assets/auto-submit.js" defer></script>`,
    false,
  );
}

/** Error pages show the OAuth error code and description (never internals: oidc-provider hides server errors). */
export function errorPage(brand: string, out: { error?: string; error_description?: string }): string {
  // An outage is not the user's fault, nor a dead end: it says so, and to try again.
  const title = out.error === "temporarily_unavailable" ? "Try again shortly" : "Something went wrong";
  return layout(
    brand,
    title,
    `<h1>${title}</h1>
<p id="error-code"><code>${e(String(out.error ?? "server_error"))}</code></p>
<p id="error-description">${e(String(out.error_description ?? ""))}</p>`,
    false,
  );
}
