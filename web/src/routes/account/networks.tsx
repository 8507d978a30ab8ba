import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Form } from "react-aria-components";
import { gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { useShell, type MyOrganization } from "../../shell";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useSubmit } from "../../ui/useSubmit";
import { fieldsOf, generalError } from "./parts";

const NetworksQuery = graphql(`
  query AccountNetworks($orgId: ID!) {
    myNetworkMemberships(orgId: $orgId) {
      id deviceId deviceDisplayName networkName nodeId state approvedForActivation portalNetworkId
      activeSession { id expiresAt minutesLeft }
    }
    myDevices(orgId: $orgId) { id displayName deviceNickname nodeId status activeMembershipCount createdAt }
    portalNetworks(orgId: $orgId) { id name description requestMode defaultActivationLifetimeMinutes }
    myNetworkApprovals(orgId: $orgId) { id portalNetworkId state justification decisionReason createdAt decidedAt }
  }
`);
type Access = ResultOf<typeof NetworksQuery>;
type Membership = Access["myNetworkMemberships"][number];

const Activate = graphql(`
  mutation ActivateMyNetwork($orgId: ID!, $membershipId: ID!) {
    activateNetworkMembership(orgId: $orgId, membershipId: $membershipId) { controllerSynced session { id minutesLeft } }
  }
`);
const ActivateAll = graphql(`
  mutation ActivateAllMyNetworks($orgId: ID!) { activateAllNetworkMemberships(orgId: $orgId) { controllerSynced sessions { id } } }
`);
const Deactivate = graphql(`
  mutation DeactivateMyNetwork($orgId: ID!, $membershipId: ID!) { deactivateNetworkMembership(orgId: $orgId, membershipId: $membershipId) { id state } }
`);
const LeaveNetwork = graphql(`
  mutation LeaveMyNetwork($orgId: ID!, $membershipId: ID!) { leaveNetwork(orgId: $orgId, membershipId: $membershipId) { message } }
`);
const RegisterDevice = graphql(`
  mutation RegisterMyDevice($orgId: ID!, $input: RegisterDeviceInput!) { registerDevice(orgId: $orgId, input: $input) { membershipsCreated device { id displayName } } }
`);
const RenameDevice = graphql(`
  mutation RenameMyDevice($orgId: ID!, $deviceId: ID!, $input: UpdateDeviceInput!) { updateDevice(orgId: $orgId, deviceId: $deviceId, input: $input) { id displayName } }
`);
const DeleteDevice = graphql(`
  mutation DeleteMyDevice($orgId: ID!, $deviceId: ID!) { deleteDevice(orgId: $orgId, deviceId: $deviceId) { message } }
`);
const RequestAccess = graphql(`
  mutation RequestMyNetworkAccess($orgId: ID!, $input: RequestNetworkAccessInput!) { requestNetworkAccess(orgId: $orgId, input: $input) { id state } }
`);

/** A membership's state in words (colour is never the only signal). */
const STATE_WORDS: Record<string, [string, "good" | "warn" | "bad" | "neutral"]> = {
  pending_device_registration: ["waiting for the device", "warn"],
  pending_request: ["not requested yet", "neutral"],
  pending_manager_approval: ["waiting for a manager's approval", "warn"],
  approved_inactive: ["approved, off", "neutral"],
  joined_deauthorized: ["approved, off", "neutral"],
  active_authorized: ["on", "good"],
  activation_expired: ["approved, off (the last activation ran out)", "neutral"],
  suspended: ["suspended by an administrator", "bad"],
  revoked: ["revoked", "bad"],
  rejected: ["rejected", "bad"],
};
const REQUEST_WORDS: Record<string, [string, "good" | "warn" | "bad" | "neutral"]> = {
  pending: ["waiting for a decision", "warn"],
  approved: ["approved", "good"],
  rejected: ["rejected", "bad"],
  revoked: ["revoked", "bad"],
  suspended: ["suspended", "bad"],
};
const words = (map: typeof STATE_WORDS, key: string): [string, "good" | "warn" | "bad" | "neutral"] => (Object.hasOwn(map, key) ? map[key]! : [key.replace(/_/g, " "), "neutral"]);

/**
 * /account/networks: per organization, your devices on its networks with the time left, switched on
 * (for the network's default time) and off; your devices; and your requests for access.
 */
export function Networks() {
  const shell = useShell();
  // Guests hold no network access.
  const orgs = (shell.data?.myOrganizations ?? []).filter((o) => o.role !== "guest");
  return (
    <div className="page">
      <h1>My network access</h1>
      <p className="muted">Access to a network is switched on for a limited time and goes off by itself.</p>
      {orgs.length === 0 ? (
        <Empty>
          <p id="no-networks">You have no devices on any organization's networks yet: you need to be a member of an organization that has networks.</p>
        </Empty>
      ) : (
        orgs.map((o) => <OrgNetworks key={o.id} org={o} />)
      )}
    </div>
  );
}

