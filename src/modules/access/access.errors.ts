import { AppError } from "../../lib/errors.js";

/** What the access core refuses with; the organizations' and MFA errors name the same ones. */
export const AccessErrors = {
  // Another tenant's organization is reported exactly like one that does not exist.
  orgNotFound: () => new AppError("ORG_NOT_FOUND", 404, "Organization not found"),
  // An account the caller may not reach is reported exactly like one that does not exist.
  userNotFound: () => new AppError("USER_NOT_FOUND", 404, "User not found"),
  ownerProtection: () => new AppError("OWNER_PROTECTION", 403, "This account is an owner of the organization that manages it: only a superadmin can administer it"),
  reachForbidden: () => new AppError("AUTHORIZATION_ERROR", 403, "Your role does not let you administer this account"),
  reachSelf: (what: string) => new AppError("BAD_REQUEST", 400, `You cannot ${what} your own account here: use your account settings`),
  memberNotFound: () => new AppError("MEMBER_NOT_FOUND", 404, "Member not found"),
  roleForbids: (action: string) => new AppError("AUTHORIZATION_ERROR", 403, `Your role in this organization does not allow you to ${action}`),
  /** A capability the role held through a time-bounded grant does not confer (permissions.ts STORED_ROLE_ONLY). */
  elevationForbids: (action: string, role: string, until: Date | null) =>
    new AppError(
      "ELEVATED_ROLE_FORBIDS",
      403,
      `Your ${role} role in this organization is temporary${until ? ` (until ${until.toISOString()})` : ""}: it does not allow you to ${action}. That needs the role kept on your membership`,
      { elevated_until: until?.toISOString() ?? null },
    ),
  soleOwner: (orgs: string[]) =>
    new AppError(
      "USER_IS_SOLE_OWNER",
      409,
      `You are the only owner of ${orgs.join(", ")}, which ${orgs.length === 1 ? "has" : "have"} other members. Transfer ownership first.`,
      { transfer_ownership: orgs },
    ),
  mfaComplianceRequired: () =>
    new AppError("MFA_COMPLIANCE_REQUIRED", 403, "This organization requires multi-factor authentication and your deadline passed: enroll a passkey or an authenticator app to regain access", {
      overall_status: "past_due",
    }),
};
