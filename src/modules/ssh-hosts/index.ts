import type { CoreDeps } from "../module-deps.js";
import { HostEnrollmentService } from "./enrollment.service.js";
import { HostPrincipalsService } from "./host-principals.service.js";
import type { HostsCa, HostsSettings } from "./hosts.views.js";
import { HostRenewalService } from "./renewal.service.js";

export { ENROLLMENT_TOKEN_PREFIX, type HostEnrollmentService } from "./enrollment.service.js";
export { RENEW_NAMESPACE, type HostRenewalService } from "./renewal.service.js";
export type { EnrollmentTokenView, HostCredentials, HostView } from "./hosts.views.js";
export { type HostPrincipalsService } from "./host-principals.service.js";
export { createEnrollmentTokenSchema, enrollHostSchema, renewChallengeSchema, renewHostSchema, retireHostSchema, setHostPrincipalsSchema } from "./ssh-hosts.schemas.js";

/**
 * Enrolled SSH servers: one-time enrollment tokens, hosts certified by the organization's host CA,
 * renewal by proof of the current host key, retirement (their certificates revoked).
 */
export function createSshHostsModule(deps: CoreDeps & { ca: HostsCa; config: HostsSettings }) {
  return {
    hostEnrollment: new HostEnrollmentService(deps.db, deps.clock, deps.audit, deps.ca, deps.config),
    hostRenewal: new HostRenewalService(deps.db, deps.clock, deps.audit, deps.ca, deps.config),
    hostPrincipals: new HostPrincipalsService(deps.db, deps.clock, deps.audit),
  };
}

export type SshHostsModule = ReturnType<typeof createSshHostsModule>;
