import { z } from "zod";
import type { Clock } from "../../../infra/clock.js";
import type { Db } from "../../../infra/db.js";
import type { KeyValueStore } from "../../../infra/kv.js";
import { matchTotp, type SecretBox, sealContexts } from "../../../lib/crypto/index.js";
import type { RequestContext } from "../../../lib/request-context.js";
import { parseInput } from "../../../lib/validation.js";
import { AuditAction, type AuditService } from "../../audit/index.js";
import type { RateLimitService, RateRule } from "../../rate-limit/index.js";
import { userAccounts, type UserRow } from "../../users/index.js";
import { AuthErrors } from "../auth.errors.js";
import { issueLinkedSession, ssoGate, type SsoLinkCarried, type SsoLinkPort, type SsoRequirementPort } from "../login.service.js";
import type { SessionIssued, SessionIssuer } from "../session-issuer.js";
import { assertionIdentity, authenticationOptions, verifyAuthentication, WebAuthnError, type RelyingParty } from "../webauthn/webauthn.js";
import { MfaErrors } from "./mfa.errors.js";
import { mfaSecretsRepository } from "./mfa.secrets.repository.js";
import { mfaRepository } from "./mfa.repository.js";
import { hashBackupCode, type BackupCodeKey } from "./mfa.service.js";
import type { PendingLogin, PendingLoginStore } from "./pending-login.js";
import { WebAuthnChallenges } from "./webauthn-challenges.js";

export const mfaTokenSchema = z.object({ mfaToken: z.string().min(1).max(128) });
export type TokenInput = z.input<typeof mfaTokenSchema>;
export const mfaLoginCodeSchema = mfaTokenSchema.extend({ code: z.string().trim().min(1).max(64), isBackupCode: z.boolean().optional() });
export type CodeInput = z.input<typeof mfaLoginCodeSchema>;
export const assertionSchema = z.object({
  challengeId: z.string().min(1).max(128),
  response: z.record(z.string(), z.unknown()),
  mfaToken: z.string().min(1).max(128).optional(),
  rememberMe: z.boolean().optional(),
});
export type AssertionInput = z.input<typeof assertionSchema>;

export interface MfaLoginDeps {
  db: Db;
  clock: Clock;
  kv: KeyValueStore;
  box: SecretBox;
  audit: AuditService;
  limits: RateLimitService;
  issuer: SessionIssuer;
  pending: PendingLoginStore;
  rp: RelyingParty;
  backupCodeKeys: BackupCodeKey[];
  rate: RateRule;
  ssoRequirement?: SsoRequirementPort;
  ssoLinks?: SsoLinkPort;
}

/**
 * The second step of a sign-in (TOTP, backup code or WebAuthn after a password), and passkey
 * sign-in on its own. Each success ends the pending sign-in and opens a session; every attempt is
 * rate limited per account, and a suspended account is refused at every step.
 */
export class MfaLoginService {
  private readonly challenges: WebAuthnChallenges;

  constructor(private readonly deps: MfaLoginDeps) {
    this.challenges = new WebAuthnChallenges(deps.kv, deps.clock, "auth");
  }

  /** `ssoLinkBinding`: this browser's binding of the pending SSO link the password step carried, if any. */
  async completeWithCode(ctx: RequestContext, input: CodeInput, ssoLinkBinding?: string): Promise<SessionIssued> {
    const data = parseInput(mfaLoginCodeSchema, input);
    return this.attempt(data.mfaToken, async () => {
      const { pending, user } = await this.pendingUser(ctx, data.mfaToken);
      const backup = data.isBackupCode ?? !/^\d{6}$/.test(data.code);
      const ok = backup ? await this.spendBackupCode(user.id, data.code) : await this.checkTotp(user.id, data.code);
      if (!ok) {
        await this.deps.audit.record(this.deps.db, ctx, AuditAction.mfaVerifyFailed, { userId: user.id, success: false, metadata: { method: backup ? "backup_code" : "totp" } });
        throw MfaErrors.invalidCode();
      }
      if (backup) await this.deps.audit.record(this.deps.db, ctx, AuditAction.backupCodeUsed, { userId: user.id });
      return this.finish(ctx, data.mfaToken, pending, user, backup ? "backup_code" : "totp", ssoLinkBinding);
    });
  }

