import { createHash } from "node:crypto";
import { SshReader, SshWriter } from "./wire.js";

/**
 * FIDO2 security-key ("sk-") OpenSSH keys (OpenSSH PROTOCOL.u2f). sshpk does not parse them, so
 * their wire format is read here. An sk public key is a plain Ed25519 or NIST P-256 key followed by
 * the FIDO application string ("ssh:" unless the person chose another, `ssh-keygen -O application=`):
 *
 *   string "sk-ssh-ed25519@openssh.com"           string public key (32 bytes)   string application
 *   string "sk-ecdsa-sha2-nistp256@openssh.com"   string "nistp256"  string Q    string application
 *
 * The authenticator never signs the message itself: it signs
 * SHA256(application) ‖ flags ‖ uint32 counter ‖ SHA256(message) (Ed25519 over those 69 bytes,
 * ECDSA P-256 over their SHA-256), and the SSH signature blob carries the flags and counter after
 * the signature: `string alg ‖ string sig ‖ byte flags ‖ uint32 counter`.
 */
export const SK_ALGORITHMS = {
  "sk-ssh-ed25519@openssh.com": { base: "ssh-ed25519", type: "sk-ed25519", cert: "sk-ssh-ed25519-cert-v01@openssh.com" },
  "sk-ecdsa-sha2-nistp256@openssh.com": { base: "ecdsa-sha2-nistp256", type: "sk-ecdsa", cert: "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com" },
} as const;
export type SkAlgorithm = keyof typeof SK_ALGORITHMS;

/** The authenticator saw a touch (FIDO "user present"). */
export const SK_USER_PRESENCE = 0x01;
/** The authenticator checked a PIN or biometric (FIDO "user verified"). */
export const SK_USER_VERIFICATION = 0x04;

export const isSkAlgorithm = (algorithm: string): algorithm is SkAlgorithm => Object.hasOwn(SK_ALGORITHMS, algorithm);

// ssh-keygen refuses to enroll an application that does not start with "ssh:"; it is printable ASCII.
const APPLICATION = /^ssh:[\x21-\x7e]{0,252}$/;

export interface SkPublicKey {
  algorithm: SkAlgorithm;
  /** The plain key inside (`ssh-ed25519` / `ecdsa-sha2-nistp256` blob), which verifies the signatures. */
  base: Buffer;
  application: string;
}

/**
 * Splits an sk public key blob into its plain key and application. Throws on anything else (the
 * caller turns that into its own error); the plain key's soundness is the caller's to check.
 */
export function splitSkPublicBlob(blob: Buffer): SkPublicKey {
  const r = new SshReader(blob);
  const algorithm = r.text();
  if (!isSkAlgorithm(algorithm)) throw new Error(`not a security-key algorithm: ${algorithm}`);
  const base = new SshWriter().string(SK_ALGORITHMS[algorithm].base);
  if (algorithm === "sk-ssh-ed25519@openssh.com") base.string(r.string());
  else {
    const curve = r.text();
    if (curve !== "nistp256") throw new Error("an sk-ecdsa key is on nistp256");
    base.string(curve).string(r.string());
  }
  const application = r.string();
  if (!r.done) throw new Error("unexpected data after the key");
  const text = application.toString("latin1");
  if (!APPLICATION.test(text)) throw new Error('the FIDO application must be printable and start with "ssh:"');
  return { algorithm, base: base.toBuffer(), application: text };
}

export interface SkSignatureDetails {
  flags: number;
  counter: number;
}

/** The bytes the authenticator signs for `message` (PROTOCOL.u2f "SSH U2F signatures"). */
export function skSignedData(application: string, flags: number, counter: number, message: Buffer): Buffer {
  return new SshWriter()
    .raw(createHash("sha256").update(application, "latin1").digest())
    .byte(flags)
    .uint32(counter)
    .raw(createHash("sha256").update(message).digest())
    .toBuffer();
}
