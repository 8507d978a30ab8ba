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
  /** The caller's role in it. */
  role: OrgRole;
}

export const toOrgView = (org: OrgRow, role: OrgRole): OrganizationView => ({ ...org, role });

/** The CLI's compact form: `--list-orgs` and `--org-id`. */
export interface SimpleOrgView {
  id: string;
  name: string;
  slug: string;
  role: OrgRole;
}
