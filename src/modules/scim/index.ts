import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { AuditService } from "../audit/index.js";
import type { CredentialsService } from "../auth/index.js";
import type { DomainsService } from "../domains/index.js";
import type { ScimDeprovisioner } from "./scim-deprovisioner.js";
import { ScimActivityService } from "./scim-activity.service.js";
import { ScimGroupsService } from "./scim-groups.service.js";
import { ScimUsersService } from "./scim-users.service.js";

export { offboardingDeprovisioner, type AfterCommit, type ScimDeprovisioner, type ScimTarget } from "./scim-deprovisioner.js";
export { describeScimRequest, SCIM_READ_TOUCH_SECONDS, type ScimActivityService, type ScimActivityView, type ScimErrorView, type ScimKeyActivityView, type ScimRequestEvent } from "./scim-activity.service.js";
export { resourceTypes, schemas, serviceProviderConfig } from "./scim-discovery.js";
export { isScimError, SCIM, ScimError, ScimErrors, type ScimType } from "./scim.errors.js";
export type { ScimGroupsService } from "./scim-groups.service.js";
export { SCIM_MAX_RESULTS, type ListQuery, type Projection, type ScimAnswer, type ScimUsersService } from "./scim-users.service.js";

export interface ScimModuleDeps {
  db: Db;
  clock: Clock;
  audit: AuditService;
  credentials: Pick<CredentialsService, "createAccount">;
  domains: Pick<DomainsService, "findVerifiedOrganizationForEmail">;
  /** What active=false, active=true and DELETE do to a person: offboarding (offboardingDeprovisioner). */
  deprovisioner: ScimDeprovisioner;
  config: { publicUrl: string };
}

/** SCIM 2.0 provisioning of an organization's managed accounts (Users) and departments (Groups) (issue 36, rule 15). */
export function createScimModule(deps: ScimModuleDeps) {
  const baseUrl = scimBaseUrl(deps.config.publicUrl);
  return {
    scimUsers: new ScimUsersService({ ...deps, baseUrl }),
    scimGroups: new ScimGroupsService({ ...deps, baseUrl }),
    scimActivity: new ScimActivityService({ db: deps.db, clock: deps.clock, baseUrl }),
  };
}

/** The one SCIM base URL of this Keyward (the bearer key decides the organization). */
export const scimBaseUrl = (publicUrl: string): string => `${publicUrl.replace(/\/+$/, "")}/scim/v2`;
