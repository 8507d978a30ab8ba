import QRCode from "qrcode";
import { z } from "zod";
import type { Clock } from "../../../infra/clock.js";
import type { Db, Executor } from "../../../infra/db.js";
import type { KeyValueStore } from "../../../infra/kv.js";
import { generateTotpSecret, hmacSha256Hex, matchTotp, randomHex, totpUri, type SecretBox, sealContexts } from "../../../lib/crypto/index.js";
import type { RequestContext } from "../../../lib/request-context.js";
import { parseId, parseInput } from "../../../lib/validation.js";
import { AuditAction, type AuditService } from "../../audit/index.js";
import { userAccounts } from "../../users/index.js";
import { AuthErrors } from "../auth.errors.js";
import type { CredentialsService } from "../credentials.service.js";
import { registrationOptions, verifyRegistration, WebAuthnError, type RelyingParty } from "../webauthn/webauthn.js";
import { MfaErrors } from "./mfa.errors.js";
import { mfaSecretsRepository } from "./mfa.secrets.repository.js";
import { mfaRepository, type CredentialView } from "./mfa.repository.js";
import { WebAuthnChallenges } from "./webauthn-challenges.js";
import { requirePersonalUser } from "../../access/index.js";

export const BACKUP_CODE_COUNT = 10;
const TOTP_CONTEXT = sealContexts.totp;

export const completeRegistrationSchema = z.object({
  challengeId: z.string().min(1).max(128),
  response: z.record(z.string(), z.unknown()),
  name: z.string().trim().min(1).max(255).optional(),
});
export type CompleteRegistrationInput = z.input<typeof completeRegistrationSchema>;
export const renameSchema = z.object({ name: z.string().trim().min(1).max(255) });
export type RenameInput = z.input<typeof renameSchema>;
export const codeSchema = z.object({ code: z.string().trim().min(1).max(64) });
export type CodeInput = z.input<typeof codeSchema>;
export const passwordSchema = z.object({ password: z.string().max(1024).optional() });
export type PasswordInput = z.input<typeof passwordSchema>;

export interface MfaHooks {
  /** Called inside the enrolling transaction: organizations' MFA compliance follows enrollment. */
  enrolled(tx: Executor, userId: string): Promise<void>;
  removed(tx: Executor, userId: string): Promise<void>;
}

export interface MfaDeps {
  db: Db;
  clock: Clock;
  kv: KeyValueStore;
  box: SecretBox;
  credentials: CredentialsService;
  audit: AuditService;
  rp: RelyingParty;
  totpIssuer: string;
  /** Keys for the backup codes' keyed hashes, current first (derived from the master encryption keys). */
  backupCodeKeys: BackupCodeKey[];
  hooks: MfaHooks;
}

/** What a removal takes: one WebAuthn credential, all of them, the authenticator app, or everything with the backup codes. */
export interface MfaRemoval {
  method: "webauthn" | "totp" | "all";
  /** With "webauthn": only this credential. */
  credentialId?: string;
}

export interface BackupCodeKey {
  id: string;
  key: Buffer;
}

/**
 * A backup code's stored form, "<key id>:<HMAC-SHA256>", for each key (current first): codes
 * hashed under an older master key still verify after a rotation. "ABCD-1234 ef56 7890" and
 * "abcd1234ef567890" are the same code.
 */
export const hashBackupCode = (keys: BackupCodeKey[], code: string): string[] =>
  keys.map((k) => `${k.id}:${hmacSha256Hex(k.key, code.replace(/[\s-]/g, "").toLowerCase())}`);

/** Enrolling and managing the signed-in user's second factors. */
export class MfaService {
  private readonly challenges: WebAuthnChallenges;

  constructor(private readonly deps: MfaDeps) {
    this.challenges = new WebAuthnChallenges(deps.kv, deps.clock, "reg");
  }

  // --- WebAuthn ------------------------------------------------------------------------------

  async beginWebauthnRegistration(ctx: RequestContext) {
    const { db, rp } = this.deps;
    const actor = requirePersonalUser(ctx);
    const user = await userAccounts.find(db, actor.userId);
    if (!user) throw AuthErrors.invalidLink();
    const existing = await mfaSecretsRepository.credentialsForAuth(db, user.id);
    const options = await registrationOptions(rp, { id: user.id, email: user.email, displayName: user.fullName ?? user.email }, existing);
    // Single-use and short-lived: the completion takes it.
    const challengeId = await this.challenges.issue(options.challenge, user.id);
    return { challengeId, options };
  }

