// Keyward's account console (/account). The server renders every section; this script runs the
// actions against the REST API (same origin, the session cookie; the API checks Origin on writes),
// then redraws the sections that changed from a fresh copy of the page, and says what happened in
// #status (success) or #alert (error). The two-step verification section's actions live in
// account-two-step.js, loaded after this file, which adds them through window.KeywardConsole.
// No framework, no external assets, and no HTML written from data: text goes in as textContent,
// markup only ever comes from the server's own rendering of this page.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const own = (map, key) => (Object.hasOwn(map, key) ? map[key] : undefined);
  const statusBox = $("status");
  const alertBox = $("alert");

  function clear() {
    statusBox.textContent = "";
    alertBox.textContent = "";
  }
  // A success message goes after a while (an error stays until the next action): on a phone the
  // message area sits over the page.
  let fade = 0;
  const say = (text) => {
    alertBox.textContent = "";
    statusBox.textContent = text;
    clearTimeout(fade);
    fade = setTimeout(() => { if (statusBox.textContent === text) statusBox.textContent = ""; }, 10000);
  };
  const fail = (text) => { statusBox.textContent = ""; alertBox.textContent = text; };

  async function api(method, path, body) {
    const headers = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch("/api/v1" + path, { method, credentials: "same-origin", headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = await res.json().catch(() => ({}));
    if (!res.ok || json.success === false) {
      const err = new Error(json.message || "The request failed (" + res.status + "). Try again.");
      err.status = res.status;
      err.type = json.error && json.error.type;
      err.fields = (json.error && json.error.details && json.error.details.errors) || [];
      throw err;
    }
    return { message: json.message, data: json.data || {} };
  }

  // Dates arrive in UTC; show them in the reader's time zone and language.
  function localizeTimes(root) {
    root.querySelectorAll("time[datetime]").forEach((t) => {
      const d = new Date(t.getAttribute("datetime"));
      if (!isNaN(d.getTime())) t.textContent = d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
    });
  }

  // What to focus again after a redraw: the same element if it still exists.
  function focusKey(el) {
    if (!el || el === document.body) return null;
    if (el.id) return "#" + CSS.escape(el.id);
    if (el.dataset.action) return '[data-action="' + CSS.escape(el.dataset.action) + '"]' + (el.dataset.id ? '[data-id="' + CSS.escape(el.dataset.id) + '"]' : "");
    return null;
  }

  /** Redraws sections from the page as the server renders it now (the action already succeeded). */
  async function refresh(ids) {
    let res;
    try {
      res = await fetch(location.pathname, { credentials: "same-origin", headers: { accept: "text/html" } });
    } catch {
      return;
    }
    if (new URL(res.url).pathname !== location.pathname) return location.assign(res.url);
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    for (const id of ids) {
      const current = $(id);
      const next = doc.getElementById(id);
      if (!current || !next) continue;
      // Panels this script filled in (a setup under way, codes shown once) stay as they are.
      next.querySelectorAll("[data-keep]").forEach((fresh) => {
        const kept = current.querySelector("#" + CSS.escape(fresh.id));
        if (kept) fresh.replaceWith(kept);
      });
      const focusInside = current.contains(document.activeElement);
      const key = focusInside ? focusKey(document.activeElement) : null;
      const node = document.importNode(next, true);
      current.replaceWith(node);
      localizeTimes(node);
      // Keyboard users keep their place; if the element went away (a removed row), the heading.
      if (focusInside) ((key && node.querySelector(key)) || node.querySelector("h2")).focus();
    }
  }

  const signedOut = (err) => err.status === 401 && (err.type === "AUTH_REQUIRED" || err.type === "INVALID_TOKEN");

  /** Runs one action: the trigger is busy meanwhile, and the outcome is announced. */
  async function run(trigger, work, form) {
    clear();
    if (form) form.querySelectorAll("[aria-invalid]").forEach((f) => f.removeAttribute("aria-invalid"));
    const busy = trigger.closest("section");
    trigger.disabled = true;
    if (busy) busy.setAttribute("aria-busy", "true");
    try {
      const message = await work();
      if (message) say(message);
    } catch (err) {
      if (signedOut(err)) return location.assign("/login?next=" + encodeURIComponent(location.pathname));
      fail(form ? explain(form, err) : err.message);
    } finally {
      if (trigger.isConnected) trigger.disabled = false;
      if (busy) busy.removeAttribute("aria-busy");
    }
  }

  // A refused field is marked and named by its label, in the order of the form.
  const camel = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
  function explain(form, err) {
    if (!err.fields.length) return err.message;
    let first = null;
    const parts = err.fields.map((f) => {
      const input = Array.from(form.elements).find((el) => el.name && (camel(el.name) === f.path || el.name === f.path));
      if (!input) return f.message;
      input.setAttribute("aria-invalid", "true");
      first = first || input;
      const label = form.querySelector('label[for="' + CSS.escape(input.id) + '"]');
      return (label ? label.textContent.trim() : f.path) + ": " + f.message;
    });
    if (first) first.focus();
    return parts.join(". ");
  }

  const formBody = (form) => {
    const body = {};
    for (const el of form.elements) if (el.name) body[el.name] = el.value;
    return body;
  };

  async function copy(target) {
    const text = target.textContent;
    try {
      await navigator.clipboard.writeText(text);
      return "Copied.";
    } catch {
      const range = document.createRange();
      range.selectNodeContents(target);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      return "Selected: press Ctrl+C (or ⌘C) to copy.";
    }
  }

  async function signOut() {
    try { await api("POST", "/auth/logout", {}); } finally { location.assign("/login"); }
  }

  const PROVIDER_NAMES = { github: "GitHub", google: "Google" };

  /** Buttons: data-action names the action, the other data-* attributes its subject. */
  const ACTIONS = {
    "sign-out": signOut,
    "sign-out-everywhere": async () => {
      await api("DELETE", "/auth/sessions");
      await signOut();
    },
    "resend-verification": async () => (await api("POST", "/auth/me/resend-verification", {})).message,
    unlink: async (b) => {
      await api("DELETE", "/auth/external/" + encodeURIComponent(b.dataset.provider) + "/unlink");
      await refresh(["linked-accounts"]);
      return b.dataset.name + " unlinked.";
    },
    "org-leave": async (b) => {
      await api("POST", "/organizations/" + encodeURIComponent(b.dataset.id) + "/leave", {});
      await refresh(["organizations", "profile", "two-step"]);
      return "You left " + b.dataset.name + ".";
    },
    "invite-accept": async (b) => {
      const { data } = await api("POST", "/users/me/invites/" + encodeURIComponent(b.dataset.id) + "/accept", {});
      await refresh(["organizations", "two-step"]);
      return "You joined " + b.dataset.name + " as " + data.role + ".";
    },
    "invite-decline": async (b) => {
      await api("POST", "/users/me/invites/" + encodeURIComponent(b.dataset.id) + "/decline", {});
      await refresh(["organizations"]);
      return "You declined the invitation to " + b.dataset.name + ".";
    },
    "ssh-key-remove": async (b) => {
      await api("DELETE", "/ssh/keys/" + encodeURIComponent(b.dataset.id));
      await refresh(["ssh"]);
      return "SSH key " + b.dataset.name + " removed.";
    },
    "consent-withdraw": async (b) => {
      await api("DELETE", "/users/me/consents/" + encodeURIComponent(b.dataset.id));
      await refresh(["consents"]);
      return b.dataset.name + " no longer has access to your account.";
    },
    "session-revoke": async (b) => {
      await api("DELETE", "/auth/sessions/" + encodeURIComponent(b.dataset.id));
      await refresh(["sessions"]);
      return "Signed out " + b.dataset.name + ".";
    },
    "sessions-revoke-others": async () => {
      const { message } = await api("DELETE", "/auth/sessions");
      await refresh(["sessions"]);
      return message + ".";
    },
    toggle: async (b) => {
      const target = $(b.dataset.target);
      target.hidden = !target.hidden;
      b.setAttribute("aria-expanded", String(!target.hidden));
      if (!target.hidden) target.querySelector("input").focus();
      return "";
    },
    copy: async (b) => copy($(b.dataset.target)),
  };

  /** Forms: data-form names the action; fields are named as the API names them. */
  const FORMS = {
    profile: async (f) => {
      await api("PATCH", "/users/me", { full_name: f.elements.full_name.value.trim() });
      await refresh(["profile"]);
      return "Name saved.";
    },
    email: async (f) => {
      const { message } = await api("POST", "/users/me/email", formBody(f));
      f.reset();
      return message;
    },
    password: async (f) => {
      const body = formBody(f);
      const { message } = await api("POST", "/users/me/password", body);
      f.reset();
      await refresh(["sessions"]);
      return message;
    },
  };

  document.addEventListener("click", (e) => {
    const button = e.target.closest("button[data-action], button[data-provider]");
    if (!button || button.disabled) return;
    if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
    if (button.dataset.provider) {
      // Linking leaves for the provider, which sends the browser back here (?linked= or ?error_type=).
      return run(button, async () => {
        const { data } = await api("POST", "/auth/external/" + encodeURIComponent(button.dataset.provider) + "/link", { next: "/account" });
        location.assign(data.authorization_url);
        return "";
      });
    }
    // Own names only: data-action="constructor" must not reach Object.prototype.
    const action = own(ACTIONS, button.dataset.action);
    if (action) run(button, () => action(button));
  });

  document.addEventListener("submit", (e) => {
    const form = e.target.closest("form[data-form]");
    const handler = form && own(FORMS, form.dataset.form);
    if (!handler) return;
    e.preventDefault();
    run(form.querySelector("button[type=submit]") || form, () => handler(form), form);
  });

  // Back from linking a provider: its outcome is in the query. Only known codes are shown, in our
  // own words, so a crafted link cannot put text on this page.
  const LINK_ERRORS = {
    OAUTH_STATE_INVALID: "This link attempt has expired, was already used, or was started in another browser. Start again.",
    OAUTH_ERROR: "The provider did not complete the request. Try again.",
    EMAIL_MISMATCH: "That account at the provider does not list your email address as verified, so it cannot be linked.",
    IDENTITY_ALREADY_LINKED: "That account at the provider is already linked to another account.",
    PROVIDER_ALREADY_LINKED: "Your account is already linked to a different account at this provider: unlink it first.",
    PROVIDER_NOT_CONFIGURED: "Linking this provider is not available.",
    RATE_LIMIT_EXCEEDED: "Too many attempts. Wait a moment and try again.",
  };
  const params = new URLSearchParams(location.search);
  const linked = params.get("linked");
  const errorType = params.get("error_type");
  if (linked) say((own(PROVIDER_NAMES, linked) || "The provider") + " is linked: you can sign in with it.");
  else if (errorType) fail(own(LINK_ERRORS, errorType) || "The provider could not be linked. Try again.");

  localizeTimes(document);

  // What account-two-step.js needs to add its actions; nothing else reads it.
  window.KeywardConsole = Object.freeze({
    api,
    refresh,
    formBody,
    add(actions, forms) {
      Object.assign(ACTIONS, actions);
      Object.assign(FORMS, forms);
    },
  });
})();
