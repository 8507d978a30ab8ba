import { PASSWORD_MAX, PASSWORD_MIN } from "../modules/auth/password-policy.js";
import { actionButton, currentPasswordField, emptyItem, escape, section, when, type ConsoleData, type RenderEnv } from "./account-html.js";
import { SESSIONS, TWO_STEP } from "./account-security.js";

export type { ConsoleData } from "./account-html.js";

/** Who besides the owner can act on the account: the managing organization's admins, or nobody. */
const MANAGED_BY = (managedBy: { name: string } | null) =>
  managedBy
    ? `<p id="managed-by" class="notice">Your account is managed by <strong>${escape(managedBy.name)}</strong>: while you are a member, its owners and admins can reset your password, remove your second factors, and suspend or delete the account. Leaving ${escape(managedBy.name)} ends this.</p>`
    : `<p id="managed-by" class="muted">No organization manages your account: only you can change how you sign in.</p>`;

const PROFILE = ({ me }: ConsoleData) =>
  section(
    "profile",
    "Profile",
    `${MANAGED_BY(me.managedBy)}
<form data-form="profile" novalidate>
  <label for="full-name">Full name</label>
  <input id="full-name" name="full_name" type="text" autocomplete="name" maxlength="255" required value="${escape(me.fullName ?? "")}">
  <button type="submit">Save name</button>
</form>
<h3>Email address</h3>
<p id="current-email"><strong>${escape(me.email)}</strong> ${
      me.emailVerified ? `<span class="badge ok">verified</span>` : `<span class="badge warn">not verified</span> ${actionButton("Send a new verification link", "resend-verification")}`
    }</p>
<form data-form="email" novalidate>
  <label for="new-email">New email address</label>
  <input id="new-email" name="new_email" type="email" autocomplete="email" maxlength="320" required aria-describedby="new-email-hint">
  <p class="hint" id="new-email-hint">We send a link to the new address. Your account keeps ${escape(me.email)} until you open it.</p>
  ${currentPasswordField(me, "email-password", "change your email address")}
  <button type="submit">Send confirmation link</button>
</form>`,
  );

const PASSWORD = ({ me }: ConsoleData) =>
  section(
    "password",
    "Password",
    me.hasPassword
      ? `<form data-form="password" novalidate>
  <label for="current-password">Current password</label>
  <input id="current-password" name="current_password" type="password" autocomplete="current-password" maxlength="1024" required>
  <label for="new-password">New password</label>
  <input id="new-password" name="new_password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}" required aria-describedby="new-password-hint">
  <p class="hint" id="new-password-hint">${PASSWORD_MIN} to ${PASSWORD_MAX} characters; a passphrase of a few words is easy to remember and hard to guess.</p>
  <label for="new-password-confirm">Repeat the new password</label>
  <input id="new-password-confirm" name="new_password_confirm" type="password" autocomplete="new-password" maxlength="${PASSWORD_MAX}" required>
  <button type="submit">Change password</button>
</form>`
      : `<p>Your account has no password: you sign in with a passkey or a linked account. To add one, use <a href="/forgot-password">Forgot password</a> with ${escape(me.email)}.</p>`,
    me.hasPassword ? "Changing it signs out your other sessions." : "",
  );

const LINKED = ({ linked, providers }: ConsoleData) => {
  const linkedIds = new Set(linked.linkedAccounts.map((a) => a.provider));
  const items = linked.linkedAccounts.map(
    (a) => `<li>${escape(a.providerName)}: ${escape(a.username || a.email || a.displayName || "linked")}
    <span class="muted">linked ${when(a.linkedAt)}, last used ${when(a.lastUsedAt)}</span>
    ${actionButton(`Unlink ${a.providerName}`, "unlink", { provider: a.provider, name: a.providerName }, { confirm: `Unlink ${a.providerName}? You will no longer be able to sign in with it.`, disabled: !linked.unlinkAvailable })}</li>`,
  );
  const linkable = providers.filter((p) => !linkedIds.has(p.id));
  return section(
    "linked-accounts",
    "Linked accounts",
    `<ul id="linked" class="plain rows" aria-label="Linked accounts">${items.join("\n") || emptyItem("No linked accounts.")}</ul>
${linked.linkedAccounts.length > 0 && !linked.unlinkAvailable ? `<p class="hint">This is your only way to sign in: add a password or a passkey before unlinking it.</p>` : ""}
<div class="actions">${linkable.map((p) => `<button type="button" class="secondary" data-provider="${escape(p.id)}">Link ${escape(p.name)}</button>`).join("\n")}</div>
${providers.length === 0 && items.length === 0 ? `<p class="muted">Sign-in with GitHub or Google is not set up on this server.</p>` : ""}`,
    "Sign in with GitHub or Google instead of a password.",
  );
};

