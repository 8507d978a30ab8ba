import { AppError } from "../../lib/errors.js";
import { maskEmail } from "../../lib/strings.js";

export const InviteErrors = {
  notFound: () => new AppError("INVITE_NOT_FOUND", 404, "Invite not found"),
  invalid: () => new AppError("INVALID_LINK", 400, "This invitation is invalid, has expired, was cancelled or was already used. Ask for a new one."),
  pending: () => new AppError("INVITE_PENDING", 409, "An invitation to this address is already pending; cancel it to send a new one"),
  alreadyUsed: () => new AppError("INVITE_ALREADY_USED", 409, "This invitation was already accepted"),
  emailMismatch: (invited: string, signedInAs: string) =>
    new AppError(
      "EMAIL_MISMATCH",
      403,
      `This invitation was sent to ${maskEmail(invited)}, but you are signed in as ${signedInAs}. ` +
        `Sign out and sign in (or register) with ${maskEmail(invited)} to accept it, or ask the person who invited you to send a new invitation to ${signedInAs}.`,
      { invited_email: maskEmail(invited), signed_in_as: signedInAs },
    ),
  accountExists: (email: string) =>
    new AppError("ACCOUNT_EXISTS", 409, `An account already exists for ${maskEmail(email)}. Sign in with it, then accept the invitation.`),
  unverifiedEmail: () => new AppError("EMAIL_NOT_VERIFIED", 403, "Verify your email address first, or use the link in the invitation email"),
};
