import "reflect-metadata";
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { buildSchema } from "type-graphql";
import type { Services } from "../container.js";
import { AccessRequestsResolver } from "./access-requests/access-requests.resolver.js";
import { AdminResolver } from "./admin/admin.resolver.js";
import { OperatorsResolver } from "./admin/operators.resolver.js";
import { ApiKeysResolver } from "./api-keys/api-keys.resolver.js";
import { SshHostsResolver } from "./ssh-hosts/ssh-hosts.resolver.js";
import { AuditChainResolver } from "./audit/audit-chain.resolver.js";
import { AuditResolver } from "./audit/audit.resolver.js";
import { authChecker } from "./auth-checker.js";
import { AuthResolver } from "./auth/auth.resolver.js";
import { ContactResolver } from "./contact/contact.resolver.js";
import { DomainsResolver } from "./domains/domains.resolver.js";
import { SsoResolver } from "./sso/sso.resolver.js";
import { ScimResolver } from "./scim/scim.resolver.js";
import { DepartmentsResolver, DirectoryResolver, PrincipalsResolver } from "./directory/directory.resolver.js";
import { EmailResolver } from "./email/email.resolver.js";
import { ExternalAuthResolver } from "./external-auth/external-auth.resolver.js";
import { HealthResolver } from "./health/health.resolver.js";
import { InvitesResolver } from "./invites/invites.resolver.js";
import { MfaResolver } from "./mfa/mfa.resolver.js";
import { NetworkAccessResolver } from "./network-access/network-access.resolver.js";
import { NetworksResolver } from "./networks/networks.resolver.js";
import { OidcResolver } from "./oidc-clients/oidc-clients.resolver.js";
import { RegistrationTokensResolver } from "./oidc-clients/registration.resolver.js";
import { OrgsResolver } from "./orgs/orgs.resolver.js";
import { OffboardingResolver } from "./offboarding/offboarding.resolver.js";
import { SshCaResolver } from "./ssh-ca/ssh-ca.resolver.js";
import { SshKeysResolver } from "./ssh-keys/ssh-keys.resolver.js";
import { UsersResolver } from "./users/users.resolver.js";

/** The named services only: a resolver gets what its constructor's Pick asks for, nothing more. */
const pick = <K extends keyof Services>(s: Services, ...keys: K[]): Pick<Services, K> =>
  Object.fromEntries(keys.map((k) => [k, s[k]])) as Pick<Services, K>;

/** Every resolver, made once from the services it calls (no DI framework). */
function createResolvers(s: Services) {
  return [
    new HealthResolver(pick(s, "health")),
    new AuthResolver(pick(s, "accounts", "login", "mySessions", "ssoLogout")),
    new UsersResolver(pick(s, "users")),
    new AdminResolver(pick(s, "adminUsers", "operators")),
    new OperatorsResolver(pick(s, "allOrganizations", "operators", "globalKillSwitch")),
    new OrgsResolver(pick(s, "orgs", "members")),
    new OffboardingResolver(pick(s, "offboarding")),
    new InvitesResolver(pick(s, "invites")),
    new DirectoryResolver(pick(s, "myDirectory")),
    new DepartmentsResolver(pick(s, "departments")),
    new PrincipalsResolver(pick(s, "principals")),
    new ApiKeysResolver(pick(s, "apiKeys")),
    new SshHostsResolver(pick(s, "hostEnrollment", "hostRenewal", "hostPrincipals")),
    new DomainsResolver(pick(s, "domains")),
    new SsoResolver(pick(s, "ssoConnections", "ssoLinks", "ssoSignIn")),
    new ScimResolver(pick(s, "scimActivity")),
    new AuditResolver(pick(s, "activity")),
    new AuditChainResolver(pick(s, "auditVerify")),
    new SshKeysResolver(pick(s, "sshKeys")),
    new SshCaResolver(pick(s, "cas", "signing", "certificates")),
    new MfaResolver(pick(s, "mfa", "mfaLogin", "mfaPolicy")),
    new OidcResolver(pick(s, "oidcClients", "oidcClientAdmin")),
    new RegistrationTokensResolver(pick(s, "oidcRegistration")),
    new ExternalAuthResolver(pick(s, "externalAuth", "linkedAccounts", "oauthProviders")),
    new NetworksResolver(pick(s, "networkController", "portalNetworks", "networkReconcile")),
    new NetworkAccessResolver(pick(s, "devices", "networkApprovals", "networkAccess")),
    new AccessRequestsResolver(pick(s, "accessRequests")),
    new EmailResolver(pick(s, "outbox")),
    new ContactResolver(pick(s, "contact")),
  ];
}

/** Builds the schema over the resolver instances; type-graphql asks the container for them by class. */
export async function buildGraphqlSchema(services: Services): Promise<GraphQLSchema> {
  const instances = createResolvers(services);
  const [first, ...rest] = instances.map((r) => r.constructor);
  return buildSchema({
    resolvers: [first!, ...rest],
    authChecker,
    validate: false,
    container: { get: (cls) => instances.find((r) => r.constructor === cls) },
  });
}

/** The SDL committed as schema.graphql (sorted, so diffs show only real changes). */
export const printSdl = (schema: GraphQLSchema): string => printSchema(lexicographicSortSchema(schema)) + "\n";
