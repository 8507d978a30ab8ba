/**
 * Every email Keyward sends, with the props its template needs. The props type is what
 * `email.enqueue` checks at compile time; the renderer checks at run time that none is missing.
 */
export interface TemplateProps {
  "verify-email": { name: string; email: string; verifyUrl: string; expiresInHours: number };
  "reset-password": { name: string; resetUrl: string; expiresInHours: number };
  /** To the new address of an email change: the account switches to it when the link is opened. */
  "email-change": { name: string; email: string; verifyUrl: string; expiresInHours: number };
  /** To the old address once the change is made. */
  "email-changed": { name: string; oldEmail: string; newEmail: string };
  "account-exists": { name: string; email: string; resetUrl: string };
  "org-invite": { email: string; inviterName: string; organizationName: string; role: string; acceptUrl: string; expiresInDays: number };
  "invite-accepted": { inviterName: string; memberName: string; memberEmail: string; organizationName: string; role: string };
  /** managedNotice: who will administer the account (empty for accounts nobody manages). */
  "account-activation": { name: string; email: string; inviterName: string; organizationName: string; activateUrl: string; expiresInHours: number; managedNotice: string };
  "account-suspended": { name: string; email: string; reason: string };
  "mfa-deadline-reminder": { name: string; organizationName: string; deadline: string; daysLeft: number; enrollUrl: string };
  "mfa-removed": { name: string; adminEmail: string; removed: string };
  /** Fields arrive sanitised (tags stripped, entities escaped) and are inserted as they are. */
  "contact-notification": { name: string; email: string; subject: string; message: string; submittedAt: string };
  "network-access-request": { managerName: string; requesterName: string; requesterEmail: string; networkName: string; organizationName: string; justification: string; reviewUrl: string };
  /** decision: "approved", "rejected", "revoked" or "granted"; reason: a sentence, possibly empty. */
  "network-access-decision": { name: string; networkName: string; organizationName: string; decision: string; reason: string; accessUrl: string };
  /** Just-in-time access: to each approver of the organization, and the decision to the requester. */
  "access-request": { approverName: string; requesterEmail: string; principal: string; what: string; minutes: number; organizationName: string; reason: string; reviewUrl: string };
  "access-request-decision": { name: string; principal: string; what: string; organizationName: string; decision: string; reason: string };
  /** A pending SSO link confirmed from the mailbox (accounts with neither password nor passkey). */
  "sso-link-confirm": { name: string; email: string; connectionName: string; confirmUrl: string; expiresInMinutes: number };
}

export type TemplateName = keyof TemplateProps;

export const TEMPLATE_NAMES = [
  "verify-email",
  "reset-password",
  "email-change",
  "email-changed",
  "account-exists",
  "org-invite",
  "invite-accepted",
  "account-activation",
  "account-suspended",
  "mfa-deadline-reminder",
  "contact-notification",
  "mfa-removed",
  "network-access-request",
  "network-access-decision",
  "access-request",
  "access-request-decision",
  "sso-link-confirm",
] as const satisfies readonly TemplateName[];