function OrgNetworks({ org }: { org: MyOrganization }) {
  const q = useQuery({ queryKey: ["account", "networks", org.id], queryFn: () => gql(NetworksQuery, { orgId: org.id }) });
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  const refresh = () => Promise.all([qc.invalidateQueries({ queryKey: ["account", "networks", org.id] }), qc.invalidateQueries({ queryKey: ["org", org.id] })]);
  const changed = async (message: string) => {
    setDone(message);
    await refresh();
  };
  const activate = useMutation({
    mutationFn: (m: Membership) => gql(Activate, { orgId: org.id, membershipId: m.id }),
    onSuccess: (r, m) =>
      changed(
        `${m.deviceDisplayName} is on ${m.networkName} for ${r.activateNetworkMembership.session.minutesLeft} minutes.${r.activateNetworkMembership.controllerSynced ? "" : " The controller was not reached: it applies within a minute."}`,
      ),
  });
  const activateAll = useMutation({
    mutationFn: () => gql(ActivateAll, { orgId: org.id }),
    onSuccess: (r) => {
      const n = r.activateAllNetworkMemberships.sessions.length;
      return changed(`Switched on ${n === 1 ? "1 connection" : `${n} connections`}.`);
    },
  });
  const deactivate = useMutation({
    mutationFn: (m: Membership) => gql(Deactivate, { orgId: org.id, membershipId: m.id }),
    onSuccess: (_r, m) => changed(`${m.deviceDisplayName} is off ${m.networkName}.`),
  });

  const id = `networks-${org.id}`;
  return (
    <section aria-labelledby={id} className="org-networks">
      <h2 id={id}>{org.name}</h2>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      ) : q.data.portalNetworks.length === 0 && q.data.myDevices.length === 0 && q.data.myNetworkMemberships.length === 0 ? (
        <p className="muted">{org.name} has no networks.</p>
      ) : (
        <>
          {done && <Success>{done}</Success>}
          <FormError error={activate.error ?? activateAll.error ?? deactivate.error} />
          <h3>Access</h3>
          {q.data.myNetworkMemberships.length === 0 ? (
            <p className="muted">None of your devices is on a network of {org.name} yet: add a device, then ask for access below.</p>
          ) : (
            <ul className="rows" aria-label={`Your access to the networks of ${org.name}`}>
              {q.data.myNetworkMemberships.map((m) => {
                const on = m.activeSession !== null && m.activeSession !== undefined;
                const [text, tone] = on ? ([`on, ${m.activeSession!.minutesLeft} min left`, "good"] as const) : words(STATE_WORDS, m.state);
                return (
                  <li key={m.id} data-membership-row={m.id}>
                    <span className="row-main">
                      <span>
                        <strong>{m.deviceDisplayName}</strong> on <strong>{m.networkName}</strong> <span className="muted">({m.nodeId})</span>
                      </span>
                      <span>
                        <Badge tone={tone}>
                          <span className="network-status">{text}</span>
                        </Badge>{" "}
                        {on && (
                          <span className="muted">
                            until <Time iso={m.activeSession!.expiresAt} mode="full" />
                          </span>
                        )}
                      </span>
                    </span>
                    <span className="row-actions">
                      {on ? (
                        <Button
                          variant="secondary"
                          size="small"
                          aria-label={`Switch off ${m.deviceDisplayName} on ${m.networkName}`}
                          isPending={deactivate.isPending && deactivate.variables?.id === m.id}
                          onPress={() => deactivate.mutate(m)}
                        >
                          Switch off
                        </Button>
                      ) : (
                        m.approvedForActivation && (
                          <Button
                            size="small"
                            aria-label={`Switch on ${m.deviceDisplayName} on ${m.networkName}`}
                            isPending={activate.isPending && activate.variables?.id === m.id}
                            onPress={() => activate.mutate(m)}
                          >
                            Switch on
                          </Button>
                        )
                      )}
                      <ConfirmDialog
                        trigger={
                          <Button variant="quiet" size="small" aria-label={`Take off ${m.deviceDisplayName} from ${m.networkName}`}>
                            Take off
                          </Button>
                        }
                        title={`Take ${m.deviceDisplayName} off ${m.networkName}?`}
                        confirmLabel="Take it off"
                        onConfirm={async () => {
                          await gql(LeaveNetwork, { orgId: org.id, membershipId: m.id });
                          await changed(`${m.deviceDisplayName} is no longer on ${m.networkName}.`);
                        }}
                      >
                        <p>Its access ends now; to come back, the device must join the network again (and may need a manager's approval).</p>
                      </ConfirmDialog>
                    </span>
                  </li>
                );
              })}
            </ul>
          )}
          {q.data.myNetworkMemberships.filter((m) => m.approvedForActivation && !m.activeSession).length > 1 && (
            <div className="actions">
              <Button variant="secondary" isPending={activateAll.isPending} onPress={() => activateAll.mutate()}>
                Switch all on
              </Button>
            </div>
          )}
          <Devices org={org} data={q.data} onChanged={changed} />
          <Requests org={org} data={q.data} onChanged={changed} />
        </>
      )}
    </section>
  );
}

