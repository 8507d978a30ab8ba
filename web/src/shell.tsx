import { useQuery } from "@tanstack/react-query";
import { Link, Outlet, useNavigate, useRouterState } from "@tanstack/react-router";
import { useEffect, useRef, useState } from "react";
import { gql } from "./api";
import { graphql, type ResultOf } from "./graphql";
import { Button } from "./ui/Button";
import { ErrorState, Loading } from "./ui/States";

/** Who is signed in and their organizations: every screen's frame reads this once. */
export const ShellQuery = graphql(`
  query Shell {
    me { id email fullName isSuperadmin }
    myOrganizations { id name slug role storedRole elevatedUntil }
  }
`);
export type Shell = ResultOf<typeof ShellQuery>;
export type MyOrganization = Shell["myOrganizations"][number];

export const useShell = () => useQuery({ queryKey: ["shell"], queryFn: () => gql(ShellQuery) });

const LogoutMutation = graphql(`
  mutation Logout { logout { message idpLogoutUrl } }
`);

function Logo() {
  return (
    <svg className="logo" viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" focusable="false">
      <rect className="logo-bg" width="32" height="32" rx="8" />
      <circle className="logo-fg" cx="11.5" cy="16" r="4.5" fill="none" strokeWidth="3" />
      <path className="logo-fg" d="M16 16h10.5M22.5 16v4.5M26.5 16v3.5" fill="none" strokeWidth="3" strokeLinecap="round" />
    </svg>
  );
}

/** The organization switcher: a native select (keyboard and screen readers know it), then navigation. */
function OrgSwitcher({ orgs, current }: { orgs: MyOrganization[]; current?: string }) {
  const navigate = useNavigate();
  if (orgs.length === 0) return null;
  return (
    <label className="org-switcher">
      <span className="visually-hidden">Organization</span>
      <select
        value={current ?? ""}
        onChange={(e) => {
          const slug = e.target.value;
          if (slug === "__new") void navigate({ to: "/orgs/new" });
          else if (slug) void navigate({ to: "/orgs/$slug", params: { slug } });
        }}
      >
        {!current && <option value="">Choose an organization…</option>}
        {orgs.map((o) => (
          <option key={o.id} value={o.slug}>
            {o.name}
          </option>
        ))}
        <option value="__new">+ New organization</option>
      </select>
    </label>
  );
}

/** The frame of every screen: header (product, organization, person), then the screen. */
export function AppShell() {
  const shell = useShell();
  const path = useRouterState({ select: (s) => s.location.pathname });
  const current = /^\/orgs\/([^/]+)/.exec(path)?.[1];
  // The person menu stays open on the screen where it was opened: navigating closes it.
  const [menuAt, setMenuAt] = useState<string | null>(null);
  const menuOpen = menuAt === path;
  const main = useRef<HTMLElement>(null);
  // A new screen: focus moves to its content (keyboard and screen-reader users start there).
  useEffect(() => {
    main.current?.focus({ preventScroll: true });
  }, [path]);
  return (
    <>
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <header className="app-header">
        <Link to="/" className="brand">
          <Logo />
          <span className="brand-name">Keyward</span>
        </Link>
        {shell.data && <OrgSwitcher orgs={shell.data.myOrganizations} current={current === "new" ? undefined : current} />}
        <div className="person">
          {shell.data && (
            <>
              <Button variant="quiet" size="small" aria-expanded={menuOpen} aria-controls="person-menu" onPress={() => setMenuAt(menuOpen ? null : path)}>
                {shell.data.me.fullName || shell.data.me.email}
              </Button>
              <div id="person-menu" className="person-menu" hidden={!menuOpen}>
                <p className="muted">{shell.data.me.email}</p>
                <Link to="/account">My account</Link>
                {shell.data.me.isSuperadmin && <Link to="/admin">Operators</Link>}
                <Button
                  variant="secondary"
                  size="small"
                  onPress={async () => {
                    const out = await gql(LogoutMutation).catch(() => undefined);
                    // A session an organization's SAML IdP issued: sign out there too (single logout).
                    window.location.assign(out?.logout.idpLogoutUrl ?? "/login");
                  }}
                >
                  Sign out
                </Button>
              </div>
            </>
          )}
        </div>
      </header>
      <main id="content" ref={main} tabIndex={-1}>
        {shell.isPending ? <Loading /> : shell.isError ? <ErrorState error={shell.error} retry={() => void shell.refetch()} /> : <Outlet />}
      </main>
    </>
  );
}
