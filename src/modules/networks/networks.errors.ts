import { AppError } from "../../lib/errors.js";
import type { ControllerError } from "./controller/index.js";

/** A controller's failure as an AppError; `detail` is the controller's own words (" (…)") or "". */
const CONTROLLER: Record<ControllerError["kind"], (detail: string) => AppError> = {
  unreachable: (d) => new AppError("CONTROLLER_UNREACHABLE", 502, `The network controller cannot be reached${d}`),
  unauthorized: (d) => new AppError("CONTROLLER_UNAUTHORIZED", 502, `The network controller refused the API token${d}`),
  forbidden: (d) => new AppError("CONTROLLER_FORBIDDEN", 502, `The network controller accepted the API token but does not let it reach this network${d}`),
  not_found: (d) => new AppError("CONTROLLER_NOT_FOUND", 404, `The network controller does not know this network or member${d}`),
  rate_limited: (d) => new AppError("CONTROLLER_RATE_LIMITED", 503, `The network controller is rate limiting Keyward: try again shortly${d}`),
  server_error: (d) => new AppError("CONTROLLER_ERROR", 502, `The network controller failed${d}`),
  bad_response: (d) => new AppError("CONTROLLER_BAD_RESPONSE", 502, `The network controller answered something Keyward does not understand${d}`),
};

export const NetworkErrors = {
  controllerNotConfigured: () => new AppError("CONTROLLER_NOT_CONFIGURED", 409, "Configure this organization's ZeroTier controller first (PUT …/zerotier-config)"),
  controller: (e: ControllerError) => CONTROLLER[e.kind](e.kind === "not_found" ? "" : ` (${e.message})`),
  controllerUrlRequired: () => new AppError("VALIDATION_ERROR", 400, "zt_api_url: the self-hosted controller's API URL is required in controller mode"),
  controllerUrlNotAllowed: () =>
    new AppError("CONTROLLER_URL_NOT_ALLOWED", 403, "This controller URL is not on the operator's list (ZEROTIER_CONTROLLER_URLS): ask the Keyward operator to allow it"),
  networkNotFound: () => new AppError("NETWORK_NOT_FOUND", 404, "Network not found"),
  networkExists: () => new AppError("NETWORK_ALREADY_IMPORTED", 409, "This ZeroTier network is already a portal network of the organization"),
  deviceNotFound: () => new AppError("DEVICE_NOT_FOUND", 404, "Device not found"),
  deviceExists: () => new AppError("DEVICE_ALREADY_REGISTERED", 409, "A device with this node id is already registered in the organization"),
  approvalNotFound: () => new AppError("APPROVAL_NOT_FOUND", 404, "Approval not found"),
  approvalExists: () => new AppError("APPROVAL_EXISTS", 409, "There is already a pending or granted approval for this person on this network"),
  invalidTransition: (from: string, action: string) => new AppError("INVALID_STATE", 409, `Cannot ${action} an approval that is ${from}`),
  inviteOnly: () => new AppError("INVITE_ONLY", 403, "This network admits people only by assignment from its managers"),
  notManager: () => new AppError("AUTHORIZATION_ERROR", 403, "Only this network's managers and the organization's admins can do this"),
  ownRequest: () => new AppError("OWN_REQUEST", 403, "Nobody decides their own request or grants themselves access: another manager of this network decides it"),
  membershipNotFound: () => new AppError("MEMBERSHIP_NOT_FOUND", 404, "Network membership not found"),
  notApproved: () => new AppError("NOT_APPROVED", 403, "You are not approved for this network"),
  suspended: () => new AppError("ACCESS_SUSPENDED", 403, "Network access is suspended by a kill switch: an administrator must lift it"),
  lifetimeTooLong: (max: number) => new AppError("LIFETIME_TOO_LONG", 400, `This network allows activations of at most ${max} minutes`),
  sessionNotFound: () => new AppError("SESSION_NOT_FOUND", 404, "Activation session not found"),
  killSwitchNotFound: () => new AppError("KILL_SWITCH_NOT_FOUND", 404, "Kill switch event not found"),
};
