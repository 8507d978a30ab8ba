import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useEffect, useId, useRef, useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql, type FieldError } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { CopyText } from "../../ui/CopyText";
import { Field } from "../../ui/Field";
import { SelectField } from "../../ui/SelectField";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useSubmit } from "../../ui/useSubmit";
import { isAdmin, useOrg } from "./layout";
import "./org-admin.css";
import "./sso.css";

const SsoQuery = graphql(`
  query OrganizationSso($orgId: ID!) {
    ssoConnections(orgId: $orgId) {
      id kind name issuer clientId hasSecret enabled requireSso defaultRole scopes emailClaim nameClaim groupsClaim
      groupMappings { group role departmentIds }
      sessionMaxAgeSeconds redirectUri backchannelLogoutUri startUrl createdAt updatedAt
    }
    departments(orgId: $orgId) { id name }
    organizationDomains(orgId: $orgId) { id domain status }
  }
`);
const CreateConnection = graphql(`
  mutation CreateOidcConnection($orgId: ID!, $input: CreateOidcConnectionInput!) { createOidcConnection(orgId: $orgId, input: $input) { id name } }
`);
const UpdateConnection = graphql(`
  mutation UpdateSsoConnection($orgId: ID!, $connectionId: ID!, $input: UpdateSsoConnectionInput!) {
    updateSsoConnection(orgId: $orgId, connectionId: $connectionId, input: $input) { id name enabled requireSso }
  }
`);
const DeleteConnection = graphql(`
  mutation DeleteSsoConnection($orgId: ID!, $connectionId: ID!) { deleteSsoConnection(orgId: $orgId, connectionId: $connectionId) { id name } }
`);

type Data = ResultOf<typeof SsoQuery>;
type Connection = Data["ssoConnections"][number];
type Department = Data["departments"][number];

const ROLES = [
  { value: "admin", label: "Admin" },
  { value: "member", label: "Member" },
  { value: "guest", label: "Guest" },
];
const roleLabel = (r: string | null | undefined) => ROLES.find((x) => x.value === r)?.label ?? "no change";

