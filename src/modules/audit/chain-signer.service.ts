import type { Clock } from "../../infra/clock.js";
import type { Executor } from "../../infra/db.js";
import { ed25519PublicOf, generateEd25519, sealContexts, signEd25519, verifyEd25519, type SecretBox } from "../../lib/crypto/index.js";
import { auditKeysRepository } from "./audit-keys.repository.js";
import { auditKeysSecretsRepository } from "./audit-keys.secrets.repository.js";
import { anchorMessage, type Anchor } from "./chain-hash.js";

interface SigningKey {
  kid: string;
  publicKey: string;
  privateKey: string;
}

/**
 * Signs chain anchors with an Ed25519 key whose private half is sealed under ENCRYPTION_KEYS. A
 * key is trusted only when its sealed private half opens under this installation's master key and
 * matches the stored public key: someone who can write to the database but lacks the master key
 * can neither sign a rewritten chain nor slip in a key of their own.
 */
export class ChainSigner {
  private current?: SigningKey;

  constructor(
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  /** Called under the chain lock: the first signature creates the key. */
  async sign(db: Executor, a: Pick<Anchor, "chain" | "kind" | "seq" | "hash">): Promise<Anchor> {
    const key = this.current ?? (await this.loadOrCreate(db));
    const signedAt = this.clock.now();
    return { ...a, signedAt, keyId: key.kid, signature: signEd25519(key.privateKey, anchorMessage({ ...a, signedAt })) };
  }

  /** After a rolled-back transaction: the key it read or created may not exist. */
  forget(): void {
    this.current = undefined;
  }

  /** A checker for one verification run (keys opened once each). Resolves to what is wrong, or null. */
  verifier(db: Executor): (a: Anchor) => Promise<string | null> {
    const keys = new Map<string, Promise<SigningKey | null>>();
    return async (a) => {
      if (!keys.has(a.keyId)) keys.set(a.keyId, this.open(db, a.keyId));
      const key = await keys.get(a.keyId)!;
      if (!key) return `signed with key ${a.keyId}, which is unknown or not sealed under this installation's encryption keys`;
      return verifyEd25519(key.publicKey, anchorMessage(a), a.signature) ? null : `the ${a.kind} signature does not match (seq ${a.seq}, hash ${a.hash})`;
    };
  }

  /** The public key that verifies a key id's signatures (for exports and outside verifiers). */
  async publicKey(db: Executor, kid: string): Promise<string | null> {
    return (await this.open(db, kid))?.publicKey ?? null;
  }

  private async open(db: Executor, kid: string): Promise<SigningKey | null> {
    const row = await auditKeysSecretsRepository.findPrivileged(db, kid);
    if (!row) return null;
    try {
      const privateKey = this.box.decryptString(row.sealed, sealContexts.auditSigningKey(row.kid));
      return ed25519PublicOf(privateKey) === row.publicKey ? { kid: row.kid, publicKey: row.publicKey, privateKey } : null;
    } catch {
      return null;
    }
  }

  private async loadOrCreate(db: Executor): Promise<SigningKey> {
    const row = await auditKeysSecretsRepository.newestPrivileged(db);
    // Kept only once read back: a key created in a transaction that rolled back must not sign again.
    if (row) return (this.current = { kid: row.kid, publicKey: row.publicKey, privateKey: this.box.decryptString(row.sealed, sealContexts.auditSigningKey(row.kid)) });
    const fresh = generateEd25519();
    await auditKeysRepository.insert(db, { kid: fresh.kid, publicKey: fresh.publicKeyPem, sealed: this.box.encrypt(fresh.privateKeyPem, sealContexts.auditSigningKey(fresh.kid)), now: this.clock.now() });
    return { kid: fresh.kid, publicKey: fresh.publicKeyPem, privateKey: fresh.privateKeyPem };
  }
}
