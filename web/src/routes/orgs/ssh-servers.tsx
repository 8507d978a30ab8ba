import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { ElevatedNotice } from "./elevated";
import { canHold, isAdmin, useOrg } from "./layout";
import { EnrollServer } from "./ssh-enroll";
import { CertStatus, SshTabs } from "./ssh-shared";
import { HostPrincipals } from "./ssh-host-principals";

const HostsQuery = graphql(`
  query SshHosts($orgId: ID!) {
    sshHosts(orgId: $orgId) {
      id name names status certValidBefore lastRenewedAt enrolledAt
      hostKeys { keyType fingerprint }
      certificates { serial }
    }
  }
`);
const RetireHost = graphql(`
  mutation RetireSshHost($orgId: ID!, $hostId: ID!, $reason: String) { retireSshHost(orgId: $orgId, hostId: $hostId, reason: $reason) { id status } }
`);

/** /orgs/<slug>/ssh/servers: servers enrolled with `keyward host enroll`: names, keys, certificate expiry, last renewal; retire. */
export function SshServers() {
  const org = useOrg();
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  const hosts = useQuery({ queryKey: ["org", org.id, "ssh-hosts"], queryFn: () => gql(HostsQuery, { orgId: org.id }), enabled: isAdmin(org) });
  if (!isAdmin(org)) {
    return (
      <div className="page ssh-page">
        <h1>Enrolled servers</h1>
        <Empty>
          <p>Only the organization's owner and admins see its servers.</p>
        </Empty>
      </div>
    );
  }
  return (
    <div className="page ssh-page">
      <h1>SSH</h1>
      <SshTabs org={org} />
      <ElevatedNotice org={org}>Creating enrollment tokens and setting principals for servers are not shown.</ElevatedNotice>
      {done && <Success>{done}</Success>}
      <EnrollServer orgId={org.id} orgName={org.name} canCreate={canHold(org)} onDone={async (m) => (setDone(m), await qc.invalidateQueries({ queryKey: ["org", org.id] }))} />
      <h2>Enrolled servers</h2>
      <p className="muted">
        A server enrolls itself with a one-time token (<code>keyward host enroll</code>, see "Enroll a server" in docs/ssh.md) and renews its host certificates with{" "}
        <code>keyward host renew</code>.
      </p>
      {hosts.isPending ? (
        <Loading />
      ) : hosts.isError ? (
        <ErrorState error={hosts.error} retry={() => void hosts.refetch()} />
      ) : hosts.data.sshHosts.length === 0 ? (
        <Empty>
          <p>No server enrolled yet.</p>
        </Empty>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={`Enrolled servers of ${org.name}`}>
          <table className="ssh-certs">
            <thead>
              <tr>
                <th scope="col">Names</th>
                <th scope="col">Host keys</th>
                <th scope="col">Certificates</th>
                <th scope="col">Valid until</th>
                <th scope="col">Last renewal</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {hosts.data.sshHosts.map((h) => (
                <tr key={h.id}>
                  <td>
                    {h.names.map((n) => (
                      <code key={n}>{n} </code>
                    ))}
                  </td>
                  <td>
                    {h.hostKeys.map((k) => (
                      <div key={k.fingerprint}>
                        {k.keyType} <code className="muted">{k.fingerprint}</code>
                      </div>
                    ))}
                  </td>
                  <td>
                    <CertStatus status={h.status} /> <span className="muted">serial {h.certificates.map((c) => c.serial).join(", ")}</span>
                  </td>
                  <td>{h.certValidBefore ? <Time iso={h.certValidBefore} mode="relative" /> : "—"}</td>
                  <td>{h.lastRenewedAt ? <Time iso={h.lastRenewedAt} mode="relative" /> : <span className="muted">enrolled <Time iso={h.enrolledAt} mode="relative" /></span>}</td>
                  <td>
                    <Retire orgId={org.id} host={{ id: h.id, name: h.name }} onRetired={async (m) => (setDone(m), await qc.invalidateQueries({ queryKey: ["org", org.id] }))} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <HostPrincipals orgId={org.id} orgName={org.name} canSet={canHold(org)} onDone={async (m) => setDone(m)} />
    </div>
  );
}

function Retire({ orgId, host, onRetired }: { orgId: string; host: { id: string; name: string }; onRetired: (message: string) => Promise<void> }) {
  const [reason, setReason] = useState("");
  return (
    <ConfirmDialog
      trigger={
        <Button variant="secondary" size="small" aria-label={`Retire ${host.name}`}>
          Retire
        </Button>
      }
      title={`Retire ${host.name}?`}
      confirmLabel="Retire"
      onConfirm={async () => {
        await gql(RetireHost, { orgId, hostId: host.id, reason: reason.trim() || undefined });
        setReason("");
        await onRetired(`Retired ${host.name}: its host certificates are revoked.`);
      }}
    >
      <p>Its host certificates go on the organization's revocation list (KRL) at once, and it can no longer renew them. Enrolling it again takes a new token.</p>
      <Field label="Reason (for the audit log)" value={reason} onChange={setReason} />
    </ConfirmDialog>
  );
}
