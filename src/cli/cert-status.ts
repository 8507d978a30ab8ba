import { formatDuration } from "./time.js";

/** What `ssh-keygen -L` says about a certificate, in a form the CLI can reason about. */
export interface CertInfo {
  type: string;
  keyId: string;
  serial: string;
  signingCa: string;
  principals: string[];
  /** null: no lower bound ("before …", "forever"). */
  validAfter: Date | null;
  /** null: never expires. */
  validBefore: Date | null;
}

// ssh-keygen prints "YYYY-MM-DDTHH:MM:SS" in the local zone; the CLI runs it with TZ=UTC.
const utc = (s: string): Date => new Date(`${s}Z`);

/** The four shapes OpenSSH prints: "forever", "from A to B", "after A", "before B". */
function parseValidity(v: string): Pick<CertInfo, "validAfter" | "validBefore"> {
  if (v === "forever") return { validAfter: null, validBefore: null };
  let m = /^from (\S+) to (\S+)$/.exec(v);
  if (m) return { validAfter: utc(m[1]!), validBefore: m[2] === "forever" ? null : utc(m[2]!) };
  if ((m = /^after (\S+)$/.exec(v))) return { validAfter: utc(m[1]!), validBefore: null };
  if ((m = /^before (\S+)$/.exec(v))) return { validAfter: null, validBefore: utc(m[1]!) };
  throw new Error(`unrecognized validity: ${v}`);
}

export function parseCertificateListing(text: string): CertInfo {
  const field = (name: string) => new RegExp(`^\\s*${name}:[ \\t]*(.*)$`, "m").exec(text)?.[1]?.trim() ?? "";
  // Principals are listed one per line, indented below the heading, until the next heading.
  const principals: string[] = [];
  const lines = text.split("\n");
  const start = lines.findIndex((l) => /^\s*Principals:/.test(l));
  if (start >= 0 && !/\(none\)/.test(lines[start]!)) {
    const indent = /^\s*/.exec(lines[start]!)![0].length;
    for (const line of lines.slice(start + 1)) {
      if (!line.trim() || /^\s*/.exec(line)![0].length <= indent) break;
      principals.push(line.trim());
    }
  }
  const keyId = field("Key ID");
  return {
    type: field("Type"),
    keyId: keyId.replace(/^"(.*)"$/, "$1"),
    serial: field("Serial"),
    signingCa: field("Signing CA"),
    principals,
    ...parseValidity(field("Valid")),
  };
}

export type CertState = "valid" | "expired" | "not yet valid";

export interface CertStatus {
  state: CertState;
  /** Milliseconds left, null when the certificate never expires. */
  remainingMs: number | null;
  summary: string;
}

export function certStatus(info: CertInfo, now: Date = new Date()): CertStatus {
  if (info.validAfter && info.validAfter > now) return { state: "not yet valid", remainingMs: null, summary: `not valid for another ${formatDuration(info.validAfter.getTime() - now.getTime())}` };
  if (!info.validBefore) return { state: "valid", remainingMs: null, summary: "valid, never expires" };
  const left = info.validBefore.getTime() - now.getTime();
  if (left <= 0) return { state: "expired", remainingMs: 0, summary: `expired ${formatDuration(-left)} ago` };
  return { state: "valid", remainingMs: left, summary: `valid for ${formatDuration(left)}` };
}
