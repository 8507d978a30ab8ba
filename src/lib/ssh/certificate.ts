import { randomBytes, type KeyObject } from "node:crypto";
import { algorithmOf, blobFromKeyObject } from "./keys.js";
import { signSsh, verifySsh } from "./signature.js";
import { packStrings, SshReader, SshWriter } from "./wire.js";

export interface CertificateRequest {
  /** The subject's plain public key blob. */
  publicKey: Buffer;
  serial: bigint;
  type: "user" | "host";
  keyId: string;
  principals: string[];
  validAfter: Date;
  validBefore: Date;
  /** Critical options: name → value (empty string for flag options). */
  criticalOptions?: Record<string, string>;
  /** Extension names (flag extensions, empty data). */
  extensions?: string[];
}

export interface ParsedCertificate {
  type: "user" | "host";
  certType: string;
  serial: bigint;
  keyId: string;
  principals: string[];
  validAfter: Date;
  validBefore: Date;
  criticalOptions: Record<string, string>;
  extensions: string[];
  /** The certified public key (plain blob). */
  publicKey: Buffer;
  caKey: Buffer;
  signatureValid: boolean;
}

const CERT_TYPE: Record<string, string> = {
  "ssh-ed25519": "ssh-ed25519-cert-v01@openssh.com",
  "ecdsa-sha2-nistp256": "ecdsa-sha2-nistp256-cert-v01@openssh.com",
  "ecdsa-sha2-nistp384": "ecdsa-sha2-nistp384-cert-v01@openssh.com",
  "ecdsa-sha2-nistp521": "ecdsa-sha2-nistp521-cert-v01@openssh.com",
  "ssh-rsa": "ssh-rsa-cert-v01@openssh.com",
  // Security keys: the certified key fields end with the FIDO application (PROTOCOL.u2f).
  "sk-ssh-ed25519@openssh.com": "sk-ssh-ed25519-cert-v01@openssh.com",
  "sk-ecdsa-sha2-nistp256@openssh.com": "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
};

// Names sorted bytewise, as ssh-keygen writes them (uppercase first).
const bytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function packOptions(options: Record<string, string>, flagsOnly: boolean): Buffer {
  const w = new SshWriter();
  for (const name of Object.keys(options).sort(bytewise)) {
    const value = options[name]!;
    w.string(name);
    // Flags carry empty data; values are a string wrapped in a string.
    w.string(flagsOnly || value === "" ? Buffer.alloc(0) : new SshWriter().string(value).toBuffer());
  }
  return w.toBuffer();
}

const seconds = (d: Date) => BigInt(Math.floor(d.getTime() / 1000));

/**
 * Builds and signs an OpenSSH certificate (draft-ietf-sshm-cert layout). The to-be-signed bytes
 * are encoded here and signed natively (node:crypto), so any CA key type signs in microseconds and
 * RSA CAs use rsa-sha2-512. Returns the `-cert.pub` line.
 */
export function signCertificate(caPrivateKey: KeyObject, caPublicBlob: Buffer, req: CertificateRequest): string {
  const subjectAlg = algorithmOf(req.publicKey);
  const certType = CERT_TYPE[subjectAlg];
  if (!certType) throw new Error(`cannot certify ${subjectAlg} keys`);
  const keyFields = req.publicKey.subarray(4 + Buffer.byteLength(subjectAlg));
  const tbs = new SshWriter()
    .string(certType)
    .string(randomBytes(32))
    .raw(keyFields)
    .uint64(req.serial)
    .uint32(req.type === "user" ? 1 : 2)
    .string(req.keyId)
    .string(packStrings(req.principals))
    .uint64(seconds(req.validAfter))
    .uint64(seconds(req.validBefore))
    .string(packOptions(req.criticalOptions ?? {}, false))
    .string(packOptions(Object.fromEntries((req.extensions ?? []).map((e) => [e, ""])), true))
    .string(Buffer.alloc(0))
    .string(caPublicBlob)
    .toBuffer();
  const blob = Buffer.concat([tbs, new SshWriter().string(signSsh(caPrivateKey, tbs)).toBuffer()]);
  return `${certType} ${blob.toString("base64")}`;
}

function readOptions(data: Buffer): Record<string, string> {
  const r = new SshReader(data);
  const out: Record<string, string> = {};
  while (!r.done) {
    const name = r.text();
    const value = r.string();
    out[name] = value.length === 0 ? "" : new SshReader(value).text();
  }
  return out;
}

/** Parses a `-cert.pub` line and checks its signature against the embedded CA key. */
export function parseCertificate(line: string): ParsedCertificate {
  const [certType, b64] = line.trim().split(/\s+/);
  const blob = Buffer.from(b64 ?? "", "base64");
  const r = new SshReader(blob);
  const declared = r.text();
  if (declared !== certType || !Object.values(CERT_TYPE).includes(declared)) throw new Error("not an OpenSSH certificate");
  r.string(); // nonce
  const plainAlg = Object.entries(CERT_TYPE).find(([, v]) => v === declared)![0];
  const keyStart = r.position;
  if (plainAlg === "ssh-ed25519") r.string();
  else if (plainAlg.startsWith("ecdsa")) (r.string(), r.string());
  else if (plainAlg === "sk-ssh-ed25519@openssh.com") (r.string(), r.string());
  else if (plainAlg === "sk-ecdsa-sha2-nistp256@openssh.com") (r.string(), r.string(), r.string());
  else (r.mpint(), r.mpint());
  const publicKey = Buffer.concat([new SshWriter().string(plainAlg).toBuffer(), blob.subarray(keyStart, r.position)]);
  const serial = r.uint64();
  const type = r.uint32() === 1 ? "user" : "host";
  const keyId = r.text();
  const pr = new SshReader(r.string());
  const principals: string[] = [];
  while (!pr.done) principals.push(pr.text());
  const validAfter = new Date(Number(r.uint64()) * 1000);
  const validBefore = new Date(Number(r.uint64()) * 1000);
  const criticalOptions = readOptions(r.string());
  const extensions = Object.keys(readOptions(r.string()));
  r.string(); // reserved
  const caKey = r.string();
  const signedEnd = r.position;
  const signature = r.string();
  return {
    type,
    certType: declared,
    serial,
    keyId,
    principals,
    validAfter,
    validBefore,
    criticalOptions,
    extensions,
    publicKey,
    caKey,
    signatureValid: r.done && verifySsh(caKey, blob.subarray(0, signedEnd), signature),
  };
}

export { blobFromKeyObject };
