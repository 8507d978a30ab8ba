import { AccessRequestsService, type AccessRequestsDeps } from "./access-requests.service.js";
export { type AccessRequestView, type AccessPolicyView, type DepartmentAccessPolicyView, type RoleAccessPolicyView } from "./access-requests.views.js";
export { accessPolicySchema, approveSchema, REQUESTABLE_ROLES, roleParamSchema, listRequestsSchema, parseDuration, rejectSchema, requestAccessSchema, revokeSchema } from "./access-requests.schemas.js";
export { PENDING_TTL_MS } from "./access-requests.service.js";

/**
 * Just-in-time access requests (issue 37): principals asked for a bounded time, decided by the
 * organization's approvers, granted until a time that signing reads (grants end by themselves).
 */
export function createAccessRequestsModule(deps: AccessRequestsDeps) {
  const accessRequests = new AccessRequestsService(deps);
  return {
    accessRequests,
    /** The port signing asks for a person's grants in force (wired into ssh-ca by the container). */
    activeGrants: { activeGrants: (userId: string, orgId: string, at: Date) => accessRequests.activeGrants(userId, orgId, at) },
  };
}

export type AccessRequestsModule = ReturnType<typeof createAccessRequestsModule>;
