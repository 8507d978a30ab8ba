import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { sharedTool } from "./shared-tools.js";

/**
 * A REAL OpenID provider shaped like an Entra ID tenant (../shared/tools/oidc-idp: oidc-provider on
 * loopback, with `groups`, `oid`, `tid`), run from the repository root so it finds oidc-provider.
 * OIDC_IDP_TOOL points at idp.mjs when the tool is not beside the repository (CI exports it).
 */
const ROOT = resolve(import.meta.dirname, "../..");
export const OIDC_IDP_TOOL = sharedTool(process.env.OIDC_IDP_TOOL, "oidc-idp/idp.mjs");

export interface IdpUser {
  username: string;
  password: string;
  email: string;
  name: string;
  groups: string[];
  sub: string;
}

export interface RealIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  tenantId: string;
  registrationEndpoint: string;
  initialAccessToken: string;
  users: IdpUser[];
  stop(): void;
}

export async function startIdp(options: { redirectUri: string; users: string[]; issuerPath?: string; clientId?: string; clientSecret?: string }): Promise<RealIdp> {
  if (!existsSync(OIDC_IDP_TOOL)) throw new Error(`The OpenID provider tool is missing at ${OIDC_IDP_TOOL}: set OIDC_IDP_TOOL to ../shared/tools/oidc-idp/idp.mjs`);
  const args = [OIDC_IDP_TOOL, "--client-id", options.clientId ?? "keyward", "--client-secret", options.clientSecret ?? "s3cret-value", "--redirect-uri", options.redirectUri];
  for (const u of options.users) args.push("--user", u);
  if (options.issuerPath) args.push("--issuer-path", options.issuerPath);
  const child: ChildProcess = spawn(process.execPath, args, { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the OpenID provider did not start within 20 s")), 20_000).unref());
  const line = await Promise.race([lines.next(), timeout]);
  if (line.done) throw new Error("the OpenID provider exited before it answered");
  const info = JSON.parse(line.value) as Omit<RealIdp, "stop">;
  return { ...info, stop: () => void child.kill("SIGTERM") };
}

/** A browser, roughly: cookies per origin, redirects followed by hand. */
export class Browser {
  private readonly jar = new Map<string, Map<string, string>>();

  cookieHeader(url: string): string {
    const origin = new URL(url).origin;
    return [...(this.jar.get(origin) ?? new Map<string, string>()).entries()].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  cookie(url: string, name: string): string | undefined {
    return this.jar.get(new URL(url).origin)?.get(name);
  }

  async fetch(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    const cookie = this.cookieHeader(url);
    if (cookie) headers.cookie = cookie;
    if (init.body) headers["content-type"] ??= "application/x-www-form-urlencoded";
    const res = await fetch(url, { method: init.method ?? "GET", headers, body: init.body, redirect: "manual" });
    const origin = new URL(url).origin;
    const store = this.jar.get(origin) ?? new Map<string, string>();
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(c) || value === "") store.delete(name);
      else store.set(name, value);
    }
    this.jar.set(origin, store);
    return res;
  }

  /**
   * From the provider's authorization URL to the redirect back to `stopAt` (not followed): signs in
   * on the provider's form when it shows one. Returns the callback URL with code and state.
   */
  async loginAtIdp(authorizationUrl: string, user: { username: string; password: string }, stopAt: string): Promise<string> {
    let url = authorizationUrl;
    for (let i = 0; i < 15; i++) {
      if (url.startsWith(stopAt)) return url;
      const res = await this.fetch(url);
      if (res.status >= 300 && res.status < 400) {
        url = new URL(res.headers.get("location")!, url).toString();
        continue;
      }
      const html = await res.text();
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
      if (!action) throw new Error(`the provider answered ${res.status} without a form: ${html.slice(0, 300)}`);
      const posted = await this.fetch(new URL(action.replace(/&amp;/g, "&"), url).toString(), {
        method: "POST",
        body: new URLSearchParams({ username: user.username, password: user.password }).toString(),
      });
      if (posted.status < 300 || posted.status >= 400) throw new Error(`the provider refused the login: ${posted.status} ${(await posted.text()).slice(0, 300)}`);
      url = new URL(posted.headers.get("location")!, url).toString();
    }
    throw new Error("too many redirects at the provider");
  }
}
