import type { OrgRow } from "./orgs.repository.js";
import type { OrgRole } from "../access/index.js";

export interface OrganizationView {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  logoUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** The caller's role in it (the effective one: a role grant in force counts). */
  role: OrgRole;
  /** The role kept on the caller's membership, whatever a role grant adds. */
  storedRole: OrgRole;
  /** When a role above the stored one, held through a role grant, ends (null: not elevated). */
  elevatedUntil: Date | null;
}

/** The caller's standing in an organization, as a membership read gives it (membershipColumns). */
export type CallerRole = Pick<OrganizationView, "role" | "storedRole" | "elevatedUntil">;

/** The standing of an organization's creator: its owner, for good. */
export const OWNER: CallerRole = { role: "owner", storedRole: "owner", elevatedUntil: null };

export const toOrgView = (org: OrgRow, { role, storedRole, elevatedUntil }: CallerRole): OrganizationView => ({ ...org, role, storedRole, elevatedUntil });

/** The CLI's compact form: `--list-orgs` and `--org-id`. */
export interface SimpleOrgView {
  id: string;
  name: string;
  slug: string;
  role: OrgRole;
}