  async completeWebauthnRegistration(ctx: RequestContext, input: CompleteRegistrationInput): Promise<{ credential: CredentialView; backupCodes: string[] | null }> {
    const { db, clock, audit, rp, hooks } = this.deps;
    const actor = requirePersonalUser(ctx);
    const data = parseInput(completeRegistrationSchema, input);
    const challenge = await this.challenges.take(data.challengeId);
    // Another user's challenge is as good as none.
    if (!challenge || challenge.userId !== actor.userId) throw MfaErrors.challengeExpired();
    let verified;
    try {
      verified = await verifyRegistration(rp, data.response, challenge.challenge);
    } catch (e) {
      await audit.record(db, ctx, AuditAction.webauthnRegisterFailed, { success: false, errorMessage: (e as Error).message });
      if (e instanceof WebAuthnError) throw MfaErrors.registrationFailed(e.message);
      throw e;
    }
    return db.transaction(async (tx) => {
      const now = clock.now();
      const credential = await mfaRepository.insertCredential(tx, {
        userId: actor.userId,
        credentialId: verified.credentialId,
        publicKey: verified.publicKey,
        counter: verified.counter,
        transports: verified.transports,
        deviceType: verified.deviceType,
        backedUp: verified.backedUp,
        aaguid: verified.aaguid,
        name: data.name ?? (verified.deviceType === "multiDevice" ? "Passkey" : "Security key"),
        createdAt: now,
      });
      const backupCodes = await this.issueBackupCodesIfNone(tx, actor.userId, now);
      await hooks.enrolled(tx, actor.userId);
      await audit.record(tx, ctx, AuditAction.webauthnRegistered, { resourceType: "webauthn_credential", resourceId: credential.id, metadata: { device_type: verified.deviceType } });
      return { credential, backupCodes };
    });
  }

  listCredentials(ctx: RequestContext): Promise<CredentialView[]> {
    return mfaRepository.listCredentials(this.deps.db, requirePersonalUser(ctx).userId);
  }

  async renameCredential(ctx: RequestContext, id: string, input: RenameInput): Promise<CredentialView> {
    const actor = requirePersonalUser(ctx);
    const { name } = parseInput(renameSchema, input);
    const row = await mfaRepository.renameCredential(this.deps.db, actor.userId, parseId(id, MfaErrors.credentialNotFound), name);
    if (!row) throw MfaErrors.credentialNotFound();
    await this.deps.audit.record(this.deps.db, ctx, AuditAction.webauthnRenamed, { resourceType: "webauthn_credential", resourceId: row.id });
    return row;
  }

  async deleteCredential(ctx: RequestContext, id: string): Promise<void> {
    const { db, audit } = this.deps;
    const actor = requirePersonalUser(ctx);
    const credentialId = parseId(id, MfaErrors.credentialNotFound);
    await db.transaction(async (tx) => {
      if (!(await this.removeMethods(tx, actor.userId, { method: "webauthn", credentialId }))) throw MfaErrors.credentialNotFound();
      await audit.record(tx, ctx, AuditAction.webauthnDeleted, { resourceType: "webauthn_credential", resourceId: credentialId });
    });
  }

  /** Whether the account has an authenticator app on (its profile says so). */
  async totpEnabled(userId: string): Promise<boolean> {
    return (await mfaRepository.methods(this.deps.db, userId)).totp;
  }

  /** An account's enrolled methods, without any secret (for its administrators too). */
  async methodsOf(userId: string) {
    const { db } = this.deps;
    const m = await mfaRepository.methods(db, userId);
    return { webauthn: await mfaRepository.listCredentials(db, userId), totpEnabled: m.totp, backupCodesRemaining: m.backupCodes };
  }

  /**
   * THE removal of second factors, for the owner (self-service) and for an administrator within
   * reach alike, in the caller's transaction; organizations' MFA compliance follows. Returns what
   * went, in words for the owner's email, or null when there was nothing of that kind to remove.
   */
  async removeMethods(tx: Executor, userId: string, removal: MfaRemoval): Promise<string | null> {
    const now = this.deps.clock.now();
    let removed: string;
    if (removal.method === "webauthn" && removal.credentialId) {
      if (!(await mfaRepository.deleteCredential(tx, userId, removal.credentialId, now))) return null;
      removed = "one passkey or security key";
    } else {
      const webauthn = removal.method !== "totp" ? await mfaRepository.deleteAllCredentials(tx, userId, now) : 0;
      const totp = removal.method !== "webauthn" ? await mfaRepository.deleteTotp(tx, userId) : false;
      if (removal.method === "all") await mfaRepository.replaceBackupCodes(tx, userId, [], now);
      else if (webauthn === 0 && !totp) return null;
      removed = removal.method === "all" ? "every method and the backup codes" : removal.method === "totp" ? "the authenticator app" : "every passkey and security key";
    }
    await this.deps.hooks.removed(tx, userId);
    return removed;
  }

