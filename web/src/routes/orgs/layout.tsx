import { Link, useParams } from "@tanstack/react-router";
import { useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect } from "react";
import { SectionFrame } from "../../ui/SectionFrame";
import { useShell, type MyOrganization } from "../../shell";
import { Badge } from "../../ui/Badge";
import { Empty } from "../../ui/States";

const OrgContext = createContext<MyOrganization | null>(null);

/** The organization a screen under /orgs/<slug> is about (from the shell's list of yours). */
export function useOrg(): MyOrganization {
  const org = useContext(OrgContext);
  if (!org) throw new Error("useOrg outside an organization");
  return org;
}

export const isAdmin = (org: MyOrganization) => org.role === "owner" || org.role === "admin";

/**
 * Whether the caller may take the admin actions a role held through a role grant never confers
 * (issue 37; the server's STORED_ROLE_ONLY and requireStoredRole): roles and membership,
 * invitations, API keys, applications, single sign-on, domains, managed accounts, deciding
 * requests and their policies, adding people to principals and departments, principal→department
 * links, host enrollment, server logins, network managers and the network controller. Those need
 * the role kept on the membership; screens hide them otherwise (the API refuses them with 403
 * ELEVATED_ROLE_FORBIDS).
 */
export const canHold = (org: MyOrganization) => org.storedRole === "owner" || org.storedRole === "admin";

/** An admin only until a role grant ends: sees the admin screens, less what needs a lasting role. */
export const isTemporaryAdmin = (org: MyOrganization) => isAdmin(org) && !canHold(org);

const NAV = [
  { to: "/orgs/$slug", label: "Overview", exact: true },
  { to: "/orgs/$slug/members", label: "Members" },
  { to: "/orgs/$slug/departments", label: "Directory" },
  { to: "/orgs/$slug/ssh", label: "SSH" },
  { to: "/orgs/$slug/security", label: "Security" },
  { to: "/orgs/$slug/domains", label: "Domains", admin: true },
  { to: "/orgs/$slug/sso", label: "Single sign-on", admin: true },
  { to: "/orgs/$slug/provisioning", label: "Provisioning (SCIM)", admin: true },
  { to: "/orgs/$slug/apps", label: "Applications", admin: true },
  { to: "/orgs/$slug/networks", label: "Networks" },
  { to: "/orgs/$slug/audit", label: "Audit", admin: true },
  { to: "/orgs/$slug/settings", label: "Settings" },
] as const;

/** The longest wait a browser timer takes (about 24.8 days); a role grant is far shorter. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** When a role grant ends, the organizations are read again: the screens follow the role the API now sees. */
function useRereadAtElevationEnd(elevatedUntil: string | null | undefined) {
  const qc = useQueryClient();
  useEffect(() => {
    if (!elevatedUntil) return;
    const wait = new Date(elevatedUntil).getTime() - Date.now() + 1000;
    if (wait > MAX_TIMER_MS) return;
    const timer = setTimeout(() => void qc.invalidateQueries({ queryKey: ["shell"] }), Math.max(wait, 0));
    return () => clearTimeout(timer);
  }, [elevatedUntil, qc]);
}

/** /orgs/<slug>/…: one organization, with its navigation beside the screen. */
export function OrgLayout() {
  const { slug } = useParams({ from: "/orgs/$slug" });
  const shell = useShell();
  const org = shell.data?.myOrganizations.find((o) => o.slug === slug);
  useRereadAtElevationEnd(org?.elevatedUntil);
  if (!org) {
    return (
      <Empty>
        <h1>Organization not found</h1>
        <p>You are not a member of an organization at this address.</p>
        <Link to="/">Home</Link>
      </Empty>
    );
  }
  return (
    <OrgContext.Provider value={org}>
      <SectionFrame
        label={`${org.name} sections`}
        heading={
          <>
            {org.name} <Badge>{org.role}</Badge>
          </>
        }
        sections={NAV.filter((n) => !("admin" in n) || isAdmin(org))}
        params={{ slug }}
      />
    </OrgContext.Provider>
  );
}
