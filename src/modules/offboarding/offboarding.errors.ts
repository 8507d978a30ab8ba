import { AppError } from "../../lib/errors.js";

export const OffboardingErrors = {
  receiptNotFound: () => new AppError("OFFBOARDING_NOT_FOUND", 404, "Offboarding receipt not found"),
  /** Reinstating gives a membership back: the organizations-per-user limit holds as for any new one. */
  orgLimit: (max: number) =>
    new AppError("ORG_LIMIT_REACHED", 403, `This person already belongs to ${max} organizations, the most allowed: they must leave one before being reinstated here`, { max_organizations: max }),
  notSuspended: () => new AppError("NOT_SUSPENDED", 409, "This person is not suspended in this organization: only a suspension can be reinstated"),
};
