import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../../api";
import { graphql } from "../../../graphql";
import { Badge } from "../../../ui/Badge";
import { Button } from "../../../ui/Button";
import { Field } from "../../../ui/Field";
import { Empty, ErrorState, FormError, Loading, Success } from "../../../ui/States";
import { duration } from "../../../ui/TimeLeft";
import { useSubmit } from "../../../ui/useSubmit";
import { isAdmin, useOrg } from "../layout";
import { environmentLabel, requestModeLabel } from "./common";
import { emptyDraft, lifetimes, NetworkFields, type NetworkDraft } from "./fields";

const NetworksQuery = graphql(`
  query PortalNetworks($orgId: ID!, $includeInactive: Boolean) {
    portalNetworks(orgId: $orgId, includeInactive: $includeInactive) {
      id name description zerotierNetworkId environment requestMode defaultActivationLifetimeMinutes maxActivationLifetimeMinutes isActive approvedUserCount activeMembershipCount
    }
  }
`);
export const ControllerQuery = graphql(`
  query NetworkController($orgId: ID!) { networkControllerConfig(orgId: $orgId) { configured ztApiMode ztApiUrl controllerAddress lastCheckedAt updatedAt } }
`);
const AvailableQuery = graphql(`
  query AvailableControllerNetworks($orgId: ID!) { availableControllerNetworks(orgId: $orgId) { id name description } }
`);
const CreateNetwork = graphql(`
  mutation CreatePortalNetwork($orgId: ID!, $input: CreatePortalNetworkInput!) { createPortalNetwork(orgId: $orgId, input: $input) { id name } }
`);
const ImportNetworks = graphql(`
  mutation ImportControllerNetworks($orgId: ID!, $ids: [String!]!) { importControllerNetworks(orgId: $orgId, zerotierNetworkIds: $ids) { id name } }
`);