  async status(ctx: RequestContext) {
    const actor = requirePersonalUser(ctx);
    const m = await mfaRepository.methods(this.deps.db, actor.userId);
    const totp = await mfaSecretsRepository.totp(this.deps.db, actor.userId);
    return {
      mfaEnabled: m.webauthn > 0 || m.totp,
      webauthnEnabled: m.webauthn > 0,
      credentialCount: m.webauthn,
      totpEnabled: m.totp,
      totpVerifiedAt: totp?.verifiedAt ?? null,
      backupCodesRemaining: m.backupCodes,
    };
  }

  // --- TOTP ----------------------------------------------------------------------------------

  /** Starts enrollment: a new seed (sealed at rest) and its provisioning URI and QR code. */
  async enrollTotp(ctx: RequestContext) {
    const { db, clock, box, audit, totpIssuer } = this.deps;
    const actor = requirePersonalUser(ctx);
    const current = await mfaSecretsRepository.totp(db, actor.userId);
    if (current?.verifiedAt) throw MfaErrors.totpAlreadyEnabled();
    const secret = generateTotpSecret();
    await mfaRepository.upsertPendingTotp(db, actor.userId, box.encrypt(secret, TOTP_CONTEXT(actor.userId)), clock.now());
    await audit.record(db, ctx, AuditAction.totpEnrollStarted);
    const provisioningUri = totpUri(secret, actor.email, totpIssuer);
    return { secret, provisioningUri, qrCode: await QRCode.toDataURL(provisioningUri, { margin: 1, width: 220 }) };
  }

  /** Confirms enrollment with a first code; backup codes come with the first MFA method. */
  async verifyTotpEnrollment(ctx: RequestContext, input: CodeInput): Promise<{ enabled: true; backupCodes: string[] | null }> {
    const { db, clock, box, audit, hooks } = this.deps;
    const actor = requirePersonalUser(ctx);
    const { code } = parseInput(codeSchema, input);
    const pending = await mfaSecretsRepository.totp(db, actor.userId);
    if (!pending) throw MfaErrors.totpNotPending();
    if (pending.verifiedAt) throw MfaErrors.totpAlreadyEnabled();
    const now = clock.now();
    const step = matchTotp(box.decryptString(pending.secretSealed, TOTP_CONTEXT(actor.userId)), code, now);
    if (step === null) throw MfaErrors.invalidCode();
    return db.transaction(async (tx) => {
      if (!(await mfaRepository.useTotpStep(tx, actor.userId, step, now))) throw MfaErrors.invalidCode();
      const backupCodes = await this.issueBackupCodesIfNone(tx, actor.userId, now);
      await hooks.enrolled(tx, actor.userId);
      await audit.record(tx, ctx, AuditAction.totpEnrolled);
      return { enabled: true as const, backupCodes };
    });
  }

  /** Removes the authenticator app; re-authentication with the password when the account has one. */
  async disableTotp(ctx: RequestContext, input: PasswordInput): Promise<void> {
    const { db, audit, credentials } = this.deps;
    const actor = requirePersonalUser(ctx);
    const { password } = parseInput(passwordSchema, input ?? {});
    await credentials.confirmCurrentPassword(ctx, actor, password, "pass");
    await db.transaction(async (tx) => {
      if (!(await this.removeMethods(tx, actor.userId, { method: "totp" }))) throw MfaErrors.totpNotEnabled();
      await audit.record(tx, ctx, AuditAction.totpDisabled);
    });
  }

  /** New backup codes (the old ones stop working), with the current password. */
  async regenerateBackupCodes(ctx: RequestContext, input: PasswordInput): Promise<{ backupCodes: string[] }> {
    const { db, clock, audit, credentials } = this.deps;
    const actor = requirePersonalUser(ctx);
    const { password } = parseInput(passwordSchema, input ?? {});
    await credentials.confirmCurrentPassword(ctx, actor, password, "pass");
    const m = await mfaRepository.methods(db, actor.userId);
    if (m.webauthn === 0 && !m.totp) throw MfaErrors.methodNotAvailable("Multi-factor authentication");
    return db.transaction(async (tx) => {
      const codes = await this.writeBackupCodes(tx, actor.userId, clock.now());
      await audit.record(tx, ctx, AuditAction.backupCodesRegenerated);
      return { backupCodes: codes };
    });
  }

  private async issueBackupCodesIfNone(tx: Executor, userId: string, now: Date): Promise<string[] | null> {
    const m = await mfaRepository.methods(tx, userId);
    return m.backupCodes > 0 ? null : this.writeBackupCodes(tx, userId, now);
  }

  /** 10 codes of 16 hex characters (64 bits each), shown once; only their keyed hashes are kept. */
  private async writeBackupCodes(tx: Executor, userId: string, now: Date): Promise<string[]> {
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, () => randomHex(8));
    await mfaRepository.replaceBackupCodes(tx, userId, codes.map((c) => hashBackupCode(this.deps.backupCodeKeys, c)[0]!), now);
    return codes;
  }
}
