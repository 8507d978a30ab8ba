import { useQuery } from "@tanstack/react-query";
import { Link, Outlet, useRouterState } from "@tanstack/react-router";
import { gql } from "../../../api";
import { graphql } from "../../../graphql";
import { Empty } from "../../../ui/States";
import { isAdmin, useOrg } from "../layout";
import "./networks.css";

/** How many requests wait for the caller (every network's for admins, their own networks' for named managers). */
export const PendingCountQuery = graphql(`
  query NetworkRequestsWaiting($orgId: ID!) { pendingNetworkApprovals(orgId: $orgId) { id } }
`);

type Tab = { to: "/orgs/$slug/networks" | "/orgs/$slug/networks/requests" | "/orgs/$slug/networks/devices" | "/orgs/$slug/networks/activations" | "/orgs/$slug/networks/kill-switch" | "/orgs/$slug/networks/controller"; label: string; admin?: boolean };

const TABS: Tab[] = [
  { to: "/orgs/$slug/networks", label: "Networks" },
  { to: "/orgs/$slug/networks/requests", label: "Requests" },
  { to: "/orgs/$slug/networks/devices", label: "Devices", admin: true },
  { to: "/orgs/$slug/networks/activations", label: "Activations" },
  { to: "/orgs/$slug/networks/kill-switch", label: "Kill switch", admin: true },
  { to: "/orgs/$slug/networks/controller", label: "Controller", admin: true },
];

/**
 * /orgs/<slug>/networks/…: the organization's governed ZeroTier networks, in sections a person
 * expects (networks, requests, devices, activations, kill switch, controller). Admins see every
 * section; everyone else the networks, the requests of networks they manage, and their own activations.
 */
export function NetworksLayout() {
  const org = useOrg();
  const admin = isAdmin(org);
  const path = useRouterState({ select: (s) => s.location.pathname });
  const waiting = useQuery({ queryKey: ["org", org.id, "networks", "waiting"], queryFn: () => gql(PendingCountQuery, { orgId: org.id }), enabled: org.role !== "guest" });
  const count = waiting.data?.pendingNetworkApprovals.length ?? 0;
  const base = `/orgs/${org.slug}/networks`;
  // Guests hold no network access (the API refuses them): say so rather than show its refusal.
  if (org.role === "guest") {
    return (
      <div className="page">
        <h1>Networks</h1>
        <Empty>
          <p>Guests of {org.name} have no network access. An admin can make you a member.</p>
        </Empty>
      </div>
    );
  }
  // The networks tab stays current on one network's page.
  const current = (to: string) => {
    const href = to.replace("$slug", org.slug);
    if (href === base) return path === base || path === `${base}/` || /^[0-9a-f-]{36}\/?$/i.test(path.slice(base.length + 1));
    return path === href || path.startsWith(`${href}/`);
  };
  return (
    <div className="net">
      <nav className="net-tabs" aria-label="Network sections">
        <ul>
          {TABS.filter((t) => admin || !t.admin).map((t) => (
            <li key={t.to}>
              <Link to={t.to} params={{ slug: org.slug }} activeOptions={{ exact: true }} activeProps={{}} aria-current={current(t.to) ? "page" : undefined} className={current(t.to) ? "active" : undefined}>
                {t.label === "Activations" && !admin ? "Your activations" : t.label}
                {t.label === "Requests" && count > 0 && (
                  <span className="net-count">
                    {count}
                    <span className="visually-hidden"> waiting</span>
                  </span>
                )}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <Outlet />
    </div>
  );
}
