import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { sharedTool } from "./shared-tools.js";

/**
 * A REAL SAML 2.0 identity provider on loopback (SimpleSAMLphp, ../shared/tools/saml-idp): the
 * customer's IdP in the enterprise sign-in tests. Needs Debian's simplesamlphp php-cli php-xml
 * php-mbstring php-curl. SAML_IDP_TOOL points at idp.mjs when the tool is not beside the repository
 * (CI exports it as for DNS_TOOL).
 */
export const SAML_IDP_TOOL = sharedTool(process.env.SAML_IDP_TOOL, "saml-idp/idp.mjs");

export interface SamlIdpUser {
  username: string;
  password: string;
  email: string;
  name: string;
  groups: string[];
}

export interface RealSamlIdp {
  url: string;
  entityId: string;
  metadataUrl: string;
  ssoUrl: string;
  sloUrl: string;
  initSsoUrl: string;
  certPem: string;
  users: SamlIdpUser[];
  spMetadataDir: string;
  /** Registers (or replaces) an SP: its metadata, and SimpleSAMLphp options merged over it (e.g. {"saml20.sign.response": false}). */
  registerSp(name: string, metadataXml: string, options?: Record<string, unknown>): void;
  /** The last lines of the IdP's PHP and SimpleSAMLphp log (why it could not read an SP's metadata, say). */
  logTail(lines?: number): string;
  stop(): void;
}

export async function startSamlIdp(args: string[] = []): Promise<RealSamlIdp> {
  if (!existsSync(SAML_IDP_TOOL)) throw new Error(`The SAML IdP tool is missing at ${SAML_IDP_TOOL}: set SAML_IDP_TOOL to ../shared/tools/saml-idp/idp.mjs (and install simplesamlphp php-cli php-xml php-mbstring php-curl)`);
  const home = mkdtempSync(join(tmpdir(), "keyward-saml-idp-"));
  const child: ChildProcess = spawn(process.execPath, [SAML_IDP_TOOL, "--home", home, ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the SAML IdP tool did not answer within 20 s")), 20_000).unref());
  const line = await Promise.race([lines.next(), timeout]);
  if (line.done) throw new Error("the SAML IdP tool exited before it answered");
  const info = JSON.parse(line.value) as Omit<RealSamlIdp, "registerSp" | "logTail" | "stop">;
  return {
    ...info,
    registerSp(name, metadataXml, options) {
      writeFileSync(join(info.spMetadataDir, `${name}.xml`), metadataXml);
      const json = join(info.spMetadataDir, `${name}.json`);
      if (options) writeFileSync(json, JSON.stringify(options));
      else rmSync(json, { force: true });
    },
    logTail(lines = 20) {
      const file = join(home, "php.log");
      return existsSync(file) ? readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n") : "";
    },
    stop() {
      child.kill("SIGTERM");
      setTimeout(() => rmSync(home, { recursive: true, force: true }), 1000).unref();
    },
  };
}

/** A browser's cookie jar, enough for SimpleSAMLphp's session cookies on one host. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair!.indexOf("=");
      if (eq > 0) this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

const decodeEntities = (s: string): string =>
  s.replace(/&quot;/g, '"').replace(/&#0?39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&#x2F;/gi, "/").replace(/&#x3D;/gi, "=").replace(/&#x2B;/gi, "+").replace(/&amp;/g, "&");

function hiddenInputs(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [tag] of html.matchAll(/<input[^>]*>/gi)) {
    const name = /name="([^"]*)"/i.exec(tag)?.[1];
    const value = /value="([^"]*)"/i.exec(tag)?.[1];
    if (name !== undefined && value !== undefined) out[name] = decodeEntities(value);
  }
  return out;
}

/** What a person reads on an HTML page (an error page's message, not its DOCTYPE): tags and scripts out, spaces collapsed. */
const pageText = (html: string): string =>
  decodeEntities(html.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, " ").replace(/<[^>]*>/g, " ")).replace(/\s+/g, " ").trim();

export interface IdpAnswer {
  /** The ACS URL the IdP's auto-POST form targets. */
  action: string;
  samlResponse: string;
  relayState?: string;
}

/**
 * What a browser does from the SP's redirect to the IdP until the auto-POST to the ACS: follow the
 * redirects, fill the login form (with a fresh jar, or skip it when the jar has an IdP session), and
 * return the form's SAMLResponse instead of posting it.
 */
export async function browserLogin(startUrl: string, user: { username: string; password: string }, jar = new CookieJar(), post?: Record<string, string>): Promise<IdpAnswer> {
  let url = startUrl;
  // The HTTP-POST binding starts with the SP's auto-submitted form instead of a redirect.
  let init: RequestInit = post ? { method: "POST", body: new URLSearchParams(post).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } } : {};
  let loggedIn = false;
  for (let step = 0; step < 12; step++) {
    const res = await fetch(url, { ...init, redirect: "manual", headers: { ...(init.headers as Record<string, string>), cookie: jar.header() } });
    jar.take(res);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get("location")!, url).href;
      init = {};
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`the IdP answered ${res.status} at ${url}: ${html.slice(0, 300)}`);
    const inputs = hiddenInputs(html);
    if (inputs.SAMLResponse) {
      const action = decodeEntities(/<form[^>]*action="([^"]*)"/i.exec(html)?.[1] ?? "");
      return { action, samlResponse: inputs.SAMLResponse, relayState: inputs.RelayState };
    }
    if (/name="password"/i.test(html)) {
      if (loggedIn) throw new Error("the IdP refused the username or password");
      loggedIn = true;
      const body = new URLSearchParams({ ...inputs, username: user.username, password: user.password });
      init = { method: "POST", body: body.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } };
      continue;
    }
    throw new Error(`unexpected IdP page at ${url}: ${pageText(html).slice(0, 400)}`);
  }
  throw new Error("too many steps at the IdP");
}

/**
 * Follows the IdP's redirects (with the browser's cookies) until one leaves for `prefix` (the SP's
 * SingleLogoutService), and returns that URL's raw query string, as the SP would receive it.
 */
export async function followUntil(url: string, prefix: string, jar: CookieJar): Promise<string> {
  for (let step = 0; step < 12; step++) {
    if (url.startsWith(prefix)) return url.slice(url.indexOf("?") + 1);
    const res = await fetch(url, { redirect: "manual", headers: { cookie: jar.header() } });
    jar.take(res);
    const location = res.headers.get("location");
    if (!location) throw new Error(`the IdP answered ${res.status} at ${url} without redirecting: ${(await res.text()).replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").slice(0, 1000)}`);
    url = new URL(location, url).href;
  }
  throw new Error("too many redirects at the IdP");
}

export { CookieJar };
