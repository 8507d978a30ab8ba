import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSearch } from "@tanstack/react-router";
import { useEffect, useRef, useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { Secret } from "../../ui/Secret";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useEditInPlace } from "../../ui/useEditInPlace";
import { useSubmit } from "../../ui/useSubmit";
import { ElevatedNotice } from "./elevated";
import { canHold, isAdmin, useOrg } from "./layout";
import "./org-admin.css";

const PolicyQuery = graphql(`
  query OrgSecurityPolicy($orgId: ID!) {
    orgSecurityPolicy(orgId: $orgId) { mfaPolicyMode mfaGracePeriodDays notifyDaysBefore policyVersion }
  }
`);
const AdminQuery = graphql(`
  query OrgSecurityAdmin($orgId: ID!) {
    orgMfaCompliance(orgId: $orgId) { userId userEmail userName status deadlineAt compliantAt lastNotifiedAt }
    apiKeys(orgId: $orgId) { id name description prefix scopes createdAt lastUsedAt revokedAt revokeReason }
  }
`);
const UpdatePolicy = graphql(`
  mutation UpdateOrgSecurityPolicy($orgId: ID!, $input: SecurityPolicyInput!) {
    updateOrgSecurityPolicy(orgId: $orgId, input: $input) { mfaPolicyMode mfaGracePeriodDays notifyDaysBefore policyVersion }
  }
`);
const SendReminder = graphql(`
  mutation SendMfaReminder($orgId: ID!, $userId: ID!) { sendMfaReminder(orgId: $orgId, userId: $userId) { sent } }
`);
const CreateApiKey = graphql(`
  mutation CreateApiKey($orgId: ID!, $input: ApiKeyInput!) { createApiKey(orgId: $orgId, input: $input) { id name prefix key } }
`);
const UpdateApiKey = graphql(`
  mutation UpdateApiKey($orgId: ID!, $keyId: ID!, $input: UpdateApiKeyInput!) { updateApiKey(orgId: $orgId, keyId: $keyId, input: $input) { id name description scopes } }
`);
const RevokeApiKey = graphql(`
  mutation RevokeApiKey($orgId: ID!, $keyId: ID!, $reason: String) { revokeApiKey(orgId: $orgId, keyId: $keyId, reason: $reason) { id revokedAt } }
`);

type Mode = "disabled" | "optional" | "required";
type Standing = ResultOf<typeof AdminQuery>["orgMfaCompliance"][number];
type ApiKey = ResultOf<typeof AdminQuery>["apiKeys"][number];

/** What a key may do (the server's vocabulary, src/lib/api-key-scopes.ts; it refuses anything else). */
const KEY_SCOPES = [
  { value: "ssh:sudo", label: "Sudo check", hint: "POST /api/v1/sudo/check for certificates of your members" },
  { value: "members:read", label: "Read members", hint: "GET /api/v1/organizations/{id}/members" },
  { value: "principals:read", label: "Read principals", hint: "GET /api/v1/organizations/{id}/principals" },
  { value: "audit:read", label: "Read the audit log", hint: "GET /api/v1/organizations/{id}/audit-logs" },
  { value: "scim", label: "SCIM provisioning", hint: "/scim/v2: Okta or Entra ID create, update and remove your managed people" },
] as const;

function ScopePicker({ id, scopes, onChange, error }: { id: string; scopes: string[]; onChange: (scopes: string[]) => void; error?: string }) {
  const toggle = (value: string, on: boolean) => onChange(on ? [...scopes, value] : scopes.filter((s) => s !== value));
  return (
    <fieldset className="choices" data-invalid={error ? true : undefined} aria-describedby={error ? `scopes-error-${id}` : undefined}>
      <legend>Scopes</legend>
      <div className="choice-list">
        {KEY_SCOPES.map((s) => (
          <label key={s.value} className="choice">
            <input type="checkbox" name="scopes" value={s.value} checked={scopes.includes(s.value)} onChange={(e) => toggle(s.value, e.target.checked)} />
            <span className="choice-text">
              <strong>{s.label}</strong>
              <span className="hint">{s.hint}</span>
            </span>
          </label>
        ))}
      </div>
      {error && (
        <p id={`scopes-error-${id}`} className="field-error">
          {error}
        </p>
      )}
    </fieldset>
  );
}

