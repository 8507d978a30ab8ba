import { createHash } from "node:crypto";
import { verifySkSsh, verifySsh } from "./signature.js";
import { isSkAlgorithm, type SkSignatureDetails } from "./sk.js";
import { SshReader, SshWriter } from "./wire.js";

const MAGIC = Buffer.from("SSHSIG");
const ARMOR = /-----BEGIN SSH SIGNATURE-----([\s\S]*?)-----END SSH SIGNATURE-----/;

/** The SSHSIG blob from an armored signature, or from base64 of the armored text or of the blob. */
function decode(input: string): Buffer {
  let text = input.trim();
  if (!ARMOR.test(text)) {
    const decoded = Buffer.from(text.replace(/\s+/g, ""), "base64");
    if (decoded.subarray(0, 6).equals(MAGIC)) return decoded;
    text = decoded.toString("utf8");
  }
  const body = ARMOR.exec(text)?.[1];
  if (!body) throw new Error("not an SSH signature");
  return Buffer.from(body.replace(/\s+/g, ""), "base64");
}

/**
 * Verifies an `ssh-keygen -Y sign` signature (PROTOCOL.sshsig) over `message`, in-process: the
 * signature must come from `publicBlob`, in namespace `namespace`, with sha256 or sha512.
 */
export function verifySshSignature(input: string, message: Buffer, publicBlob: Buffer, namespace: string): boolean {
  return verifySshSignatureDetails(input, message, publicBlob, namespace) !== null;
}

/**
 * The same check, saying what a security key signed with: its flags (touch, PIN/biometric) and
 * counter (`sk`, null for other keys), or null when the signature does not verify.
 */
export function verifySshSignatureDetails(input: string, message: Buffer, publicBlob: Buffer, namespace: string): { sk: SkSignatureDetails | null } | null {
  try {
    const r = new SshReader(decode(input));
    if (!r.raw(6).equals(MAGIC)) return null;
    if (r.uint32() > 1) return null;
    const signer = r.string();
    const ns = r.text();
    r.string(); // reserved
    const hashAlg = r.text();
    const signature = r.string();
    if (!r.done || ns !== namespace || !signer.equals(publicBlob)) return null;
    if (hashAlg !== "sha256" && hashAlg !== "sha512") return null;
    const signed = new SshWriter()
      .raw(MAGIC)
      .string(namespace)
      .string(Buffer.alloc(0))
      .string(hashAlg)
      .string(createHash(hashAlg).update(message).digest())
      .toBuffer();
    if (isSkAlgorithm(new SshReader(publicBlob).text())) {
      const sk = verifySkSsh(publicBlob, signed, signature);
      return sk ? { sk } : null;
    }
    return verifySsh(publicBlob, signed, signature) ? { sk: null } : null;
  } catch {
    return null;
  }
}
