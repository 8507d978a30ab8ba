import { AppError } from "../../lib/errors.js";

export const OffboardingErrors = {
  receiptNotFound: () => new AppError("OFFBOARDING_NOT_FOUND", 404, "Offboarding receipt not found"),
  notSuspended: () => new AppError("NOT_SUSPENDED", 409, "This person is not suspended in this organization: only a suspension can be reinstated"),
};
