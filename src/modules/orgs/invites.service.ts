import type { z } from "zod";
import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import { uniqueOr } from "../../infra/db-errors.js";
import type { Logger } from "../../infra/logger.js";
import { randomToken, sha256Hex } from "../../lib/crypto/index.js";
import { CommonErrors } from "../../lib/errors.js";
import { actingAs, type RequestContext } from "../../lib/request-context.js";
import { normalizeEmail } from "../../lib/strings.js";
import { parseId, parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditActionName, type AuditService } from "../audit/index.js";
import { type AccountsService, activateSchema, type CredentialsService, type SessionsService } from "../auth/index.js";
import type { RateLimitService, RateRule } from "../rate-limit/index.js";
import { userAccounts } from "../users/index.js";
import type { InviteMail } from "./invite-mail.js";
import { InviteErrors } from "./invites.errors.js";
import { invitesRepository, type InviteRow } from "./invites.repository.js";
import { toInviteView, type AcceptResult, type InviteView } from "./invites.views.js";
import { membershipsRepository } from "./memberships.repository.js";
import type { AdmissionConfig } from "./admission.js";
import { joinByInvite, recordInvite } from "./invite-join.js";
import { OrgErrors } from "./orgs.errors.js";
import { orgsRepository } from "./orgs.repository.js";
import { acceptInviteSchema, addMemberSchema, inviteSchema, type InviteInput, type AddMemberInput, type AcceptInviteInput } from "./orgs.schemas.js";
import { getActiveMembership, type OrgAccess, type OrgRole, requireOrgAccess, requirePersonalUser, requireUser } from "../access/index.js";

export interface InvitesDeps {
  db: Db;
  accounts: AccountsService;
  clock: Clock;
  credentials: Pick<CredentialsService, "hashNewPassword" | "createAccount">;
  audit: AuditService;
  mail: InviteMail;
  sessions: SessionsService;
  limits: RateLimitService;
  logger: Logger;
  config: { appUrl: string; inviteTtl: number; limit: AdmissionConfig; rate: RateRule };
}

export class InvitesService {
  constructor(private readonly deps: InvitesDeps) {}