const MODES: Array<{ value: Mode; label: string; hint: string }> = [
  { value: "disabled", label: "Off", hint: "Members are not asked about a second step." },
  { value: "optional", label: "Optional", hint: "Members may add a passkey or an authenticator app; nobody is held to it." },
  { value: "required", label: "Required", hint: "Every member needs a passkey or an authenticator app by a deadline; past it, they lose access to the organization until they add one." },
];
const MODE_WORDS: Record<string, string> = { disabled: "Off", optional: "Optional", required: "Required" };

const STANDING: Record<string, { label: string; tone: "good" | "warn" | "bad" | "neutral"; order: number }> = {
  past_due: { label: "Past the deadline", tone: "bad", order: 0 },
  in_grace: { label: "In grace period", tone: "warn", order: 1 },
  compliant: { label: "Two-step on", tone: "good", order: 2 },
  not_applicable: { label: "Not required", tone: "neutral", order: 3 },
};
const standingOf = (status: string) => STANDING[status] ?? STANDING.not_applicable!;
type ShowFilter = "all" | "past_due" | "in_grace" | "compliant";

/** "14" → 14; anything else (empty, "-1", "1.5", "abc") is not a number of days. */
const days = (text: string): number | null => (/^\s*\d{1,4}\s*$/.test(text) ? Number(text) : null);
const NOT_DAYS = "Enter a whole number of days, 0 or more.";

/**
 * /orgs/<slug>/security: the two-step verification policy (everyone reads it; admins change it),
 * who is in grace and who is past the deadline with a reminder to send, and the organization's API
 * keys (created with their secret shown once, renamed, revoked).
 */
export function Security() {
  const org = useOrg();
  const admin = isAdmin(org);
  // Compliance (members.manage) and API keys (which outlive a role grant) need a lasting admin role:
  // a temporary admin sets the policy only.
  const lasting = admin && canHold(org);
  const qc = useQueryClient();
  const { newKey } = useSearch({ from: "/orgs/$slug/security" });
  const policy = useQuery({ queryKey: ["org", org.id, "security", "policy"], queryFn: () => gql(PolicyQuery, { orgId: org.id }) });
  const adminData = useQuery({ queryKey: ["org", org.id, "security", "admin"], queryFn: () => gql(AdminQuery, { orgId: org.id }), enabled: lasting });
  const [done, setDone] = useState("");
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };

  if (policy.isPending) return <Loading />;
  if (policy.isError) return <ErrorState error={policy.error} retry={() => void policy.refetch()} />;
  const p = policy.data.orgSecurityPolicy;
  return (
    <div className="page">
      <h1>Security</h1>
      <ElevatedNotice org={org}>Who complies with the policy, and the organization's API keys, are not shown.</ElevatedNotice>
      {done && <Success>{done}</Success>}
      <section aria-labelledby="mfa-policy">
        <h2 id="mfa-policy">Two-step verification</h2>
        {admin ? (
          <PolicyForm key={p.policyVersion} orgId={org.id} initial={p} onSaved={(mode) => changed(`Two-step verification is now ${MODE_WORDS[mode]?.toLowerCase() ?? mode}.`)} />
        ) : (
          <>
            <p>
              Two-step verification in {org.name}: <Badge tone={p.mfaPolicyMode === "required" ? "accent" : "neutral"}>{MODE_WORDS[p.mfaPolicyMode] ?? p.mfaPolicyMode}</Badge>
            </p>
            <p className="muted">
              {p.mfaPolicyMode === "required"
                ? `Members have ${p.mfaGracePeriodDays} days to add a passkey or an authenticator app to their account; past the deadline they lose access to ${org.name} until they add one.`
                : (MODES.find((m) => m.value === p.mfaPolicyMode)?.hint ?? "")}{" "}
              Only the organization's owner and admins change this policy.
            </p>
            <p>
              <a href="/account">Your passkeys and authenticator app</a> are in your account.
            </p>
          </>
        )}
      </section>
      {lasting &&
        (adminData.isPending ? (
          <Loading />
        ) : adminData.isError ? (
          <ErrorState error={adminData.error} retry={() => void adminData.refetch()} />
        ) : (
          <>
            <Compliance orgId={org.id} orgName={org.name} mode={p.mfaPolicyMode} rows={adminData.data.orgMfaCompliance} onDone={changed} />
            <ApiKeys orgId={org.id} orgName={org.name} keys={adminData.data.apiKeys} onDone={changed} forScim={newKey === "scim"} />
          </>
        ))}
    </div>
  );
}

