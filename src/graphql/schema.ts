import "reflect-metadata";
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { buildSchema } from "type-graphql";
import type { Services } from "../container.js";
import { AdminResolver } from "./admin/admin.resolver.js";
import { ApiKeysResolver } from "./api-keys/api-keys.resolver.js";
import { AuditResolver } from "./audit/audit.resolver.js";
import { authChecker } from "./auth-checker.js";
import { AuthResolver } from "./auth/auth.resolver.js";
import { ContactResolver } from "./contact/contact.resolver.js";
import { DirectoryResolver } from "./directory/directory.resolver.js";
import { EmailResolver } from "./email/email.resolver.js";
import { ExternalAuthResolver } from "./external-auth/external-auth.resolver.js";
import { HealthResolver } from "./health/health.resolver.js";
import { InvitesResolver } from "./invites/invites.resolver.js";
import { MfaResolver } from "./mfa/mfa.resolver.js";
import { NetworkAccessResolver } from "./network-access/network-access.resolver.js";
import { NetworksResolver } from "./networks/networks.resolver.js";
import { OidcResolver } from "./oidc/oidc.resolver.js";
import { OrgsResolver } from "./orgs/orgs.resolver.js";
import { SshCaResolver } from "./ssh-ca/ssh-ca.resolver.js";
import { SshKeysResolver } from "./ssh-keys/ssh-keys.resolver.js";
import { UsersResolver } from "./users/users.resolver.js";

const RESOLVERS = [
  HealthResolver,
  AuthResolver,
  UsersResolver,
  AdminResolver,
  OrgsResolver,
  InvitesResolver,
  DirectoryResolver,
  ApiKeysResolver,
  AuditResolver,
  SshKeysResolver,
  SshCaResolver,
  MfaResolver,
  OidcResolver,
  ExternalAuthResolver,
  NetworksResolver,
  NetworkAccessResolver,
  EmailResolver,
  ContactResolver,
] as const;

/** Builds the schema with resolver instances made once from the services (no DI framework). */
export async function buildGraphqlSchema(services: Services): Promise<GraphQLSchema> {
  const instances = new Map<unknown, unknown>(RESOLVERS.map((R) => [R, new R(services)]));
  return buildSchema({
    resolvers: RESOLVERS,
    authChecker,
    validate: false,
    container: { get: (cls) => instances.get(cls) },
  });
}

/** The SDL committed as schema.graphql (sorted, so diffs show only real changes). */
export const printSdl = (schema: GraphQLSchema): string => printSchema(lexicographicSortSchema(schema)) + "\n";
