import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { gql } from "../../../api";
import { graphql } from "../../../graphql";
import { useShell } from "../../../shell";
import { Button } from "../../../ui/Button";
import { ConfirmDialog } from "../../../ui/ConfirmDialog";
import { Empty, ErrorState, Loading, Success } from "../../../ui/States";
import { Time } from "../../../ui/Time";
import { TimeLeft } from "../../../ui/TimeLeft";
import { isAdmin, useOrg } from "../layout";
import { matches, SearchBox, usePaged, who } from "./common";

const SessionsQuery = graphql(`
  query NetworkSessions($orgId: ID!) {
    networkSessions(orgId: $orgId) { id userId nodeId deviceNickname ownerName ownerEmail networkName authenticatedAt expiresAt }
  }
`);
const EndSession = graphql(`
  mutation EndNetworkSession($orgId: ID!, $sessionId: ID!) { endNetworkSession(orgId: $orgId, sessionId: $sessionId) { message } }
`);

/**
 * /orgs/<slug>/networks/activations: access switched on right now, with the time it has left.
 * Admins see (and end) everyone's; everyone else their own.
 */
export function NetworkActivations() {
  const org = useOrg();
  const admin = isAdmin(org);
  const me = useShell().data?.me;
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  const [search, setSearch] = useState("");
  // Time left changes by itself: read again every minute.
  const q = useQuery({ queryKey: ["org", org.id, "networks", "sessions"], queryFn: () => gql(SessionsQuery, { orgId: org.id }), refetchInterval: 60_000 });
  const all = q.data?.networkSessions ?? [];
  const list = all.filter((s) => matches(search, s.ownerName, s.ownerEmail, s.deviceNickname, s.nodeId, s.networkName));
  const { shown, more } = usePaged(list);
  return (
    <div className="page">
      <h1>{admin ? "Activations" : "Your activations"}</h1>
      <p className="lead">Access switched on right now. Each activation ends by itself when its time runs out.</p>
      {done && <Success>{done}</Success>}
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      ) : all.length === 0 ? (
        <Empty>
          <p>
            <strong>No access is on right now.</strong>
          </p>
          <p>{admin ? "When someone switches a device on, it appears here with the time it has left." : "Switch a device on from your account; it appears here with the time it has left."}</p>
        </Empty>
      ) : (
        <>
          {all.length > 10 && <SearchBox label="Search by person, device or network" value={search} onChange={setSearch} />}
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Running activations">
            <table>
              <thead>
                <tr>
                  {admin && <th scope="col">Person</th>}
                  <th scope="col">Device</th>
                  <th scope="col">Network</th>
                  <th scope="col">Started</th>
                  <th scope="col">Time left</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((s) => {
                  const person = who(s.ownerName, s.ownerEmail);
                  const device = s.deviceNickname ?? s.nodeId;
                  const mine = s.userId === me?.id;
                  return (
                    <tr key={s.id}>
                      {admin && (
                        <td>
                          {person}
                          {s.ownerName && <div className="muted">{s.ownerEmail}</div>}
                        </td>
                      )}
                      <td>
                        <strong>{device}</strong>
                        {s.deviceNickname && (
                          <div className="muted">
                            <code>{s.nodeId}</code>
                          </div>
                        )}
                      </td>
                      <td>{s.networkName}</td>
                      <td>
                        <Time iso={s.authenticatedAt} />
                      </td>
                      <td>
                        <TimeLeft until={s.expiresAt} />
                      </td>
                      <td>
                        <ConfirmDialog
                          trigger={
                            <Button variant="secondary" size="small" aria-label={`End ${mine ? "your" : `${person}'s`} activation of ${device} on ${s.networkName}`}>
                              End
                            </Button>
                          }
                          title={`End ${mine ? "your" : `${person}'s`} access to ${s.networkName} on ${device}?`}
                          confirmLabel="End activation"
                          onConfirm={async () => {
                            await gql(EndSession, { orgId: org.id, sessionId: s.id });
                            setDone(`The activation of ${device} on ${s.networkName} ended.`);
                            await qc.invalidateQueries({ queryKey: ["org", org.id] });
                          }}
                        >
                          <p>
                            {device} is deauthorized at the controller now. {mine ? "You" : person} can switch it on again while approved.
                          </p>
                        </ConfirmDialog>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {list.length === 0 && <p className="muted">No activation matches “{search}”.</p>}
          {more}
        </>
      )}
    </div>
  );
}
