import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError, gql } from "../../../api";
import { graphql, type ResultOf } from "../../../graphql";
import { useShell } from "../../../shell";
import { Badge } from "../../../ui/Badge";
import { Button } from "../../../ui/Button";
import { ConfirmDialog } from "../../../ui/ConfirmDialog";
import { Empty, ErrorState, Loading, Success } from "../../../ui/States";
import { Time } from "../../../ui/Time";
import { isAdmin, useOrg } from "../layout";
import { AdminsOnly, usePaged, who } from "./common";

const KillSwitchQuery = graphql(`
  query KillSwitch($orgId: ID!) {
    killSwitchEvents(orgId: $orgId) { id targetUserId targetEmail targetName scope networkIds reason sessionsEnded createdAt liftedAt triggeredByUserId }
    members(orgId: $orgId) { userId email fullName role }
    portalNetworks(orgId: $orgId, includeInactive: true) { id name }
    organizationNetworkMemberships(orgId: $orgId) { id userId deviceId deviceDisplayName portalNetworkId state }
    networkSessions(orgId: $orgId) { id userId deviceNickname nodeId portalNetworkId networkName }
  }
`);
const Trigger = graphql(`
  mutation TriggerKillSwitch($orgId: ID!, $input: KillSwitchInput!) { triggerKillSwitch(orgId: $orgId, input: $input) { controllerSynced event { id sessionsEnded } } }
`);
const Lift = graphql(`
  mutation LiftKillSwitch($orgId: ID!, $eventId: ID!) { liftKillSwitch(orgId: $orgId, eventId: $eventId) { id liftedAt } }
`);

type Data = ResultOf<typeof KillSwitchQuery>;
const RANK: Record<string, number> = { guest: 0, member: 1, admin: 2, owner: 3 };
// Memberships a kill switch still has something to cut on.
const LIVE = new Set(["approved_inactive", "joined_deauthorized", "active_authorized", "activation_expired", "pending_manager_approval", "pending_request"]);

