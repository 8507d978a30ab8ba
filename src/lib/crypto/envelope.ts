import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/**
 * A sealed value that the configured keys cannot open. Says which key id sealed it and what to do:
 * an operator who replaced ENCRYPTION_KEYS instead of adding to it sees this, not a GCM stack trace.
 */
export class SealedValueError extends Error {
  override name = "SealedValueError";
  constructor(
    readonly keyId: string | null,
    readonly reason: "unknown_key" | "wrong_key" | "malformed",
    configured: readonly string[],
  ) {
    super(
      reason === "malformed"
        ? "A sealed value has an unknown format (not v1.<key id>.<iv>.<data>)."
        : reason === "unknown_key"
          ? `Data sealed under encryption key "${keyId}" cannot be opened: ENCRYPTION_KEYS lists ${configured.map((k) => `"${k}"`).join(", ")} but not "${keyId}". ` +
            `Keep the old key after the new one (ENCRYPTION_KEYS=<new id>:<new key>,${keyId}:<old key>) until everything is re-sealed under the new key.`
          : `Data sealed under encryption key "${keyId}" cannot be opened with the key ENCRYPTION_KEYS now gives that id: its bytes changed (or the data was altered). ` +
            `Restore the original "${keyId}" value; to rotate, add a key with a new id in front (ENCRYPTION_KEYS=<new id>:<new key>,${keyId}:<old key>).`,
    );
  }
}

export interface SecretBox {
  /** The id of the key new values are sealed under (the first configured). */
  readonly currentKeyId: string;
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
  const ids = keys.map((k) => k.id);

  const decrypt = (sealed: string, context = ""): Buffer => {
    const [version, keyId, ivB64, dataB64] = sealed.split(".");
    if (version !== "v1" || !keyId || !ivB64 || !dataB64) throw new SealedValueError(null, "malformed", ids);
    const key = byId.get(keyId);
    if (!key) throw new SealedValueError(keyId, "unknown_key", ids);
    const data = Buffer.from(dataB64, "base64url");
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(ivB64, "base64url"));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(data.subarray(data.length - 16));
      return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]);
    } catch {
      throw new SealedValueError(keyId, "wrong_key", ids);
    }
  };

  return {
    currentKeyId: current.id,
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
