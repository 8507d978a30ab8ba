import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../../api";
import { graphql, type ResultOf } from "../../../graphql";
import { Badge } from "../../../ui/Badge";
import { Button } from "../../../ui/Button";
import { ConfirmDialog } from "../../../ui/ConfirmDialog";
import { Field } from "../../../ui/Field";
import { ErrorState, FormError, Loading, Success } from "../../../ui/States";
import { Time } from "../../../ui/Time";
import { useSubmit } from "../../../ui/useSubmit";
import { ElevatedNotice } from "../elevated";
import { canHold, isAdmin, useOrg } from "../layout";
import { AdminsOnly, useOnce } from "./common";

const ControllerPageQuery = graphql(`
  query NetworkControllerPage($orgId: ID!) {
    networkControllerConfig(orgId: $orgId) { configured ztApiMode ztApiUrl controllerAddress lastCheckedAt updatedAt }
    portalNetworks(orgId: $orgId, includeInactive: true) { id name }
    organizationNetworkMemberships(orgId: $orgId) { id currentlyAuthorized activeSession { id } }
  }
`);
const Configure = graphql(`
  mutation ConfigureNetworkController($orgId: ID!, $input: NetworkControllerInput!) {
    configureNetworkController(orgId: $orgId, input: $input) { configured ztApiMode controllerAddress lastCheckedAt }
  }
`);
const Remove = graphql(`
  mutation RemoveNetworkController($orgId: ID!) { removeNetworkController(orgId: $orgId) { message } }
`);
/** The live check of the saved connection: the controller is asked for its networks with the saved token. */
const Check = graphql(`
  query CheckNetworkController($orgId: ID!) { availableControllerNetworks(orgId: $orgId) { id } }
`);
const Reconcile = graphql(`
  mutation ReconcileNetworks($orgId: ID!) { reconcileNetworks(orgId: $orgId) { networksProcessed changes expired controllerCalls errors { networkId zerotierNetworkId error } } }
`);

type Data = ResultOf<typeof ControllerPageQuery>;
type Mode = "central" | "controller";

const PROBLEMS: Record<string, string> = {
  controller_not_configured: "no controller is connected",
  unreachable: "the controller could not be reached",
  unauthorized: "the controller refused the API token",
  forbidden: "the token may not reach this network",
  not_found: "the controller does not know this network",
  rate_limited: "the controller is rate limiting Keyward",
  server_error: "the controller failed",
  bad_response: "the controller answered something unexpected",
};

/**
 * /orgs/<slug>/networks/controller (admins): the connection to the organization's ZeroTier
 * controller (saved only after a live test; the token is never shown again), a live check of the
 * saved connection, and reconciliation: whether the controller is in step with Keyward, and a pass now.
 */
