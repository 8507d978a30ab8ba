import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { parse } from "tldts";

/**
 * Domain names an organization may claim, normalised once: lower case, IDNA A-labels (`bücher.de`
 * is `xn--bcher-kva.de`), no trailing dot. The only user of `tldts` (the Public Suffix List).
 */

/**
 * Consumer and free-mail providers: anyone can get an address there, so an address in them says
 * nothing about an organization. Matched on the registrable domain, so `mail.gmail.com` is refused
 * too. Providers that run one domain per country are matched by name whatever the suffix (below).
 */
export const CONSUMER_DOMAINS: ReadonlySet<string> = new Set([
  "gmail.com", "googlemail.com", "google.com",
  "outlook.com", "hotmail.com", "hotmail.co.uk", "hotmail.fr", "hotmail.de", "hotmail.it", "hotmail.es", "live.com", "live.co.uk", "live.fr", "msn.com", "passport.com",
  "yahoo.com", "yahoo.co.uk", "yahoo.co.jp", "yahoo.fr", "yahoo.de", "yahoo.es", "yahoo.it", "ymail.com", "rocketmail.com",
  "icloud.com", "me.com", "mac.com",
  "aol.com", "aim.com", "verizon.net", "att.net", "comcast.net", "sbcglobal.net",
  "proton.me", "protonmail.com", "protonmail.ch", "pm.me",
  "tutanota.com", "tutanota.de", "tuta.io", "tuta.com",
  "mail.ru", "inbox.ru", "list.ru", "bk.ru", "rambler.ru", "ya.ru",
  "qq.com", "foxmail.com", "163.com", "126.com", "yeah.net", "sina.com", "sohu.com", "aliyun.com",
  "naver.com", "daum.net", "hanmail.net",
  "web.de", "t-online.de", "freenet.de", "posteo.de", "mailbox.org",
  "orange.fr", "wanadoo.fr", "free.fr", "laposte.net", "sfr.fr",
  "libero.it", "virgilio.it", "tiscali.it",
  "btinternet.com", "sky.com", "virginmedia.com",
  "rediffmail.com", "zoho.com", "zohomail.com", "fastmail.com", "fastmail.fm", "hey.com", "hushmail.com",
  "mail.com", "email.com", "usa.com", "inbox.com", "seznam.cz", "wp.pl", "o2.pl", "interia.pl", "onet.pl",
  "bol.com.br", "uol.com.br", "terra.com.br",
  "mailinator.com", "guerrillamail.com", "10minutemail.com", "temp-mail.org", "yopmail.com",
]);

/** Providers with a registrable domain per country (gmx.de, gmx.net, yandex.ru, yandex.com.tr, …). */
const CONSUMER_NAMES: ReadonlySet<string> = new Set(["gmx", "yandex", "yahoo"]);

export type DomainProblem = "invalid" | "too_long" | "ip_address" | "public_suffix" | "consumer";

export type DomainCheck = { ok: true; domain: string } | { ok: false; problem: DomainProblem; message: string };

// Letters, marks and digits of any script, hyphens and dots: anything else (spaces, @, /, emoji,
// invisible joiners that IDNA would silently drop) is refused rather than mapped away.
const ALLOWED = /^[\p{L}\p{M}\p{Nd}.-]+$/u;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

const refuse = (problem: DomainProblem, message: string): DomainCheck => ({ ok: false, problem, message });

/** Normalises a domain an organization wants to claim, or says why it can never be claimed. */
export function checkClaimableDomain(input: string): DomainCheck {
  const raw = input.trim().normalize("NFC").toLowerCase().replace(/\.$/, "");
  if (raw.length === 0) return refuse("invalid", "Give a domain name, e.g. example.com");
  if (raw.length > 253) return refuse("too_long", "A domain name has at most 253 characters");
  // An address literal is no domain anyone can prove by DNS.
  if (isIP(raw.replace(/^\[|\]$/g, "")) !== 0) return refuse("ip_address", "An IP address cannot be claimed: give a domain name");
  if (!ALLOWED.test(raw)) return refuse("invalid", "A domain name has letters, digits, hyphens and dots only (no scheme, path, @ or spaces)");
  const ascii = domainToASCII(raw);
  if (!ascii || ascii.length > 253) return refuse(ascii ? "too_long" : "invalid", ascii ? "A domain name has at most 253 characters" : "Not a valid internationalised domain name");
  const labels = ascii.split(".");
  if (labels.some((l) => !LABEL.test(l))) return refuse("invalid", "Each part of a domain name has 1 to 63 letters, digits or hyphens, and no hyphen at either end");
  if (labels.length < 2) return refuse("public_suffix", "A single label (a top-level domain or a local name) cannot be claimed");
  if (/^\d+$/.test(labels.at(-1)!)) return refuse("ip_address", "An IP address cannot be claimed: give a domain name");
  const parsed = parse(ascii, { allowPrivateDomains: true });
  // A public suffix (com, co.uk, github.io): names under it belong to many different owners.
  if (!parsed.domain || parsed.publicSuffix === ascii) return refuse("public_suffix", `${ascii} is a public suffix: claim your own domain under it`);
  if (CONSUMER_DOMAINS.has(parsed.domain) || (parsed.domainWithoutSuffix !== null && CONSUMER_NAMES.has(parsed.domainWithoutSuffix))) {
    return refuse("consumer", `${parsed.domain} is a consumer email provider: anyone can have an address there, so it cannot be claimed`);
  }
  return { ok: true, domain: ascii };
}

/** The domain of an email address in the claimed form, or null when the address has none that could be claimed. */
export function emailDomain(email: string): string | null {
  const at = email.lastIndexOf("@");
  if (at < 1) return null;
  const checked = checkClaimableDomain(email.slice(at + 1));
  return checked.ok ? checked.domain : null;
}
