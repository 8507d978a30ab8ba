import type { Executor } from "../../infra/db.js";
import type { EmailService } from "../email/index.js";
import type { UserRow } from "../users/index.js";
import type { OrgRole } from "../access/index.js";

export interface InviteMailDeps {
  email: EmailService;
  config: { appUrl: string; inviteTtl: number };
}

/** What an "add member" email tells its recipient about who will administer the account. */
const managedNotice = (organization: string) =>
  `Your account will be managed by ${organization}: while you are a member, its owners and admins can reset your password, ` +
  `remove your second factors, and suspend or delete the account. Leaving ${organization} ends this.`;

/** The emails of an invitation: the link to the invitee, and the notice to the inviter once it is accepted. */
export class InviteMail {
  constructor(private readonly deps: InviteMailDeps) {}

  /**
   * The invitation link. An invitation that provisions an account is an activation link (the
   * account is created, managed by the organization, when it is followed); any other joins an
   * account of the invitee's own.
   */
  async sendInvitation(
    tx: Executor,
    v: { email: string; name?: string; role: OrgRole; token: string; provisionsAccount: boolean; inviterEmail: string; organizationName: string },
  ): Promise<void> {
    const { email: mail, config } = this.deps;
    const { email, token, organizationName } = v;
    if (v.provisionsAccount) {
      await mail.enqueue(tx, "account-activation", email, {
        name: v.name ?? email,
        email,
        inviterName: v.inviterEmail,
        organizationName,
        activateUrl: `${config.appUrl}/activate?code=${encodeURIComponent(token)}`,
        expiresInHours: Math.round(config.inviteTtl / 3600),
        managedNotice: managedNotice(organizationName),
      });
    } else {
      await mail.enqueue(tx, "org-invite", email, {
        email,
        inviterName: v.inviterEmail,
        organizationName,
        role: v.role,
        acceptUrl: `${config.appUrl}/invite?token=${encodeURIComponent(token)}`,
        expiresInDays: Math.round(config.inviteTtl / 86400),
      });
    }
  }

  async sendAccepted(tx: Executor, inviter: UserRow, member: UserRow, invite: { organizationName: string; role: OrgRole }): Promise<void> {
    await this.deps.email.enqueue(tx, "invite-accepted", inviter.email, {
      inviterName: inviter.fullName ?? inviter.email,
      memberName: member.fullName ?? member.email,
      memberEmail: member.email,
      organizationName: invite.organizationName,
      role: invite.role,
    });
  }
}