export function NetworkControllerScreen() {
  const org = useOrg();
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  const admin = isAdmin(org);
  const q = useQuery({ queryKey: ["org", org.id, "networks", "controller-page"], queryFn: () => gql(ControllerPageQuery, { orgId: org.id }), enabled: admin });
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };
  if (!admin) return <AdminsOnly orgName={org.name} what="connect the controller" />;
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  const c = q.data.networkControllerConfig;
  return (
    <div className="page">
      <h1>Controller</h1>
      <p className="lead">Keyward authorizes and deauthorizes devices at the ZeroTier controller of {org.name}: self-hosted, or ZeroTier Central.</p>
      <ElevatedNotice org={org}>Connecting or replacing the controller is not shown.</ElevatedNotice>
      {done && <Success>{done}</Success>}
      <section aria-labelledby="ctl-status">
        <h2 id="ctl-status">Connection</h2>
        {c.configured ? (
          <>
            <dl className="facts">
              <div>
                <dt>Status</dt>
                <dd>
                  <Badge tone="good">Connected</Badge>
                </dd>
              </div>
              <div>
                <dt>Kind</dt>
                <dd className="net-fact-text">{c.ztApiMode === "central" ? "ZeroTier Central" : "Self-hosted controller"}</dd>
              </div>
              {c.ztApiUrl && (
                <div>
                  <dt>API address</dt>
                  <dd>
                    <code className="net-id">{c.ztApiUrl}</code>
                  </dd>
                </div>
              )}
              {c.controllerAddress && (
                <div>
                  <dt>Controller address</dt>
                  <dd>
                    <code className="net-id">{c.controllerAddress}</code>
                  </dd>
                </div>
              )}
              <div>
                <dt>Tested</dt>
                <dd className="net-fact-text">
                  <Time iso={c.lastCheckedAt} />
                </dd>
              </div>
            </dl>
            <LiveCheck orgId={org.id} />
          </>
        ) : (
          <p className="notice notice-warn">No controller is connected: networks cannot be added, and nothing is authorized at a controller.</p>
        )}
      </section>
      {/* Which controller decides who is on the networks: a lasting admin role connects it. */}
      {canHold(org) && <ConnectForm key={c.updatedAt ?? "none"} orgId={org.id} configured={c.configured} initialMode={(c.ztApiMode as Mode | null) ?? "central"} initialUrl={c.ztApiUrl ?? ""} onDone={changed} />}
      {c.configured && <Reconciliation orgId={org.id} data={q.data} />}
      {c.configured && (
        <section aria-labelledby="ctl-remove" className="danger-zone">
          <h2 id="ctl-remove">Disconnect</h2>
          <ConfirmDialog
            trigger={<Button variant="danger">Disconnect the controller</Button>}
            title={`Disconnect ${c.ztApiMode === "central" ? "ZeroTier Central" : "the controller"} from ${org.name}?`}
            confirmLabel="Disconnect"
            onConfirm={async () => {
              await gql(Remove, { orgId: org.id });
              await changed("The controller was disconnected; its token is deleted.");
            }}
          >
            <p>
              Keyward deletes the saved token. The {q.data.portalNetworks.length === 1 ? "network stays" : `${q.data.portalNetworks.length} networks stay`} here, but nothing changes at the controller until one is
              connected again: activations, removals and kill switches wait for reconciliation, and devices already authorized stay on at the controller.
            </p>
          </ConfirmDialog>
        </section>
      )}
    </div>
  );
}

function LiveCheck({ orgId }: { orgId: string }) {
  const check = useMutation({ mutationFn: () => gql(Check, { orgId }) });
  const press = useOnce(() => check.mutateAsync());
  return (
    <div className="net-check-row">
      <Button variant="secondary" isPending={check.isPending} onPress={press}>
        Test the connection now
      </Button>
      <div aria-live="polite" role="status" className="net-check-result">
        {check.isSuccess && (
          <p className="notice notice-success">
            The controller answered with the saved token ({check.data.availableControllerNetworks.length === 1 ? "1 network" : `${check.data.availableControllerNetworks.length} networks`} not imported yet).
          </p>
        )}
      </div>
      <FormError error={check.error} />
    </div>
  );
}

