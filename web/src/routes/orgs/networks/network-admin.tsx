import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../../api";
import { graphql } from "../../../graphql";
import { Button } from "../../../ui/Button";
import { ConfirmDialog } from "../../../ui/ConfirmDialog";
import { Field } from "../../../ui/Field";
import { FormError } from "../../../ui/States";
import { useSubmit } from "../../../ui/useSubmit";
import { useOrg } from "../layout";
import { useOnce, who, type Environment, type RequestMode } from "./common";
import { lifetimes, NetworkFields, type NetworkDraft } from "./fields";
import type { Network, Person } from "./network";

/** One network's page, the admins' part: managers, settings, switching off, importing devices, deleting. */

const UpdateNetwork = graphql(`
  mutation UpdatePortalNetwork($orgId: ID!, $networkId: ID!, $input: UpdatePortalNetworkInput!) { updatePortalNetwork(orgId: $orgId, networkId: $networkId, input: $input) { id name isActive } }
`);
const DeletePortalNetwork = graphql(`
  mutation DeletePortalNetwork($orgId: ID!, $networkId: ID!) { deletePortalNetwork(orgId: $orgId, networkId: $networkId) { message } }
`);
const SetManagers = graphql(`
  mutation SetPortalNetworkManagers($orgId: ID!, $networkId: ID!, $userIds: [ID!]!) { setPortalNetworkManagers(orgId: $orgId, networkId: $networkId, userIds: $userIds) { userId } }
`);
const ImportMembers = graphql(`
  mutation ImportNetworkMembers($orgId: ID!, $input: ImportNetworkMembersInput!) { importNetworkMembers(orgId: $orgId, input: $input) { imported skipped { nodeId reason } } }
`);

export function Managers({ orgId, network, managers, people, onDone }: { orgId: string; network: Network; managers: Array<{ userId: string; email: string; fullName?: string | null }>; people: Person[] | undefined; onDone: (m: string) => Promise<unknown> }) {
  const [chosen, setChosen] = useState<string[]>(() => managers.map((m) => m.userId));
  const save = useMutation({
    mutationFn: () => gql(SetManagers, { orgId, networkId: network.id, userIds: chosen }),
    onSuccess: (d) => onDone(d.setPortalNetworkManagers.length === 0 ? `${network.name} has no named managers.` : `${network.name}'s managers were saved.`),
  });
  const submit = useSubmit(() => save.mutateAsync());
  // Owners and admins manage every network already; the others may be named.
  const candidates = people?.filter((p) => p.role === "member" || chosen.includes(p.userId)) ?? [];
  return (
    <section aria-labelledby="net-managers">
      <h2 id="net-managers">Managers</h2>
      <p className="muted">The organization's owners and admins, and the people named here, decide who gets onto {network.name}.</p>
      {!people ? (
        managers.length === 0 ? (
          <p>No one is named.</p>
        ) : (
          <ul className="net-people">
            {managers.map((m) => (
              <li key={m.userId}>
                {who(m.fullName, m.email)} {m.fullName && <span className="muted">{m.email}</span>}
              </li>
            ))}
          </ul>
        )
      ) : candidates.length === 0 ? (
        <p>Only owners and admins are in the organization: invite members to name them managers.</p>
      ) : (
        <Form validationBehavior="aria" className="card net-form" aria-label={`Managers of ${network.name}`} onSubmit={submit}>
          <fieldset className="net-checks">
            <legend className="label">Named managers</legend>
            {candidates.map((p) => (
              <label key={p.userId} className="net-check">
                <input type="checkbox" checked={chosen.includes(p.userId)} onChange={(e) => setChosen((c) => (e.target.checked ? [...c, p.userId] : c.filter((x) => x !== p.userId)))} />
                <span>
                  {who(p.fullName, p.email)} {p.fullName && <span className="muted">{p.email}</span>}
                </span>
              </label>
            ))}
          </fieldset>
          <FormError error={save.error} />
          <div className="actions">
            <Button type="submit" variant="secondary" isPending={save.isPending}>
              Save managers
            </Button>
          </div>
        </Form>
      )}
    </section>
  );
}

