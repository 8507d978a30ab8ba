import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import type { CredentialsService } from "../auth/credentials.service.js";
import type { SessionsService } from "../auth/sessions/sessions.service.js";
import type { AuditService } from "../audit/audit.service.js";
import type { NetworkOffboarding } from "../networks/offboarding.js";
import type { CertificatesService } from "../ssh-ca/certificates.service.js";
import { UsersService } from "./users.service.js";

export interface UsersModuleDeps {
  db: Db;
  clock: Clock;
  audit: AuditService;
  credentials: CredentialsService;
  sessions: SessionsService;
  certificates: Pick<CertificatesService, "revokeForOffboarding" | "revokeAllOfOrganization">;
  networks: Pick<NetworkOffboarding, "personLeft" | "organizationDeleted" | "apply">;
}

/** The signed-in user's own account: profile, deletion, own audit log (rule 15). */
export function createUsersModule(deps: UsersModuleDeps) {
  return { users: new UsersService(deps) };
}
