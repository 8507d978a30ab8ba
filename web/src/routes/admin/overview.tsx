import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { ErrorState, Loading } from "../../ui/States";
import { plural } from "./shared";

/** Counts at a glance: a handful of bounded reads, one request. */
const OverviewQuery = graphql(`
  query AdminOverview {
    accounts: adminUsers(perPage: 1) { count }
    operators: adminUsers(show: "superadmins", perPage: 1) { count }
    suspended: adminUsers(show: "suspended", perPage: 1) { count }
    organizations: adminOrganizations(perPage: 1) { count }
    waiting: emailOutbox(status: "pending", perPage: 1) { count }
    failed: emailOutbox(status: "failed", perPage: 1) { count }
    dead: emailOutbox(status: "dead", perPage: 1) { count }
    cutOff: globalKillSwitches(inForce: true, perPage: 1) { count }
    oauthProviderConfigs { provider name source isEnabled }
  }
`);

/**
 * /admin: the installation at a glance, and what needs an operator now: messages that could not be
 * sent, people cut off everywhere, sign-in providers that are not set up.
 */
export function AdminOverview() {
  const q = useQuery({ queryKey: ["admin", "overview"], queryFn: () => gql(OverviewQuery) });
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  const d = q.data;
  const undelivered = d.failed.count + d.dead.count;
  const unusable = d.oauthProviderConfigs.filter((p) => p.source === "none" || !p.isEnabled);
  const needs = undelivered > 0 || d.cutOff.count > 0 || unusable.length > 0;
  return (
    <div className="page">
      <h1>Operators</h1>
      <p className="lead">This Keyward installation, as its superadmins run it.</p>
      <dl className="facts">
        <div>
          <dt>Accounts</dt>
          <dd>
            <Link to="/admin/accounts">{d.accounts.count}</Link>
          </dd>
        </div>
        <div>
          <dt>Superadmins</dt>
          <dd>
            <Link to="/admin/accounts" search={{ show: "superadmins" }}>
              {d.operators.count}
            </Link>
          </dd>
        </div>
        <div>
          <dt>Suspended accounts</dt>
          <dd>
            <Link to="/admin/accounts" search={{ show: "suspended" }}>
              {d.suspended.count}
            </Link>
          </dd>
        </div>
        <div>
          <dt>Organizations</dt>
          <dd>
            <Link to="/admin/organizations">{d.organizations.count}</Link>
          </dd>
        </div>
        <div>
          <dt>Emails waiting</dt>
          <dd>{d.waiting.count}</dd>
        </div>
      </dl>
      <section aria-labelledby="needs-operator">
        <h2 id="needs-operator">What needs an operator</h2>
        {!needs ? (
          <p className="muted">Nothing right now: every email went out, nobody is cut off everywhere, and both sign-in providers are set up.</p>
        ) : (
          <ul className="cards" aria-label="What needs an operator">
            {undelivered > 0 && (
              <li className="card">
                <p>
                  <Badge tone="bad">{plural(undelivered, "email")} not delivered</Badge>
                </p>
                <p>
                  {d.failed.count > 0 && `${plural(d.failed.count, "message")} failed and will be tried again. `}
                  {d.dead.count > 0 && `${plural(d.dead.count, "message")} gave up after every attempt.`}
                </p>
                <Link to="/admin/outbox">Open the email outbox</Link>
              </li>
            )}
            {d.cutOff.count > 0 && (
              <li className="card">
                <p>
                  <Badge tone="bad">{plural(d.cutOff.count, "person", "people")} cut off everywhere</Badge>
                </p>
                <p>A global kill switch keeps them off every organization's networks until an operator lifts it.</p>
                <Link to="/admin/kill-switch">Open the kill switch</Link>
              </li>
            )}
            {unusable.length > 0 && (
              <li className="card">
                <p>
                  <Badge tone="warn">{unusable.map((p) => p.name).join(" and ")} sign-in off</Badge>
                </p>
                <p>People cannot sign in with {unusable.map((p) => p.name).join(" or ")} until it is configured and enabled.</p>
                <Link to="/admin/sign-in">Set up sign-in providers</Link>
              </li>
            )}
          </ul>
        )}
      </section>
    </div>
  );
}