const draftOf = (n: Network): NetworkDraft => ({
  name: n.name,
  description: n.description ?? "",
  environment: n.environment as Environment,
  requestMode: n.requestMode as RequestMode,
  defaultMinutes: String(n.defaultActivationLifetimeMinutes),
  maxMinutes: n.maxActivationLifetimeMinutes == null ? "" : String(n.maxActivationLifetimeMinutes),
});

export function Settings({ orgId, network, onDone }: { orgId: string; network: Network; onDone: (m: string) => Promise<unknown> }) {
  const [draft, setDraft] = useState(() => draftOf(network));
  const [local, setLocal] = useState<Record<string, string>>({});
  const save = useMutation({
    mutationFn: async () => {
      const { defaultMinutes, maxMinutes, errors } = lifetimes(draft);
      if (defaultMinutes == null) errors.defaultActivationLifetimeMinutes ??= "Enter how many minutes an activation lasts.";
      setLocal(errors);
      if (defaultMinutes == null || Object.keys(errors).length > 0) return null;
      return gql(UpdateNetwork, {
        orgId,
        networkId: network.id,
        input: { name: draft.name, description: draft.description, environment: draft.environment, requestMode: draft.requestMode, defaultActivationLifetimeMinutes: defaultMinutes, maxActivationLifetimeMinutes: maxMinutes },
      });
    },
    onSuccess: (d) => (d ? onDone(`${d.updatePortalNetwork.name} was saved.`) : undefined),
  });
  const toggle = useMutation({
    mutationFn: () => gql(UpdateNetwork, { orgId, networkId: network.id, input: { isActive: !network.isActive } }),
    onSuccess: (d) => onDone(d.updatePortalNetwork.isActive ? `${network.name} is switched on: approved people can activate again.` : `${network.name} is switched off: its devices came off.`),
  });
  const submit = useSubmit(() => save.mutateAsync());
  const switchOn = useOnce(() => toggle.mutateAsync());
  const api = save.error instanceof ApiError ? save.error.fieldErrors : {};
  const fields = { ...api, ...local };
  return (
    <section aria-labelledby="net-settings">
      <h2 id="net-settings">Settings</h2>
      <Form validationBehavior="aria" className="card net-form" aria-label={`Settings of ${network.name}`} onSubmit={submit}>
        <NetworkFields draft={draft} onChange={setDraft} fields={fields} idPrefix="edit" />
        {Object.keys(fields).length === 0 && <FormError error={save.error} />}
        <div className="actions">
          <Button type="submit" isPending={save.isPending}>
            Save settings
          </Button>
        </div>
      </Form>
      <div className="net-switch">
        {network.isActive ? (
          <ConfirmDialog
            trigger={<Button variant="secondary">Switch {network.name} off</Button>}
            title={`Switch ${network.name} off?`}
            confirmLabel="Switch off"
            onConfirm={() => toggle.mutateAsync()}
          >
            <p>Every device on {network.name} is deauthorized at the controller now and nobody can activate until it is switched on again. People keep their approvals.</p>
          </ConfirmDialog>
        ) : (
          <Button variant="secondary" isPending={toggle.isPending} onPress={switchOn}>
            Switch {network.name} on
          </Button>
        )}
        {!network.isActive && <FormError error={toggle.error} />}
      </div>
    </section>
  );
}

interface Row {
  key: number;
  nodeId: string;
  email: string;
  nickname: string;
}

