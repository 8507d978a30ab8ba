import "reflect-metadata";
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { buildSchema } from "type-graphql";
import type { Services } from "../container.js";
import { authChecker } from "./auth-checker.js";
import { AdminResolver } from "./resolvers/admin.resolver.js";
import { AuthResolver } from "./resolvers/auth.resolver.js";
import { UsersResolver } from "./resolvers/users.resolver.js";
import { ApiKeysResolver } from "./resolvers/api-keys.resolver.js";
import { DirectoryResolver } from "./resolvers/directory.resolver.js";
import { OrgsResolver } from "./resolvers/orgs.resolver.js";
import { SshResolver } from "./resolvers/ssh.resolver.js";
import { MiscResolver } from "./resolvers/misc.resolver.js";
import { MfaResolver } from "./resolvers/mfa.resolver.js";
import { OidcResolver } from "./resolvers/oidc.resolver.js";
import { ExternalAuthResolver } from "./resolvers/external-auth.resolver.js";
import { NetworksResolver } from "./resolvers/networks.resolver.js";
import { NetworkAccessResolver } from "./resolvers/network-access.resolver.js";

const RESOLVERS = [AuthResolver, UsersResolver, AdminResolver, OrgsResolver, DirectoryResolver, ApiKeysResolver, SshResolver, MiscResolver, MfaResolver, OidcResolver, ExternalAuthResolver, NetworksResolver, NetworkAccessResolver] as const;

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
