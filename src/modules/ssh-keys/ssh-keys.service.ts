import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { randomHex } from "../../lib/crypto/index.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parsePublicKey, SK_USER_PRESENCE, SK_USER_VERIFICATION, SshKeyError, verifySshSignatureDetails } from "../../lib/ssh/index.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { SshKeyErrors } from "./ssh-keys.errors.js";
import { sshKeysRepository, type SshKeyRow } from "./ssh-keys.repository.js";
import { addKeySchema, describeKeySchema, verifyKeySchema, type AddKeyInput, type DescribeKeyInput, type VerifyKeyInput } from "./ssh-keys.schemas.js";
import { requireUser } from "../access/index.js";

export interface SshKeyView {
  id: string;
  userId: string;
  fingerprint: string;
  keyType: string;
  /** A FIDO2 security key (sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com): its private half never leaves the device. */
  hardwareBacked: boolean;
  /** A security key whose proof of possession showed a touch (user presence); null: not a security key, or not proved yet. */
  skUserPresence: boolean | null;
  /** A security key whose proof of possession showed a PIN or biometric check (user verification); null as above. */
  skUserVerification: boolean | null;
  keyBits: number;
  keyComment: string | null;
  description: string | null;
  publicKey: string;
  verified: boolean;
  verifiedAt: Date | null;
  verifyTextCreatedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const toSshKeyView = (k: SshKeyRow): SshKeyView => ({
  id: k.id,
  userId: k.userId,
  fingerprint: k.fingerprint,
  keyType: k.keyType,
  hardwareBacked: k.keyType.startsWith("sk-"),
  skUserPresence: k.skProofFlags === null ? null : (k.skProofFlags & SK_USER_PRESENCE) !== 0,
  skUserVerification: k.skProofFlags === null ? null : (k.skProofFlags & SK_USER_VERIFICATION) !== 0,
  keyBits: k.keyBits,
  keyComment: k.keyComment,
  description: k.description,
  publicKey: k.publicKey,
  verified: k.verifiedAt !== null,
  verifiedAt: k.verifiedAt,
  verifyTextCreatedAt: k.verifyTextCreatedAt,
  createdAt: k.createdAt,
  updatedAt: k.updatedAt,
});

const CHALLENGE_PREFIX = "Please sign this to verify SSH key ownership: ";

/** Users' SSH public keys and their proof of possession. */
export class SshKeysService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly config: { verifyChallengeTtl: number },
  ) {}

  /**
   * Registers a key. Idempotent per user: the same fingerprint again returns the existing key with
   * `isNew: false` (HTTP 200, not 409). Another user may register the same key.
   */
  async add(ctx: RequestContext, input: AddKeyInput): Promise<{ key: SshKeyView; isNew: boolean }> {
    const actor = requireUser(ctx);
    const data = parseInput(addKeySchema, input);
    let parsed;
    try {
      parsed = parsePublicKey(data.publicKey ?? data.key ?? "");
    } catch (e) {
      if (e instanceof SshKeyError) {
        await this.audit.record(this.db, ctx, AuditAction.sshKeyRejected, { success: false, metadata: { reason: e.message } });
        throw SshKeyErrors.invalid(e.code, e.message);
      }
      throw e;
    }
    const existing = await sshKeysRepository.findByFingerprint(this.db, actor.userId, parsed.fingerprint);
    if (existing) return { key: toSshKeyView(existing), isNew: false };
    const added = await this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const row = await sshKeysRepository.insertIfAbsent(tx, {
        userId: actor.userId,
        publicKey: parsed.line,
        fingerprint: parsed.fingerprint,
        keyType: parsed.type,
        keyBits: parsed.bits,
        keyComment: parsed.comment,
        description: data.description ?? parsed.comment,
        createdAt: now,
        updatedAt: now,
      });
      if (row) await this.audit.record(tx, ctx, AuditAction.sshKeyAdded, { resourceType: "ssh_key", resourceId: row.id, metadata: { fingerprint: parsed.fingerprint, key_type: parsed.type } });
      return row;
    });
    if (added) return { key: toSshKeyView(added), isNew: true };
    // The same key added twice at once: the later one answers like a repeat add.
    const row = await sshKeysRepository.findByFingerprint(this.db, actor.userId, parsed.fingerprint);
    if (!row) throw new Error("ssh key vanished after a concurrent add");
    return { key: toSshKeyView(row), isNew: false };
  }

  async list(ctx: RequestContext): Promise<SshKeyView[]> {
    const actor = requireUser(ctx);
    return (await sshKeysRepository.listForUser(this.db, actor.userId)).map(toSshKeyView);
  }

  async get(ctx: RequestContext, keyId: string): Promise<SshKeyView> {
    return toSshKeyView(await this.owned(ctx, keyId));
  }

  async updateDescription(ctx: RequestContext, keyId: string, input: DescribeKeyInput): Promise<SshKeyView> {
    const actor = requireUser(ctx);
    const { description } = parseInput(describeKeySchema, input);
    const id = parseId(keyId, SshKeyErrors.notFound);
    const row = await sshKeysRepository.update(this.db, actor.userId, id, { description, updatedAt: this.clock.now() });
    if (!row) throw SshKeyErrors.notFound();
    return toSshKeyView(row);
  }

  async delete(ctx: RequestContext, keyId: string): Promise<void> {
    const actor = requireUser(ctx);
    const id = parseId(keyId, SshKeyErrors.notFound);
    await this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const row = await sshKeysRepository.update(tx, actor.userId, id, { deletedAt: now, updatedAt: now });
      if (!row) throw SshKeyErrors.notFound();
      await this.audit.record(tx, ctx, AuditAction.sshKeyDeleted, { resourceType: "ssh_key", resourceId: id, metadata: { fingerprint: row.fingerprint } });
    });
  }

  /** Issues a fresh challenge to sign with `ssh-keygen -Y sign -n file`. */
  async challenge(ctx: RequestContext, keyId: string): Promise<{ challengeText: string; validationText: string; keyId: string }> {
    const actor = requireUser(ctx);
    const key = await this.owned(ctx, keyId);
    const text = `${CHALLENGE_PREFIX}${randomHex(32)}`;
    await sshKeysRepository.update(this.db, actor.userId, key.id, { verifyText: text, verifyTextCreatedAt: this.clock.now() });
    return { challengeText: text, validationText: text, keyId: key.id };
  }

  /** Checks the signature over the current challenge; success marks the key verified. */
  async verify(ctx: RequestContext, keyId: string, input: VerifyKeyInput): Promise<{ verified: boolean; key: SshKeyView }> {
    const actor = requireUser(ctx);
    const { signature } = parseInput(verifyKeySchema, input);
    const key = await this.owned(ctx, keyId);
    const now = this.clock.now();
    const fresh = key.verifyText && key.verifyTextCreatedAt && now.getTime() - key.verifyTextCreatedAt.getTime() < this.config.verifyChallengeTtl * 1000;
    if (!fresh) throw SshKeyErrors.noChallenge();
    const blob = Buffer.from(key.publicKey.split(" ")[1] ?? "", "base64");
    // The CLI signs the challenge as a file with a trailing newline; accept it with or without. A
    // security key's signature also says whether the authenticator saw a touch and a PIN/biometric:
    // kept with the proof, for the department policy (require_touch, require_verify).
    const ok = [`${key.verifyText}\n`, key.verifyText!].map((m) => verifySshSignatureDetails(signature, Buffer.from(m), blob, "file")).find((d) => d !== null);
    if (!ok) {
      await this.audit.record(this.db, ctx, AuditAction.sshKeyVerifyFailed, { success: false, resourceType: "ssh_key", resourceId: key.id });
      throw SshKeyErrors.verificationFailed();
    }
    return this.db.transaction(async (tx) => {
      // The challenge is single-use: of two answers at once, or an answer racing a new challenge
      // or the key's deletion, only one spends it.
      const skFlags = ok.sk?.flags ?? null;
      const row = await sshKeysRepository.spendChallenge(tx, actor.userId, key.id, key.verifyText!, skFlags, now);
      if (!row) throw SshKeyErrors.noChallenge();
      const metadata = { fingerprint: key.fingerprint, ...(ok.sk ? { key_type: key.keyType, sk_flags: ok.sk.flags, sk_counter: ok.sk.counter } : {}) };
      await this.audit.record(tx, ctx, AuditAction.sshKeyVerified, { resourceType: "ssh_key", resourceId: key.id, metadata });
      return { verified: true, key: toSshKeyView(row) };
    });
  }

  private async owned(ctx: RequestContext, keyId: string): Promise<SshKeyRow> {
    const actor = requireUser(ctx);
    const row = await sshKeysRepository.findOwned(this.db, actor.userId, parseId(keyId, SshKeyErrors.notFound));
    if (!row) throw SshKeyErrors.notFound();
    return row;
  }
}