interface MappingRow {
  key: number;
  group: string;
  role: string;
  departmentIds: string[];
}
interface Draft {
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  emailClaim: string;
  nameClaim: string;
  groupsClaim: string;
  defaultRole: string;
  mappings: MappingRow[];
  requireSso: boolean;
  sessionHours: string;
}
let rowKeys = 0;
const blank = (): Draft => ({
  name: "",
  issuer: "",
  clientId: "",
  clientSecret: "",
  scopes: "openid email profile",
  emailClaim: "email",
  nameClaim: "name",
  groupsClaim: "groups",
  defaultRole: "member",
  mappings: [],
  requireSso: false,
  sessionHours: "",
});
const draftOf = (c: Connection): Draft => ({
  name: c.name,
  issuer: c.issuer ?? "",
  clientId: c.clientId ?? "",
  clientSecret: "",
  scopes: c.scopes.join(" "),
  emailClaim: c.emailClaim ?? "",
  nameClaim: c.nameClaim ?? "",
  groupsClaim: c.groupsClaim ?? "",
  defaultRole: c.defaultRole,
  mappings: c.groupMappings.map((m) => ({ key: ++rowKeys, group: m.group, role: m.role ?? "", departmentIds: m.departmentIds ?? [] })),
  requireSso: c.requireSso,
  sessionHours: String(Math.round((c.sessionMaxAgeSeconds / 3600) * 100) / 100),
});
const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);
const hours = (text: string): number | undefined => {
  const n = Number(text.trim());
  return text.trim() && Number.isFinite(n) ? Math.round(n * 3600) : undefined;
};
/** "8 hours", "30 days". */
function duration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} ${seconds === 86_400 ? "day" : "days"}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} ${seconds === 3600 ? "hour" : "hours"}`;
  return `${Math.round(seconds / 60)} minutes`;
}

/**
 * The API's validation messages by field: "groupMappings.1.group" becomes "Group mapping 2: …" at
 * the mappings; a discovery document that could not be used is about the issuer.
 */
function errorsByField(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  if (error.code === "SSO_DISCOVERY_FAILED") return { issuer: error.message };
  const out: Record<string, string> = {};
  for (const e of (error.details?.errors as FieldError[] | undefined) ?? []) {
    const [top, index] = e.path.split(".");
    if (!top) continue;
    out[top] ??= top === "groupMappings" && index !== undefined && /^\d+$/.test(index) ? `Group mapping ${Number(index) + 1}: ${e.message}` : e.message;
  }
  return out;
}
const FORM_FIELDS = ["name", "issuer", "clientId", "clientSecret", "scopes", "emailClaim", "nameClaim", "groupsClaim", "defaultRole", "groupMappings", "sessionMaxAgeSeconds"];

/**
 * /orgs/<slug>/sso (owners and admins): the organization's own identity provider. Lists its
 * connections; creates an OpenID Connect one (the secret is write-only), edits, enables or disables
 * and deletes them; shows the redirect URI to register at the provider, with help per provider.
 * Single sign-on only reaches addresses in the organization's verified domains: without one, the
 * screen says so and links to Domains.
 */
export function SingleSignOn() {
  const org = useOrg();
  const admin = isAdmin(org);
  const qc = useQueryClient();
  const data = useQuery({ queryKey: ["org", org.id, "sso"], queryFn: () => gql(SsoQuery, { orgId: org.id }), enabled: admin });
  const [done, setDone] = useState("");
  const [focusId, setFocusId] = useState<string | null>(null);
  const listHeading = useRef<HTMLHeadingElement>(null);
  const [removals, setRemovals] = useState(0);
  useEffect(() => {
    if (removals === 0) return;
    const frame = requestAnimationFrame(() => {
      if (!document.activeElement || document.activeElement === document.body) listHeading.current?.focus();
    });
    return () => cancelAnimationFrame(frame);
  }, [removals]);
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };
  if (!admin) {
    return (
      <div className="page">
        <h1>Single sign-on</h1>
        <Empty>
          <p>Only the owner and admins of {org.name} see and set up its single sign-on.</p>
        </Empty>
      </div>
    );
  }
  if (data.isPending) return <Loading />;
  if (data.isError) return <ErrorState error={data.error} retry={() => void data.refetch()} />;
  const { ssoConnections: connections, departments, organizationDomains } = data.data;
  const verified = organizationDomains.filter((d) => d.status === "verified").map((d) => d.domain);
  const redirectUri = connections[0]?.redirectUri ?? `${window.location.origin}/sso/oidc/callback`;
  return (
    <div className="page">
      <h1>Single sign-on</h1>
      <p className="muted">
        Let the people of {org.name} sign in through your organization's own identity provider (OpenID Connect). Addresses in {org.name}'s verified domains are sent there from the sign-in page; someone new gets an
        account managed by {org.name}, with the role and departments their groups map to.
      </p>
      {verified.length === 0 ? (
        <div className="notice notice-warn">
          <p>
            <strong>{org.name} has no verified domain yet.</strong> Single sign-on only reaches addresses in a verified domain, and only those get an account on their first sign-in. Verify your email domain on{" "}
            <Link to="/orgs/$slug/domains" params={{ slug: org.slug }}>
              Domains
            </Link>{" "}
            first.
          </p>
        </div>
      ) : (
        <p>
          Verified {verified.length === 1 ? "domain" : "domains"}: {verified.join(", ")}.
        </p>
      )}
      {done && <Success>{done}</Success>}
      <section aria-labelledby="sso-list">
        <h2 id="sso-list" ref={listHeading} tabIndex={-1}>
          Connections of {org.name}
        </h2>
        {connections.length === 0 ? (
          <Empty>
            <p>No connection yet. Register Keyward at your identity provider, then add the connection below.</p>
          </Empty>
        ) : (
          <ul className="objects" aria-label={`Connections of ${org.name}`}>
            {connections.map((c) => (
              <ConnectionItem
                key={c.id}
                orgId={org.id}
                orgName={org.name}
                connection={c}
                departments={departments}
                focus={focusId === c.id}
                onFocused={() => setFocusId(null)}
                onDone={changed}
                onRemoved={async (message) => {
                  await changed(message);
                  setRemovals((n) => n + 1);
                }}
              />
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="sso-redirect" className="panel">
        <h2 id="sso-redirect">At your identity provider</h2>
        <p>
          Register Keyward as a web application (authorization code flow, a client secret) with this redirect URI, exactly as shown. <a href="#sso-help">How to, for Entra ID, Okta, Google Workspace and Keycloak</a>.
        </p>
        <CopyText label="Redirect URI" value={redirectUri} />
      </section>
      <CreateForm
        orgId={org.id}
        orgName={org.name}
        departments={departments}
        onCreated={async (c) => {
          setFocusId(c.id);
          await changed(`${c.name} added. Try it with one account before requiring single sign-on.`);
        }}
      />
      <ProviderHelp redirectUri={redirectUri} />
    </div>
  );
}

function CreateForm({ orgId, orgName, departments, onCreated }: { orgId: string; orgName: string; departments: Department[]; onCreated: (c: { id: string; name: string }) => Promise<void> }) {
  const [draft, setDraft] = useState<Draft>(blank);
  const create = useMutation({
    mutationFn: () =>
      gql(CreateConnection, {
        orgId,
        input: {
          name: draft.name,
          issuer: draft.issuer.trim(),
          clientId: draft.clientId,
          ...(draft.clientSecret ? { clientSecret: draft.clientSecret } : {}),
          ...commonInput(draft),
        },
      }),
    onSuccess: async (d) => {
      setDraft(blank());
      await onCreated(d.createOidcConnection);
    },
  });
  return (
    <section aria-labelledby="sso-add" className="panel">
      <h2 id="sso-add">Add an OpenID Connect connection</h2>
      <ConnectionForm
        label="Add an OpenID Connect connection"
        orgName={orgName}
        draft={draft}
        setDraft={setDraft}
        departments={departments}
        mutation={create}
        submitLabel="Add connection"
        creating
      />
    </section>
  );
}

/** What create and update share: scopes, claims, roles, mappings, the SSO requirement and the session limit. */
function commonInput(d: Draft) {
  const seconds = hours(d.sessionHours);
  return {
    scopes: words(d.scopes),
    ...(d.emailClaim.trim() ? { emailClaim: d.emailClaim.trim() } : {}),
    ...(d.nameClaim.trim() ? { nameClaim: d.nameClaim.trim() } : {}),
    ...(d.groupsClaim.trim() ? { groupsClaim: d.groupsClaim.trim() } : {}),
    defaultRole: d.defaultRole,
    groupMappings: d.mappings.filter((m) => m.group.trim() || m.role || m.departmentIds.length).map((m) => ({ group: m.group.trim(), role: m.role || null, departmentIds: m.departmentIds })),
    requireSso: d.requireSso,
    ...(seconds !== undefined ? { sessionMaxAgeSeconds: seconds } : {}),
  };
}

interface MutationLike {
  mutateAsync: () => Promise<unknown>;
  isPending: boolean;
  error: unknown;
  reset: () => void;
}

function ConnectionForm({
  label,
  orgName,
  draft,
  setDraft,
  departments,
  mutation,
  submitLabel,
  creating,
  issuerFixed,
  hasSecret,
  onCancel,
}: {
  label: string;
  orgName: string;
  draft: Draft;
  setDraft: (f: (d: Draft) => Draft) => void;
  departments: Department[];
  mutation: MutationLike;
  submitLabel: string;
  creating?: boolean;
  issuerFixed?: boolean;
  hasSecret?: boolean;
  onCancel?: () => void;
}) {
  const submit = useSubmit(() => mutation.mutateAsync());
  const errors = errorsByField(mutation.error);
  const set =
    <K extends keyof Draft>(key: K) =>
    (value: Draft[K]) =>
      setDraft((d) => ({ ...d, [key]: value }));
  const ids = useId();
  const lastGroup = useRef<string | null>(null);
  useEffect(() => {
    if (!lastGroup.current) return;
    document.getElementById(lastGroup.current)?.focus();
    lastGroup.current = null;
  });
  const unplaced = Object.keys(errors).some((k) => !FORM_FIELDS.includes(k)) || (mutation.error !== null && Object.keys(errors).length === 0);
  return (
    <Form validationBehavior="aria" aria-label={label} onSubmit={submit} className="sso-form">
      <Field label="Name" name="name" value={draft.name} onChange={set("name")} isRequired error={errors.name} description="How the connection is shown here and in the activity log, e.g. Entra ID." />
      {issuerFixed ? (
        <p className="field">
          <span className="label">Issuer</span> <code>{draft.issuer}</code>
          <span className="hint">The issuer cannot change: add a new connection for another provider.</span>
          {errors.issuer && <span className="field-error">{errors.issuer}</span>}
        </p>
      ) : (
        <Field
          label="Issuer"
          name="issuer"
          type="url"
          value={draft.issuer}
          onChange={set("issuer")}
          isRequired
          error={errors.issuer}
          placeholder="https://login.microsoftonline.com/<tenant-id>/v2.0"
          description="Exactly as the provider's /.well-known/openid-configuration says; Keyward reads it when you save."
        />
      )}
      <div className="field-pair">
        <Field label="Client ID" name="clientId" value={draft.clientId} onChange={set("clientId")} isRequired error={errors.clientId} />
        <Field
          label="Client secret"
          name="clientSecret"
          type="password"
          autoComplete="new-password"
          value={draft.clientSecret}
          onChange={set("clientSecret")}
          isRequired={creating}
          error={errors.clientSecret}
          description={hasSecret ? "A secret is stored and never shown. Leave empty to keep it." : "Stored sealed and never shown again."}
        />
      </div>
      <details className="more">
        <summary>Scopes and claim names</summary>
        <Field label="Scopes" name="scopes" value={draft.scopes} onChange={set("scopes")} error={errors.scopes} description="Separated by spaces. Okta needs groups as well for group claims." />
        <div className="field-pair">
          <Field label="Email claim" name="emailClaim" value={draft.emailClaim} onChange={set("emailClaim")} error={errors.emailClaim} description="preferred_username for Entra accounts without a mailbox." />
          <Field label="Name claim" name="nameClaim" value={draft.nameClaim} onChange={set("nameClaim")} error={errors.nameClaim} />
          <Field label="Groups claim" name="groupsClaim" value={draft.groupsClaim} onChange={set("groupsClaim")} error={errors.groupsClaim} description="The claim whose values the group mappings below name." />
        </div>
      </details>
      <SelectField label="Role of a new member" value={draft.defaultRole} onChange={set("defaultRole")}>
        {ROLES.map((r) => (
          <option key={r.value} value={r.value}>
            {r.label}
          </option>
        ))}
      </SelectField>
      {errors.defaultRole && <p className="field-error">{errors.defaultRole}</p>}
      <p className="hint">Nobody becomes an owner through single sign-on, and an owner stays an owner.</p>
      <fieldset className="choices sso-mappings" data-invalid={errors.groupMappings ? true : undefined}>
        <legend>Group mappings</legend>
        <span className="hint">At every sign-in, a person gets the highest role their groups map to, and the departments of each group they are in.</span>
        {draft.mappings.length === 0 && <p className="muted">No mappings: everyone gets the role above.</p>}
        <ol className="mapping-rows">
          {draft.mappings.map((m, i) => (
            <li key={m.key} className="mapping-row">
              <div className="field-pair">
                <div className="field">
                  <label htmlFor={`${ids}-g${m.key}`}>Group {i + 1}</label>
                  <input
                    id={`${ids}-g${m.key}`}
                    value={m.group}
                    onChange={(e) => setDraft((d) => ({ ...d, mappings: d.mappings.map((x) => (x.key === m.key ? { ...x, group: e.target.value } : x)) }))}
                    aria-describedby={`${ids}-gh`}
                  />
                </div>
                <SelectField label={`Role for group ${i + 1}`} value={m.role} onChange={(v) => setDraft((d) => ({ ...d, mappings: d.mappings.map((x) => (x.key === m.key ? { ...x, role: v } : x)) }))}>
                  <option value="">No role (departments only)</option>
                  {ROLES.map((r) => (
                    <option key={r.value} value={r.value}>
                      {r.label}
                    </option>
                  ))}
                </SelectField>
              </div>
              {departments.length > 0 && (
                <fieldset className="choices">
                  <legend>Departments for group {i + 1}</legend>
                  <div className="mapping-departments">
                    {departments.map((dep) => (
                      <label key={dep.id} className="sso-check">
                        <input
                          type="checkbox"
                          checked={m.departmentIds.includes(dep.id)}
                          onChange={(e) =>
                            setDraft((d) => ({
                              ...d,
                              mappings: d.mappings.map((x) =>
                                x.key === m.key ? { ...x, departmentIds: e.target.checked ? [...x.departmentIds, dep.id] : x.departmentIds.filter((id) => id !== dep.id) } : x,
                              ),
                            }))
                          }
                        />
                        {dep.name}
                      </label>
                    ))}
                  </div>
                </fieldset>
              )}
              <Button variant="secondary" size="small" aria-label={`Remove group mapping ${i + 1}`} onPress={() => setDraft((d) => ({ ...d, mappings: d.mappings.filter((x) => x.key !== m.key) }))}>
                Remove
              </Button>
            </li>
          ))}
        </ol>
        <p id={`${ids}-gh`} className="hint">
          The group's value as the provider sends it: a name (Okta, Keycloak) or an object id (Entra ID).
        </p>
        {errors.groupMappings && <p className="field-error">{errors.groupMappings}</p>}
        <Button
          variant="secondary"
          size="small"
          onPress={() => {
            const key = ++rowKeys;
            lastGroup.current = `${ids}-g${key}`;
            setDraft((d) => ({ ...d, mappings: [...d.mappings, { key, group: "", role: "", departmentIds: [] }] }));
          }}
        >
          Add a group mapping
        </Button>
      </fieldset>
      <div className="sso-require">
        <label className="sso-check">
          <input type="checkbox" checked={draft.requireSso} onChange={(e) => set("requireSso")(e.target.checked)} aria-describedby={`${ids}-req`} />
          Require single sign-on
        </label>
        <p id={`${ids}-req`} className={draft.requireSso ? "notice notice-warn" : "hint"}>
          {draft.requireSso ? (
            <>
              <strong>Everyone with an address in {orgName}'s verified domains must then sign in here through the provider:</strong> their password, passkey, GitHub and Google sign-ins are refused, and
              accounts not linked yet cannot sign in until they are. Try the connection with one account first.
            </>
          ) : (
            "With it on, addresses in the verified domains can only sign in through this provider (no password, passkey, GitHub or Google)."
          )}
        </p>
      </div>
      <Field
        label="Session limit (hours)"
        name="sessionMaxAgeSeconds"
        inputMode="decimal"
        value={draft.sessionHours}
        onChange={set("sessionHours")}
        error={errors.sessionMaxAgeSeconds}
        description="How long a session started through single sign-on lasts at most, when single sign-on is required (5 minutes to 30 days). Empty: Keyward's default."
      />
      {unplaced && <FormError error={mutation.error} />}
      <div className="actions">
        <Button type="submit" isPending={mutation.isPending}>
          {submitLabel}
        </Button>
        {onCancel && (
          <Button variant="secondary" onPress={onCancel}>
            Cancel
          </Button>
        )}
      </div>
    </Form>
  );
}

function ConnectionItem({
  orgId,
  orgName,
  connection: c,
  departments,
  focus,
  onFocused,
  onDone,
  onRemoved,
}: {
  orgId: string;
  orgName: string;
  connection: Connection;
  departments: Department[];
  focus: boolean;
  onFocused: () => void;
  onDone: (message: string) => Promise<void>;
  onRemoved: (message: string) => Promise<void>;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (!focus) return;
    heading.current?.focus();
    onFocused();
  }, [focus, onFocused]);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<Draft>(() => draftOf(c));
  const update = useMutation({
    mutationFn: () =>
      gql(UpdateConnection, {
        orgId,
        connectionId: c.id,
        input: { name: draft.name, clientId: draft.clientId, ...(draft.clientSecret ? { clientSecret: draft.clientSecret } : {}), ...commonInput(draft) },
      }),
    onSuccess: async (d) => {
      setEditing(false);
      await onDone(`${d.updateSsoConnection.name} saved.`);
      heading.current?.focus();
    },
  });
  const toggle = useMutation({
    mutationFn: () => gql(UpdateConnection, { orgId, connectionId: c.id, input: { enabled: !c.enabled } }),
    onSuccess: (d) => onDone(d.updateSsoConnection.enabled ? `${c.name} is enabled: sign-ins go through it.` : `${c.name} is disabled: nobody signs in through it until it is enabled again.`),
  });
  const deptName = (id: string) => departments.find((d) => d.id === id)?.name ?? "a removed department";
  return (
    <li className="object sso-connection">
      <div className="object-head">
        <h3 ref={heading} tabIndex={-1}>
          {c.name}
        </h3>
        <Badge tone="accent">{c.kind === "oidc" ? "OpenID Connect" : c.kind.toUpperCase()}</Badge>
        <Badge tone={c.enabled ? "good" : "neutral"}>{c.enabled ? "Enabled" : "Disabled"}</Badge>
        {c.requireSso && <Badge tone="warn">SSO required</Badge>}
      </div>
      {editing ? (
        <ConnectionForm
          label={`Edit ${c.name}`}
          orgName={orgName}
          draft={draft}
          setDraft={setDraft}
          departments={departments}
          mutation={update}
          submitLabel="Save"
          issuerFixed
          hasSecret={c.hasSecret}
          onCancel={() => {
            setEditing(false);
            update.reset();
            requestAnimationFrame(() => heading.current?.focus());
          }}
        />
      ) : (
        <>
          <dl className="kv">
            <dt>Issuer</dt>
            <dd>
              <code>{c.issuer}</code>
            </dd>
            <dt>Client ID</dt>
            <dd>
              <code>{c.clientId}</code> {c.hasSecret ? "(secret stored)" : "(no secret stored)"}
            </dd>
            <dt>Role of a new member</dt>
            <dd>{roleLabel(c.defaultRole)}</dd>
            <dt>Group mappings</dt>
            <dd>
              {c.groupMappings.length === 0 ? (
                "None"
              ) : (
                <ul>
                  {c.groupMappings.map((m) => (
                    <li key={m.group}>
                      <code>{m.group}</code> → {m.role ? roleLabel(m.role) : "no role"}
                      {m.departmentIds && m.departmentIds.length > 0 ? `, ${m.departmentIds.map(deptName).join(", ")}` : ""}
                    </li>
                  ))}
                </ul>
              )}
            </dd>
            <dt>Require single sign-on</dt>
            <dd>{c.requireSso ? `Yes: sessions last at most ${duration(c.sessionMaxAgeSeconds)}` : "No"}</dd>
            <dt>Claims</dt>
            <dd>
              email <code>{c.emailClaim ?? "email"}</code>, name <code>{c.nameClaim ?? "name"}</code>, groups <code>{c.groupsClaim ?? "none"}</code>; scopes <code>{c.scopes.join(" ")}</code>
            </dd>
            <dt>Updated</dt>
            <dd>
              <Time iso={c.updatedAt} />
            </dd>
          </dl>
          <CopyText label={`Redirect URI of ${c.name}`} value={c.redirectUri} />
          {c.backchannelLogoutUri && (
            <CopyText
              label={`Back-channel logout URI of ${c.name}`}
              value={c.backchannelLogoutUri}
              hint="Register it at your provider so that signing out there ends the Keyward sessions this connection started."
            />
          )}
          <CopyText label={`Sign-in link of ${c.name}`} value={c.startUrl} hint="Starts a sign-in through this connection directly (for a bookmark or your provider's app launcher)." />
        </>
      )}
      {toggle.error ? <FormError error={toggle.error} /> : null}
      {!editing && (
        <div className="actions">
          <Button
            variant="secondary"
            aria-label={`Edit ${c.name}`}
            onPress={() => {
              setDraft(draftOf(c));
              setEditing(true);
            }}
          >
            Edit
          </Button>
          <Button variant="secondary" isPending={toggle.isPending} aria-label={`${c.enabled ? "Disable" : "Enable"} ${c.name}`} onPress={() => toggle.mutate()}>
            {c.enabled ? "Disable" : "Enable"}
          </Button>
          <ConfirmDialog
            trigger={
              <Button variant="secondary" aria-label={`Delete ${c.name}`}>
                Delete
              </Button>
            }
            title={`Delete the connection ${c.name}?`}
            confirmLabel="Delete connection"
            onConfirm={async () => {
              await gql(DeleteConnection, { orgId, connectionId: c.id });
              await onRemoved(`${c.name} was deleted.`);
            }}
          >
            <p>
              Nobody signs in through {c.name} any more{c.requireSso ? `, and ${orgName}'s addresses may use passwords and passkeys again` : ""}. Accounts created through it stay, with their memberships; they
              sign in another way (a password reset) or through a new connection.
            </p>
          </ConfirmDialog>
        </div>
      )}
    </li>
  );
}

