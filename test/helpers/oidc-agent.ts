/**
 * A browser stand-in for OAuth redirects: keeps cookies per name, follows redirects by hand, and
 * stops at the relying party's redirect URI (which nothing listens on). Consent pages are
 * answered by posting their form, as a user clicking "Allow" or "Deny" would.
 */
export class OidcAgent {
  private readonly jar = new Map<string, string>();

  constructor(readonly origin: string) {}

  get cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private keep(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (value === "" || /expires=Thu, 01 Jan 1970/i.test(c)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  async fetch(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const res = await fetch(url, {
      method: init.method ?? "GET",
      body: init.body,
      redirect: "manual",
      headers: { cookie: this.cookieHeader, ...(init.headers ?? {}) },
    });
    this.keep(res);
    return res;
  }

  /** Signs in through the REST API, which sets the browser session cookie. */
  async signIn(email: string, password: string): Promise<void> {
    const res = await this.fetch(`${this.origin}/api/v1/auth/login`, {
      method: "POST",
      body: JSON.stringify({ email, password }),
      headers: { "content-type": "application/json", origin: this.origin },
    });
    if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  }

  /**
   * Follows an authorization (or device, or logout) URL. Returns the final stop: the redirect to
   * `stopAt`, or the page where it had to stop (sign-in page, an error page, a device page …).
   */
  async follow(start: string, stopAt: string, consent: "allow" | "deny" | "stop" = "allow"): Promise<{ url: string; status: number; body: string; consentShown: boolean }> {
    let url = start;
    let consentShown = false;
    for (let hops = 0; hops < 20; hops++) {
      if (url.startsWith(stopAt)) return { url, status: 302, body: "", consentShown };
      const res = await this.fetch(url);
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location) {
        url = new URL(location, url).toString();
        continue;
      }
      const body = await res.text();
      // A page that posts its own form (oidc-provider's form_post pages, Keyward's data-auto-submit):
      // a browser runs its script, so the agent submits it too.
      const auto = res.status === 200 ? selfSubmitting(body) : null;
      if (auto) {
        const posted = await this.fetch(new URL(auto.action, url).toString(), {
          method: "POST",
          body: auto.fields.toString(),
          headers: { "content-type": "application/x-www-form-urlencoded", origin: this.origin },
        });
        const next = posted.headers.get("location");
        if (!next) return { url: auto.action, status: posted.status, body: await posted.text(), consentShown };
        url = new URL(next, url).toString();
        continue;
      }
      const form = /<form method="post" action="([^"]+\/(confirm|abort))">/g;
      const actions = [...body.matchAll(form)].map((m) => m[1]!);
      if (res.status === 200 && actions.length === 2 && consent !== "stop") {
        consentShown = true;
        const action = actions.find((a) => a.endsWith(consent === "allow" ? "/confirm" : "/abort"))!;
        const posted = await this.fetch(new URL(action, url).toString(), { method: "POST", headers: { origin: this.origin } });
        const next = posted.headers.get("location");
        if (!next) return { url: action, status: posted.status, body: await posted.text(), consentShown };
        url = new URL(next, url).toString();
        continue;
      }
      return { url, status: res.status, body, consentShown };
    }
    throw new Error("too many redirects");
  }

  /** Submits a provider-rendered form (device code entry/confirmation, logout) by its id. */
  async submitForm(pageUrl: string, html: string, formId: string, extra: Record<string, string> = {}): Promise<Response> {
    const form = new RegExp(`<form[^>]*id="${formId.replace(".", "\\.")}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
    if (!form) throw new Error(`form ${formId} not found`);
    const action = /action="([^"]+)"/.exec(form[0])![1]!;
    const fields = new URLSearchParams();
    for (const m of form[1]!.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields.set(m[1]!, m[2]!);
    for (const [k, v] of Object.entries(extra)) fields.set(k, v);
    return this.fetch(new URL(action, pageUrl).toString(), {
      method: "POST",
      body: fields.toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: this.origin },
    });
  }
}

/** The form a page submits by itself, if it does. */
function selfSubmitting(html: string): { action: string; fields: URLSearchParams } | null {
  const form = /<form[^>]*data-auto-submit[^>]*>([\s\S]*?)<\/form>/.exec(html) ?? (html.includes("document.forms[0].submit()") ? /<form[^>]*>([\s\S]*?)<\/form>/.exec(html) : null);
  if (!form) return null;
  const fields = new URLSearchParams();
  for (const m of form[1]!.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields.set(m[1]!, m[2]!);
  return { action: /action="([^"]+)"/.exec(form[0])![1]!, fields };
}
