// The emailed-link pages (register, verify email, forgot/reset password, activate, invitation).
// Every form names its REST endpoint in data-api; this script posts the named fields as JSON and
// shows the outcome. No framework, no external assets, no inline script (the CSP forbids it).
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const say = (text) => { const a = $("alert"); if (a) a.textContent = text || ""; };

  // Field names as a person reads them, for the API's "field: problem" validation messages.
  const LABELS = { email: "Email", password: "Password", passwordConfirm: "The repeated password", fullName: "Your name", token: "The link", code: "The link" };

  function errorText(json, status) {
    const details = json && json.error && json.error.details;
    if (details && Array.isArray(details.errors) && details.errors.length) {
      return details.errors.map((e) => (LABELS[e.path] ? LABELS[e.path] + " " : "") + e.message).join(". ") + ".";
    }
    return (json && json.message) || "Something went wrong (" + status + "). Try again.";
  }

  async function post(path, body) {
    const res = await fetch("/api/v1" + path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok || json.success === false) {
      const err = new Error(errorText(json, res.status));
      err.type = json.error && json.error.type;
      err.fields = ((json.error && json.error.details && json.error.details.errors) || []).map((e) => e.path);
      throw err;
    }
    return json;
  }

  const camel = (name) => name.replace(/_([a-z])/g, (_m, c) => c.toUpperCase());

  function markInvalid(form, fields) {
    form.querySelectorAll("input").forEach((input) => {
      const bad = fields.includes(camel(input.name));
      if (bad) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    });
    const first = form.querySelector("input[aria-invalid=true]");
    if (first) first.focus();
  }

  // What the browser can tell before asking the server: an empty required field, two different passwords.
  function problemIn(form) {
    for (const input of form.querySelectorAll("input[required]")) {
      if (!input.value.trim()) {
        const label = form.querySelector('label[for="' + input.id + '"]');
        return { field: camel(input.name), text: label ? "Fill in \u201c" + label.firstChild.textContent.trim() + "\u201d." : "Fill in every field." };
      }
    }
    const pw = form.querySelector("input[name=password]");
    const again = form.querySelector("input[name=password_confirm]");
    if (pw && again && pw.value !== again.value) return { field: "passwordConfirm", text: "The two passwords do not match." };
    return null;
  }

  function show(id) {
    const section = id && $(id);
    if (!section) return;
    section.hidden = false;
    section.focus();
  }

  document.querySelectorAll("form[data-api]").forEach((form) => {
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      say("");
      const problem = problemIn(form);
      if (problem) {
        markInvalid(form, [problem.field]);
        say(problem.text);
        return;
      }
      const body = {};
      for (const el of form.elements) {
        // Optional fields left empty are not sent (the API refuses an empty name).
        if (el.name && el.value !== "") body[el.name] = el.value;
      }
      const button = form.querySelector("button[type=submit]");
      if (button) button.disabled = true;
      try {
        const json = await post(form.dataset.api, body);
        markInvalid(form, []);
        form.hidden = true;
        const done = $(form.dataset.done);
        const message = done && done.querySelector("[data-message]");
        if (message) message.textContent = json.message || "";
        // Where the answer says to go next (a same-origin path, e.g. the SSO sign-in's next).
        const onward = done && done.querySelector("a[data-continue]");
        const to = json.data && json.data.redirect_to;
        if (onward && typeof to === "string" && /^\/(?!\/)[^\s\\]*$/.test(to)) onward.setAttribute("href", to);
        show(form.dataset.done);
      } catch (err) {
        // A spent or unknown link: the form cannot work any more, offer the way to a new one. That
        // section says what happened itself: the alert stays empty, so the page says it once.
        if (err.type === "INVALID_LINK" && form.dataset.invalid && $(form.dataset.invalid)) {
          form.hidden = true;
          show(form.dataset.invalid);
          return;
        }
        markInvalid(form, err.fields || []);
        say(err.message);
      } finally {
        if (button) button.disabled = false;
      }
    });
  });

  // Signed in with another account than the invited one: sign out and show the page again. A
  // session an organization's SAML IdP issued is ended there too (single logout), as the web app does.
  const signOut = $("flow-sign-out");
  if (signOut) signOut.addEventListener("click", async () => {
    let idpLogoutUrl = null;
    try {
      const json = await post("/auth/logout", {});
      idpLogoutUrl = json.data && json.data.idp_logout_url;
    } catch (_) { /* already signed out */ }
    if (typeof idpLogoutUrl === "string" && /^https?:\/\//.test(idpLogoutUrl)) location.assign(idpLogoutUrl);
    else location.reload();
  });
})();
