import { AppError } from "../../lib/errors.js";

export const DirectoryErrors = {
  departmentNotFound: () => new AppError("DEPARTMENT_NOT_FOUND", 404, "Department not found"),
  principalNotFound: () => new AppError("PRINCIPAL_NOT_FOUND", 404, "Principal not found"),
  departmentExists: () => new AppError("DEPARTMENT_EXISTS", 409, "A department with this name already exists in the organization"),
  principalExists: () => new AppError("PRINCIPAL_EXISTS", 409, "A principal with this name already exists in the organization"),
  notAMember: () => new AppError("MEMBER_NOT_FOUND", 404, "No member of this organization has that email address"),
  alreadyInDepartment: () => new AppError("ALREADY_MEMBER", 409, "The user is already in this department"),
  alreadyHasPrincipal: () => new AppError("ALREADY_MEMBER", 409, "The user already holds this principal"),
  alreadyLinked: () => new AppError("ALREADY_LINKED", 409, "The principal is already linked to this department"),
  notLinked: () => new AppError("NOT_LINKED", 404, "The principal is not linked to this department"),
  invalidPolicy: (message: string) =>
    new AppError("VALIDATION_ERROR", 400, message, { errors: [{ path: "defaultExpiryHours", message }] }),
};