const ORGANIZATIONS = ({ me, orgs, invites }: ConsoleData) => {
  const orgItems = orgs.map(
    (o) => `<li><strong>${escape(o.name)}</strong> <span class="badge">${escape(o.role)}</span>${me.managedBy?.id === o.id ? ` <span class="badge warn">manages your account</span>` : ""}
    ${actionButton("Leave", "org-leave", { id: o.id, name: o.name }, { label: `Leave ${o.name}`, confirm: `Leave ${o.name}? You lose access to everything it gives you.` })}</li>`,
  );
  const inviteItems = invites.map(
    (i) => `<li><strong>${escape(i.organization.name)}</strong> invites you as <span class="badge">${escape(i.role)}</span>
    <span class="muted">until ${when(i.expiresAt)}</span>
    <span class="row-actions">${actionButton("Accept", "invite-accept", { id: i.id, name: i.organization.name }, { label: `Accept the invitation to ${i.organization.name}`, kind: "primary" })}
    ${actionButton("Decline", "invite-decline", { id: i.id, name: i.organization.name }, { label: `Decline the invitation to ${i.organization.name}` })}</span></li>`,
  );
  return section(
    "organizations",
    "Organizations",
    `<ul id="org-list" class="plain rows" aria-label="Your organizations">${orgItems.join("\n") || emptyItem("You are not a member of any organization.")}</ul>
<h3>Invitations</h3>
<ul id="invite-list" class="plain rows" aria-label="Pending invitations">${inviteItems.join("\n") || emptyItem(me.emailVerified ? "No pending invitations." : "Verify your email address to see the invitations sent to it.")}</ul>
<p><a href="/network-access">My network access</a>: the devices you connect to your organizations' networks.</p>`,
  );
};

const SSH = ({ keys, certs }: ConsoleData, env: RenderEnv) => {
  const keyItems = keys.map((k) => {
    const name = k.description || k.keyComment || `${k.keyType} key`;
    return `<li><strong>${escape(name)}</strong> <span class="badge${k.verified ? " ok" : " warn"}">${k.verified ? "verified" : "not verified"}</span>
    <span class="muted">${escape(k.keyType)} ${k.keyBits} · added ${when(k.createdAt)}</span>
    <code class="fingerprint">${escape(k.fingerprint)}</code>
    ${actionButton("Remove", "ssh-key-remove", { id: k.id, name }, { label: `Remove SSH key ${name}`, confirm: `Remove the SSH key ${name}? Certificates can no longer be signed for it.` })}</li>`;
  });
  const rows = certs.map(
    (c) => `<tr><td><code>${escape(c.serial)}</code></td><td>${escape(c.principals.join(", "))}</td><td>${when(c.validBefore)}</td><td><span class="badge${c.status === "active" ? " ok" : ""}">${escape(c.status)}</span></td></tr>`,
  );
  const url = escape(env.publicUrl);
  return section(
    "ssh",
    "SSH keys and certificates",
    `<ul id="ssh-key-list" class="plain rows" aria-label="Your SSH keys">${keyItems.join("\n") || emptyItem("No SSH keys yet.")}</ul>
<details class="hint-box">
  <summary>How to add a key</summary>
  <p>A key is added from the computer that holds its private key, which signs a challenge to prove it. With a session token in <code>$T</code>:</p>
  <pre>curl -s -XPOST ${url}/api/v1/ssh/keys -H "authorization: Bearer $T" \\
  -H 'content-type: application/json' -d "{\\"key\\": \\"$(cat ~/.ssh/id_ed25519.pub)\\"}"   # → data.id: $KEY
curl -s ${url}/api/v1/ssh/keys/$KEY/verify -H "authorization: Bearer $T"   # → data.challenge_text
ssh-keygen -Y sign -n file -f ~/.ssh/id_ed25519 challenge.txt          # POST challenge.txt.sig back</pre>
</details>
<h3>Recent certificates</h3>
${
  rows.length
    ? `<div class="table-wrap" tabindex="0" role="region" aria-label="Recent certificates"><table id="cert-table">
  <thead><tr><th scope="col">Serial</th><th scope="col">Principals</th><th scope="col">Valid until</th><th scope="col">Status</th></tr></thead>
  <tbody>${rows.join("\n")}</tbody>
</table></div>`
    : `<p id="cert-table" class="muted">No certificates issued to you yet.</p>`
}`,
  );
};

const CONSENTS = ({ consents }: ConsoleData) => {
  const items = consents.map(
    (c) => `<li><strong>${escape(c.clientName)}</strong> <span class="muted">allowed ${when(c.updatedAt)}</span>
    <span class="scopes-inline">${c.scopes.map((s) => `<code>${escape(s)}</code>`).join(" ")}</span>
    ${actionButton("Withdraw", "consent-withdraw", { id: c.clientId, name: c.clientName }, { label: `Withdraw access of ${c.clientName}`, confirm: `Withdraw ${c.clientName}'s access? Its sign-ins end and it must ask you again.` })}</li>`,
  );
  return section(
    "consents",
    "Applications",
    `<ul id="consent-list" class="plain rows" aria-label="Applications you allowed">${items.join("\n") || emptyItem("No application has access to your account.")}</ul>`,
    "Applications you allowed to sign you in and read your profile. Withdrawing ends their access.",
  );
};

/** The sections, in page order; the nav lists them. */
export const SECTIONS: Array<{ id: string; title: string; render: (d: ConsoleData, env: RenderEnv) => string }> = [
  { id: "profile", title: "Profile", render: PROFILE },
  { id: "password", title: "Password", render: PASSWORD },
  { id: "two-step", title: "Two-step verification", render: TWO_STEP },
  { id: "sessions", title: "Sessions", render: SESSIONS },
  { id: "linked-accounts", title: "Linked accounts", render: LINKED },
  { id: "organizations", title: "Organizations", render: ORGANIZATIONS },
  { id: "ssh", title: "SSH keys", render: SSH },
  { id: "consents", title: "Applications", render: CONSENTS },
];
