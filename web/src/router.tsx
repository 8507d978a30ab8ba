import { createRootRoute, createRoute, createRouter, lazyRouteComponent, Link, redirect } from "@tanstack/react-router";
import { AccountLayout } from "./routes/account/layout";
import { validateAccountSearch, validateAccountsSearch } from "./routes/admin/search";
import { Home } from "./routes/home";
import { OrgLayout } from "./routes/orgs/layout";
import { Members } from "./routes/orgs/members";
import { NewOrganization } from "./routes/orgs/new";
import { OrgOverview } from "./routes/orgs/overview";
import { OrgSettings } from "./routes/orgs/settings";
import { AppShell } from "./shell";
import { RouteError } from "./ui/RouteError";
import { Empty, Loading } from "./ui/States";

/**
 * The app's addresses (code-based TanStack Router: a link to an address that does not exist, or
 * without its parameters, fails tsc). The server serves index.html at each of them
 * (src/pages/web-app.ts); a signed-out visit is sent to sign in first and comes back.
 */
const root = createRootRoute({
  component: AppShell,
  notFoundComponent: () => (
    <Empty>
      <h1>Page not found</h1>
      <Link to="/">Home</Link>
    </Empty>
  ),
});
const home = createRoute({ getParentRoute: () => root, path: "/", component: Home });
const newOrg = createRoute({ getParentRoute: () => root, path: "/orgs/new", component: NewOrganization });
const org = createRoute({ getParentRoute: () => root, path: "/orgs/$slug", component: OrgLayout });
const orgIndex = createRoute({ getParentRoute: () => org, path: "/", component: OrgOverview });
const orgMembers = createRoute({ getParentRoute: () => org, path: "/members", component: Members });
const orgSettings = createRoute({ getParentRoute: () => org, path: "/settings", component: OrgSettings });
// Admin areas load on first visit (their own chunks), keeping the first load small.
// ?newKey=scim: the API key form starts with the SCIM scope chosen (the Provisioning screen links there).
const validateSecuritySearch = (search: Record<string, unknown>): { newKey?: "scim" } => (search.newKey === "scim" ? { newKey: "scim" } : {});
const orgSecurity = createRoute({ getParentRoute: () => org, path: "/security", validateSearch: validateSecuritySearch, component: lazyRouteComponent(() => import("./routes/orgs/security"), "Security") });
const orgDomains = createRoute({ getParentRoute: () => org, path: "/domains", component: lazyRouteComponent(() => import("./routes/orgs/domains"), "Domains") });
const orgSso = createRoute({ getParentRoute: () => org, path: "/sso", component: lazyRouteComponent(() => import("./routes/orgs/sso"), "SingleSignOn") });
const orgProvisioning = createRoute({ getParentRoute: () => org, path: "/provisioning", component: lazyRouteComponent(() => import("./routes/orgs/provisioning"), "Provisioning") });
const orgApps = createRoute({ getParentRoute: () => org, path: "/apps", component: lazyRouteComponent(() => import("./routes/orgs/apps"), "Applications") });
const orgAudit = createRoute({ getParentRoute: () => org, path: "/audit", component: lazyRouteComponent(() => import("./routes/orgs/audit"), "Audit") });
// An organization's networks (routes/orgs/networks/*): one chunk per screen, loaded on first visit.
const networksPending = () => <Loading />;
const orgNetworks = createRoute({ getParentRoute: () => org, path: "/networks", component: lazyRouteComponent(() => import("./routes/orgs/networks/layout"), "NetworksLayout"), pendingComponent: networksPending });
const networksIndex = createRoute({ getParentRoute: () => orgNetworks, path: "/", component: lazyRouteComponent(() => import("./routes/orgs/networks/list"), "NetworkList"), pendingComponent: networksPending });
const networkDetail = createRoute({ getParentRoute: () => orgNetworks, path: "/$networkId", component: lazyRouteComponent(() => import("./routes/orgs/networks/network"), "NetworkDetail"), pendingComponent: networksPending });
const networkRequests = createRoute({ getParentRoute: () => orgNetworks, path: "/requests", component: lazyRouteComponent(() => import("./routes/orgs/networks/requests"), "NetworkRequests"), pendingComponent: networksPending });
const networkDevices = createRoute({ getParentRoute: () => orgNetworks, path: "/devices", component: lazyRouteComponent(() => import("./routes/orgs/networks/devices"), "NetworkDevices"), pendingComponent: networksPending });
const networkActivations = createRoute({ getParentRoute: () => orgNetworks, path: "/activations", component: lazyRouteComponent(() => import("./routes/orgs/networks/activations"), "NetworkActivations"), pendingComponent: networksPending });
const networkKillSwitch = createRoute({ getParentRoute: () => orgNetworks, path: "/kill-switch", component: lazyRouteComponent(() => import("./routes/orgs/networks/kill-switch"), "KillSwitch"), pendingComponent: networksPending });
const networkController = createRoute({ getParentRoute: () => orgNetworks, path: "/controller", component: lazyRouteComponent(() => import("./routes/orgs/networks/controller"), "NetworkControllerScreen"), pendingComponent: networksPending });
const orgNetworkRoutes = orgNetworks.addChildren([networksIndex, networkDetail, networkRequests, networkDevices, networkActivations, networkKillSwitch, networkController]);

