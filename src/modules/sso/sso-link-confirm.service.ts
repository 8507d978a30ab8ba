import type { Db } from "../../infra/db.js";
import { AppError } from "../../lib/errors.js";
import type { RequestContext } from "../../lib/request-context.js";
import { parseInput } from "../../lib/validation.js";
import { AuditAction, type AuditService } from "../audit/index.js";
import { type CredentialsService, mfaMethodsOf, type SessionIssued, type SessionIssuer } from "../auth/index.js";
import type { EmailService } from "../email/index.js";
import { userAccounts } from "../users/index.js";
import { ssoConnectionsRepository, type ConnectionRow } from "./sso-connections.repository.js";
import { linkConfirmationInvalid, type SsoLinkConsent } from "./sso-link-consent.js";
import { safeNext } from "./sso-identity.service.js";
import { SsoErrors } from "./sso.errors.js";
import { ssoLinkMailConfirmSchema, ssoLinkMailSchema, type SsoLinkMailConfirmInput, type SsoLinkMailInput } from "./sso.schemas.js";

export interface SsoLinkConfirmDeps {
  db: Db;
  audit: AuditService;
  email: EmailService;
  links: SsoLinkConsent;
  credentials: Pick<CredentialsService, "hasPassword">;
  issuer: SessionIssuer;
  config: { publicUrl: string };
}

/** The sign-in page's view of a pending link this browser holds. */
export interface PendingLinkView {
  connectionName: string;
  email: string;
  /** The account has neither password nor passkey: it confirms by email instead. */
  byEmail: boolean;
}

/**
 * Confirming a pending SSO link (issue 35) without a password or passkey: for an account that has
 * neither (it signs in with GitHub, say), a one-time link mailed to the account's address, opened
 * in the browser that came back from the provider, links the identity and signs in.
 */
export class SsoLinkConfirmService {
  constructor(private readonly deps: SsoLinkConfirmDeps) {}

  /** What the sign-in page shows for `?sso_link=`: null when this browser holds no such pending link. */
  async pending(id: string | undefined, binding: string | undefined): Promise<PendingLinkView | null> {
    const link = await this.deps.links.peek(id, binding);
    if (!link) return null;
    const connection = await ssoConnectionsRepository.findById(this.deps.db, link.connectionId);
    if (!connection?.enabled) return null;
    return { connectionName: connection.name, email: link.email, byEmail: !(await this.hasOwnMethod(link.userId)) };
  }

  /** Mails the confirmation to the account's address; the pending link is used up by it. */
  async mail(ctx: RequestContext, input: SsoLinkMailInput, binding: string | undefined): Promise<{ email: string; expiresInMinutes: number }> {
    const { ssoLink } = parseInput(ssoLinkMailSchema, input);
    const peeked = await this.deps.links.peek(ssoLink, binding);
    if (!peeked) throw linkConfirmationInvalid();
    const user = await userAccounts.find(this.deps.db, peeked.userId);
    if (!user || user.status !== "active") throw SsoErrors.accountUnavailable();
    // A holder with a password or passkey confirms with it: the mailbox is the weaker proof.
    if (await this.hasOwnMethod(user.id)) throw new AppError("SSO_LINK_CONFIRM_WITH_SIGN_IN", 409, "Confirm with your password or passkey on the sign-in page.");
    const connection = await ssoConnectionsRepository.findById(this.deps.db, peeked.connectionId);
    if (!connection?.enabled) throw SsoErrors.notAvailable();
    const moved = await this.deps.links.toMail(ssoLink, binding);
    if (!moved) throw linkConfirmationInvalid();
    const confirmUrl = new URL("/sso/link/confirm", this.deps.config.publicUrl);
    confirmUrl.searchParams.set("token", moved.token);
    const expiresInMinutes = Math.round(this.deps.links.mailTtl / 60);
    await this.deps.db.transaction(async (tx) => {
      await this.deps.email.enqueue(tx, "sso-link-confirm", user.email, { name: user.fullName ?? user.email, email: user.email, connectionName: connection.name, confirmUrl: confirmUrl.toString(), expiresInMinutes });
      await this.deps.audit.record(tx, ctx, AuditAction.ssoLinkConfirmationSent, { userId: user.id, organizationId: connection.organizationId, metadata: { connectionId: connection.id, connectionName: connection.name } });
    });
    return { email: user.email, expiresInMinutes };
  }

  /** The mailed link, opened in the same browser: links and opens an SSO session. */
  async confirmByMail(ctx: RequestContext, input: SsoLinkMailConfirmInput, binding: string | undefined): Promise<SessionIssued & { redirectTo: string }> {
    const { token } = parseInput(ssoLinkMailConfirmSchema, input);
    const link = await this.deps.links.takeMail(token, binding);
    if (!link) throw linkConfirmationInvalid();
    const user = await userAccounts.find(this.deps.db, link.userId);
    if (!user) throw SsoErrors.accountUnavailable();
    if (user.status === "suspended") throw SsoErrors.accountSuspended();
    if (user.status !== "active") throw SsoErrors.accountUnavailable();
    const connection = await ssoConnectionsRepository.findById(this.deps.db, link.connectionId);
    if (!connection?.enabled) throw SsoErrors.notAvailable();
    let linked: ConnectionRow | undefined;
    const session = await this.deps.issuer.issue(
      ctx,
      user,
      false,
      "sso",
      async (tx) => {
        linked = await this.deps.links.apply(tx, ctx, link, user, { method: "email" });
      },
      undefined,
      connection.sessionMaxAgeSeconds,
    );
    // The connection's session like any other: single logout reaches it both ways.
    await this.deps.links.sessionOpened(session.sessionId, link, linked!);
    return { ...session, redirectTo: safeNext(link.next) ?? "/" };
  }

  private async hasOwnMethod(userId: string): Promise<boolean> {
    if (await this.deps.credentials.hasPassword(this.deps.db, userId)) return true;
    return (await mfaMethodsOf(this.deps.db, userId)).webauthn > 0;
  }
}
