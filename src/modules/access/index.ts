/**
 * The access core: the one place that answers "may this caller do this here". Caller guards,
 * organization roles and their capabilities, live memberships, the MFA standing the tenancy guard
 * reads. It imports no other module, so every module may use it without a loop.
 */
export { AccessErrors } from "./access.errors.js";
export { assertReach, type ReachTarget } from "./admin-reach.js";
export { requireApiKey, requireApiKeyScope, requirePersonalUser, requireScope, requireSuperadmin, requireUser } from "./guards.js";
export { createMembershipCache, type MembershipReader } from "./membership-cache.js";
export {
  membershipColumns,
  effectiveRoleSql,
  readAt,
  countActiveMemberships,
  countActiveMembershipsWithin,
  getActiveMembership,
  getActiveMemberships,
  getActiveMembershipsOfUsers,
  type ActiveMembership,
} from "./memberships.repository.js";
export { isPastDue, isPastMfaDeadline, type ComplianceStatus } from "./mfa-standing.repository.js";
export { accessCan, checkKeyOrgAccess, checkOrgAccess, requireOrgAccess, requireOrgCaller, requireStoredRole, type CallerOrgAccess, type KeyOrgAccess, type OrgAccess } from "./org-access.js";
export { API_KEY_SCOPE_CAPABILITIES, CAPABILITIES, STORED_ROLE_ONLY, can, isAdminRole, keyCan, roleAtLeast, roleRank, ROLES, type Capability, type OrgRole } from "./permissions.js";
export type { Offboarding } from "./offboarding.js";
export { soleOwnedOrganizations } from "./sole-owner.repository.js";