// The directory and SSH (routes/orgs/directory*.tsx, ssh*.tsx).
const orgDirectory = createRoute({ getParentRoute: () => org, path: "/departments", component: lazyRouteComponent(() => import("./routes/orgs/directory"), "Directory") });
const orgDepartment = createRoute({ getParentRoute: () => org, path: "/departments/$departmentId", component: lazyRouteComponent(() => import("./routes/orgs/directory-department"), "DepartmentDetail") });
const orgPrincipal = createRoute({ getParentRoute: () => org, path: "/departments/principals/$principalId", component: lazyRouteComponent(() => import("./routes/orgs/directory-principal"), "PrincipalDetail") });
const orgSsh = createRoute({ getParentRoute: () => org, path: "/ssh", component: lazyRouteComponent(() => import("./routes/orgs/ssh"), "Ssh") });
const orgSshCertificates = createRoute({ getParentRoute: () => org, path: "/ssh/certificates", component: lazyRouteComponent(() => import("./routes/orgs/ssh-certificates"), "SshCertificates") });
const orgSshHosts = createRoute({ getParentRoute: () => org, path: "/ssh/hosts", component: lazyRouteComponent(() => import("./routes/orgs/ssh-certificates"), "SshHosts") });
const orgSshServers = createRoute({ getParentRoute: () => org, path: "/ssh/servers", component: lazyRouteComponent(() => import("./routes/orgs/ssh-servers"), "SshServers") });
// My account: its screens load on first visit (their own chunks; WebAuthn's helpers come with the security screen's).
const account = createRoute({ getParentRoute: () => root, path: "/account", component: AccountLayout });
const accountPending = () => <Loading />;
const accountRoutes = [
  createRoute({
    getParentRoute: () => account,
    path: "/",
    // Linking single sign-on comes back to /account?linked=sso (or ?error_type=…): the outcome is the linked accounts screen's to show.
    beforeLoad: () => {
      const params = new URLSearchParams(window.location.search);
      if (params.has("linked") || params.has("error_type")) throw redirect({ href: `/account/linked${window.location.search}`, replace: true });
    },
    component: lazyRouteComponent(() => import("./routes/account/profile"), "Profile"),
    pendingComponent: accountPending,
  }),
  createRoute({ getParentRoute: () => account, path: "/security", component: lazyRouteComponent(() => import("./routes/account/security"), "SecurityScreen"), pendingComponent: accountPending }),
  createRoute({ getParentRoute: () => account, path: "/sessions", component: lazyRouteComponent(() => import("./routes/account/sessions"), "Sessions"), pendingComponent: accountPending }),
  createRoute({ getParentRoute: () => account, path: "/linked", component: lazyRouteComponent(() => import("./routes/account/linked"), "Linked"), pendingComponent: accountPending }),
  createRoute({ getParentRoute: () => account, path: "/organizations", component: lazyRouteComponent(() => import("./routes/account/organizations"), "Organizations"), pendingComponent: accountPending }),
  createRoute({ getParentRoute: () => account, path: "/ssh", component: lazyRouteComponent(() => import("./routes/account/ssh"), "SshKeys"), pendingComponent: accountPending }),
  createRoute({ getParentRoute: () => account, path: "/apps", component: lazyRouteComponent(() => import("./routes/account/apps"), "Apps"), pendingComponent: accountPending }),
  createRoute({ getParentRoute: () => account, path: "/networks", component: lazyRouteComponent(() => import("./routes/account/networks"), "Networks"), pendingComponent: accountPending }),
];

