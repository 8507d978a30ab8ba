import { BACKUP_CODE_COUNT } from "../modules/auth/mfa/mfa.service.js";
import { actionButton, currentPasswordField, emptyItem, escape, section, when, type ConsoleData } from "./account-html.js";

/** "Firefox on Linux" from a User-Agent header: enough to recognise a session, nothing more. */
export function describeAgent(ua: string | null): string {
  if (!ua) return "Unknown device";
  const browser =
    [
      [/Edg(e|A|iOS)?\//, "Edge"],
      [/OPR\//, "Opera"],
      [/Firefox\/|FxiOS\//, "Firefox"],
      [/Chrome\/|CriOS\//, "Chrome"],
      [/Safari\//, "Safari"],
      [/^curl\//, "curl"],
      [/^(node|undici)/i, "Node.js"],
    ].find(([re]) => (re as RegExp).test(ua))?.[1] ?? ua.split(/[\s/]/)[0]!.slice(0, 40);
  const os = [
    [/Windows/, "Windows"],
    [/Android/, "Android"],
    [/iPhone|iPad|iPod/, "iOS"],
    [/Mac OS X|Macintosh/, "macOS"],
    [/CrOS/, "ChromeOS"],
    [/Linux/, "Linux"],
  ].find(([re]) => (re as RegExp).test(ua))?.[1];
  return os ? `${browser} on ${os}` : String(browser);
}

const TOTP = ({ me, mfa }: ConsoleData) =>
  mfa.totpEnabled
    ? `<p id="totp-state"><span class="badge ok">on</span> since ${when(mfa.totpVerifiedAt)}.</p>
<form data-form="totp-disable" novalidate>
  ${currentPasswordField(me, "totp-disable-password", "turn off the authenticator app")}
  <button type="submit" class="danger">Turn off the authenticator app</button>
</form>`
    : `<p id="totp-state"><span class="badge">off</span> An app on your phone (such as Aegis, Google Authenticator or 1Password) shows a new code every 30 seconds.</p>
<button id="totp-start" type="button" data-action="totp-start">Set up an authenticator app</button>
<div id="totp-setup" class="setup-box" data-keep hidden>
  <ol class="steps">
    <li>Scan this code with the app.<br><img id="totp-qr" src="data:," alt="QR code to scan with your authenticator app" width="220" height="220"></li>
    <li>Cannot scan it? Enter this key in the app instead: <code id="totp-secret"></code>
      <button type="button" class="secondary small" data-action="copy" data-target="totp-secret">Copy key</button>
      <br><a id="totp-uri" href="#totp-setup">Open in an authenticator app on this device</a></li>
    <li><form data-form="totp-confirm" novalidate>
      <label for="totp-code">Code the app shows</label>
      <input id="totp-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="8" required>
      <div class="actions"><button type="submit">Turn on</button>
      <button type="button" class="secondary" data-action="totp-cancel">Cancel</button></div>
    </form></li>
  </ol>
</div>`;

const PASSKEY = (c: ConsoleData["passkeys"][number]) => `<li><strong>${escape(c.name)}</strong>
    <span class="muted">added ${when(c.createdAt)}, last used ${when(c.lastUsedAt)}</span>
    <span class="row-actions"><button type="button" class="secondary small" data-action="toggle" data-target="rename-${escape(c.id)}" aria-expanded="false" aria-controls="rename-${escape(c.id)}" aria-label="Rename passkey ${escape(c.name)}">Rename</button>
    ${actionButton("Remove", "passkey-remove", { id: c.id, name: c.name }, { label: `Remove passkey ${c.name}`, confirm: `Remove the passkey ${c.name}? It will no longer sign you in.` })}</span>
    <form id="rename-${escape(c.id)}" class="inline-form" data-form="passkey-rename" data-id="${escape(c.id)}" novalidate hidden>
      <label for="rename-${escape(c.id)}-name">New name for ${escape(c.name)}</label>
      <input id="rename-${escape(c.id)}-name" name="name" type="text" maxlength="255" required value="${escape(c.name)}">
      <button type="submit" class="small">Save name</button>
    </form></li>`;

const BACKUP = ({ me, mfa }: ConsoleData) => `
<p id="backup-state">${
  mfa.mfaEnabled
    ? `${mfa.backupCodesRemaining} of ${BACKUP_CODE_COUNT} left. Each works once, when your phone or security key is not at hand.`
    : "Backup codes come with your first authenticator app or passkey."
}</p>
${mfa.mfaEnabled ? `<form data-form="backup-regenerate" novalidate>${currentPasswordField(me, "backup-password", "make new backup codes")}<button type="submit" class="secondary">Make new backup codes</button></form>` : ""}
<div id="backup-codes" class="codes-box" data-keep hidden tabindex="-1" aria-labelledby="backup-codes-title">
  <h4 id="backup-codes-title">Your new backup codes</h4>
  <p>Each works once. Store them somewhere safe: they are not shown again, and the previous ones no longer work.</p>
  <pre id="backup-code-list"></pre>
  <div class="actions"><button type="button" class="secondary small" data-action="copy" data-target="backup-code-list">Copy codes</button>
  <button type="button" class="small" data-action="backup-done">I have stored them</button></div>
</div>`;

export const TWO_STEP = (d: ConsoleData) => {
  const due = d.compliance.filter((c) => c.status === "in_grace" || c.status === "past_due");
  const status = d.mfa.mfaEnabled
    ? `<p class="notice ok" id="mfa-summary">Two-step verification is on: after your password, you confirm with ${[d.mfa.totpEnabled ? "your authenticator app" : "", d.mfa.webauthnEnabled ? "a passkey" : ""].filter(Boolean).join(" or ")}.</p>`
    : `<p class="notice warn" id="mfa-summary">Two-step verification is off: your password alone signs you in.${
        due.length ? ` Required by ${due.map((c) => `${escape(c.organizationName)}${c.deadlineAt ? ` from ${when(c.deadlineAt)}` : ""}`).join(", ")}.` : ""
      }</p>`;
  return section(
    "two-step",
    "Two-step verification",
    `${status}
<h3>Authenticator app</h3>
${TOTP(d)}
<h3>Passkeys and security keys</h3>
<ul id="passkeys" class="plain rows" aria-label="Your passkeys">${d.passkeys.map(PASSKEY).join("\n") || emptyItem("No passkeys yet.")}</ul>
<div class="add-row">
  <label for="passkey-name">Name for the new passkey</label>
  <input id="passkey-name" type="text" maxlength="255" placeholder="e.g. Work laptop">
  <button id="add-passkey" type="button" data-action="passkey-add">Add a passkey</button>
</div>
<h3>Backup codes</h3>
${BACKUP(d)}`,
  );
};

const SESSION = (s: ConsoleData["sessions"][number]) => {
  const device = describeAgent(s.userAgent);
  const where = s.ipAddress ? `from ${escape(s.ipAddress)}` : "";
  return `<li${s.current ? ` class="current"` : ""}><strong>${escape(device)}</strong>${s.current ? ` <span class="badge ok">this browser</span>` : ""}
    <span class="muted">${where} · signed in ${when(s.createdAt)} · last active ${when(s.lastActivityAt)}${s.rememberMe ? " · kept signed in" : ""}</span>
    ${
      s.current
        ? actionButton("Sign out", "sign-out", {}, { label: "Sign out of this browser" })
        : actionButton("Sign out", "session-revoke", { id: s.id, name: device }, { label: `Sign out ${device} ${s.ipAddress ?? ""}`.trim() })
    }</li>`;
};

export const SESSIONS = ({ sessions }: ConsoleData) =>
  section(
    "sessions",
    "Sessions",
    `<ul id="session-list" class="plain rows" aria-label="Your sessions">${sessions.map(SESSION).join("\n") || emptyItem("No sessions.")}</ul>
<div class="actions">
  ${actionButton("Sign out all other sessions", "sessions-revoke-others", {}, { disabled: sessions.length < 2 })}
  ${actionButton("Sign out everywhere", "sign-out-everywhere", {}, { kind: "danger", confirm: "Sign out every session, this one included?" })}
</div>`,
    "Where your account is signed in: browsers, the command-line client and scripts using a session token.",
  );
