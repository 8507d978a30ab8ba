import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { gql } from "../api";
import { graphql } from "../graphql";
import { useShell } from "../shell";
import { Badge } from "../ui/Badge";
import { Button } from "../ui/Button";
import { Empty, ErrorState, FormError, Loading } from "../ui/States";
import { Time } from "../ui/Time";
import { AccessRequests } from "./access-requests";
import { OperatorAttention, orgAttentionItems, orgAttentionQuery } from "./home-attention";

/**
 * Home: what needs you now, from real state. For everyone: invitations to answer, MFA deadlines,
 * certificates about to expire. For an organization's admins: see OrgAttention; for operators,
 * OperatorAttention. Each query's reads are bounded whatever the organizations' sizes.
 */
export const HomeQuery = graphql(`
  query Home {
    myInvites { id role expiresAt organization { id name } }
    myMfaCompliance { organizationId organizationName status deadlineAt }
    mySshCertificates(page: 1, perPage: 50) { items { id organizationId principals validBefore revoked status } }
    myOrganizations { id name slug role storedRole elevatedUntil }
  }
`);

const AcceptInvite = graphql(`
  mutation AcceptMyInvite($inviteId: ID!) { acceptMyInvite(inviteId: $inviteId) { organization { id name } role } }
`);
const DeclineInvite = graphql(`
  mutation DeclineMyInvite($inviteId: ID!) { declineMyInvite(inviteId: $inviteId) { message } }
`);

const WEEK_MS = 7 * 86_400_000;

export function Home() {
  const shell = useShell();
  // Always read again on opening: what needs you changes elsewhere too (a certificate from the CLI, a request).
  const home = useQuery({ queryKey: ["home"], queryFn: () => gql(HomeQuery), staleTime: 0 });
  const qc = useQueryClient();
  const refresh = () => Promise.all([qc.invalidateQueries({ queryKey: ["home"] }), qc.invalidateQueries({ queryKey: ["shell"] })]);
  const accept = useMutation({ mutationFn: (inviteId: string) => gql(AcceptInvite, { inviteId }), onSuccess: refresh });
  const decline = useMutation({ mutationFn: (inviteId: string) => gql(DeclineInvite, { inviteId }), onSuccess: refresh });
  // "Within a week" from when the screen opened.
  const [now] = useState(() => Date.now());
  // One query per organization administered, started once the home query names them.
  const admined = (home.data?.myOrganizations ?? []).filter((o) => o.role === "owner" || o.role === "admin");
  const attention = useQueries({ queries: admined.map((o) => orgAttentionQuery(o)) });

  if (home.isPending) return <Loading />;
  if (home.isError) return <ErrorState error={home.error} retry={() => void home.refetch()} />;
  const { myInvites, myMfaCompliance, mySshCertificates, myOrganizations } = home.data;
  const name = shell.data?.me.fullName || shell.data?.me.email;
  const deadlines = myMfaCompliance.filter((c) => c.status === "in_grace" || c.status === "past_due");
  const expiring = mySshCertificates.items.filter((c) => !c.revoked && c.status === "active" && new Date(c.validBefore).getTime() - now < WEEK_MS);
  const orgName = new Map(myOrganizations.map((o) => [o.id, o.name]));
  const nothing = myInvites.length === 0 && deadlines.length === 0 && expiring.length === 0;
  const me = shell.data?.me.id ?? "";
  const attentionLists = admined.map((o, i) => {
    const data = attention[i]?.data;
    return { org: o, items: data ? orgAttentionItems(o, data, me, now) : [] };
  });
  const attentionRead = attention.every((q) => q.isSuccess);

  return (
    <div className="page">
      <h1>Welcome{name ? `, ${name}` : ""}</h1>
      <section aria-labelledby="needs-you">
        <h2 id="needs-you">What needs you now</h2>
        {nothing && <p className="muted">Nothing right now.</p>}
        {myInvites.length > 0 && (
          <ul className="cards" aria-label="Invitations">
            {myInvites.map((i) => (
              <li key={i.id} className="card">
                <p>
                  <strong>{i.organization.name}</strong> invites you as <Badge tone="accent">{i.role}</Badge>
                </p>
                <p className="muted">
                  Expires <Time iso={i.expiresAt} />
                </p>
                <div className="actions">
                  <Button isPending={accept.isPending && accept.variables === i.id} onPress={() => accept.mutate(i.id)}>
                    Accept
                  </Button>
                  <Button variant="secondary" isPending={decline.isPending && decline.variables === i.id} onPress={() => decline.mutate(i.id)}>
                    Decline
                  </Button>
                </div>
              </li>
            ))}
          </ul>
        )}
        <FormError error={accept.error ?? decline.error} />
        {deadlines.map((d) => (
          <div key={d.organizationId} className={`notice ${d.status === "past_due" ? "notice-error" : "notice-warn"}`}>
            <p>
              {d.organizationName} requires two-step verification{" "}
              {d.status === "past_due" ? (
                <>
                  and your deadline has passed (<Time iso={d.deadlineAt} />)
                </>
              ) : (
                <>
                  by <Time iso={d.deadlineAt} mode="full" />
                </>
              )}
              . <Link to="/account/security">Turn it on</Link>
            </p>
          </div>
        ))}
        {expiring.length > 0 && (
          <div className="notice notice-warn">
            <p>
              {expiring.length === 1 ? "A certificate of yours expires" : `${expiring.length} certificates of yours expire`} within a week:
            </p>
            <ul>
              {expiring.map((c) => (
                <li key={c.id}>
                  {c.principals.join(", ")} in {orgName.get(c.organizationId) ?? "an organization"}, <Time iso={c.validBefore} />. Run <code>keyward ssh sign</code> for a new one.
                </li>
              ))}
            </ul>
          </div>
        )}
      </section>

      <AccessRequests orgs={myOrganizations} />

      {admined.length > 0 && (
        <section aria-labelledby="as-admin">
          <h2 id="as-admin">In the organizations you administer</h2>
          {attentionLists.map(
            ({ org, items }) =>
              items.length > 0 && (
                <ul key={org.id} className="attention" aria-label={`${org.name}: what needs an admin`}>
                  {items}
                </ul>
              ),
          )}
          {attentionRead && attentionLists.every((l) => l.items.length === 0) && <p className="muted">Nothing waits for you in them right now.</p>}
        </section>
      )}

      {shell.data?.me.isSuperadmin && <OperatorAttention />}

      <section aria-labelledby="your-orgs">
        <h2 id="your-orgs">Your organizations</h2>
        {myOrganizations.length === 0 ? (
          <Empty>
            <p>You are not in any organization yet. Create one, or accept an invitation when one arrives.</p>
            <Link to="/orgs/new" className="btn btn-primary">
              Create an organization
            </Link>
          </Empty>
        ) : (
          <ul className="cards" aria-label="Organizations">
            {myOrganizations.map((o) => (
              <li key={o.id} className="card">
                <Link to="/orgs/$slug" params={{ slug: o.slug }}>
                  <strong>{o.name}</strong>
                </Link>
                <p className="muted">
                  Your role: <Badge>{o.role}</Badge>
                </p>
              </li>
            ))}
            <li className="card card-add">
              <Link to="/orgs/new">+ New organization</Link>
            </li>
          </ul>
        )}
      </section>
    </div>
  );
}
