import { Extensions } from "type-graphql";
import type { OrgRole } from "./common/org-role.js";

/**
 * Marks an organization-scoped operation with the lowest role that may call it. The services
 * enforce the rule; this makes it visible in the schema, where the tenancy matrix test reads it.
 */
export const org = (role: OrgRole) => Extensions({ org: role });
