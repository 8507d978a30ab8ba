import type { Db } from "../../infra/db.js";
import { emailDomain } from "../../lib/domain-names.js";
import { ssoConnectionsRepository } from "./sso-connections.repository.js";

/**
 * "Must this address sign in through its organization's identity provider?" — asked by password
 * and GitHub/Google sign-in through the auth module's port (src/container.ts wires it), so the auth
 * module never imports this one. Yes when the address's domain is verified for an organization
 * whose enabled connection requires SSO; the answer names where to start.
 */
export function createSsoRequirement(db: Db, publicUrl: string) {
  return {
    async requiredFor(email: string): Promise<{ startUrl: string; connectionId: string; organizationId: string } | null> {
      const domain = emailDomain(email);
      if (!domain) return null;
      const row = await ssoConnectionsRepository.findRequiringForDomain(db, domain);
      if (!row) return null;
      const startUrl = new URL("/sso/start", publicUrl);
      startUrl.searchParams.set("email", email);
      return { startUrl: startUrl.toString(), connectionId: row.id, organizationId: row.organizationId };
    },
  };
}