// The operators' screens (routes/admin/*, superadmins): the frame and each screen load on first visit.
const adminPending = () => <Loading />;
const admin = createRoute({ getParentRoute: () => root, path: "/admin", component: lazyRouteComponent(() => import("./routes/admin/layout"), "AdminLayout"), pendingComponent: adminPending });
const adminRoutes = [
  createRoute({ getParentRoute: () => admin, path: "/", component: lazyRouteComponent(() => import("./routes/admin/overview"), "AdminOverview"), pendingComponent: adminPending }),
  createRoute({ getParentRoute: () => admin, path: "/accounts", validateSearch: validateAccountsSearch, component: lazyRouteComponent(() => import("./routes/admin/accounts"), "Accounts"), pendingComponent: adminPending }),
  createRoute({ getParentRoute: () => admin, path: "/accounts/$userId", component: lazyRouteComponent(() => import("./routes/admin/account"), "AccountDetail"), pendingComponent: adminPending }),
  createRoute({ getParentRoute: () => admin, path: "/organizations", component: lazyRouteComponent(() => import("./routes/admin/organizations"), "AdminOrganizations"), pendingComponent: adminPending }),
  createRoute({ getParentRoute: () => admin, path: "/sign-in", component: lazyRouteComponent(() => import("./routes/admin/sign-in"), "SignInProviders"), pendingComponent: adminPending }),
  createRoute({ getParentRoute: () => admin, path: "/clients", component: lazyRouteComponent(() => import("./routes/admin/clients"), "BuiltInClients"), pendingComponent: adminPending }),
  createRoute({ getParentRoute: () => admin, path: "/audit", validateSearch: validateAccountSearch, component: lazyRouteComponent(() => import("./routes/admin/audit"), "SystemAudit"), pendingComponent: adminPending }),
  createRoute({ getParentRoute: () => admin, path: "/outbox", component: lazyRouteComponent(() => import("./routes/admin/outbox"), "Outbox"), pendingComponent: adminPending }),
  createRoute({ getParentRoute: () => admin, path: "/kill-switch", validateSearch: validateAccountSearch, component: lazyRouteComponent(() => import("./routes/admin/kill-switch"), "GlobalKillSwitch"), pendingComponent: adminPending }),
];

const routeTree = root.addChildren([home, newOrg, org.addChildren([orgIndex, orgMembers, orgSettings, orgSecurity, orgDomains, orgSso, orgProvisioning, orgApps, orgAudit, orgNetworkRoutes, orgDirectory, orgDepartment, orgPrincipal, orgSsh, orgSshCertificates, orgSshHosts, orgSshServers]), account.addChildren(accountRoutes), admin.addChildren(adminRoutes)]);

export const router = createRouter({ routeTree, defaultPreload: "intent", defaultErrorComponent: RouteError });

declare module "@tanstack/react-router" {
  interface Register {
    router: typeof router;
  }
}
