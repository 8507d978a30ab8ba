import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { writeAtomic } from "../atomic-write.js";
import { certStatus, parseCertificateListing } from "../cert-status.js";
import type { Ctx } from "../context.js";
import { CliError, ExitCode } from "../errors.js";
import { configDir } from "../credentials.js";
import { certPathFor, findKey } from "../local-keys.js";
import { withOrgChoice } from "../org-choice.js";
import type { Io, Result } from "../output.js";
import { SignedCertificates } from "../signed-certificates.js";
import { listCertificate } from "../ssh-keygen.js";
import { localTime, relative } from "../time.js";
import { ensureVerifiedKey } from "./keys.js";
import { orgs } from "./orgs.js";

interface SignedCertificate {
  id: string;
  serial: string;
  certificate: string;
  principals: string[];
  valid_after: string;
  valid_before: string;
  organization_id: string;
  organization_name: string;
  key_id: string;
}

export interface SignOptions {
  orgId?: string;
  principal?: string[];
  hours?: number;
  key?: string;
  listOrgs?: boolean;
  /** Where to write the certificate (default: `<key>-cert.pub`). */
  out?: string;
}

/**
 * Signs a user certificate for a local key and writes it where ssh looks for it (`<key>-cert.pub`).
 * A key the server does not know yet is registered and proved first, so one command goes from a
 * fresh laptop to a working certificate.
 */
export async function sign(ctx: Ctx, opts: SignOptions): Promise<Result> {
  if (opts.listOrgs) return orgs(ctx);
  const local = findKey(opts.key);
  const { key } = await ensureVerifiedKey(ctx, local);
  const cert = await withOrgChoice(ctx.io, opts.orgId, (orgId) =>
    ctx.api.post<SignedCertificate>("/ssh/sign", {
      key_id: key.id,
      ...(opts.principal?.length ? { principals: opts.principal } : {}),
      ...(opts.hours ? { expiry_hours: opts.hours } : {}),
      ...(orgId ? { org_id: orgId } : {}),
    }),
  );
  const path = opts.out ?? certPathFor(local);
  // Renamed into place: ssh, or a parallel `ssh ensure`, never reads half a certificate.
  writeAtomic(path, `${cert.certificate.trim()}\n`, 0o644);
  new SignedCertificates(ctx.store.dir).add(path);
  const validBefore = new Date(cert.valid_before);
  const c = ctx.io.out;
  return {
    json: { certificate_path: path, ...cert },
    text: [
      `${c.green("✓")} Certificate from ${c.bold(cert.organization_name)} written to ${path}`,
      `  principals: ${cert.principals.join(", ")}`,
      `  valid until ${localTime(validBefore)} (${relative(validBefore)})`,
      `  serial ${cert.serial}`,
    ],
  };
}

/** Certificates in ~/.ssh (ssh's default place for `<key>-cert.pub`). */
function defaultCertificates(): string[] {
  const dir = join(homedir(), ".ssh");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith("-cert.pub"))
    .map((f) => join(dir, f));
}

/**
 * What `ssh status` reads when given no paths: ~/.ssh, and every certificate `ssh sign` wrote
 * elsewhere (next to a `--key` outside ~/.ssh) that is still there.
 */
function knownCertificates(env: NodeJS.ProcessEnv): string[] {
  const signed = new SignedCertificates(configDir(env)).list().filter((p) => existsSync(p));
  return [...new Set([...defaultCertificates(), ...signed].map((p) => resolve(p)))];
}

/** How long the certificates on disk stay valid; works offline (ssh-keygen reads them). */
export function status(io: Io, paths: string[], env: NodeJS.ProcessEnv = process.env): Result {
  const files = paths.length ? paths : knownCertificates(env);
  const now = new Date();
  const certs = files.map((path) => {
    if (!existsSync(path)) throw new CliError(`No certificate at ${path}`, ExitCode.USAGE, "NO_CERTIFICATE");
    const info = parseCertificateListing(listCertificate(path));
    return { path, info, status: certStatus(info, now) };
  });
  const c = io.out;
  const paint = (state: string, s: string) => (state === "valid" ? c.green(s) : state === "expired" ? c.red(s) : c.yellow(s));
  return {
    json: {
      certificates: certs.map(({ path, info, status: s }) => ({
        path,
        key_id: info.keyId,
        serial: info.serial,
        principals: info.principals,
        valid_after: info.validAfter?.toISOString() ?? null,
        valid_before: info.validBefore?.toISOString() ?? null,
        state: s.state,
        seconds_left: s.remainingMs === null ? null : Math.floor(s.remainingMs / 1000),
      })),
      count: certs.length,
    },
    text: certs.length
      ? certs.map(({ path, info, status: s }) => `${path}\n  ${paint(s.state, s.summary)}${info.validBefore ? ` (until ${localTime(info.validBefore)})` : ""}\n  principals: ${info.principals.join(", ") || "(none)"}\n  ${c.dim(info.keyId)}`)
      : ["No certificates in ~/.ssh nor any that keyward signed: get one with `keyward ssh sign`"],
  };
}
