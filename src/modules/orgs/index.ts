import type { Config } from "../../config/index.js";
import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { Logger } from "../../infra/logger.js";
import type { AuditService } from "../audit/audit.service.js";
import type { EmailService } from "../email/email.service.js";
import { AllOrganizationsService } from "./all-orgs.service.js";
import { DepartmentsService } from "./departments.service.js";
import { InviteMail } from "./invite-mail.js";
import { InvitesService, type InvitesDeps } from "./invites.service.js";
import { MembersService } from "./members.service.js";
import { MyDirectoryService } from "./my-directory.service.js";
import type { Offboarding } from "../access/index.js";
import type { AdmissionConfig } from "./admission.js";
import { OrgsService } from "./orgs.service.js";
import { PrincipalsService } from "./principals.service.js";


export interface OrgsModuleDeps extends Offboarding {
  db: Db;
  clock: Clock;
  audit: AuditService;
  email: EmailService;
  logger: Logger;
  config: Pick<Config, "orgs" | "http" | "tokens" | "rateLimits">;
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
    members: new MembersService({ db, clock, audit, certificates, networks }),
    invites: new InvitesService({ db, clock, audit, logger, mail: new InviteMail({ email, config: invitesConfig }), ...deps.invites, config: invitesConfig }),
    departments,
    principals: new PrincipalsService(db, clock, audit, departments),
    myDirectory: new MyDirectoryService(db),
    allOrganizations: new AllOrganizationsService(db),
  };
}

export type OrgsModule = ReturnType<typeof createOrgsModule>;