  /** Invites an address; the invitee gets an email with a single-use, 7-day link. */
  async send(ctx: RequestContext, orgId: string, input: InviteInput): Promise<InviteView> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "invites.manage");
    const data = parseInput(inviteSchema, input);
    return this.issue(ctx, access, { email: data.email, role: data.role, provision: false });
  }

  /**
   * "Add member". An existing account joins only by its own consent, so its address gets an
   * ordinary invitation. An address with no account gets an invitation to create one that this
   * organization will manage (its admins may then reset its password, remove its MFA, suspend or
   * delete it). No account is created before its owner follows the link: nobody can reserve
   * someone else's address. Both cases answer, list and audit alike, so the caller never learns
   * whether the address has an account.
   */
  async addMember(ctx: RequestContext, orgId: string, input: AddMemberInput): Promise<InviteView> {
    const access = await requireOrgAccess(this.deps.db, ctx, orgId, "members.manage");
    const data = parseInput(addMemberSchema, input);
    return this.issue(ctx, access, { email: data.email, role: data.role, name: data.fullName, provision: true });
  }

  private async issue(ctx: RequestContext, access: OrgAccess, v: { email: string; role: OrgRole; name?: string; provision: boolean }): Promise<InviteView> {
    const { db, clock, limits, config } = this.deps;
    const { orgId: id, actor } = access;
    // Only an owner may make another owner.
    if (v.role === "owner" && access.membership.role !== "owner") throw OrgErrors.ownerOnly();
    // Invitations are email sent on our behalf naming an organization anyone can create: cap them
    // per organization and per sender, so ten organizations do not make ten times the mail.
    await limits.consume("invites", config.rate, id);
    await limits.consume("invites-sender", config.rate, actor.userId);
    const email = normalizeEmail(v.email);
    const write = () =>
      db.transaction(async (tx) => {
        const now = clock.now();
        await membershipsRepository.lockOrganization(tx, id);
        // The caller's role as of now, under the lock: a concurrent demotion has taken effect.
        const current = await requireOrgAccess(tx, ctx, id, v.provision ? "members.manage" : "invites.manage");
        if (v.role === "owner" && current.membership.role !== "owner") throw OrgErrors.ownerOnly();
        const org = await orgsRepository.findById(tx, id);
        if (!org) throw OrgErrors.notFound();
        const existing = await userAccounts.findByEmail(tx, email);
        if (existing && (await getActiveMembership(tx, existing.id, id))) throw OrgErrors.alreadyMember();
        await invitesRepository.cancelExpired(tx, id, email, now);
        if (await invitesRepository.findOpenByEmail(tx, id, email)) throw InviteErrors.pending();
        const token = randomToken(32);
        // Only an address without an account may be provisioned; an existing account joins as itself.
        const provisionsAccount = v.provision && !existing;
        const invite = await invitesRepository.insert(tx, {
          organizationId: id,
          email,
          role: v.role,
          tokenHash: sha256Hex(token),
          invitedBy: actor.userId,
          expiresAt: new Date(now.getTime() + config.inviteTtl * 1000),
          provisionsAccount,
          now,
        });
        await this.deps.mail.sendInvitation(tx, { email, name: v.name, role: v.role, token, provisionsAccount, inviterEmail: actor.email, organizationName: org.name });
        // The organization's admins read this log: it says the same whether or not an account exists.
        await this.recordInvite(tx, ctx, v.provision ? AuditAction.orgMemberAdd : AuditAction.orgInviteSent, invite);
        return toInviteView(invite, now);
      });
    // A concurrent request invited the same address first.
    return uniqueOr(write, { org_invites_open_uq: InviteErrors.pending });
  }

  async list(ctx: RequestContext, orgId: string): Promise<InviteView[]> {
    const { orgId: id } = await requireOrgAccess(this.deps.db, ctx, orgId, "invites.manage");
    const now = this.deps.clock.now();
    return (await invitesRepository.listOpen(this.deps.db, id)).map((i) => toInviteView(i, now));
  }

  /**
   * Sends an open invitation again: a new link (the old one stops working) valid for another
   * invitation lifetime, for someone who lost the email or let it expire. Limited like sending.
   */
  async resend(ctx: RequestContext, orgId: string, inviteId: string): Promise<InviteView> {
    const { db, clock, limits, config } = this.deps;
    const access = await requireOrgAccess(db, ctx, orgId, "invites.manage");
    const id = access.orgId;
    const inviteKey = parseId(inviteId, InviteErrors.notFound);
    await limits.consume("invites", config.rate, id);
    await limits.consume("invites-sender", config.rate, access.actor.userId);
    return db.transaction(async (tx) => {
      const now = clock.now();
      const token = randomToken(32);
      const invite = await invitesRepository.renew(tx, id, inviteKey, { tokenHash: sha256Hex(token), expiresAt: new Date(now.getTime() + config.inviteTtl * 1000) });
      if (!invite) throw InviteErrors.notFound();
      // An invitation that creates an account this organization manages is "add member": for those who manage members.
      if (invite.provisionsAccount) await requireOrgAccess(tx, ctx, id, "members.manage");
      // Only an owner may make another owner, now as when it was sent.
      if (invite.role === "owner" && access.membership.role !== "owner") throw OrgErrors.ownerOnly();
      const org = await orgsRepository.findById(tx, id);
      if (!org) throw OrgErrors.notFound();
      await this.deps.mail.sendInvitation(tx, { email: invite.email, role: invite.role, token, provisionsAccount: invite.provisionsAccount, inviterEmail: access.actor.email, organizationName: org.name });
      await this.recordInvite(tx, ctx, AuditAction.orgInviteResent, invite);
      return toInviteView(invite, now);
    });
  }

  async cancel(ctx: RequestContext, orgId: string, inviteId: string): Promise<void> {
    const { db, clock } = this.deps;
    const { orgId: id } = await requireOrgAccess(db, ctx, orgId, "invites.manage");
    const inviteKey = parseId(inviteId, InviteErrors.notFound);
    await db.transaction(async (tx) => {
      const invite = await invitesRepository.cancel(tx, id, inviteKey, clock.now());
      if (!invite) throw InviteErrors.notFound();
      await this.recordInvite(tx, ctx, AuditAction.orgInviteCancelled, invite);
    });
  }

  /** What the invitation link shows before it is accepted. */
  async lookup(_ctx: RequestContext, token: string) {
    const invite = await invitesRepository.findUsableByHash(this.deps.db, sha256Hex(String(token)), this.deps.clock.now());
    if (!invite) throw InviteErrors.invalid();
    const user = await userAccounts.findByEmail(this.deps.db, invite.email);
    return {
      email: invite.email,
      organization: { id: invite.organizationId, name: invite.organizationName },
      role: invite.role,
      expiresAt: invite.expiresAt,
      userExists: Boolean(user),
      // Accepting creates an account this organization manages (only when no account exists).
      managed: invite.provisionsAccount && !user,
    };
  }

  /**
   * Accepts an invitation from its emailed link. Signed in: the account's address must be the
   * invited one. Not signed in: a new account is registered (the link proves the address).
   */
  async accept(ctx: RequestContext, token: string, input: AcceptInviteInput): Promise<AcceptResult> {
    const { db, clock } = this.deps;
    const data = parseInput(acceptInviteSchema, input ?? {});
    const tokenHash = sha256Hex(String(token));
    const preview = await invitesRepository.findUsableByHash(db, tokenHash, clock.now());
    if (!preview) throw InviteErrors.invalid();

    if (ctx.actor.kind === "user") {
      const signedIn = ctx.actor;
      // An invitation is for one address; a different signed-in account must not take it.
      if (signedIn.email !== preview.email) throw InviteErrors.emailMismatch(preview.email, signedIn.email);
      return db.transaction(async (tx) => {
        const user = await userAccounts.find(tx, signedIn.userId);
        if (!user) throw InviteErrors.invalid();
        return joinByInvite(this.deps, tx, ctx, preview, user, { proveEmail: true, gone: InviteErrors.invalid });
      });
    }

    const result = await this.createAccountAndJoin(ctx, preview, data);
    const session = await this.deps.sessions.create(result.user.id, { rememberMe: false, ip: ctx.ip, userAgent: ctx.userAgent });
    return { ...result, session: { token: session.token, expiresAt: session.expiresAt, sessionId: session.session.id } };
  }

  /**
   * The activation link of an "add member" email: creates the account (managed by the inviting
   * organization) with the chosen password and joins it. Accounts created pending by older
   * versions activate through their own link, handled by the accounts service.
   */
  async activate(ctx: RequestContext, input: z.input<typeof activateSchema>): Promise<{ message: string }> {
    const data = parseInput(activateSchema, input);
    const invite = await invitesRepository.findUsableByHash(this.deps.db, sha256Hex(data.code), this.deps.clock.now());
    if (!invite?.provisionsAccount) return this.deps.accounts.activate(ctx, input);
    await this.createAccountAndJoin(ctx, invite, { password: data.password, fullName: data.fullName });
    return { message: "Your account is active. Sign in with your new password." };
  }

  /** Registers the invited address (the link proves it) and joins; the account is managed when the invitation provisions it. */
  private async createAccountAndJoin(
    ctx: RequestContext,
    invite: InviteRow & { organizationName: string },
    data: { password?: string; fullName?: string },
  ): Promise<Omit<AcceptResult, "session">> {
    const { db, credentials } = this.deps;
    if (await userAccounts.findByEmail(db, invite.email)) throw InviteErrors.accountExists(invite.email);
    if (!data.password) throw CommonErrors.validation([{ path: "password", message: "is required to create your account" }]);
    const password = await credentials.hashNewPassword(data.password, invite.email);
    return db.transaction(async (tx) => {
      const managedBy = invite.provisionsAccount ? invite.organizationId : null;
      // The link proves the address. A concurrent accept that registered it first spent the invitation.
      const account = { email: invite.email, fullName: data.fullName ?? null, password, managedBy, verifiedVia: "email_link" } as const;
      const user = await credentials.createAccount(tx, account, { emailTaken: InviteErrors.alreadyUsed });
      await this.deps.audit.record(tx, actingAs(ctx, user), AuditAction.userRegister, {
        userId: user.id,
        metadata: { via: "invite", ...(managedBy ? { managed_by: managedBy } : {}) },
      });
      return joinByInvite(this.deps, tx, ctx, invite, user, { proveEmail: false, gone: InviteErrors.invalid });
    });
  }

  /** Pending invitations for the caller's verified address. */
  async listMine(ctx: RequestContext) {
    const actor = requireUser(ctx);
    const user = await userAccounts.find(this.deps.db, actor.userId);
    if (!user?.emailVerifiedAt) return [];
    const rows = await invitesRepository.listUsableForEmail(this.deps.db, user.email, this.deps.clock.now());
    return rows.map((r) => ({ id: r.id, organization: { id: r.organizationId, name: r.organizationName }, role: r.role, expiresAt: r.expiresAt }));
  }

  /** Accepts one of the caller's pending invitations by id (their address must be verified). */
  async acceptMine(ctx: RequestContext, inviteId: string): Promise<AcceptResult> {
    const { db, clock } = this.deps;
    const actor = requirePersonalUser(ctx);
    const id = parseId(inviteId, InviteErrors.notFound);
    return db.transaction(async (tx) => {
      const user = await userAccounts.find(tx, actor.userId);
      const invite = await invitesRepository.findUsableById(tx, id, clock.now());
      if (!user || !invite || invite.email !== user.email) throw InviteErrors.notFound();
      // Without the emailed link, only a verified address proves the invitation is theirs.
      if (!user.emailVerifiedAt) throw InviteErrors.unverifiedEmail();
      return joinByInvite(this.deps, tx, ctx, invite, user, { proveEmail: false, gone: InviteErrors.notFound });
    });
  }

  /**
   * Turns down one of the caller's pending invitations: it closes, and the organization may invite
   * the address again. Someone else's invitation is reported as not found.
   */
  async declineMine(ctx: RequestContext, inviteId: string): Promise<void> {
    const { db, clock } = this.deps;
    const actor = requirePersonalUser(ctx);
    const id = parseId(inviteId, InviteErrors.notFound);
    await db.transaction(async (tx) => {
      const user = await userAccounts.find(tx, actor.userId);
      // Only the list the caller sees (invitations to their verified address) can be declined.
      if (!user?.emailVerifiedAt) throw InviteErrors.notFound();
      const invite = await invitesRepository.decline(tx, id, user.email, clock.now());
      if (!invite) throw InviteErrors.notFound();
      await this.recordInvite(tx, ctx, AuditAction.orgInviteDeclined, invite);
    });
  }

  /** Every step of an invitation is audited alike (invite-join.ts). */
  private recordInvite(tx: Executor, ctx: RequestContext, action: AuditActionName, invite: InviteRow, extra: Record<string, unknown> = {}): Promise<void> {
    return recordInvite(this.deps.audit, tx, ctx, action, invite, extra);
  }
}