function ConnectForm({ orgId, configured, initialMode, initialUrl, onDone }: { orgId: string; configured: boolean; initialMode: Mode; initialUrl: string; onDone: (m: string) => Promise<unknown> }) {
  const [mode, setMode] = useState<Mode>(initialMode);
  const [url, setUrl] = useState(initialUrl);
  const [token, setToken] = useState("");
  const save = useMutation({
    mutationFn: () => gql(Configure, { orgId, input: { ztApiMode: mode, ztApiToken: token, ztApiUrl: mode === "controller" ? url : null } }),
    onSuccess: async (d) => {
      setToken("");
      const at = d.configureNetworkController.controllerAddress;
      await onDone(`Connected: the controller answered${at ? ` (address ${at})` : ""}. The token is saved sealed and will not be shown again.`);
    },
  });
  const submit = useSubmit(() => save.mutateAsync());
  const fields = save.error instanceof ApiError ? save.error.fieldErrors : {};
  // The address's other refusals ("zt_api_url: …" without details, or not on the operator's list) belong to its field too.
  const e = save.error instanceof ApiError ? save.error : null;
  const urlError = fields.ztApiUrl ?? (e && /^zt_api_url: /.test(e.message) ? e.message.replace(/^zt_api_url: /, "") : e?.code === "CONTROLLER_URL_NOT_ALLOWED" ? e.message : undefined);
  return (
    <section aria-labelledby="ctl-connect">
      <h2 id="ctl-connect">{configured ? "Replace the connection" : "Connect a controller"}</h2>
      <Form validationBehavior="aria" className="card net-form" aria-label={configured ? "Replace the controller connection" : "Connect a controller"} onSubmit={submit}>
        <fieldset className="net-checks">
          <legend className="label">Kind</legend>
          <label className="net-check">
            <input type="radio" name="ctl-mode" checked={mode === "central"} onChange={() => setMode("central")} /> ZeroTier Central
          </label>
          <label className="net-check">
            <input type="radio" name="ctl-mode" checked={mode === "controller"} onChange={() => setMode("controller")} /> Self-hosted controller (ZeroTier One)
          </label>
        </fieldset>
        {mode === "controller" && (
          <Field label="Controller API address" name="ztApiUrl" type="url" value={url} onChange={setUrl} isRequired placeholder="http://10.0.0.5:9993" description="It must be on the list the Keyward operator allows." error={urlError} />
        )}
        <Field
          label="API token"
          name="ztApiToken"
          type="password"
          autoComplete="off"
          value={token}
          onChange={setToken}
          isRequired
          description={mode === "central" ? "A ZeroTier Central API token of an account that owns the networks." : "The controller's authtoken.secret."}
          error={fields.ztApiToken}
        />
        {!fields.ztApiToken && !urlError && <FormError error={save.error} />}
        <p className="hint">Keyward tests the connection live and saves it only if the controller answers.</p>
        <div className="actions">
          <Button type="submit" isPending={save.isPending}>
            Test and connect
          </Button>
        </div>
      </Form>
    </section>
  );
}

function Reconciliation({ orgId, data }: { orgId: string; data: Data }) {
  const qc = useQueryClient();
  const names = new Map(data.portalNetworks.map((n) => [n.id, n.name]));
  const memberships = data.organizationNetworkMemberships;
  const on = memberships.filter((m) => m.activeSession).length;
  // What Keyward decided and what it last applied at the controller differ: reconciliation catches up.
  const behind = memberships.filter((m) => m.currentlyAuthorized !== !!m.activeSession).length;
  const run = useMutation({
    mutationFn: () => gql(Reconcile, { orgId }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ["org", orgId] }),
  });
  const press = useOnce(() => run.mutateAsync());
  const report = run.data?.reconcileNetworks;
  return (
    <section aria-labelledby="ctl-reconcile">
      <h2 id="ctl-reconcile">Reconciliation</h2>
      <p className="muted">Every few minutes Keyward makes the controller match its decisions: devices with a running activation are authorized, nothing else is; activations that ran out end.</p>
      <p>
        {behind === 0 ? <Badge tone="good">In step</Badge> : <Badge tone="warn">{behind === 1 ? "1 device waiting" : `${behind} devices waiting`}</Badge>}{" "}
        {behind === 0
          ? `The controller matches Keyward: ${on === 0 ? "no device is" : on === 1 ? "1 device is" : `${on} devices are`} on.`
          : `${behind === 1 ? "1 device is" : `${behind} devices are`} not yet as Keyward decided at the controller; the next pass applies ${behind === 1 ? "it" : "them"}.`}
      </p>
      <div className="actions">
        <Button variant="secondary" isPending={run.isPending} onPress={press}>
          Reconcile now
        </Button>
      </div>
      <FormError error={run.error} />
      {report && (
        <div className={`notice ${report.errors.length ? "notice-warn" : "notice-success"}`} role="status">
          <p>
            Checked {report.networksProcessed === 1 ? "1 network" : `${report.networksProcessed} networks`}: {report.changes === 1 ? "1 change" : `${report.changes} changes`} at the controller,{" "}
            {report.expired === 1 ? "1 activation" : `${report.expired} activations`} ran out ({report.controllerCalls} controller calls).
          </p>
          {report.errors.length > 0 && (
            <ul>
              {report.errors.map((e) => (
                <li key={e.networkId}>
                  {names.get(e.networkId) ?? e.zerotierNetworkId}: {PROBLEMS[e.error] ?? e.error}; the next pass tries again.
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