function Devices({ org, data, onChanged }: { org: MyOrganization; data: Access; onChanged: (message: string) => Promise<void> }) {
  const [nodeId, setNodeId] = useState("");
  const [nickname, setNickname] = useState("");
  const register = useMutation({
    mutationFn: () => gql(RegisterDevice, { orgId: org.id, input: { nodeId: nodeId.trim().toLowerCase(), ...(nickname.trim() ? { nickname: nickname.trim() } : {}) } }),
    onSuccess: async (r) => {
      setNodeId("");
      setNickname("");
      const n = r.registerDevice.membershipsCreated;
      await onChanged(`${r.registerDevice.device.displayName} added${n > 0 ? `: it joined ${n === 1 ? "1 network" : `${n} networks`} you are approved for` : ""}.`);
    },
  });
  const submit = useSubmit(() => register.mutateAsync());
  const fields = fieldsOf(register.error);
  return (
    <>
      <h3>Devices</h3>
      {data.myDevices.length === 0 ? (
        <p className="muted">No devices in {org.name} yet.</p>
      ) : (
        <ul className="rows" aria-label={`Your devices in ${org.name}`}>
          {data.myDevices.map((d) => (
            <DeviceRow key={d.id} org={org} d={d} onChanged={onChanged} />
          ))}
        </ul>
      )}
      <Form validationBehavior="aria" className="inline-form add-form" aria-label={`Add a device to ${org.name}`} onSubmit={submit}>
        <Field label="ZeroTier node ID" name="nodeId" value={nodeId} onChange={setNodeId} isRequired placeholder="10 hex digits" description="zerotier-cli info shows it" error={fields.nodeId} />
        <Field label="Name (optional)" name="nickname" value={nickname} onChange={setNickname} placeholder="e.g. Work laptop" error={fields.nickname} />
        <Button type="submit" isPending={register.isPending}>
          Add device
        </Button>
        <FormError error={generalError(register.error, ["nodeId", "nickname"])} />
      </Form>
    </>
  );
}

function DeviceRow({ org, d, onChanged }: { org: MyOrganization; d: Access["myDevices"][number]; onChanged: (message: string) => Promise<void> }) {
  const [renaming, setRenaming] = useState(false);
  const [nickname, setNickname] = useState(d.deviceNickname ?? "");
  const rename = useMutation({
    mutationFn: () => gql(RenameDevice, { orgId: org.id, deviceId: d.id, input: { nickname: nickname.trim() } }),
    onSuccess: async (r) => {
      setRenaming(false);
      await onChanged(`Device renamed to ${r.updateDevice.displayName}.`);
    },
  });
  const submit = useSubmit(() => rename.mutateAsync());
  const fields = fieldsOf(rename.error);
  return (
    <li>
      <span className="row-main">
        <span>
          <strong>{d.displayName}</strong> {d.status === "inactive" && <Badge>inactive</Badge>}
        </span>
        <span className="muted">
          {d.nodeId} · added <Time iso={d.createdAt} /> · on {d.activeMembershipCount === 1 ? "1 network" : `${d.activeMembershipCount} networks`}
        </span>
      </span>
      <span className="row-actions">
        <Button variant="secondary" size="small" aria-expanded={renaming} aria-label={`Rename device ${d.displayName}`} onPress={() => (setNickname(d.deviceNickname ?? ""), setRenaming(!renaming))}>
          Rename
        </Button>
        <ConfirmDialog
          trigger={
            <Button variant="secondary" size="small" aria-label={`Remove device ${d.displayName}`}>
              Remove
            </Button>
          }
          title={`Remove ${d.displayName}?`}
          confirmLabel="Remove device"
          onConfirm={async () => {
            await gql(DeleteDevice, { orgId: org.id, deviceId: d.id });
            await onChanged(`${d.displayName} removed: it is off every network of ${org.name}.`);
          }}
        >
          <p>It comes off every network of {org.name} at once, and its running access ends.</p>
        </ConfirmDialog>
      </span>
      {renaming && (
        <Form validationBehavior="aria" className="inline-form row-form" aria-label={`Rename device ${d.displayName}`} onSubmit={submit}>
          <Field label={`New name for ${d.displayName}`} name="nickname" value={nickname} onChange={setNickname} isRequired autoFocus error={fields.nickname} />
          <Button type="submit" size="small" isPending={rename.isPending}>
            Save name
          </Button>
          <FormError error={generalError(rename.error, ["nickname"])} />
        </Form>
      )}
    </li>
  );
}

