import { Link } from "@tanstack/react-router";
import { SectionFrame } from "../../ui/SectionFrame";
import { useShell } from "../../shell";
import { Badge } from "../../ui/Badge";
import "./admin.css";

/** The operators' sections, in the order an operator looks for them. */
const NAV = [
  { to: "/admin", label: "Overview", exact: true },
  { to: "/admin/accounts", label: "Accounts" },
  { to: "/admin/organizations", label: "Organizations" },
  { to: "/admin/sign-in", label: "Sign-in providers" },
  { to: "/admin/clients", label: "Built-in clients" },
  { to: "/admin/audit", label: "Audit log" },
  { to: "/admin/outbox", label: "Email outbox" },
  { to: "/admin/kill-switch", label: "Kill switch" },
] as const;

/**
 * /admin/…: what Keyward's operators (superadmins) run, with its navigation beside the screen (the
 * same frame as an organization's). Anyone else meets a page that says whose it is; the API
 * refuses them every read and write here anyway.
 */
export function AdminLayout() {
  const me = useShell().data?.me;
  if (!me?.isSuperadmin) return <OperatorsOnly />;
  return (
    <SectionFrame
      className="admin"
      label="Operator sections"
      heading={
        <>
          Operators <Badge tone="accent">superadmin</Badge>
        </>
      }
      sections={NAV}
    />
  );
}

/** What someone who is not an operator sees at /admin/…. */
export function OperatorsOnly() {
  return (
    <div className="page narrow admin-refusal">
      <h1>For Keyward's operators</h1>
      <p className="lead">These pages are for the people who run this Keyward installation (its superadmins): accounts, organizations, sign-in providers, the email outbox and the global kill switch.</p>
      <p>Your account is not an operator's, so there is nothing here for you. What you run is elsewhere:</p>
      <ul className="admin-refusal-links">
        <li>
          <Link to="/">Home</Link>: what needs you now
        </li>
        <li>
          <Link to="/account">My account</Link>: your profile, password, two-step verification and sessions
        </li>
      </ul>
      <p className="muted">If you should be an operator, ask one: an operator makes another from that person's account page here.</p>
    </div>
  );
}
