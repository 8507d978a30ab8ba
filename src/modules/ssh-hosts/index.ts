import type { CoreDeps } from "../module-deps.js";
import { HostsService, type HostsCa, type HostsSettings } from "./hosts.service.js";

export { ENROLLMENT_TOKEN_PREFIX, RENEW_NAMESPACE, type EnrollmentTokenView, type HostCredentials, type HostView, type HostsService } from "./hosts.service.js";
export { createEnrollmentTokenSchema, enrollHostSchema, renewChallengeSchema, renewHostSchema, retireHostSchema } from "./ssh-hosts.schemas.js";

/**
 * Enrolled SSH servers: one-time enrollment tokens, hosts certified by the organization's host CA,
 * renewal by proof of the current host key, retirement (their certificates revoked).
 */
export function createSshHostsModule(deps: CoreDeps & { ca: HostsCa; config: HostsSettings }) {
  return { hosts: new HostsService(deps.db, deps.clock, deps.audit, deps.ca, deps.config) };
}

export type SshHostsModule = ReturnType<typeof createSshHostsModule>;