  /**
   * One second-factor attempt at a time per pending sign-in: a code is spent only by the attempt
   * that then ends the sign-in, so parallel codes cannot burn several for one session.
   */
  private async attempt<T>(token: string, run: () => Promise<T>): Promise<T> {
    const hold = await this.deps.pending.hold(token);
    if (!hold) throw MfaErrors.attemptInProgress();
    try {
      return await run();
    } finally {
      await hold.release();
    }
  }

  /** Options for the second-factor assertion: only the user's own credentials are allowed. */
  async beginWebauthn(ctx: RequestContext, input: TokenInput) {
    const { mfaToken } = parseInput(mfaTokenSchema, input);
    const { user } = await this.pendingUser(ctx, mfaToken, { countAttempt: false });
    const credentials = await mfaSecretsRepository.credentialsForAuth(this.deps.db, user.id);
    if (credentials.length === 0) throw MfaErrors.methodNotAvailable("WebAuthn");
    return this.challenge(await authenticationOptions(this.deps.rp, credentials), user.id);
  }

  async completeWebauthn(ctx: RequestContext, input: AssertionInput, ssoLinkBinding?: string): Promise<SessionIssued> {
    const data = parseInput(assertionSchema, input);
    const mfaToken = data.mfaToken;
    if (!mfaToken) throw MfaErrors.pendingExpired();
    return this.attempt(mfaToken, async () => {
      const { pending, user } = await this.pendingUser(ctx, mfaToken);
      await this.verifyAssertion(ctx, data.challengeId, data.response, user.id);
      return this.finish(ctx, mfaToken, pending, user, "webauthn", ssoLinkBinding);
    });
  }

  /** Usernameless passkey sign-in: no allow list; the authenticator says who. */
  async beginPasskey(_ctx: RequestContext) {
    return this.challenge(await authenticationOptions(this.deps.rp), null);
  }

  /** `ssoLinkId`/`ssoLinkBinding`: a pending SSO link this passkey sign-in confirms (its id, this browser's cookie). */
  async completePasskey(ctx: RequestContext, input: AssertionInput, ssoLinkId?: string, ssoLinkBinding?: string): Promise<SessionIssued> {
    const ssoLink: SsoLinkCarried = { id: ssoLinkId, binding: ssoLinkBinding };
    const data = parseInput(assertionSchema, input);
    const userId = await this.verifyAssertion(ctx, data.challengeId, data.response, null);
    const user = await userAccounts.find(this.deps.db, userId);
    if (!user) throw MfaErrors.webauthnFailed();
    // Suspended accounts are refused here too.
    if (user.status !== "active") throw AuthErrors.accountSuspended();
    // An organization that requires SSO decides who is in through its provider: a passkey would
    // let someone it has offboarded there back in. Except to confirm a pending link for this account.
    const link = await ssoGate(this.deps, ctx, user.email, user.id, "passkey", ssoLink);
    if (link) {
      const carried = { id: ssoLink.id!, binding: ssoLink.binding };
      return issueLinkedSession({ issuer: this.deps.issuer, ssoLinks: this.deps.ssoLinks! }, ctx, user, { rememberMe: data.rememberMe ?? false, link: carried, method: "passkey", maxAgeSeconds: link.maxAgeSeconds });
    }
    return this.deps.issuer.issue(ctx, user, data.rememberMe ?? false, "passkey");
  }

  private async challenge(options: Awaited<ReturnType<typeof authenticationOptions>>, userId: string | null) {
    return { challengeId: await this.challenges.issue(options.challenge, userId), options };
  }