export function ImportDevices({ orgId, network, people, onDone }: { orgId: string; network: Network; people: Person[]; onDone: (m: string) => Promise<unknown> }) {
  const [rows, setRows] = useState<Row[]>([{ key: 0, nodeId: "", email: "", nickname: "" }]);
  const [skipped, setSkipped] = useState<Array<{ nodeId: string; reason: string }>>([]);
  const run = useMutation({
    mutationFn: () => gql(ImportMembers, { orgId, input: { portalNetworkId: network.id, assignments: rows.map((r) => ({ nodeId: r.nodeId, email: r.email, nickname: r.nickname || null })) } }),
    onSuccess: async (d) => {
      setSkipped(d.importNetworkMembers.skipped);
      setRows([{ key: Date.now(), nodeId: "", email: "", nickname: "" }]);
      const { imported } = d.importNetworkMembers;
      await onDone(`${imported === 1 ? "1 device was" : `${imported} devices were`} imported into ${network.name}${d.importNetworkMembers.skipped.length ? `; ${d.importNetworkMembers.skipped.length} skipped (below)` : ""}.`);
    },
  });
  const submit = useSubmit(() => run.mutateAsync());
  // The API names a row's field as assignments.<index>.<field>.
  const errors = run.error instanceof ApiError ? (((run.error.details?.errors as Array<{ path: string; message: string }> | undefined) ?? [])) : [];
  const errorAt = (i: number, field: string) => errors.find((e) => e.path === `assignments.${i}.${field}`)?.message;
  const set = (key: number, patch: Partial<Row>) => setRows((rs) => rs.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <section aria-labelledby="net-import-devices">
      <h2 id="net-import-devices">Import devices from the controller</h2>
      <p className="muted">Devices already on {network.name} at the controller become their owners' devices here, with access granted. Members not listed are left alone.</p>
      <Form validationBehavior="aria" className="card net-form" aria-label={`Import devices into ${network.name}`} onSubmit={submit}>
        {rows.map((r, i) => (
          <fieldset key={r.key} className="net-import-row">
            <legend className="visually-hidden">Device {i + 1}</legend>
            <Field label="Node id" value={r.nodeId} onChange={(v) => set(r.key, { nodeId: v })} isRequired description="10 hexadecimal characters" error={errorAt(i, "nodeId")} />
            <label className="field">
              <span className="label">Owner</span>
              <select value={r.email} onChange={(e) => set(r.key, { email: e.target.value })} required aria-invalid={!!errorAt(i, "email") || undefined}>
                <option value="">Choose a member…</option>
                {people.map((p) => (
                  <option key={p.userId} value={p.email}>
                    {who(p.fullName, p.email)}
                  </option>
                ))}
              </select>
              {errorAt(i, "email") && <span className="field-error">{errorAt(i, "email")}</span>}
            </label>
            <Field label="Name (optional)" value={r.nickname} onChange={(v) => set(r.key, { nickname: v })} error={errorAt(i, "nickname")} />
            {rows.length > 1 && (
              <Button variant="quiet" size="small" onPress={() => setRows((rs) => rs.filter((x) => x.key !== r.key))} aria-label={`Remove device ${i + 1} from the list`}>
                Remove
              </Button>
            )}
          </fieldset>
        ))}
        {errors.length === 0 && <FormError error={run.error} />}
        <div className="actions">
          <Button variant="secondary" onPress={() => setRows((rs) => [...rs, { key: Date.now(), nodeId: "", email: "", nickname: "" }])}>
            Add another device
          </Button>
          <Button type="submit" isPending={run.isPending}>
            Import {rows.length === 1 ? "device" : `${rows.length} devices`}
          </Button>
        </div>
        {skipped.length > 0 && (
          <div className="notice notice-warn">
            <p>Not imported:</p>
            <ul>
              {skipped.map((s) => (
                <li key={s.nodeId}>
                  <code>{s.nodeId}</code>: {s.reason}
                </li>
              ))}
            </ul>
          </div>
        )}
      </Form>
    </section>
  );
}

export function DeleteNetwork({ orgId, network }: { orgId: string; network: Network }) {
  const org = useOrg();
  const navigate = useNavigate();
  const qc = useQueryClient();
  return (
    <section aria-labelledby="net-delete" className="danger-zone">
      <h2 id="net-delete">Stop governing {network.name}</h2>
      <ConfirmDialog
        trigger={<Button variant="danger">Delete {network.name}</Button>}
        title={`Delete ${network.name}?`}
        confirmLabel="Delete network"
        typeToConfirm={network.name}
        onConfirm={async () => {
          await gql(DeletePortalNetwork, { orgId, networkId: network.id });
          await qc.invalidateQueries({ queryKey: ["org", orgId] });
          await navigate({ to: "/orgs/$slug/networks", params: { slug: org.slug } });
        }}
      >
        <p>
          Every activation on {network.name} ends, its {network.activeMembershipCount === 1 ? "device comes" : "devices come"} off at the controller, and people's approvals for it are revoked. The ZeroTier network itself (
          <code>{network.zerotierNetworkId}</code>) stays at the controller.
        </p>
      </ConfirmDialog>
    </section>
  );
}
