import { z } from "zod";
import type { Services } from "../../src/container.js";
import { list, paged, sameShape, type Returns } from "./same-shape.js";
import { adminUserView, backupCodes, healthView, readinessView, credentialView, meView, meWithOrganizations, mfaRequired, profileView, mfaStatusView, sessionIssued, sessionView, totpEnabled, totpEnrollment, userView } from "./accounts.js";
import { addedMemberView, certPolicyView, departmentView, groupMemberView, memberView, orgView, principalView, restInviteView, simpleOrgView } from "./orgs.js";
import { clientView, consentView, createdClientView, createdRegistrationTokenView, registrationTokenView, rotatedSecret } from "./oidc.js";
import { auditChainCheckView, auditVerificationView } from "./audit.js";
import { approvalView, deviceView, portalNetworkView } from "./networks.js";
import { domainView } from "./domains.js";
import { accessPolicyView, accessRequestView, departmentAccessPolicyView, roleAccessPolicyView } from "./access-requests.js";
import { memberSsoConnectionView, ssoConnectionView } from "./sso.js";
import { apiKeyView, caView, certificateView, createdApiKeyView, signedCertificateView, sshClientConfigView, sshKeyView } from "./ssh.js";

/**
 * The views the services return, as zod schemas: the OpenAPI document describes `data` with them
 * (z.toJSONSchema; Dates travel as ISO strings, keys as snake_case). Each one is held to its
 * TypeScript view type by `sameShape`, so a field added to, removed from or retyped in a view
 * without its schema is a compile error, not a silently wrong document.
 */
// --- the `data` of the routes that use them (wrappers as the handlers build them) ---
export const data = {
  health: healthView,
  readiness: readinessView,
  user: z.object({ user: userView }),
  me: z.object({ user: meView }),
  profile: z.object({ user: profileView }),
  meWithOrganizations,
  session: sessionIssued,
  login: z.union([sessionIssued, mfaRequired]),
  signedOut: z.object({
    idpLogoutUrl: z.string().nullable().describe("For a session an organization's SAML identity provider issued: send the browser here to end the IdP session too (single logout). The Keyward session has already ended."),
  }),
  sessions: list("sessions", sessionView),
  mfaStatus: mfaStatusView,
  credentials: list("credentials", credentialView),
  credential: z.object({ credential: credentialView }),
  credentialRegistered: z.object({ credentialId: z.string(), credential: credentialView, backupCodes: z.array(z.string()).nullable() }),
  totpEnrollment,
  totpEnabled,
  backupCodes,
  adminUsers: paged("users", adminUserView),
  adminUser: z.object({ user: adminUserView, sshKeys: z.array(sshKeyView) }),
  revokedSessions: z.object({ revoked: z.number().int() }),
  organization: z.object({ organization: orgView }),
  organizationWithCount: z.object({ organization: orgView, memberCount: z.number().int() }),
  organizations: list("organizations", orgView),
  simpleOrganizations: list("organizations", simpleOrgView),
  members: list("members", memberView),
  member: z.object({ member: memberView }),
  invites: list("invites", restInviteView),
  invite: z.object({ invite: restInviteView }),
  departments: list("departments", departmentView),
  department: z.object({ department: departmentView }),
  principals: list("principals", principalView),
  principal: z.object({ principal: principalView }),
  groupMembers: list("members", groupMemberView),
  addedMember: z.object({ member: addedMemberView }),
  certPolicy: z.object({ certPolicy: certPolicyView }),
  sshKeys: list("keys", sshKeyView),
  sshKey: sshKeyView,
  sshKeyVerified: z.object({ verified: z.boolean(), key: sshKeyView }),
  sshKeyDeleted: z.object({ status: z.literal("deleted") }),
  certificates: paged("certificates", certificateView),
  certificate: z.object({ certificate: certificateView }),
  certificateRevoked: z.object({ status: z.literal("revoked"), certId: z.string(), reason: z.string().nullable(), certificate: certificateView }),
  signedCertificate: signedCertificateView,
  cas: list("cas", caView),
  ca: z.object({ ca: caView }),
  caRotated: z.object({ ca: caView, oldFingerprint: z.string() }),
  caDeleted: z.object({ caId: z.string() }),
  sshClientConfig: sshClientConfigView,
  networks: list("networks", portalNetworkView),
  network: z.object({ network: portalNetworkView }),
  devices: list("devices", deviceView),
  device: z.object({ device: deviceView }),
  deviceCreated: z.object({ device: deviceView, membershipsCreated: z.number().int() }),
  approvals: list("approvals", approvalView),
  /** A network's pending requests: the original API's `{requests, count}`. */
  networkRequests: list("requests", approvalView),
  approval: z.object({ approval: approvalView }),
  clients: list("clients", clientView),
  client: z.object({ client: clientView }),
  createdClient: z.object({ client: createdClientView }),
  rotatedClient: z.object({ client: rotatedSecret }),
  registrationTokens: list("registrationTokens", registrationTokenView),
  registrationToken: z.object({ registrationToken: registrationTokenView }),
  createdRegistrationToken: z.object({ registrationToken: createdRegistrationTokenView }),
  consents: list("consents", consentView),
  apiKeys: list("apiKeys", apiKeyView),
  apiKey: z.object({ apiKey: apiKeyView }),
  createdApiKey: z.object({ apiKey: createdApiKeyView }),
  domains: list("domains", domainView),
  domain: z.object({ domain: domainView }),
  ssoConnections: list("connections", ssoConnectionView),
  ssoConnection: z.object({ connection: ssoConnectionView }),
  memberSsoConnections: list("connections", memberSsoConnectionView),
  ssoLinkStart: z.object({ authorizationUrl: z.string() }),
  ssoLinkConfirmed: sessionIssued.extend({
    redirectTo: z.string().describe("Where the browser goes next: the path the SSO sign-in asked for (next, same-origin), else /"),
  }),
  auditVerification: z.object({ verification: auditVerificationView }),
  auditChainCheck: z.object({ check: auditChainCheckView }),
  lastAuditChainCheck: z.object({ check: auditChainCheckView.nullable() }),
  accessRequest: z.object({ accessRequest: accessRequestView }),
  accessRequests: list("accessRequests", accessRequestView),
  accessPolicy: z.object({ policy: accessPolicyView }),
  accessPolicies: list("policies", accessPolicyView),
  departmentAccessPolicy: z.object({ policy: departmentAccessPolicyView }),
  departmentAccessPolicies: list("policies", departmentAccessPolicyView),
  roleAccessPolicy: z.object({ policy: roleAccessPolicyView }),
  roleAccessPolicies: list("policies", roleAccessPolicyView),
};

sameShape<z.output<typeof data.sshKeyVerified>, Returns<Services["sshKeys"]["verify"]>>();
sameShape<z.output<typeof data.caRotated>, Returns<Services["cas"]["rotate"]>>();
sameShape<z.output<typeof data.revokedSessions>, Returns<Services["mySessions"]["revokeOthers"]>>();
sameShape<z.output<typeof orgView> & { memberCount: number }, Returns<Services["orgs"]["get"]>>();
sameShape<z.output<typeof data.deviceCreated>, Returns<Services["devices"]["create"]>>();
