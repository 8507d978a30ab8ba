import { createECDH, createHash, createPrivateKey, sign, type KeyObject } from "node:crypto";
import { SK_USER_PRESENCE } from "../../src/lib/ssh/index.js";
import { SshWriter } from "../../src/lib/ssh/wire.js";

/**
 * A software FIDO2 authenticator for tests: CI has no security key, and `ssh-keygen -Y sign` on an
 * sk key needs one. It holds an ordinary Ed25519 or P-256 private key, presents its public half as
 * an `sk-` key with a FIDO application, and signs exactly what an authenticator signs
 * (SHA256(application) ‖ flags ‖ counter ‖ SHA256(message), PROTOCOL.u2f) into the blob ssh-keygen
 * would send. The flags are whatever the test says, so a test can also forge what a key made with
 * `-O no-touch-required` or `-O verify-required` sends. `ssh-keygen -Y check-novalidate` accepts its
 * signatures (test/unit/ssh-sk.test.ts), so the server's verifier is exercised on real bytes.
 */
export interface SoftSkKey {
  kind: "ed25519" | "ecdsa";
  application: string;
  privateKey: KeyObject;
  /** The sk public key blob. */
  blob: Buffer;
  /** `<algorithm> <base64> <comment>`, as the .pub file reads. */
  line: string;
}

const PKCS8_ED25519 = Buffer.from("302e020100300506032b657004220420", "hex");

/** A deterministic sk key from a seed string (the fixed test keys are made from fixed seeds). */
export function softSkKey(kind: "ed25519" | "ecdsa", seed: string, application = "ssh:", comment = "sk-test"): SoftSkKey {
  const secret = createHash("sha256").update(seed).digest();
  let privateKey: KeyObject;
  let blob: Buffer;
  if (kind === "ed25519") {
    privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, secret]), format: "der", type: "pkcs8" });
    const pub = Buffer.from((privateKey.export({ format: "jwk" }) as { x: string }).x, "base64url");
    blob = new SshWriter().string("sk-ssh-ed25519@openssh.com").string(pub).string(application).toBuffer();
  } else {
    const ecdh = createECDH("prime256v1");
    ecdh.setPrivateKey(secret);
    const q = ecdh.getPublicKey();
    const b64 = (b: Buffer) => b.toString("base64url");
    privateKey = createPrivateKey({ key: { kty: "EC", crv: "P-256", d: b64(secret), x: b64(q.subarray(1, 33)), y: b64(q.subarray(33)) }, format: "jwk" });
    blob = new SshWriter().string("sk-ecdsa-sha2-nistp256@openssh.com").string("nistp256").string(q).string(application).toBuffer();
  }
  const algorithm = kind === "ed25519" ? "sk-ssh-ed25519@openssh.com" : "sk-ecdsa-sha2-nistp256@openssh.com";
  return { kind, application, privateKey, blob, line: `${algorithm} ${blob.toString("base64")} ${comment}` };
}

export interface SkSignOptions {
  flags?: number;
  counter?: number;
  /** Sign as if the key's application were this one (a key enrolled for another site). */
  application?: string;
}

/** The SSH signature blob an authenticator returns for `data`. */
export function skSignatureBlob(key: SoftSkKey, data: Buffer, o: SkSignOptions = {}): Buffer {
  const flags = o.flags ?? SK_USER_PRESENCE;
  const counter = o.counter ?? 1;
  const signed = new SshWriter()
    .raw(createHash("sha256").update(o.application ?? key.application).digest())
    .byte(flags)
    .uint32(counter)
    .raw(createHash("sha256").update(data).digest())
    .toBuffer();
  const algorithm = key.kind === "ed25519" ? "sk-ssh-ed25519@openssh.com" : "sk-ecdsa-sha2-nistp256@openssh.com";
  let sig: Buffer;
  if (key.kind === "ed25519") sig = sign(null, signed, key.privateKey);
  else {
    const p1363 = sign("sha256", signed, { key: key.privateKey, dsaEncoding: "ieee-p1363" });
    sig = new SshWriter().mpint(p1363.subarray(0, 32)).mpint(p1363.subarray(32)).toBuffer();
  }
  return new SshWriter().string(algorithm).string(sig).byte(flags).uint32(counter).toBuffer();
}

/** What `ssh-keygen -Y sign -n <namespace>` writes for `message` with this key (armored SSHSIG). */
export function skSshsig(key: SoftSkKey, message: Buffer, o: SkSignOptions & { namespace?: string } = {}): string {
  const namespace = o.namespace ?? "file";
  const signed = new SshWriter()
    .raw("SSHSIG")
    .string(namespace)
    .string(Buffer.alloc(0))
    .string("sha512")
    .string(createHash("sha512").update(message).digest())
    .toBuffer();
  const blob = new SshWriter()
    .raw("SSHSIG")
    .uint32(1)
    .string(key.blob)
    .string(namespace)
    .string(Buffer.alloc(0))
    .string("sha512")
    .string(skSignatureBlob(key, signed, o))
    .toBuffer();
  const b64 = blob.toString("base64").replace(/.{1,70}/g, "$&\n");
  return `-----BEGIN SSH SIGNATURE-----\n${b64}-----END SSH SIGNATURE-----\n`;
}
