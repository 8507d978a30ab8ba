import type { Services } from "../container.js";
import { escapeHtml } from "./layout.js";

type Ret<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;

/** What the console shows: the answers of the services the REST API also calls. */
export interface ConsoleData {
  me: Ret<Services["users"]["getMe"]>;
  mfa: Ret<Services["mfa"]["status"]>;
  passkeys: Ret<Services["mfa"]["listCredentials"]>;
  sessions: Ret<Services["mySessions"]["list"]>;
  linked: Ret<Services["linkedAccounts"]["listMine"]>;
  /** Providers that can be used now. */
  providers: Ret<Services["oauthProviders"]["listPublic"]>;
  orgs: Ret<Services["orgs"]["listMine"]>;
  invites: Ret<Services["invites"]["listMine"]>;
  keys: Ret<Services["sshKeys"]["list"]>;
  /** The newest ten. */
  certs: Ret<Services["certificates"]["listMine"]>["items"];
  consents: Ret<Services["oidcClients"]["myConsents"]>;
  compliance: Ret<Services["mfaPolicy"]["myCompliance"]>;
}

export interface RenderEnv {
  publicUrl: string;
}

export const escape = escapeHtml;

/** A date as <time>, in UTC on the server; the script shows it in the reader's time zone. */
export const when = (d: Date | string | null | undefined, none = "never"): string => {
  if (!d) return none;
  const iso = new Date(d).toISOString();
  return `<time datetime="${iso}">${iso.slice(0, 16).replace("T", " ")} UTC</time>`;
};

/** data-* attributes, escaped. */
const data = (attrs: Record<string, string>) =>
  Object.entries(attrs)
    .map(([k, v]) => ` data-${k}="${escape(v)}"`)
    .join("");

/**
 * An action button: the script runs `action` with the button's data attributes. `label` names
 * the thing acted on for screen readers when the visible text alone ("Remove") is ambiguous.
 */
export const actionButton = (text: string, action: string, attrs: Record<string, string> = {}, o: { label?: string; confirm?: string; kind?: string; disabled?: boolean } = {}) =>
  `<button type="button" class="${o.kind ?? "secondary"} small"${data({ action, ...attrs, ...(o.confirm ? { confirm: o.confirm } : {}) })}${
    o.label ? ` aria-label="${escape(o.label)}"` : ""
  }${o.disabled ? " disabled" : ""}>${escape(text)}</button>`;

export const emptyItem = (text: string) => `<li class="empty">${escape(text)}</li>`;

export const section = (id: string, title: string, body: string, intro = "") => `
<section id="${id}" class="console-section" aria-labelledby="${id}-title">
  <h2 id="${id}-title" tabindex="-1">${escape(title)}</h2>
  ${intro ? `<p class="muted">${intro}</p>` : ""}
  ${body}
</section>`;

/**
 * A password field for re-authentication, only when the account has a password to give. Several
 * forms ask for it: the hidden words tell a screen reader which one this is.
 */
export const currentPasswordField = (me: ConsoleData["me"], id: string, purpose: string) =>
  me.hasPassword
    ? `<label for="${id}">Current password<span class="vh">, to ${escape(purpose)}</span></label>
  <input id="${id}" name="password" type="password" autocomplete="current-password" maxlength="1024" required>`
    : "";