/** /orgs/<slug>/networks: the portal networks; admins add one by its ZeroTier id or import the controller's. */
export function NetworkList() {
  const org = useOrg();
  const admin = isAdmin(org);
  const qc = useQueryClient();
  const [inactive, setInactive] = useState(false);
  const [done, setDone] = useState("");
  const networks = useQuery({ queryKey: ["org", org.id, "networks", "list", inactive], queryFn: () => gql(NetworksQuery, { orgId: org.id, includeInactive: inactive }) });
  const controller = useQuery({ queryKey: ["org", org.id, "networks", "controller"], queryFn: () => gql(ControllerQuery, { orgId: org.id }), enabled: admin });
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };
  const configured = controller.data?.networkControllerConfig.configured;
  return (
    <div className="page">
      <h1>Networks</h1>
      <p className="lead">ZeroTier networks whose access {org.name} governs: people ask, managers decide, and access stays on only for the time they choose.</p>
      {done && <Success>{done}</Success>}
      {admin && controller.isError && <ErrorState error={controller.error} retry={() => void controller.refetch()} />}
      {admin && configured === false && (
        <div className="notice notice-warn">
          <p>
            Connect the organization's ZeroTier controller first: networks are added from it.{" "}
            <Link to="/orgs/$slug/networks/controller" params={{ slug: org.slug }}>
              Connect a controller
            </Link>
          </p>
        </div>
      )}
      <label className="net-check">
        <input type="checkbox" checked={inactive} onChange={(e) => setInactive(e.target.checked)} /> Show switched-off networks
      </label>
      {networks.isPending ? (
        <Loading />
      ) : networks.isError ? (
        <ErrorState error={networks.error} retry={() => void networks.refetch()} />
      ) : networks.data.portalNetworks.length === 0 ? (
        <Empty>
          <p>
            <strong>No networks yet.</strong>
          </p>
          <p>{admin ? "Import one from your controller below, or add one by its ZeroTier network id." : "An admin of the organization adds them."}</p>
        </Empty>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={`Networks of ${org.name}`}>
          <table>
            <thead>
              <tr>
                <th scope="col">Network</th>
                <th scope="col">Who gets in</th>
                <th scope="col">Activation</th>
                <th scope="col">People</th>
                <th scope="col">Devices on</th>
              </tr>
            </thead>
            <tbody>
              {networks.data.portalNetworks.map((n) => (
                <tr key={n.id}>
                  <td>
                    <Link to="/orgs/$slug/networks/$networkId" params={{ slug: org.slug, networkId: n.id }}>
                      <strong>{n.name}</strong>
                    </Link>{" "}
                    {!n.isActive && <Badge tone="warn">switched off</Badge>}
                    <div className="muted">
                      <code>{n.zerotierNetworkId}</code> · {environmentLabel(n.environment)}
                    </div>
                  </td>
                  <td>{requestModeLabel(n.requestMode)}</td>
                  <td>
                    {duration(n.defaultActivationLifetimeMinutes)}
                    {n.maxActivationLifetimeMinutes != null && <div className="muted">at most {duration(n.maxActivationLifetimeMinutes)}</div>}
                  </td>
                  <td>{n.approvedUserCount}</td>
                  <td>{n.activeMembershipCount}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {admin && configured && (
        <>
          <ImportSection orgId={org.id} onDone={changed} />
          <AddNetwork orgId={org.id} onDone={changed} />
        </>
      )}
    </div>
  );
}

function ImportSection({ orgId, onDone }: { orgId: string; onDone: (message: string) => Promise<unknown> }) {
  const available = useQuery({ queryKey: ["org", orgId, "networks", "available"], queryFn: () => gql(AvailableQuery, { orgId }) });
  const [chosen, setChosen] = useState<string[]>([]);
  const run = useMutation({
    mutationFn: () => gql(ImportNetworks, { orgId, ids: chosen }),
    onSuccess: async (d) => {
      setChosen([]);
      const names = d.importControllerNetworks.map((n) => n.name);
      await onDone(`Imported ${names.length === 1 ? names[0] : `${names.length} networks: ${names.join(", ")}`}.`);
    },
  });
  const submit = useSubmit(() => run.mutateAsync());
  return (
    <section aria-labelledby="net-import">
      <h2 id="net-import">Import from the controller</h2>
      {available.isPending ? (
        <Loading label="Asking the controller…" />
      ) : available.isError ? (
        <ErrorState error={available.error} retry={() => void available.refetch()} />
      ) : available.data.availableControllerNetworks.length === 0 ? (
        <Empty>
          <p>Every network of the controller is already here. Create one at the controller to import it.</p>
        </Empty>
      ) : (
        <Form validationBehavior="aria" className="card net-form" aria-label="Import networks from the controller" onSubmit={submit}>
          <fieldset className="net-checks">
            <legend className="label">Networks at the controller, not governed yet</legend>
            {available.data.availableControllerNetworks.map((n) => (
              <label key={n.id} className="net-check">
                <input type="checkbox" checked={chosen.includes(n.id)} onChange={(e) => setChosen((c) => (e.target.checked ? [...c, n.id] : c.filter((x) => x !== n.id)))} />
                <span>
                  <strong>{n.name || n.id}</strong> <code>{n.id}</code>
                  {n.description && <span className="muted"> · {n.description}</span>}
                </span>
              </label>
            ))}
          </fieldset>
          <p className="hint">Imported networks ask for a manager's approval and give 8 h of access at a time; change that on each network.</p>
          <FormError error={run.error} />
          <div className="actions">
            <Button type="submit" isPending={run.isPending} isDisabled={chosen.length === 0}>
              {chosen.length > 1 ? `Import ${chosen.length} networks` : "Import network"}
            </Button>
          </div>
        </Form>
      )}
    </section>
  );
}

function AddNetwork({ orgId, onDone }: { orgId: string; onDone: (message: string) => Promise<unknown> }) {
  const [draft, setDraft] = useState<NetworkDraft>(emptyDraft);
  const [ztId, setZtId] = useState("");
  const [local, setLocal] = useState<Record<string, string>>({});
  const create = useMutation({
    mutationFn: async () => {
      const { defaultMinutes, maxMinutes, errors } = lifetimes(draft);
      setLocal(errors);
      if (Object.keys(errors).length > 0) return null;
      return gql(CreateNetwork, {
        orgId,
        input: {
          name: draft.name,
          zerotierNetworkId: ztId,
          description: draft.description || null,
          environment: draft.environment,
          requestMode: draft.requestMode,
          defaultActivationLifetimeMinutes: defaultMinutes,
          maxActivationLifetimeMinutes: maxMinutes,
        },
      });
    },
    onSuccess: async (d) => {
      if (!d) return;
      setDraft(emptyDraft);
      setZtId("");
      await onDone(`${d.createPortalNetwork.name} was added.`);
    },
  });
  const submit = useSubmit(() => create.mutateAsync());
  const api = create.error instanceof ApiError ? create.error.fieldErrors : {};
  const fields = { ...api, ...local };
  return (
    <section aria-labelledby="net-add">
      <h2 id="net-add">Add a network by its id</h2>
      <Form validationBehavior="aria" className="card net-form" aria-label="Add a network" onSubmit={submit}>
        <Field label="ZeroTier network id" name="zerotierNetworkId" value={ztId} onChange={setZtId} isRequired description="16 hexadecimal characters; the network must exist at the controller." error={fields.zerotierNetworkId} />
        <NetworkFields draft={draft} onChange={setDraft} fields={fields} idPrefix="add" />
        {Object.keys(fields).length === 0 && <FormError error={create.error} />}
        <div className="actions">
          <Button type="submit" isPending={create.isPending}>
            Add network
          </Button>
        </div>
      </Form>
    </section>
  );
}
