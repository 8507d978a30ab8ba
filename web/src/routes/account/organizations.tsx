import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";

const OrganizationsQuery = graphql(`
  query AccountOrganizations {
    me { id emailVerified managedBy { id name } }
    myOrganizations { id name slug role }
    myInvites { id role expiresAt organization { id name } }
  }
`);
const Accept = graphql(`
  mutation AccountAcceptInvite($inviteId: ID!) { acceptMyInvite(inviteId: $inviteId) { organization { id name } role } }
`);
const Decline = graphql(`
  mutation AccountDeclineInvite($inviteId: ID!) { declineMyInvite(inviteId: $inviteId) { message } }
`);
const Leave = graphql(`
  mutation AccountLeaveOrganization($orgId: ID!) { leaveOrganization(orgId: $orgId) { message } }
`);

/** /account/organizations: the organizations you belong to (leave one), and invitations to answer. */
export function Organizations() {
  const q = useQuery({ queryKey: ["account", "organizations"], queryFn: () => gql(OrganizationsQuery) });
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  // Membership shows in the frame (the organization switcher), on the home screen and here.
  const refresh = () => Promise.all([qc.invalidateQueries({ queryKey: ["account"] }), qc.invalidateQueries({ queryKey: ["shell"] }), qc.invalidateQueries({ queryKey: ["home"] })]);
  const accept = useMutation({
    mutationFn: (inviteId: string) => gql(Accept, { inviteId }),
    onSuccess: async (r) => {
      setDone(`You joined ${r.acceptMyInvite.organization.name} as ${r.acceptMyInvite.role}.`);
      await refresh();
    },
  });
  const decline = useMutation({
    mutationFn: (invite: { id: string; name: string }) => gql(Decline, { inviteId: invite.id }),
    onSuccess: async (_r, invite) => {
      setDone(`You declined the invitation to ${invite.name}.`);
      await refresh();
    },
  });

  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  const { me, myOrganizations, myInvites } = q.data;
  return (
    <div className="page">
      <h1>Organizations</h1>
      {done && <Success>{done}</Success>}
      <FormError error={accept.error ?? decline.error} />
      {myOrganizations.length === 0 ? (
        <Empty>
          <p>You are not a member of any organization.</p>
          <Link to="/orgs/new" className="btn btn-primary">
            Create an organization
          </Link>
        </Empty>
      ) : (
        <ul className="rows" aria-label="Your organizations" id="org-list">
          {myOrganizations.map((o) => (
            <li key={o.id}>
              <span className="row-main">
                <span>
                  <Link to="/orgs/$slug" params={{ slug: o.slug }}>
                    <strong>{o.name}</strong>
                  </Link>{" "}
                  <Badge tone={o.role === "owner" ? "accent" : "neutral"}>{o.role}</Badge> {me.managedBy?.id === o.id && <Badge tone="warn">manages your account</Badge>}
                </span>
                {o.role === "owner" && <span className="muted">You own it: to leave, transfer ownership in its settings first.</span>}
              </span>
              {o.role !== "owner" && (
                <ConfirmDialog
                  trigger={
                    <Button variant="secondary" size="small" aria-label={`Leave ${o.name}`}>
                      Leave
                    </Button>
                  }
                  title={`Leave ${o.name}?`}
                  confirmLabel="Leave"
                  onConfirm={async () => {
                    await gql(Leave, { orgId: o.id });
                    setDone(`You left ${o.name}.`);
                    await refresh();
                  }}
                >
                  <p>
                    You lose access to everything {o.name} gives you: its certificates of yours are revoked and its networks drop your devices. An admin must invite
                    you again to return.
                  </p>
                </ConfirmDialog>
              )}
            </li>
          ))}
        </ul>
      )}

      <section aria-labelledby="invitations-title">
        <h2 id="invitations-title">Invitations</h2>
        {myInvites.length === 0 ? (
          <p className="muted">{me.emailVerified ? "No invitations waiting." : "Verify your email address to see the invitations sent to it."}</p>
        ) : (
          <ul className="rows" aria-label="Invitations waiting" id="invite-list">
            {myInvites.map((i) => (
              <li key={i.id}>
                <span className="row-main">
                  <span>
                    <strong>{i.organization.name}</strong> invites you as <Badge tone="accent">{i.role}</Badge>
                  </span>
                  <span className="muted">
                    expires <Time iso={i.expiresAt} />
                  </span>
                </span>
                <span className="row-actions">
                  <Button size="small" aria-label={`Accept the invitation to ${i.organization.name}`} isPending={accept.isPending && accept.variables === i.id} onPress={() => accept.mutate(i.id)}>
                    Accept
                  </Button>
                  <Button
                    variant="secondary"
                    size="small"
                    aria-label={`Decline the invitation to ${i.organization.name}`}
                    isPending={decline.isPending && decline.variables?.id === i.id}
                    onPress={() => decline.mutate({ id: i.id, name: i.organization.name })}
                  >
                    Decline
                  </Button>
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <p>
        <Link to="/account/networks">My network access</Link>: the devices you connect to your organizations' networks.
      </p>
    </div>
  );
}