/** A list in words: "a", "a and b", "a, b and c". */
const words = (items: string[]) => (items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * /orgs/<slug>/networks/kill-switch (admins): cut one person off at once — activations end,
 * devices are deauthorized at the controller, access is suspended until lifted — after a
 * confirmation naming exactly what it cuts; and the history, where a kill switch is lifted.
 */
export function KillSwitch() {
  const org = useOrg();
  const shell = useShell().data;
  const qc = useQueryClient();
  const [done, setDone] = useState<{ text: string; warn?: string } | null>(null);
  const admin = isAdmin(org);
  const q = useQuery({ queryKey: ["org", org.id, "networks", "kill-switch"], queryFn: () => gql(KillSwitchQuery, { orgId: org.id }), enabled: admin });
  const changed = async (text: string, warn?: string) => {
    setDone({ text, warn });
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };
  if (!admin) return <AdminsOnly orgName={org.name} what="use the kill switch" />;
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  // Only people below your role (owners and superadmins: anyone else); the API decides as well.
  const mine = RANK[org.role] ?? 0;
  const targets = q.data.members.filter((m) => m.userId !== shell?.me.id && (shell?.me.isSuperadmin || org.role === "owner" || (RANK[m.role] ?? 0) < mine));
  return (
    <div className="page">
      <h1>Kill switch</h1>
      <p className="lead">Cut one person off the networks of {org.name} at once: their activations end, their devices are deauthorized at the controller, and their access stays suspended until an admin lifts it.</p>
      {done && (
        <>
          <Success>{done.text}</Success>
          {done.warn && <p className="notice notice-warn">{done.warn}</p>}
        </>
      )}
      {targets.length === 0 ? (
        <Empty>
          <p>There is nobody you can cut off: the kill switch acts on people below your role.</p>
        </Empty>
      ) : (
        <TriggerForm orgId={org.id} orgName={org.name} data={q.data} targets={targets} onDone={changed} />
      )}
      <History orgId={org.id} data={q.data} onDone={changed} />
    </div>
  );
}

function TriggerForm({ orgId, orgName, data, targets, onDone }: { orgId: string; orgName: string; data: Data; targets: Data["members"]; onDone: (text: string, warn?: string) => Promise<unknown> }) {
  const [userId, setUserId] = useState("");
  const [scope, setScope] = useState<"organization" | "selected_networks">("organization");
  const [networkIds, setNetworkIds] = useState<string[]>([]);
  const [reason, setReason] = useState("");
  const trigger = useMutation({
    mutationFn: () => gql(Trigger, { orgId, input: { targetUserId: userId, scope, reason: reason.trim() || null, networkIds: scope === "selected_networks" ? networkIds : null } }),
  });
  const fields = trigger.error instanceof ApiError ? trigger.error.fieldErrors : {};
  const target = targets.find((t) => t.userId === userId);
  const name = who(target?.fullName, target?.email);
  const inScope = (nid: string) => scope === "organization" || networkIds.includes(nid);
  const sessions = data.networkSessions.filter((s) => s.userId === userId && inScope(s.portalNetworkId));
  const devices = data.organizationNetworkMemberships.filter((m) => m.userId === userId && inScope(m.portalNetworkId) && LIVE.has(m.state));
  // One device may be on several networks: each device once.
  const deviceNames = [...new Map(devices.map((d) => [d.deviceId, d.deviceDisplayName])).values()];
  const chosenNames = data.portalNetworks.filter((n) => networkIds.includes(n.id)).map((n) => n.name);
  const where = scope === "organization" ? `every network of ${orgName}` : words(chosenNames);
  const ready = !!target && (scope === "organization" || networkIds.length > 0);
  return (
    <section aria-labelledby="ks-trigger" className="card net-form">
      <h2 id="ks-trigger">Cut someone off</h2>
      <label className="field">
        <span className="label">Person</span>
        <select value={userId} onChange={(e) => setUserId(e.target.value)}>
          <option value="">Choose a member…</option>
          {targets.map((t) => (
            <option key={t.userId} value={t.userId}>
              {who(t.fullName, t.email)}
              {t.fullName ? ` (${t.email})` : ""}
            </option>
          ))}
        </select>
      </label>
      <fieldset className="net-checks">
        <legend className="label">From</legend>
        <label className="net-check">
          <input type="radio" name="ks-scope" checked={scope === "organization"} onChange={() => setScope("organization")} /> Every network of {orgName}
        </label>
        <label className="net-check">
          <input type="radio" name="ks-scope" checked={scope === "selected_networks"} onChange={() => setScope("selected_networks")} /> Only the networks I choose
        </label>
        {scope === "selected_networks" && (
          <div className="net-subchecks">
            {data.portalNetworks.length === 0 && <p className="muted">The organization has no networks.</p>}
            {data.portalNetworks.map((n) => (
              <label key={n.id} className="net-check">
                <input type="checkbox" checked={networkIds.includes(n.id)} onChange={(e) => setNetworkIds((c) => (e.target.checked ? [...c, n.id] : c.filter((x) => x !== n.id)))} /> {n.name}
              </label>
            ))}
          </div>
        )}
      </fieldset>
      <label className="field">
        <span className="label">Reason</span>
        <input value={reason} onChange={(e) => setReason(e.target.value)} aria-describedby="ks-reason-hint" aria-invalid={!!fields.reason || undefined} />
        <span id="ks-reason-hint" className="hint">
          Kept in the history and the audit log.
        </span>
        {fields.reason && <span className="field-error">{fields.reason}</span>}
      </label>
      <div className="actions">
        <ConfirmDialog
          trigger={
            <Button variant="danger" isDisabled={!ready}>
              {target ? `Cut ${name} off…` : "Cut off…"}
            </Button>
          }
          title={`Cut ${name} off ${where}?`}
          confirmLabel={`Cut ${name} off`}
          onConfirm={async () => {
            const d = await trigger.mutateAsync();
            setUserId("");
            setReason("");
            setNetworkIds([]);
            const ended = d.triggerKillSwitch.event.sessionsEnded;
            await onDone(
              `${name} is cut off ${where}: ${plural(ended, "activation", "activations")} ended.`,
              d.triggerKillSwitch.controllerSynced ? undefined : "The controller could not be reached: reconciliation deauthorizes the devices as soon as it answers. Access is suspended already.",
            );
          }}
        >
          <ul className="ks-effects">
            <li>
              {sessions.length === 0
                ? `No activation of ${name} is running there now.`
                : `Ends ${plural(sessions.length, "running activation", "running activations")}: ${words(sessions.map((s) => `${s.deviceNickname ?? s.nodeId} on ${s.networkName}`))}.`}
            </li>
            <li>{deviceNames.length === 0 ? `${name} has no device there to deauthorize.` : `Deauthorizes ${plural(deviceNames.length, "device", "devices")} at the controller: ${words(deviceNames)}.`}</li>
            <li>Suspends {name}'s access until an admin lifts the kill switch; nothing can be switched on meanwhile.</li>
          </ul>
          {reason.trim() && <p>Reason: “{reason.trim()}”</p>}
        </ConfirmDialog>
      </div>
    </section>
  );
}

function History({ orgId, data, onDone }: { orgId: string; data: Data; onDone: (text: string) => Promise<unknown> }) {
  const people = new Map(data.members.map((m) => [m.userId, who(m.fullName, m.email)]));
  const networks = new Map(data.portalNetworks.map((n) => [n.id, n.name]));
  const { shown, more } = usePaged(data.killSwitchEvents);
  return (
    <section aria-labelledby="ks-history">
      <h2 id="ks-history">History</h2>
      {data.killSwitchEvents.length === 0 ? (
        <p className="muted">The kill switch has never been used in this organization.</p>
      ) : (
        <>
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Kill switch history">
            <table>
              <thead>
                <tr>
                  <th scope="col">Person</th>
                  <th scope="col">From</th>
                  <th scope="col">When</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((e) => {
                  const name = who(e.targetName, e.targetEmail);
                  const from = e.scope === "selected_networks" ? words(e.networkIds.map((id) => networks.get(id) ?? "a deleted network")) : e.scope === "global" ? "every organization's networks" : "every network";
                  return (
                    <tr key={e.id}>
                      <td>
                        <strong>{name}</strong>
                        {e.targetName && <div className="muted">{e.targetEmail}</div>}
                      </td>
                      <td>{from}</td>
                      <td>
                        <Time iso={e.createdAt} />
                        <div className="muted">
                          by {people.get(e.triggeredByUserId ?? "") ?? "a former member"}, {plural(e.sessionsEnded, "activation", "activations")} ended
                        </div>
                      </td>
                      <td>{e.reason ?? <span className="muted">none given</span>}</td>
                      <td>
                        {e.liftedAt ? (
                          <>
                            <Badge>Lifted</Badge> <Time iso={e.liftedAt} />
                          </>
                        ) : (
                          <div className="net-row-actions">
                            <Badge tone="bad">In force</Badge>
                            <LiftButton orgId={orgId} eventId={e.id} name={name} from={from} onDone={onDone} />
                          </div>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {more}
        </>
      )}
    </section>
  );
}

function LiftButton({ orgId, eventId, name, from, onDone }: { orgId: string; eventId: string; name: string; from: string; onDone: (text: string) => Promise<unknown> }) {
  return (
    <ConfirmDialog
        trigger={
          <Button variant="secondary" size="small" aria-label={`Lift the kill switch on ${name}`}>
            Lift
          </Button>
        }
        title={`Lift the kill switch on ${name}?`}
        confirmLabel="Lift kill switch"
        danger={false}
        onConfirm={async () => {
          await gql(Lift, { orgId, eventId });
          await onDone(`The kill switch on ${name} was lifted.`);
        }}
      >
        <p>
          {name}'s access to {from} comes back as it was approved; their devices stay off until they switch them on.
        </p>
      </ConfirmDialog>
  );
}
