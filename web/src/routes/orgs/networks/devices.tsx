import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { gql } from "../../../api";
import { graphql } from "../../../graphql";
import { Button } from "../../../ui/Button";
import { ConfirmDialog } from "../../../ui/ConfirmDialog";
import { Empty, ErrorState, Loading, Success } from "../../../ui/States";
import { TimeLeft } from "../../../ui/TimeLeft";
import { isAdmin, useOrg } from "../layout";
import { AdminsOnly, DeviceName, matches, SearchBox, StateBadge, usePaged, who } from "./common";

const MembershipsQuery = graphql(`
  query OrganizationNetworkMemberships($orgId: ID!) {
    organizationNetworkMemberships(orgId: $orgId) {
      id userId nodeId deviceDisplayName ownerName ownerEmail portalNetworkId networkName state currentlyAuthorized activeSession { id expiresAt }
    }
  }
`);
const RemoveMembership = graphql(`
  mutation RemoveDeviceFromNetwork($orgId: ID!, $membershipId: ID!) { removeNetworkMembership(orgId: $orgId, membershipId: $membershipId) { message } }
`);

/** /orgs/<slug>/networks/devices (admins): every device on every network, with its state and time left; remove one. */
export function NetworkDevices() {
  const org = useOrg();
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  const [search, setSearch] = useState("");
  const admin = isAdmin(org);
  const q = useQuery({ queryKey: ["org", org.id, "networks", "memberships"], queryFn: () => gql(MembershipsQuery, { orgId: org.id }), enabled: admin });
  const all = q.data?.organizationNetworkMemberships ?? [];
  const list = all.filter((m) => matches(search, m.deviceDisplayName, m.nodeId, m.ownerName, m.ownerEmail, m.networkName));
  const { shown, more } = usePaged(list);
  if (!admin) return <AdminsOnly orgName={org.name} what="see every device" />;
  return (
    <div className="page">
      <h1>Devices</h1>
      <p className="lead">Every device of the people of {org.name} on each network, and whether its access is on.</p>
      {done && <Success>{done}</Success>}
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      ) : all.length === 0 ? (
        <Empty>
          <p>
            <strong>No device is on any network yet.</strong>
          </p>
          <p>
            People register their devices and ask for access; you can also import the devices already at the controller from a{" "}
            <Link to="/orgs/$slug/networks" params={{ slug: org.slug }}>
              network's page
            </Link>
            .
          </p>
        </Empty>
      ) : (
        <>
          <SearchBox label="Search by device, person or network" value={search} onChange={setSearch} />
          <div className="table-wrap" tabIndex={0} role="region" aria-label={`Devices on the networks of ${org.name}`}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Device</th>
                  <th scope="col">Person</th>
                  <th scope="col">Network</th>
                  <th scope="col">Access</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((m) => {
                  const person = who(m.ownerName, m.ownerEmail);
                  return (
                    <tr key={m.id}>
                      <td>
                        <DeviceName displayName={m.deviceDisplayName} nodeId={m.nodeId} />
                      </td>
                      <td>
                        {person}
                        {m.ownerName && <div className="muted">{m.ownerEmail}</div>}
                      </td>
                      <td>
                        <Link to="/orgs/$slug/networks/$networkId" params={{ slug: org.slug, networkId: m.portalNetworkId }}>
                          {m.networkName}
                        </Link>
                      </td>
                      <td>
                        <StateBadge state={m.state} /> {m.activeSession && <TimeLeft until={m.activeSession.expiresAt} />}
                      </td>
                      <td>
                        <ConfirmDialog
                          trigger={
                            <Button variant="secondary" size="small" aria-label={`Remove ${m.deviceDisplayName} of ${person} from ${m.networkName}`}>
                              Remove
                            </Button>
                          }
                          title={`Remove ${m.deviceDisplayName} from ${m.networkName}?`}
                          confirmLabel="Remove device"
                          onConfirm={async () => {
                            await gql(RemoveMembership, { orgId: org.id, membershipId: m.id });
                            setDone(`${m.deviceDisplayName} of ${person} was removed from ${m.networkName}.`);
                            await qc.invalidateQueries({ queryKey: ["org", org.id] });
                          }}
                        >
                          <p>
                            {person}'s device {m.deviceDisplayName} (<code>{m.nodeId}</code>) is deauthorized at the controller and leaves {m.networkName}
                            {m.activeSession ? "; its running activation ends" : ""}. To return, {person} joins the network again.
                          </p>
                        </ConfirmDialog>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {list.length === 0 && <p className="muted">No device matches “{search}”.</p>}
          {more}
        </>
      )}
    </div>
  );
}
