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
    if (!res.ok || json.success === false) {
      const err = new Error(json.message || "Request failed (" + res.status + ")");
      err.type = json.error && json.error.type;
      err.details = (json.error && json.error.details) || {};
      throw err;
    }
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

  // Email first (home-realm discovery). The address goes to POST /auth/sso/discover, which starts
  // nothing: when its domain routes to an organization's identity provider the page goes to the
  // start address it names (with this page's next) as a top-level navigation; otherwise (the same
  // answer for every address without single sign-on, or a failure) it continues here with a
  // password or passkey.
  const REMEMBERED = "keyward.sign-in.email";
  const remember = (email) => { try { sessionStorage.setItem(REMEMBERED, email); } catch { /* private mode */ } };
  const remembered = () => { try { return sessionStorage.getItem(REMEMBERED) || ""; } catch { return ""; } };
  function showPasswordStep(focus) {
    loginForm.dataset.stage = "password";
    $("password-fields").hidden = false;
    $("email").readOnly = true;
    $("email-hint").hidden = true;
    $("login-submit").textContent = "Sign in";
    if (focus) $("password").focus();
  }
  function showEmailStep() {
    loginForm.dataset.stage = "email";
    $("password-fields").hidden = true;
    $("email").readOnly = false;
    $("email-hint").hidden = false;
    $("password").value = "";
    $("login-submit").textContent = "Continue";
    $("sso-required").hidden = true;
    $("email").focus();
  }
  // "Your organization requires single sign-on": a button to where the server says it starts.
  function showSsoRequired(details) {
    const link = $("sso-required-start");
    let start = null;
    try {
      const url = new URL(String((details && (details.start_url || details.startUrl)) || ""), location.href);
      if (/^https?:$/.test(url.protocol) && url.pathname === "/sso/start") start = url;
    } catch { /* no usable address: the email step below still routes it */ }
    if (!start) start = new URL("/sso/start?email=" + encodeURIComponent($("email").value.trim()), location.href);
    if (nextUrl() !== "/") start.searchParams.set("next", nextUrl());
    link.href = start.toString();
    $("sso-required").hidden = false;
    $("sso-required-title").focus();
  }
  // Where single sign-on starts: only our own /sso/start, carrying this page's next.
  function ssoStart(raw) {
    let url;
    try { url = new URL(String(raw || ""), location.href); } catch { return null; }
    if (url.origin !== location.origin || url.pathname !== "/sso/start") return null;
    if (nextUrl() !== "/") url.searchParams.set("next", nextUrl());
    return url.toString();
  }
  async function discover() {
    const email = $("email").value.trim();
    if (!email || !$("email").checkValidity()) {
      $("email").setAttribute("aria-invalid", "true");
      say("Enter your email address.");
      $("email").focus();
      return;
    }
    $("email").removeAttribute("aria-invalid");
    let found = null;
    try {
      found = await api("/auth/sso/discover", { email });
    } catch { /* offline, limited or refused: password and passkey stay possible */ }
    const start = found && found.sso ? ssoStart(found.start_url) : null;
    if (start) {
      remember(email);
      location.assign(start);
      return;
    }
    showPasswordStep(true);
  }
  // A pending SSO link (the identity provider's answer found this address's account unlinked): the
  // sign-in below, or a mailed link, confirms it. The id rides along with the password and passkey.
  const pendingLink = $("sso-link");
  let ssoLink = pendingLink ? pendingLink.dataset.ssoLink : null;
  const withLink = (body) => (ssoLink ? Object.assign(body, { sso_link: ssoLink }) : body);
  if (loginForm) {
    $("change-email").addEventListener("click", () => {
      say("");
      // Another address cannot confirm this link: the page forgets it.
      if (pendingLink) { ssoLink = null; pendingLink.hidden = true; }
      showEmailStep();
    });
    let busy = false;
    loginForm.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (busy) return;
      busy = true;
      $("login-submit").disabled = true;
      say("");
      try {
        if (loginForm.dataset.stage === "email") return await discover();
        $("sso-required").hidden = true;
        const data = await api("/auth/login", withLink({ email: $("email").value, password: $("password").value, remember_me: $("remember").checked }));
        if (data.requires_mfa) showMfa(data.mfa_methods || []);
        else done();
      } catch (err) {
        if (err.type === "SSO_REQUIRED") showSsoRequired(err.details);
        else say(err.message);
      } finally {
        busy = false;
        $("login-submit").disabled = false;
      }
    });
    $("passkey").addEventListener("click", async () => {
      say("");
      try {
        const begin = await api("/auth/webauthn/login/begin", {});
        const response = await SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: begin.options });
        await api("/auth/webauthn/login/complete", withLink({ challenge_id: begin.challenge_id, response }));
        done();
      } catch (err) {
        if (err.type === "SSO_REQUIRED") showSsoRequired(err.details);
        else say(err.message);
      }
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
    // Single sign-on through an organization's identity provider (/sso/oidc/callback lands here).
    SSO_LINK_REQUIRED: "An account with this email address already exists and is not linked to single sign-on yet. Sign in with your password or passkey below, then link it from your account page.",
    SSO_LINK_INVALID: "This confirmation has expired, was already used or was started in another browser. Sign in through your identity provider again.",
    SSO_EMAIL_NOT_ALLOWED: "Your identity provider sent an address outside your organization's verified domains, so no account can be created for it. Ask your administrator.",
    SSO_NOT_AVAILABLE: "Single sign-on is no longer available for this organization. Sign in with your password or passkey, or ask your administrator.",
    SSO_REQUIRED: "Your organization requires single sign-on for this address: enter it below and choose Continue.",
  };
  const params = new URLSearchParams(location.search);
  const errorType = params.get("error_type");
  if (errorType) say((Object.hasOwn(EXTERNAL_ERRORS, errorType) ? EXTERNAL_ERRORS[errorType] : undefined) || "The sign-in could not be completed. Try again.");
  if (loginForm && params.get("mfa")) showMfa(params.get("mfa").split(","));
  // Back from the identity provider: "sign in with your current method" continues with the address
  // that went there (kept in this tab only).
  if (loginForm && (errorType === "SSO_LINK_REQUIRED" || errorType === "SSO_NOT_AVAILABLE") && remembered()) {
    $("email").value = remembered();
    showPasswordStep(true);
  } else if (loginForm && errorType && errorType.startsWith("SSO_") && remembered()) {
    $("email").value = remembered();
  }

  if (loginForm && pendingLink) {
    $("email").value = pendingLink.dataset.email || "";
    if (pendingLink.dataset.byEmail === "true") {
      $("password-step").hidden = true;
      $("sso-link-title").focus();
    } else {
      showPasswordStep(true);
    }
  }
  const mailButton = $("sso-link-mail");
  if (mailButton) mailButton.addEventListener("click", async () => {
    say("");
    mailButton.disabled = true;
    try {
      const sent = await api("/auth/sso/link/email", { sso_link: ssoLink });
      const note = $("sso-link-mail-sent");
      note.textContent = "We sent a link to " + sent.email + ". Open it in this browser within " + sent.expires_in_minutes + " minutes.";
      note.hidden = false;
      note.focus();
      mailButton.hidden = true;
    } catch (err) {
      mailButton.disabled = false;
      say(err.message);
    }
  });

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
