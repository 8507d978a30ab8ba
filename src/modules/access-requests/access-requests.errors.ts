import { AppError } from "../../lib/errors.js";

export const AccessRequestErrors = {
  departmentNotFound: () => new AppError("DEPARTMENT_NOT_FOUND", 404, "Department not found"),
  notFound: () => new AppError("ACCESS_REQUEST_NOT_FOUND", 404, "Access request not found"),
  principalNotFound: () => new AppError("PRINCIPAL_NOT_FOUND", 404, "Principal not found in this organization"),
  notRequestable: (name: string) => new AppError("NOT_REQUESTABLE", 403, `The principal ${name} cannot be requested: an admin has not made it requestable`),
  notRequestableByYou: (name: string, department: string) =>
    new AppError("NOT_REQUESTABLE", 403, `The principal ${name} can be requested only by members of the department ${department}`),
  tooLong: (max: number, what = "principal") => new AppError("DURATION_TOO_LONG", 400, `This ${what} can be requested for at most ${max} minutes`),
  departmentNotRequestable: (name: string) => new AppError("NOT_REQUESTABLE", 403, `The department ${name}'s grants cannot be requested: an admin has not made them requestable`),
  departmentNotRequestableByYou: (name: string, department: string) =>
    new AppError("NOT_REQUESTABLE", 403, `The department ${name}'s grants can be requested only by members of the department ${department}`),
  departmentExists: () => new AppError("ACCESS_REQUEST_EXISTS", 409, "You already have a pending request for this department: cancel it or wait for its decision"),
  notInForce: (why: string) => new AppError("GRANT_NOT_ACTIVE", 409, `Only a grant in force can be ended early: this one ${why}`),
  longerThanAsked: (asked: number) => new AppError("DURATION_TOO_LONG", 400, `An approval can shorten a request, not lengthen it: at most the ${asked} minutes asked for`),
  exists: () => new AppError("ACCESS_REQUEST_EXISTS", 409, "You already have a pending request for this principal: cancel it or wait for its decision"),
  decided: (state: string) => new AppError("REQUEST_ALREADY_DECIDED", 409, `This request is already ${state}`),
  expired: () => new AppError("REQUEST_EXPIRED", 409, "This request lapsed before anyone decided it: the person can ask again"),
  roleNeverRequestable: () => new AppError("NOT_REQUESTABLE", 403, "The owner role is never lent for a time: an owner transfers ownership or makes you an owner"),
  roleNotAbove: (role: string, stored: string) => new AppError("NOT_REQUESTABLE", 403, `You already hold the ${stored} role here, which is not below ${role}: only a role above your own can be requested`),
  roleNotRequestable: (role: string) => new AppError("NOT_REQUESTABLE", 403, `The role ${role} cannot be requested: an owner has not made it requestable`),
  roleNotRequestableByYou: (role: string, department: string) => new AppError("NOT_REQUESTABLE", 403, `The role ${role} can be requested only by members of the department ${department}`),
  roleExists: () => new AppError("ACCESS_REQUEST_EXISTS", 409, "You already have a pending role request in this organization: cancel it or wait for its decision"),
  ownersOnly: (what: string) => new AppError("OWNER_REQUIRED", 403, `Only an owner of the organization can ${what}`),
  ownRequest: () => new AppError("OWN_REQUEST", 403, "Nobody decides their own request: another approver of the organization decides it"),
  notRequester: () => new AppError("AUTHORIZATION_ERROR", 403, "Only the person who asked can cancel a request; an approver rejects it"),
};