/** docs/enterprise-sign-in.md in short: what to enter at each provider, and what to enter here. */
function ProviderHelp({ redirectUri }: { redirectUri: string }) {
  return (
    <section aria-labelledby="sso-help" className="sso-help">
      <h2 id="sso-help" tabIndex={-1}>
        Setting up your provider
      </h2>
      <p className="muted">
        Every provider gets the redirect URI <code>{redirectUri}</code> and the scopes <code>openid email profile</code>. Keyward's documentation (docs/enterprise-sign-in.md) has the details.
      </p>
      <details className="more">
        <summary>Microsoft Entra ID</summary>
        <ol>
          <li>App registrations → New registration: accounts in this organizational directory only; redirect URI, platform Web, as above.</li>
          <li>Certificates &amp; secrets → New client secret: copy its Value (shown once).</li>
          <li>Token configuration → Add groups claim (security groups, Group ID), and the optional ID claim email.</li>
        </ol>
        <p>
          Here: issuer <code>https://login.microsoftonline.com/&lt;tenant-id&gt;/v2.0</code>, the Application (client) ID, groups claim <code>groups</code>; map group object ids. For accounts without a
          mailbox, email claim <code>preferred_username</code>.
        </p>
      </details>
      <details className="more">
        <summary>Okta</summary>
        <ol>
          <li>Applications → Create App Integration → OIDC, Web Application; grant Authorization Code; sign-in redirect URI as above; assign people or groups.</li>
          <li>Sign On tab → OpenID Connect ID Token: groups claim type Filter, name groups, matches regex .*</li>
        </ol>
        <p>
          Here: issuer <code>https://&lt;your-okta-domain&gt;</code> (or …/oauth2/default), client ID and secret from the General tab, scopes <code>openid email profile groups</code>, groups claim{" "}
          <code>groups</code>; map Okta group names.
        </p>
      </details>
      <details className="more">
        <summary>Google Workspace</summary>
        <ol>
          <li>Google Cloud console → OAuth consent screen: user type Internal.</li>
          <li>Credentials → OAuth client ID → Web application; authorized redirect URI as above.</li>
        </ol>
        <p>
          Here: issuer <code>https://accounts.google.com</code>, the client ID and secret. Google sends no groups: everyone gets the role of a new member; assign roles and departments in Keyward.
        </p>
      </details>
      <details className="more">
        <summary>Keycloak</summary>
        <ol>
          <li>Clients → Create client: OpenID Connect, client authentication on, standard flow on; valid redirect URI as above. The secret is on the Credentials tab.</li>
          <li>Client scopes → the client's dedicated scope → Add mapper → Group Membership: claim name groups, full group path off, add to ID token on.</li>
        </ol>
        <p>
          Here: issuer <code>https://&lt;keycloak-host&gt;/realms/&lt;realm&gt;</code>, groups claim <code>groups</code>; map Keycloak group names.
        </p>
      </details>
    </section>
  );
}