function Requests({ org, data, onChanged }: { org: MyOrganization; data: Access; onChanged: (message: string) => Promise<void> }) {
  const networkName = new Map(data.portalNetworks.map((n) => [n.id, n.name]));
  // A network you already have (or asked for) is not offered again.
  const taken = new Set([...data.myNetworkMemberships.map((m) => m.portalNetworkId), ...data.myNetworkApprovals.filter((a) => a.state === "pending").map((a) => a.portalNetworkId)]);
  const open = data.portalNetworks.filter((n) => !taken.has(n.id) && n.requestMode !== "invite_only");
  const [networkId, setNetworkId] = useState("");
  const [deviceId, setDeviceId] = useState("");
  const [justification, setJustification] = useState("");
  const request = useMutation({
    mutationFn: () => gql(RequestAccess, { orgId: org.id, input: { portalNetworkId: networkId, ...(deviceId ? { deviceId } : {}), ...(justification.trim() ? { justification: justification.trim() } : {}) } }),
    onSuccess: async (r) => {
      const name = networkName.get(networkId) ?? "the network";
      setNetworkId("");
      setJustification("");
      await onChanged(r.requestNetworkAccess.state === "approved" ? `Access to ${name} approved.` : `Access to ${name} requested: a manager decides.`);
    },
  });
  const submit = useSubmit(() => request.mutateAsync());
  const fields = fieldsOf(request.error);
  const networkField = `request-network-${org.id}`;
  const deviceField = `request-device-${org.id}`;
  return (
    <>
      <h3>Requests</h3>
      {data.myNetworkApprovals.length === 0 ? (
        <p className="muted">You have not asked for access to a network of {org.name}.</p>
      ) : (
        <ul className="rows" aria-label={`Your requests in ${org.name}`}>
          {data.myNetworkApprovals.map((a) => {
            const [text, tone] = words(REQUEST_WORDS, a.state);
            return (
              <li key={a.id}>
                <span className="row-main">
                  <span>
                    <strong>{networkName.get(a.portalNetworkId) ?? "A network"}</strong> <Badge tone={tone}>{text}</Badge>
                  </span>
                  <span className="muted">
                    asked <Time iso={a.createdAt} />
                    {a.justification ? ` · “${a.justification}”` : ""}
                    {a.decidedAt ? (
                      <>
                        {" "}
                        · decided <Time iso={a.decidedAt} />
                      </>
                    ) : null}
                    {a.decisionReason ? ` · ${a.decisionReason}` : ""}
                  </span>
                </span>
              </li>
            );
          })}
        </ul>
      )}
      {open.length > 0 && (
        <Form validationBehavior="aria" className="inline-form add-form" aria-label={`Ask for access to a network of ${org.name}`} onSubmit={submit}>
          <div className="field">
            <label htmlFor={networkField}>Network</label>
            <select id={networkField} value={networkId} onChange={(e) => setNetworkId(e.target.value)} required aria-invalid={fields.portalNetworkId ? true : undefined}>
              <option value="">Choose a network…</option>
              {open.map((n) => (
                <option key={n.id} value={n.id}>
                  {n.name}
                  {n.requestMode === "open" ? " (open)" : ""}
                </option>
              ))}
            </select>
            {fields.portalNetworkId && <span className="field-error">{fields.portalNetworkId}</span>}
          </div>
          {data.myDevices.length > 0 && (
            <div className="field">
              <label htmlFor={deviceField}>Device</label>
              <select id={deviceField} value={deviceId} onChange={(e) => setDeviceId(e.target.value)}>
                <option value="">None yet</option>
                {data.myDevices.map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.displayName}
                  </option>
                ))}
              </select>
            </div>
          )}
          <Field label="Why (optional)" name="justification" value={justification} onChange={setJustification} error={fields.justification} />
          <Button type="submit" variant="secondary" isPending={request.isPending} isDisabled={!networkId}>
            Ask for access
          </Button>
          <FormError error={generalError(request.error, ["portalNetworkId", "justification", "deviceId"])} />
        </Form>
      )}
    </>
  );
}
