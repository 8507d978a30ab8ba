import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

export interface SecretBox {
  /** AES-256-GCM under the current key: "v1.<keyId>.<iv>.<ciphertext+tag>" (base64url parts). */
  encrypt(plaintext: string | Buffer, context?: string): string;
  decrypt(sealed: string, context?: string): Buffer;
  decryptString(sealed: string, context?: string): string;
  /** True when the value was sealed under an older key and should be re-encrypted. */
  isStale(sealed: string): boolean;
}

/**
 * Secrets at rest (CA private keys, TOTP seeds, client secrets, outbox payloads). The first key
 * encrypts; every listed key decrypts, so the master key can rotate. `context` is bound as
 * additional authenticated data so a ciphertext cannot be moved to another row or purpose.
 */
export function createSecretBox(keys: readonly EncryptionKey[]): SecretBox {
  const current = keys[0];
  if (!current) throw new Error("createSecretBox needs at least one key");
  const byId = new Map(keys.map((k) => [k.id, k.key]));

  const decrypt = (sealed: string, context = ""): Buffer => {
    const [version, keyId, ivB64, dataB64] = sealed.split(".");
    const key = keyId ? byId.get(keyId) : undefined;
    if (version !== "v1" || !key || !ivB64 || !dataB64) throw new Error("sealed value has an unknown format or key");
    const data = Buffer.from(dataB64, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(ivB64, "base64url"));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]);
  };

  return {
    encrypt(plaintext, context = "") {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", current.key, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
      return ["v1", current.id, iv.toString("base64url"), body.toString("base64url")].join(".");
    },
    decrypt,
    decryptString: (sealed, context) => decrypt(sealed, context).toString("utf8"),
    isStale: (sealed) => sealed.split(".")[1] !== current.id,
  };
}