function PolicyForm({ orgId, initial, onSaved }: { orgId: string; initial: { mfaPolicyMode: string; mfaGracePeriodDays: number; notifyDaysBefore: number }; onSaved: (mode: string) => void }) {
  const [mode, setMode] = useState<string>(initial.mfaPolicyMode);
  const [grace, setGrace] = useState(String(initial.mfaGracePeriodDays));
  const [notify, setNotify] = useState(String(initial.notifyDaysBefore));
  // What the browser cannot even send as a number is said here; the API judges the rest.
  const [local, setLocal] = useState<Record<string, string>>({});
  const required = mode === "required";
  const save = useMutation({
    mutationFn: (input: { mfaPolicyMode: string; mfaGracePeriodDays: number; notifyDaysBefore: number }) => gql(UpdatePolicy, { orgId, input }),
    onSuccess: (d) => onSaved(d.updateOrgSecurityPolicy.mfaPolicyMode),
  });
  const submit = useSubmit(async () => {
    // Hidden unless "required": then the current values go along unchanged.
    const g = required ? days(grace) : (days(grace) ?? initial.mfaGracePeriodDays);
    const n = required ? days(notify) : (days(notify) ?? initial.notifyDaysBefore);
    const problems = { ...(g === null ? { mfaGracePeriodDays: NOT_DAYS } : {}), ...(n === null ? { notifyDaysBefore: NOT_DAYS } : {}) };
    setLocal(problems);
    if (g === null || n === null) return;
    await save.mutateAsync({ mfaPolicyMode: mode, mfaGracePeriodDays: g, notifyDaysBefore: n });
  });
  const fields = { ...(save.error instanceof ApiError ? save.error.fieldErrors : {}), ...local };
  return (
    <Form validationBehavior="aria" aria-label="Two-step verification policy" onSubmit={submit} className="panel">
      <fieldset className="choices" data-invalid={fields.mfaPolicyMode ? true : undefined} aria-describedby={fields.mfaPolicyMode ? "mode-error" : undefined}>
        <legend>Policy</legend>
        <div className="choice-list">
          {MODES.map((m) => (
            <label key={m.value} className="choice">
              <input type="radio" name="mfaPolicyMode" value={m.value} checked={mode === m.value} onChange={() => setMode(m.value)} />
              <span className="choice-text">
                <strong>{m.label}</strong>
                <span className="hint">{m.hint}</span>
              </span>
            </label>
          ))}
        </div>
        {fields.mfaPolicyMode && (
          <p id="mode-error" className="field-error">
            {fields.mfaPolicyMode}
          </p>
        )}
      </fieldset>
      {required && (
        <div className="field-pair">
          <Field
            label="Grace period (days)"
            name="mfaGracePeriodDays"
            inputMode="numeric"
            value={grace}
            onChange={setGrace}
            description="Members without a second step get this long from now."
            error={fields.mfaGracePeriodDays}
          />
          <Field
            label="First reminder (days before the deadline)"
            name="notifyDaysBefore"
            inputMode="numeric"
            value={notify}
            onChange={setNotify}
            description="A second reminder goes out the day before."
            error={fields.notifyDaysBefore}
          />
        </div>
      )}
      {!Object.keys(fields).some((f) => f === "mfaPolicyMode" || (required && (f === "mfaGracePeriodDays" || f === "notifyDaysBefore"))) && <FormError error={save.error} />}
      <div className="actions">
        <Button type="submit" isPending={save.isPending}>
          Save policy
        </Button>
      </div>
    </Form>
  );
}

