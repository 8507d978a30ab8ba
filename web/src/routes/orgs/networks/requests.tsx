import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { gql } from "../../../api";
import { graphql } from "../../../graphql";
import { useShell } from "../../../shell";
import { Empty, ErrorState, Loading, Success } from "../../../ui/States";
import { isAdmin, useOrg } from "../layout";
import { matches, PendingRequest, SearchBox, usePaged } from "./common";

const PendingQuery = graphql(`
  query PendingNetworkApprovals($orgId: ID!) {
    pendingNetworkApprovals(orgId: $orgId) { id userId userEmail userName portalNetworkId networkName justification createdAt }
  }
`);

/**
 * /orgs/<slug>/networks/requests: the approval queue. Admins see every network's requests, named
 * managers their networks'; each is approved, or rejected with a reason sent to the person.
 */
export function NetworkRequests() {
  const org = useOrg();
  const me = useShell().data?.me;
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  const [search, setSearch] = useState("");
  const q = useQuery({ queryKey: ["org", org.id, "networks", "pending"], queryFn: () => gql(PendingQuery, { orgId: org.id }) });
  const list = (q.data?.pendingNetworkApprovals ?? []).filter((a) => matches(search, a.userName, a.userEmail, a.networkName, a.justification));
  const { shown, more } = usePaged(list);
  return (
    <div className="page">
      <h1>Access requests</h1>
      <p className="lead">People asking to use a network. Approving lets them switch access on for a bounded time; nobody decides their own request.</p>
      {done && <Success>{done}</Success>}
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      ) : q.data.pendingNetworkApprovals.length === 0 ? (
        <Empty>
          <p>
            <strong>Nothing is waiting.</strong>
          </p>
          <p>{isAdmin(org) ? "New requests for any of the organization's networks appear here." : "Requests for the networks you manage appear here."}</p>
        </Empty>
      ) : (
        <>
          {q.data.pendingNetworkApprovals.length > 10 && <SearchBox label="Search requests" value={search} onChange={setSearch} />}
          <ul className="rows" aria-label="Requests waiting for a decision">
            {shown.map((a) => (
              <PendingRequest
                key={a.id}
                orgId={org.id}
                approval={a}
                meId={me?.id}
                showNetwork
                onDecided={async (message) => {
                  setDone(message);
                  await qc.invalidateQueries({ queryKey: ["org", org.id] });
                }}
              />
            ))}
          </ul>
          {list.length === 0 && <p className="muted">No request matches “{search}”.</p>}
          {more}
        </>
      )}
    </div>
  );
}