  /**
   * Verifies an assertion and returns whose it is. Guard order: the challenge exists and is taken
   * (single use); the credential exists and belongs to the expected user (if any); the signature,
   * origin and RP ID verify; the counter moves forward (a regression is refused and audited).
   */
  private async verifyAssertion(ctx: RequestContext, challengeId: string, response: unknown, expectedUser: string | null): Promise<string> {
    const { db, clock, audit, rp } = this.deps;
    const stored = await this.challenges.take(challengeId);
    if (!stored || stored.userId !== expectedUser) throw MfaErrors.challengeExpired();
    let identity;
    try {
      identity = assertionIdentity(response);
    } catch {
      throw MfaErrors.webauthnFailed();
    }
    const credential = await mfaSecretsRepository.credentialById(db, identity.credentialId);
    if (!credential || (expectedUser && credential.userId !== expectedUser) || (identity.userHandle && identity.userHandle !== credential.userId)) {
      await audit.record(db, ctx, AuditAction.webauthnLoginFailed, { userId: expectedUser, success: false, metadata: { reason: "unknown_credential" } });
      throw MfaErrors.webauthnFailed();
    }
    if (expectedUser === null) await this.rateLimit(credential.userId);
    try {
      const { newCounter } = await verifyAuthentication(rp, response, stored.challenge, credential);
      if (!(await mfaRepository.advanceCounter(db, credential.id, newCounter, clock.now()))) throw new WebAuthnError("counter did not advance");
    } catch (e) {
      const counter = /counter/i.test((e as Error).message);
      await audit.record(db, ctx, counter ? AuditAction.webauthnCounterRegression : AuditAction.webauthnLoginFailed, {
        userId: credential.userId,
        success: false,
        resourceType: "webauthn_credential",
        resourceId: credential.id,
        errorMessage: (e as Error).message,
      });
      if (e instanceof WebAuthnError) throw counter ? MfaErrors.counterRegression() : MfaErrors.webauthnFailed();
      throw e;
    }
    return credential.userId;
  }

  private async pendingUser(ctx: RequestContext, token: string, opts: { countAttempt: boolean } = { countAttempt: true }): Promise<{ pending: PendingLogin; user: UserRow }> {
    const pending = await this.deps.pending.get(token);
    // The pending sign-in is bound to the client that passed the password.
    if (!pending || (pending.userAgent ?? null) !== (ctx.userAgent ?? null)) throw MfaErrors.pendingExpired();
    if (opts.countAttempt) await this.rateLimit(pending.userId);
    const user = await userAccounts.find(this.deps.db, pending.userId);
    if (!user) throw MfaErrors.pendingExpired();
    if (user.status !== "active") throw AuthErrors.accountSuspended();
    return { pending, user };
  }

  private rateLimit(userId: string) {
    return this.deps.limits.consume("mfa", this.deps.rate, userId);
  }

  private async checkTotp(userId: string, code: string): Promise<boolean> {
    const { db, clock, box } = this.deps;
    const totp = await mfaSecretsRepository.totp(db, userId);
    if (!totp?.verifiedAt) return false;
    const step = matchTotp(box.decryptString(totp.secretSealed, sealContexts.totp(userId)), code, clock.now());
    // Recording the step is the replay guard: the same code (or an older one) is refused.
    return step !== null && (await mfaRepository.useTotpStep(db, userId, step, null));
  }

  private spendBackupCode(userId: string, code: string): Promise<boolean> {
    return mfaRepository.consumeBackupCode(this.deps.db, userId, hashBackupCode(this.deps.backupCodeKeys, code), this.deps.clock.now());
  }

  private async finish(ctx: RequestContext, token: string, pending: PendingLogin, user: UserRow, method: string, ssoLinkBinding?: string): Promise<SessionIssued> {
    // Taking the pending sign-in is what makes the second factor single-use.
    if (!(await this.deps.pending.take(token))) throw MfaErrors.pendingExpired();
    if (pending.ssoLink && this.deps.ssoLinks) {
      // The password step let this sign-in past SSO_REQUIRED to confirm a pending link: it still must.
      const carried = { id: pending.ssoLink, binding: ssoLinkBinding };
      const link = await ssoGate(this.deps, ctx, user.email, user.id, `password+${method}`, carried);
      if (link) {
        return issueLinkedSession({ issuer: this.deps.issuer, ssoLinks: this.deps.ssoLinks }, ctx, user, {
          rememberMe: pending.rememberMe,
          link: { id: pending.ssoLink, binding: ssoLinkBinding },
          method: `password+${method}`,
          passwordFingerprint: pending.passwordFingerprint,
          maxAgeSeconds: link.maxAgeSeconds,
        });
      }
    }
    return this.deps.issuer.issue(ctx, user, pending.rememberMe, `password+${method}`, undefined, pending.passwordFingerprint);
  }
}
