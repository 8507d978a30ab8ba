import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../../api";
import { graphql } from "../../../graphql";
import { Button } from "../../../ui/Button";
import { ConfirmDialog } from "../../../ui/ConfirmDialog";
import { Field } from "../../../ui/Field";
import { Empty, FormError } from "../../../ui/States";
import { TimeLeft } from "../../../ui/TimeLeft";
import { useSubmit } from "../../../ui/useSubmit";
import { DeviceName, PendingRequest, ReasonDialog, StateBadge, who } from "./common";
import type { Managed, Network, Person } from "./network";

/** One network's page, its managers' part: the requests for it, the devices on it, granting access. */

const RemoveMembership = graphql(`
  mutation RemoveNetworkMembership($orgId: ID!, $membershipId: ID!) { removeNetworkMembership(orgId: $orgId, membershipId: $membershipId) { message } }
`);
const RevokeAccess = graphql(`
  mutation RevokeNetworkAccess($orgId: ID!, $approvalId: ID!, $reason: String) { revokeNetworkAccess(orgId: $orgId, approvalId: $approvalId, reason: $reason) { id state } }
`);
const AssignAccess = graphql(`
  mutation AssignNetworkAccess($orgId: ID!, $input: AssignNetworkAccessInput!) { assignNetworkAccess(orgId: $orgId, input: $input) { id userId } }
`);

export function Requests({ orgId, data, meId, onDone }: { orgId: string; data: Managed; meId: string | undefined; onDone: (m: string) => Promise<unknown> }) {
  return (
    <section aria-labelledby="net-requests">
      <h2 id="net-requests">Requests waiting</h2>
      {data.portalNetworkRequests.length === 0 ? (
        <p className="muted">Nobody is waiting for this network.</p>
      ) : (
        <ul className="rows" aria-label="Requests waiting for this network">
          {data.portalNetworkRequests.map((r) => (
            <PendingRequest key={r.id} orgId={orgId} approval={r} meId={meId} showNetwork={false} onDecided={onDone} />
          ))}
        </ul>
      )}
    </section>
  );
}

export function Devices({ orgId, network, data, admin, onDone }: { orgId: string; network: Network; data: Managed; admin: boolean; onDone: (m: string) => Promise<unknown> }) {
  const rows = data.portalNetworkMembers;
  const devicesOf = (userId: string) => rows.filter((r) => r.userId === userId).length;
  return (
    <section aria-labelledby="net-devices">
      <h2 id="net-devices">Devices on this network</h2>
      {rows.length === 0 ? (
        <Empty>
          <p>No device is on {network.name} yet. People's devices join when they are granted access, or import them from the controller.</p>
        </Empty>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={`Devices on ${network.name}`}>
          <table>
            <thead>
              <tr>
                <th scope="col">Device</th>
                <th scope="col">Person</th>
                <th scope="col">Access</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((m) => {
                const person = who(m.ownerName, m.ownerEmail);
                const count = devicesOf(m.userId);
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
                      <StateBadge state={m.state} /> {m.activeSession && <TimeLeft until={m.activeSession.expiresAt} />}
                      {m.currentlyAuthorized !== !!m.activeSession && <div className="muted">{m.currentlyAuthorized ? "still on at the controller" : "not on at the controller yet"}</div>}
                    </td>
                    <td>
                      <div className="net-row-actions">
                        {m.userNetworkApprovalId && ["approved_inactive", "joined_deauthorized", "active_authorized", "activation_expired", "suspended"].includes(m.state) && (
                          <ReasonDialog
                            trigger={
                              <Button variant="secondary" size="small" aria-label={`Revoke access of ${person} to ${network.name}`}>
                                Revoke access
                              </Button>
                            }
                            title={`Revoke ${person}'s access to ${network.name}?`}
                            confirmLabel="Revoke access"
                            reasonLabel="Reason"
                            reasonHint={`Sent to ${person}.`}
                            onConfirm={async (reason) => {
                              await gql(RevokeAccess, { orgId, approvalId: m.userNetworkApprovalId!, reason: reason || null });
                              await onDone(`${person} no longer has access to ${network.name}.`);
                            }}
                          >
                            <p>
                              {person}'s {count === 1 ? "device comes" : `${count} devices come`} off {network.name} now and any running activation ends. They must ask again to return.
                            </p>
                          </ReasonDialog>
                        )}
                        {admin && (
                          <ConfirmDialog
                            trigger={
                              <Button variant="secondary" size="small" aria-label={`Remove device ${m.deviceDisplayName} of ${person} from ${network.name}`}>
                                Remove device
                              </Button>
                            }
                            title={`Remove ${m.deviceDisplayName} from ${network.name}?`}
                            confirmLabel="Remove device"
                            onConfirm={async () => {
                              await gql(RemoveMembership, { orgId, membershipId: m.id });
                              await onDone(`${m.deviceDisplayName} of ${person} was removed from ${network.name}.`);
                            }}
                          >
                            <p>
                              {person}'s device {m.deviceDisplayName} (<code>{m.nodeId}</code>) is deauthorized at the controller and leaves {network.name}
                              {m.activeSession ? "; its running activation ends" : ""}.
                            </p>
                          </ConfirmDialog>
                        )}
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function Grant({ orgId, network, people, onDone }: { orgId: string; network: Network; people: Person[]; onDone: (m: string) => Promise<unknown> }) {
  const [userId, setUserId] = useState("");
  const [justification, setJustification] = useState("");
  const grant = useMutation({
    mutationFn: () => gql(AssignAccess, { orgId, input: { targetUserId: userId, portalNetworkId: network.id, justification: justification || null } }),
    onSuccess: async () => {
      const p = people.find((x) => x.userId === userId);
      setUserId("");
      setJustification("");
      await onDone(`${who(p?.fullName, p?.email)} may now use ${network.name}.`);
    },
  });
  const submit = useSubmit(() => grant.mutateAsync());
  const fields = grant.error instanceof ApiError ? grant.error.fieldErrors : {};
  if (!network.isActive) return null;
  return (
    <section aria-labelledby="net-grant">
      <h2 id="net-grant">Grant access</h2>
      <Form validationBehavior="aria" className="inline-form" aria-label={`Grant access to ${network.name}`} onSubmit={submit}>
        <label className="field">
          <span className="label">Person</span>
          <select value={userId} onChange={(e) => setUserId(e.target.value)} required>
            <option value="">Choose a member…</option>
            {people.map((p) => (
              <option key={p.userId} value={p.userId}>
                {who(p.fullName, p.email)}
                {p.fullName ? ` (${p.email})` : ""}
              </option>
            ))}
          </select>
        </label>
        <Field label="Why" name="justification" value={justification} onChange={setJustification} error={fields.justification} />
        <Button type="submit" isPending={grant.isPending} isDisabled={!userId}>
          Grant access
        </Button>
        {!fields.justification && <FormError error={grant.error} />}
      </Form>
    </section>
  );
}

