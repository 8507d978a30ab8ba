import { closedSet, type ValueOf } from "./closed-set.js";

/** The GraphQL face of an organization role; `@org(role)` marks the lowest one an operation admits. */
export const OrgRole = closedSet("OrgRole", ["owner", "admin", "member", "guest"], "owner > admin > member > guest (guests read, nothing else)");
export type OrgRole = ValueOf<typeof OrgRole>;
