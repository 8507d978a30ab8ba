import type { Config } from "../../config/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db, Executor } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import type { AuditService } from "../audit/index.js";
import type { EmailService } from "../email/index.js";
import { AllOrganizationsService } from "./all-orgs.service.js";
import { DepartmentsService } from "./departments.service.js";
import { InviteMail } from "./invite-mail.js";
import { InvitesService, type InvitesDeps } from "./invites.service.js";
import { type MemberRemovalPort, MembersService } from "./members.service.js";
import { MyDirectoryService } from "./my-directory.service.js";
import type { Offboarding } from "../access/index.js";
import type { AdmissionConfig } from "./admission.js";
import { OrgsService } from "./orgs.service.js";
import { PrincipalsService } from "./principals.service.js";
import { directoryRepository } from "./directory.repository.js";
import { orgsRepository, type OrgRow } from "./orgs.repository.js";
export { allOrgsQuerySchema } from "./all-orgs.service.js";
export { applyFederatedMembership, type FederatedGrant, type FederatedResult } from "./federated-membership.js";
export { provisionedDepartments, provisionedMembership } from "./provisioned-membership.js";
export { DEFAULT_CERT_POLICY } from "./departments.service.js";
export { type InviteView } from "./invites.views.js";
export { OrgErrors } from "./orgs.errors.js";
export { type MemberRemovalPort } from "./members.service.js";
export { memberStanding, type CutStanding } from "./member-standing.js";
export { assertBelowOrgLimit, type OrgLimitConfig } from "./org-limit.js";
export { acceptInviteSchema, addMemberSchema, adminDeleteSchema, adminPasswordSchema, adminUsersQuerySchema, certPolicySchema, changeRoleSchema, createOrgSchema, deleteOrgSchema, departmentSchema, emailSchema, inviteSchema, principalSchema, transferSchema, updateDepartmentSchema, updateOrgSchema, updatePrincipalSchema } from "./orgs.schemas.js";
export { type OrgsService } from "./orgs.service.js";
export { type OrganizationView, type SimpleOrgView } from "./orgs.views.js";

export interface OrgsModuleDeps extends Offboarding {
  db: Db;
  clock: Clock;
  audit: AuditService;
  email: EmailService;
  logger: Logger;
  config: Pick<Config, "orgs" | "http" | "tokens" | "rateLimits">;
  /** Removing a member is offboarding (the offboarding module, above this one). */
  removal: MemberRemovalPort;
  /** What invitations need beyond the above: accounts, credentials, sessions, limits. */
  invites: Omit<InvitesDeps, "db" | "clock" | "audit" | "mail" | "logger" | "config">;
}

/** Organizations, their members, invitations, departments and principals (rule 15). */
export function createOrgsModule(deps: OrgsModuleDeps) {
  const { db, clock, audit, email, logger, certificates, networks, config } = deps;
  const limit: AdmissionConfig = config.orgs;
  const invitesConfig = { appUrl: config.http.appUrl, inviteTtl: config.tokens.inviteTtl, limit, rate: config.rateLimits.invites };
  const departments = new DepartmentsService(db, clock, audit);
  return {
    orgs: new OrgsService({ db, clock, audit, certificates, networks, logger, limit }),
    members: new MembersService({ db, clock, audit, certificates, networks, removal: deps.removal }),
    invites: new InvitesService({ db, clock, audit, logger, mail: new InviteMail({ email, config: invitesConfig }), ...deps.invites, config: invitesConfig }),
    departments,
    principals: new PrincipalsService(db, clock, audit, departments),
    myDirectory: new MyDirectoryService(db),
    allOrganizations: new AllOrganizationsService(db),
  };
}

export type OrgsModule = ReturnType<typeof createOrgsModule>;

/** Live organizations by id, for naming them beside other records (an operator's account search). */
export function organizationsByIds(db: Executor, ids: string[]): Promise<OrgRow[]> {
  return orgsRepository.findByIds(db, ids);
}

/** Whether a live organization has this id. */
export async function organizationExists(db: Executor, id: string): Promise<boolean> {
  return (await orgsRepository.findById(db, id)) !== undefined;
}

/**
 * A member's departments, read by SSH signing and the sudo check: which departments in these
 * organizations, and the certificate policy each stores (null: the default policy).
 */
export const memberDepartments = {
  of: (db: Executor, userId: string, orgIds: string[]) => directoryRepository.userDepartments(db, userId, orgIds),
  policies: (db: Executor, userId: string, orgId: string) => directoryRepository.userDepartmentPolicies(db, userId, orgId),
  /** Departments granted for a bounded time (just-in-time access): their stored policies, by id. */
  policiesOf: (db: Executor, orgId: string, departmentIds: string[]) => directoryRepository.departmentPoliciesById(db, orgId, departmentIds),
};
