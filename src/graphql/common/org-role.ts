import { registerEnumType } from "type-graphql";

/** The GraphQL face of an organization role; `@org(role)` marks the lowest one an operation admits. */
export enum OrgRole {
  owner = "owner",
  admin = "admin",
  member = "member",
  guest = "guest",
}
registerEnumType(OrgRole, { name: "OrgRole", description: "owner > admin > member > guest (guests read, nothing else)" });
