import { AppError } from "../../lib/errors.js";
import { AccessErrors } from "../access/index.js";

export const UserErrors = {
  notFound: AccessErrors.userNotFound,
  cannotSuspendSelf: () => new AppError("BAD_REQUEST", 400, "You cannot suspend your own account"),
  alreadySuspended: () => new AppError("ALREADY_SUSPENDED", 409, "The user is already suspended"),
  notSuspended: () => new AppError("NOT_SUSPENDED", 409, "The user is not suspended"),
};
