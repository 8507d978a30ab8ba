import { AppError } from "../../lib/errors.js";
import { AccessErrors } from "../access/index.js";

export const OrgErrors = {
  notFound: AccessErrors.orgNotFound,
  forbidden: AccessErrors.roleForbids,
  limitReached: (max: number) =>
    new AppError(
      "ORG_LIMIT_REACHED",
      403,
      `You already belong to ${max} organizations, the most allowed. Leave or delete one before creating or joining another.`,
      { max_organizations: max },
    ),
  emailNotVerified: () =>
    new AppError(
      "EMAIL_NOT_VERIFIED",
      403,
      "Verify your email address before you create or join an organization: follow the link in the email sent when you registered, or ask for a new one (POST /api/v1/auth/me/resend-verification).",
    ),
  slugTaken: () => new AppError("SLUG_TAKEN", 409, "An organization with this slug already exists"),
  confirmationRequired: (memberCount: number) =>
    new AppError("CONFIRMATION_REQUIRED", 400, `The organization has ${memberCount} members: send confirm: true to delete it`, {
      member_count: memberCount,
    }),
  lastOwner: () =>
    new AppError(
      "OWNER_REQUIRED",
      403,
      "This would leave the organization without an owner. Transfer ownership to another member first.",
    ),
  memberNotFound: AccessErrors.memberNotFound,
  alreadyMember: () => new AppError("ALREADY_MEMBER", 409, "This user is already a member of the organization"),
  ownerOnly: () => new AppError("AUTHORIZATION_ERROR", 403, "Only an owner can grant, change or remove the owner role"),
  transferToSelf: () => new AppError("CONFLICT", 409, "You already own this organization"),
  soleOwner: AccessErrors.soleOwner,
};