function Compliance({ orgId, orgName, mode, rows, onDone }: { orgId: string; orgName: string; mode: string; rows: Standing[]; onDone: (message: string) => Promise<void> }) {
  const [show, setShow] = useState<ShowFilter>("all");
  const [search, setSearch] = useState("");
  const remind = useMutation({
    mutationFn: (s: Standing) => gql(SendReminder, { orgId, userId: s.userId }),
    onSuccess: (d, s) => onDone(d.sendMfaReminder.sent ? `Reminder sent to ${s.userName || s.userEmail}.` : `${s.userName || s.userEmail} has no deadline to be reminded of.`),
  });
  const busy = useRef(false);
  const send = (s: Standing) => {
    if (busy.current) return;
    busy.current = true;
    remind.mutateAsync(s).catch(() => undefined).finally(() => (busy.current = false));
  };
  const count = (status: string) => rows.filter((r) => r.status === status).length;
  const pastDue = count("past_due");
  const inGrace = count("in_grace");
  const compliant = count("compliant");
  const needle = search.trim().toLowerCase();
  const shown = rows
    .filter((r) => show === "all" || r.status === show)
    .filter((r) => !needle || r.userEmail.toLowerCase().includes(needle) || (r.userName ?? "").toLowerCase().includes(needle))
    .sort((a, b) => standingOf(a.status).order - standingOf(b.status).order || (a.deadlineAt ?? "").localeCompare(b.deadlineAt ?? ""));

  return (
    <section aria-labelledby="compliance">
      <h2 id="compliance">Compliance</h2>
      {mode !== "required" && pastDue + inGrace === 0 ? (
        <Empty>
          <p>Nobody has a deadline: two-step verification is not required in {orgName}.</p>
          <p className="muted">Choose "Required" above to give every member without a second step a deadline.</p>
        </Empty>
      ) : (
        <>
          <p>
            {pastDue === 0 && inGrace === 0
              ? "Every member has a second step."
              : `${pastDue} past the deadline, ${inGrace} in their grace period, ${compliant} with a second step.`}
          </p>
          <div className="filters" role="search" aria-label="Filter members by standing">
            <label className="field">
              <span className="label">Show</span>
              <select value={show} onChange={(e) => setShow(e.target.value as ShowFilter)}>
                <option value="all">Everyone ({rows.length})</option>
                <option value="past_due">Past the deadline ({pastDue})</option>
                <option value="in_grace">In grace period ({inGrace})</option>
                <option value="compliant">Two-step on ({compliant})</option>
              </select>
            </label>
            <Field label="Search by name or email" type="search" value={search} onChange={setSearch} />
          </div>
          <FormError error={remind.error} />
          {shown.length === 0 ? (
            <Empty>
              <p>No member matches.</p>
            </Empty>
          ) : (
            <div className="table-wrap" tabIndex={0} role="region" aria-label={`Two-step standing of ${orgName}'s members`}>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Person</th>
                    <th scope="col">Standing</th>
                    <th scope="col">Deadline</th>
                    <th scope="col">Last reminded</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {shown.map((s) => {
                    const st = standingOf(s.status);
                    const open = s.status === "in_grace" || s.status === "past_due";
                    return (
                      <tr key={s.userId}>
                        <td>
                          <strong>{s.userName || s.userEmail}</strong>
                          {s.userName && <div className="muted">{s.userEmail}</div>}
                        </td>
                        <td>
                          <Badge tone={st.tone}>{st.label}</Badge>
                        </td>
                        <td>{s.status === "compliant" ? <span className="muted">met <Time iso={s.compliantAt} /></span> : open ? <Time iso={s.deadlineAt} mode="full" /> : <span className="muted">none</span>}</td>
                        <td>
                          <Time iso={s.lastNotifiedAt} />
                        </td>
                        <td>
                          {open && (
                            <Button variant="secondary" size="small" isPending={remind.isPending && remind.variables?.userId === s.userId} onPress={() => send(s)} aria-label={`Send reminder to ${s.userName || s.userEmail}`}>
                              Send reminder
                            </Button>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}

function ApiKeys({ orgId, orgName, keys, onDone, forScim = false }: { orgId: string; orgName: string; keys: ApiKey[]; onDone: (message: string) => Promise<void>; forScim?: boolean }) {
  // From the Provisioning screen (?newKey=scim): a key for the identity provider, its scope chosen.
  const [name, setName] = useState(forScim ? "SCIM provisioning" : "");
  const [description, setDescription] = useState("");
  const [scopes, setScopes] = useState<string[]>(forScim ? ["scim"] : ["ssh:sudo"]);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (forScim) heading.current?.scrollIntoView({ block: "start" });
  }, [forScim]);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [showRevoked, setShowRevoked] = useState(false);
  const create = useMutation({
    mutationFn: () => gql(CreateApiKey, { orgId, input: { name, scopes, ...(description.trim() ? { description } : {}) } }),
    onSuccess: async (d) => {
      setCreated({ name: d.createApiKey.name, key: d.createApiKey.key });
      setName("");
      setDescription("");
      setScopes(["ssh:sudo"]);
      await onDone(`API key ${d.createApiKey.name} created.`);
    },
  });
  const submit = useSubmit(() => {
    setCreated(null);
    return create.mutateAsync();
  });
  const fields = create.error instanceof ApiError ? create.error.fieldErrors : {};
  const live = keys.filter((k) => !k.revokedAt);
  const revoked = keys.filter((k) => k.revokedAt);
  const listed = showRevoked ? keys : live;
  return (
    <section aria-labelledby="api-keys">
      <h2 id="api-keys" ref={heading}>
        API keys
      </h2>
      <p className="muted">
        An API key lets a server or script of {orgName} call the API as <code>Authorization: Bearer kwk_…</code>, for what its scopes allow: the sudo check (<code>POST /api/v1/sudo/check</code>), reading members, principals or the audit log, or SCIM provisioning from your identity provider (<code>/scim/v2</code>). Its secret is shown once.
      </p>
      <Form validationBehavior="aria" aria-label="Create an API key" onSubmit={submit} className="inline-form">
        <Field label="Key name" name="name" value={name} onChange={setName} isRequired error={fields.name} placeholder="build servers" />
        <Field label="Description (optional)" name="description" value={description} onChange={setDescription} error={fields.description} />
        <ScopePicker id="new" scopes={scopes} onChange={setScopes} error={fields.scopes} />
        <Button type="submit" isPending={create.isPending}>
          Create API key
        </Button>
        {!fields.name && !fields.description && !fields.scopes && <FormError error={create.error} />}
      </Form>
      {created && (
        <div className="panel">
          <h3>Secret of {created.name}</h3>
          <Secret label={`Secret of the API key ${created.name}`} value={created.key} />
        </div>
      )}
      {keys.length === 0 ? (
        <Empty>
          <p>No API keys yet. Create one for the servers that run the sudo check.</p>
        </Empty>
      ) : (
        <>
          {revoked.length > 0 && (
            <label className="choice-inline">
              <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.target.checked)} /> Show {revoked.length} revoked
            </label>
          )}
          {listed.length === 0 ? (
            <Empty>
              <p>Every API key of {orgName} is revoked.</p>
            </Empty>
          ) : (
            <ul className="objects" aria-label={`API keys of ${orgName}`}>
              {listed.map((k) => (
                <ApiKeyItem key={k.id} orgId={orgId} apiKey={k} onDone={onDone} />
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}

function ApiKeyItem({ orgId, apiKey: k, onDone }: { orgId: string; apiKey: ApiKey; onDone: (message: string) => Promise<void> }) {
  const { editing, setEditing, ref } = useEditInPlace<HTMLLIElement>();
  const [name, setName] = useState(k.name);
  const [description, setDescription] = useState(k.description ?? "");
  const [scopes, setScopes] = useState<string[]>(k.scopes);
  const [reason, setReason] = useState("");
  const update = useMutation({
    mutationFn: () => gql(UpdateApiKey, { orgId, keyId: k.id, input: { name, description: description.trim() ? description : null, scopes } }),
    onSuccess: async (d) => {
      setEditing(false);
      await onDone(`API key ${d.updateApiKey.name} saved.`);
    },
  });
  const submit = useSubmit(() => update.mutateAsync());
  const fields = update.error instanceof ApiError ? update.error.fieldErrors : {};
  return (
    <li className={`object${k.revokedAt ? " revoked" : ""}`} ref={ref}>
      <div className="object-head">
        <h3>{k.name}</h3>
        {k.revokedAt ? <Badge tone="bad">Revoked</Badge> : <Badge tone="good">Active</Badge>}
      </div>
      {editing ? (
        <Form validationBehavior="aria" aria-label={`Edit the API key ${k.name}`} onSubmit={submit}>
          <Field label="Key name" name="name" value={name} onChange={setName} isRequired error={fields.name} autoFocus />
          <Field label="Description" name="description" value={description} onChange={setDescription} error={fields.description} />
          <ScopePicker id={k.id} scopes={scopes} onChange={setScopes} error={fields.scopes} />
          {!fields.name && !fields.description && !fields.scopes && <FormError error={update.error} />}
          <div className="actions">
            <Button type="submit" isPending={update.isPending}>
              Save
            </Button>
            <Button
              variant="secondary"
              onPress={() => {
                setEditing(false);
                setName(k.name);
                setDescription(k.description ?? "");
                setScopes(k.scopes);
                update.reset();
              }}
            >
              Cancel
            </Button>
          </div>
        </Form>
      ) : (
        <>
          {k.description && <p>{k.description}</p>}
          <dl className="kv">
            <dt>Starts with</dt>
            <dd>
              <code>{k.prefix}_…</code>
            </dd>
            <dt>Scopes</dt>
            <dd>{k.scopes.length ? k.scopes.map((s) => <code key={s}>{s} </code>) : "none"}</dd>
            <dt>Created</dt>
            <dd>
              <Time iso={k.createdAt} />
            </dd>
            <dt>Last used</dt>
            <dd>
              <Time iso={k.lastUsedAt} />
            </dd>
            {k.revokedAt && (
              <>
                <dt>Revoked</dt>
                <dd>
                  <Time iso={k.revokedAt} />
                  {k.revokeReason && <>: {k.revokeReason}</>}
                </dd>
              </>
            )}
          </dl>
          {!k.revokedAt && (
            <div className="actions">
              <Button variant="secondary" size="small" onPress={() => setEditing(true)} aria-label={`Edit ${k.name}`} data-edit-trigger>
                Edit
              </Button>
              <ConfirmDialog
                trigger={
                  <Button variant="secondary" size="small" aria-label={`Revoke ${k.name}`}>
                    Revoke
                  </Button>
                }
                title={`Revoke the API key ${k.name}?`}
                confirmLabel="Revoke key"
                onConfirm={async () => {
                  await gql(RevokeApiKey, { orgId, keyId: k.id, ...(reason.trim() ? { reason } : {}) });
                  await onDone(`API key ${k.name} revoked.`);
                }}
              >
                <p>
                  Servers and scripts using <code>{k.prefix}_…</code> are refused at once. This cannot be undone: create a new key to replace it.
                </p>
                <Field label="Reason (optional)" value={reason} onChange={setReason} description="Kept with the key and in the audit log." />
              </ConfirmDialog>
            </div>
          )}
        </>
      )}
    </li>
  );
}
