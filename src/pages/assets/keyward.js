// Keyward's sign-in pages: sign-in (password, passkey, second factor, external providers) and the
// command-line client's sign-in. A signed-in person lands in the web app (web/), whose home is `/`.
// No framework, no external assets; the WebAuthn browser helpers come from /assets/webauthn.js.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const alertBox = () => $("alert");
  const say = (text) => { const a = alertBox(); if (a) a.textContent = text || ""; };

  async function api(path, body, method) {
    const res = await fetch("/api/v1" + path, {
      method: method || (body === undefined ? "GET" : "POST"),
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok || json.success === false) throw new Error(json.message || "Request failed (" + res.status + ")");
    return json.data || {};
  }

  // Only same-site relative paths: never an open redirect.
  function nextUrl() {
    const next = new URLSearchParams(location.search).get("next") || "";
    return /^\/(?!\/)[^\s\\]*$/.test(next) ? next : "/";
  }
  const done = () => location.assign(nextUrl());

  function showMfa(methods) {
    $("password-step").hidden = true;
    $("mfa-step").hidden = false;
    $("mfa-webauthn").hidden = !methods.includes("webauthn");
    $("mfa-code-form").hidden = !(methods.includes("totp") || methods.includes("backup_code"));
    const first = methods.includes("webauthn") ? $("mfa-webauthn") : $("mfa-code");
    if (first) first.focus();
  }

  const loginForm = $("login-form");
  // Registering instead of signing in keeps the way back (an invitation, a page that asked to sign in).
  const registerLink = $("register-link");
  const askedNext = new URLSearchParams(location.search).get("next");
  if (registerLink && askedNext && nextUrl() === askedNext) registerLink.href = "/register?next=" + encodeURIComponent(askedNext);
  if (loginForm) {
    loginForm.addEventListener("submit", async (e) => {
      e.preventDefault();
      say("");
      try {
        const data = await api("/auth/login", { email: $("email").value, password: $("password").value, remember_me: $("remember").checked });
        if (data.requires_mfa) showMfa(data.mfa_methods || []);
        else done();
      } catch (err) { say(err.message); }
    });
    $("passkey").addEventListener("click", async () => {
      say("");
      try {
        const begin = await api("/auth/webauthn/login/begin", {});
        const response = await SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: begin.options });
        await api("/auth/webauthn/login/complete", { challenge_id: begin.challenge_id, response });
        done();
      } catch (err) { say(err.message); }
    });
    $("mfa-webauthn").addEventListener("click", async () => {
      say("");
      try {
        const begin = await api("/auth/webauthn/mfa/begin", {});
        const response = await SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: begin.options });
        await api("/auth/webauthn/mfa/complete", { challenge_id: begin.challenge_id, response });
        done();
      } catch (err) { say(err.message); }
    });
    $("mfa-code-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      say("");
      try {
        await api("/auth/totp/verify", { code: $("mfa-code").value.trim() });
        done();
      } catch (err) { say(err.message); }
    });
  }

  // Where an external sign-in or link sent the browser back: its outcome is in the query. Only
  // the code is read, and shown in our own words: a crafted link cannot put text on this page.
  const EXTERNAL_ERRORS = {
    OAUTH_STATE_INVALID: "This sign-in has expired, was already used, or was started in another browser. Start again.",
    OAUTH_ERROR: "The provider did not complete the sign-in. Try again.",
    OAUTH_CANCELLED: "The sign-in was cancelled at the provider.",
    ACCOUNT_EXISTS: "An account with this email address already exists. Sign in to it, then link the provider from your account page.",
    ACCOUNT_SUSPENDED: "This account is suspended. Contact your administrator.",
    AUTH_FAILED: "The account linked to this identity is not available.",
    OAUTH_EMAIL_REQUIRED: "The provider did not share an email address. Make one visible to this application and try again.",
    OAUTH_EMAIL_UNVERIFIED: "The provider has not verified your email address. Verify it there, or register with a password.",
    EMAIL_MISMATCH: "That account at the provider does not list your email address as verified, so it cannot be linked.",
    IDENTITY_ALREADY_LINKED: "That account at the provider is already linked to another account.",
    PROVIDER_ALREADY_LINKED: "Your account is already linked to a different account at this provider: unlink it first.",
    PROVIDER_NOT_CONFIGURED: "Sign-in with this provider is not available.",
    RATE_LIMIT_EXCEEDED: "Too many attempts. Wait a moment and try again.",
  };
  const params = new URLSearchParams(location.search);
  const errorType = params.get("error_type");
  if (errorType) say((Object.hasOwn(EXTERNAL_ERRORS, errorType) ? EXTERNAL_ERRORS[errorType] : undefined) || "The sign-in could not be completed. Try again.");
  if (loginForm && params.get("mfa")) showMfa(params.get("mfa").split(","));

  // External sign-in: Keyward builds the provider URL (the callback is fixed server-side).
  document.querySelectorAll("button[data-provider]").forEach((button) => {
    button.addEventListener("click", async () => {
      say("");
      const provider = encodeURIComponent(button.dataset.provider);
      try {
        const started = await api("/auth/external/" + provider + "/authorize?flow=login&next=" + encodeURIComponent(nextUrl()));
        location.assign(started.authorization_url);
      } catch (err) { say(err.message); }
    });
  });

  const cliAllow = $("cli-allow");
  if (cliAllow) cliAllow.addEventListener("click", async () => {
    say("");
    try {
      const done = await api("/cli/authorize", { cli_token: cliAllow.dataset.cliToken });
      location.assign(done.redirect_url);
    } catch (err) { say(err.message); }
  });
})();
