// The account console's two-step verification section: the authenticator app, passkeys and backup
// codes. Loaded after account.js, whose window.KeywardConsole runs the actions (busy state,
// messages, errors) and redraws sections; this file only adds the handlers. No HTML is written
// from data here either: codes and secrets go in as textContent.
(function () {
  "use strict";
  const kc = window.KeywardConsole;
  if (!kc) return;
  const { api, refresh, formBody } = kc;
  const $ = (id) => document.getElementById(id);

  // Shown once, right after they are made: they are not on the page the server renders.
  function showBackupCodes(codes) {
    if (!codes || !codes.length) return;
    $("backup-code-list").textContent = codes.join("\n");
    $("backup-codes").hidden = false;
  }

  const ACTIONS = {
    "totp-start": async (b) => {
      const { data } = await api("POST", "/auth/totp/enroll", {});
      $("totp-qr").src = data.qr_code;
      $("totp-secret").textContent = data.secret;
      // The server builds this otpauth: URI; a link must never carry another scheme.
      if (/^otpauth:\/\//.test(data.provisioning_uri)) $("totp-uri").href = data.provisioning_uri;
      const box = $("totp-setup");
      box.hidden = false;
      b.hidden = true;
      $("totp-code").focus();
      return "Scan the QR code with your authenticator app, then enter the code it shows.";
    },
    "totp-cancel": async () => {
      $("totp-setup").hidden = true;
      const start = $("totp-start");
      start.hidden = false;
      start.focus();
      return "Authenticator app setup cancelled.";
    },
    "passkey-add": async () => {
      const begin = await api("POST", "/auth/webauthn/register/begin", {});
      let response;
      try {
        response = await SimpleWebAuthnBrowser.startRegistration({ optionsJSON: begin.data.options });
      } catch (err) {
        throw new Error(err.name === "NotAllowedError" ? "No passkey was created: the request was cancelled or timed out." : err.message);
      }
      const name = $("passkey-name").value.trim();
      const { data } = await api("POST", "/auth/webauthn/register/complete", { challenge_id: begin.data.challenge_id, response, name: name || undefined });
      showBackupCodes(data.backup_codes);
      await refresh(["two-step", "linked-accounts"]);
      return "Passkey added.";
    },
    "passkey-remove": async (b) => {
      await api("DELETE", "/auth/webauthn/credentials/" + encodeURIComponent(b.dataset.id));
      await refresh(["two-step", "linked-accounts"]);
      return "Passkey " + b.dataset.name + " removed.";
    },
    "backup-done": async () => {
      $("backup-code-list").textContent = "";
      $("backup-codes").hidden = true;
      $("backup-state").focus();
      return "";
    },
  };

  const FORMS = {
    "totp-confirm": async (f) => {
      const { data } = await api("POST", "/auth/totp/verify-enrollment", { code: f.elements.code.value.replace(/\s+/g, "") });
      showBackupCodes(data.backup_codes);
      await refresh(["two-step", "linked-accounts"]);
      if (data.backup_codes) $("backup-codes").focus();
      return "Authenticator app turned on." + (data.backup_codes ? " Store your backup codes now." : "");
    },
    "totp-disable": async (f) => {
      await api("DELETE", "/auth/totp/disable", formBody(f));
      await refresh(["two-step", "linked-accounts"]);
      return "Authenticator app turned off.";
    },
    "passkey-rename": async (f) => {
      const name = f.elements.name.value.trim();
      await api("PATCH", "/auth/webauthn/credentials/" + encodeURIComponent(f.dataset.id), { name });
      await refresh(["two-step"]);
      return "Passkey renamed to " + name + ".";
    },
    "backup-regenerate": async (f) => {
      const { data } = await api("POST", "/auth/totp/regenerate-backup-codes", formBody(f));
      f.reset();
      showBackupCodes(data.backup_codes);
      await refresh(["two-step"]);
      $("backup-codes").focus();
      return "New backup codes made: the previous ones no longer work.";
    },
  };

  kc.add(ACTIONS, FORMS);

  // /account/security (older links and emails) opens at the two-step verification section.
  if (location.pathname === "/account/security" && !location.hash) {
    const heading = $("two-step-title");
    heading.scrollIntoView();
    heading.focus();
  }
})();
