import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Form } from "react-aria-components";
import { gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { SelectField } from "../../ui/SelectField";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { CopyText } from "../../ui/CopyText";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useSubmit } from "../../ui/useSubmit";
import { fieldErrorsOf, wholeHours } from "./directory-shared";
import { isAdmin, useOrg } from "./layout";
import { hours, SshTabs } from "./ssh-shared";

const SshQuery = graphql(`
  query OrgSsh($orgId: ID!, $admin: Boolean!, $signer: Boolean!) {
    sshServerConfig(orgId: $orgId) { trustedUserCaKeys knownHosts userCaKeys hostCaKeys }
    certificateAuthorities(orgId: $orgId) @include(if: $admin) {
      id name description caType keyType fingerprint publicKey defaultValidityHours maxValidityHours hostPatterns createdAt updatedAt
      previousKeys { fingerprint trustedUntil }
    }
    myCertPolicy(orgId: $orgId) @include(if: $signer) { defaultExpiryHours maxExpiryHours allowUserExpiry extensions }
    myPrincipals @include(if: $signer) { orgId myPrincipals { id name } }
  }
`);
const CreateCa = graphql(`
  mutation CreateCertificateAuthority($orgId: ID!, $input: CreateCaInput!) { createCertificateAuthority(orgId: $orgId, input: $input) { id name caType } }
`);
const UpdateCa = graphql(`
  mutation UpdateCertificateAuthority($orgId: ID!, $caId: ID!, $input: UpdateCaInput!) { updateCertificateAuthority(orgId: $orgId, caId: $caId, input: $input) { id name } }
`);
const RotateCa = graphql(`
  mutation RotateCertificateAuthority($orgId: ID!, $caId: ID!, $keyType: String, $reason: String) {
    rotateCertificateAuthority(orgId: $orgId, caId: $caId, keyType: $keyType, reason: $reason) { oldFingerprint ca { id name fingerprint } }
  }
`);
const DeleteCa = graphql(`
  mutation DeleteCertificateAuthority($orgId: ID!, $caId: ID!) { deleteCertificateAuthority(orgId: $orgId, caId: $caId) { message } }
`);

type Ca = NonNullable<ResultOf<typeof SshQuery>["certificateAuthorities"]>[number];

const KEY_TYPES = [
  ["ed25519", "Ed25519 (recommended)"],
  ["ecdsa", "ECDSA P-256"],
  ["rsa", "RSA 4096"],
] as const;
const KIND_WORDS: Record<string, string> = { user: "user CA", host: "host CA" };

/**
 * /orgs/<slug>/ssh: how a member gets a certificate (the exact commands for this server), what
 * servers need to trust the organization (TrustedUserCAKeys, @cert-authority, the KRL), and for
 * admins the certificate authorities: create, edit, rotate with overlap, delete.
 */
export function Ssh() {
  const org = useOrg();
  const admin = isAdmin(org);
  const signer = org.role !== "guest";
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ["org", org.id, "ssh", admin, signer], queryFn: () => gql(SshQuery, { orgId: org.id, admin, signer }) });
  const [done, setDone] = useState("");
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  const { sshServerConfig: config, certificateAuthorities: cas, myCertPolicy: policy } = q.data;
  const mine = q.data.myPrincipals?.find((m) => m.orgId === org.id)?.myPrincipals ?? [];
  const origin = window.location.origin;
  const krlUrl = `/api/v1/organizations/${org.id}/ssh/krl`;
  const missing = (["user", "host"] as const).filter((t) => !(cas ?? []).some((c) => c.caType === t));
  const getOne = signer && (
    <section aria-labelledby="get">
      <h2 id="get">Get a certificate</h2>
      {config.userCaKeys.length === 0 ? (
        <p className="notice notice-warn">{admin ? "Create a user certificate authority first: nothing can be signed without one." : "The organization has no user certificate authority yet: ask an admin to create one."}</p>
      ) : null}
      <ol className="ssh-steps">
        <li>
          <CopyText label="Sign in from your terminal" value={`keyward login --server ${origin}`} hint="Opens this server's sign-in in your browser; add --device on a computer without one." />
        </li>
        <li>
          <CopyText
            label="Get a certificate for your SSH key"
            value={`keyward ssh sign --org-id ${org.id}`}
            hint="Registers ~/.ssh/id_ed25519 (or id_ecdsa, id_rsa) if needed and writes id_ed25519-cert.pub beside it, where ssh finds it."
          />
        </li>
        <li>
          Log in as one of your principals:{" "}
          {mine.length === 0 ? (
            <span className="muted">you hold none in {org.name} yet{admin ? " (as an admin you may request any of the organization's)" : ": an admin grants them"}.</span>
          ) : (
            mine.map((p, i) => (
              <span key={p.id}>
                {i > 0 && ", "}
                <code>ssh {p.name}@your-server</code>
              </span>
            ))
          )}
        </li>
      </ol>
      {policy && (
        <p className="muted">
          Your certificates last {hours(policy.defaultExpiryHours)}
          {policy.allowUserExpiry ? ` (ask for up to ${hours(policy.maxExpiryHours)} with --hours)` : ""} and allow{" "}
          {policy.extensions.length === 0 ? "no extension" : policy.extensions.map((x) => x.replace(/^permit-/, "")).join(", ")}.
        </p>
      )}
    </section>
  );
  const servers = (
    <section aria-labelledby="servers">
      <h2 id="servers">Servers that trust {org.name}</h2>
      {config.userCaKeys.length === 0 && config.hostCaKeys.length === 0 ? (
        <Empty>
          <p>No certificate authority yet, so nothing for servers to trust.</p>
        </Empty>
      ) : (
        <>
          {config.userCaKeys.length > 0 && (
            <>
              <CopyText
                label="TrustedUserCAKeys file"
                value={config.trustedUserCaKeys.trimEnd()}
                hint="Save on each server as /etc/ssh/keyward_user_ca.pub. During a rotation it holds the previous key too: copy it again after each rotation."
              />
              <CopyText
                label="sshd configuration"
                value={"TrustedUserCAKeys /etc/ssh/keyward_user_ca.pub\nRevokedKeys /etc/ssh/keyward.krl"}
                hint="In /etc/ssh/sshd_config.d/keyward.conf, then sshd -t and reload sshd."
              />
            </>
          )}
          {config.hostCaKeys.length > 0 && (
            <CopyText label="known_hosts line (@cert-authority)" value={config.knownHosts.trimEnd()} hint="For your users' ~/.ssh/known_hosts (keyward ssh config writes it for them): it names the hosts set on the host CA (Edit, Hosts), or * until they are set." />
          )}
          <h3>Revoked certificates</h3>
          <p>
            <a href={krlUrl} download={`${org.slug}.krl`}>
              Download the key revocation list (KRL)
            </a>{" "}
            <span className="muted">for sshd's RevokedKeys. Fetch it again regularly, replacing the file at once:</span>
          </p>
          <CopyText label="Refresh the KRL (cron)" value={`curl -fsS ${origin}${krlUrl} -o /etc/ssh/keyward.krl.new && mv /etc/ssh/keyward.krl.new /etc/ssh/keyward.krl`} />
        </>
      )}
    </section>
  );
  const authorities = cas && (
    <section aria-labelledby="authorities">
      <h2 id="authorities">Certificate authorities</h2>
      {cas.length === 0 ? (
        <Empty>
          <p>No certificate authority yet.</p>
          <p className="muted">Create a user CA to sign your members' keys; a host CA signs servers' keys, so that users need not accept host keys on first use.</p>
        </Empty>
      ) : (
        <ul className="ssh-cas" aria-label="Certificate authorities">
          {cas.map((ca) => (
            <CaCard key={ca.id} orgId={org.id} ca={ca} onChanged={changed} />
          ))}
        </ul>
      )}
      {missing.length > 0 && <NewCa orgId={org.id} kinds={missing} onCreated={changed} />}
    </section>
  );
  return (
    <div className="page ssh-page">
      <h1>SSH</h1>
      {admin && <SshTabs org={org} />}
      {done && <Success>{done}</Success>}

      {/* Admins set up first (authorities, then servers); everyone else starts with getting a certificate. */}
      {admin ? (
        <>
          {authorities}
          {servers}
          {getOne}
        </>
      ) : (
        <>
          {getOne}
          {servers}
        </>
      )}
    </div>
  );
}

function CaCard({ orgId, ca, onChanged }: { orgId: string; ca: Ca; onChanged: (message: string) => Promise<void> }) {
  const [keyType, setKeyType] = useState(ca.keyType);
  const [reason, setReason] = useState("");
  return (
    <li className="card ssh-ca">
      <h3>
        {ca.name} <Badge tone="accent">{KIND_WORDS[ca.caType] ?? ca.caType}</Badge>
      </h3>
      {ca.description && <p>{ca.description}</p>}
      <dl className="ssh-facts">
        <div>
          <dt>Key</dt>
          <dd>
            {ca.keyType} <code className="ssh-fingerprint">{ca.fingerprint}</code>
          </dd>
        </div>
        <div>
          <dt>Certificates last</dt>
          <dd>
            {hours(ca.defaultValidityHours)} by default, {hours(ca.maxValidityHours)} at most
          </dd>
        </div>
        {ca.caType === "host" && (
          <div>
            <dt>Hosts</dt>
            <dd>{ca.hostPatterns?.length ? <code>{ca.hostPatterns.join(", ")}</code> : <span className="muted">not set: known_hosts trusts it for every host (*), and keyward ssh config skips it</span>}</dd>
          </div>
        )}
        <div>
          <dt>Created</dt>
          <dd>
            <Time iso={ca.createdAt} />
          </dd>
        </div>
      </dl>
      {ca.previousKeys.length > 0 && (
        <div className="ssh-previous">
          <h4>Previous keys, still trusted</h4>
          <ul>
            {ca.previousKeys.map((k) => (
              <li key={k.fingerprint}>
                <code className="ssh-fingerprint">{k.fingerprint}</code> <span className="muted">until {k.trustedUntil ? <Time iso={k.trustedUntil} mode="full" /> : "removed"}</span>
              </li>
            ))}
          </ul>
        </div>
      )}
      <CaEdit key={ca.updatedAt} orgId={orgId} ca={ca} onSaved={onChanged} />
      <div className="actions">
        <ConfirmDialog
          trigger={
            <Button variant="secondary" size="small" aria-label={`Rotate key of ${ca.name}`}>
              Rotate key
            </Button>
          }
          title={`Rotate the key of ${ca.name}?`}
          confirmLabel="Rotate key"
          danger={false}
          onConfirm={async () => {
            const r = await gql(RotateCa, { orgId, caId: ca.id, keyType, reason: reason.trim() || undefined });
            setReason("");
            await onChanged(`${r.rotateCertificateAuthority.ca.name} has a new key; the previous one (${r.rotateCertificateAuthority.oldFingerprint}) stays trusted for the overlap.`);
          }}
        >
          <p>
            New certificates are signed with a new key at once. The current key stays trusted for an overlap, so certificates it signed keep working: copy the
            TrustedUserCAKeys or known_hosts lines to your servers again now.
          </p>
          <SelectField label="New key type" value={keyType} onChange={setKeyType}>
            {KEY_TYPES.map(([v, words]) => (
              <option key={v} value={v}>
                {words}
              </option>
            ))}
          </SelectField>
          <Field label="Reason (for the audit log)" value={reason} onChange={setReason} />
        </ConfirmDialog>
        <ConfirmDialog
          trigger={
            <Button variant="danger" size="small" aria-label={`Delete ${ca.name}`}>
              Delete
            </Button>
          }
          title={`Delete the ${KIND_WORDS[ca.caType] ?? "CA"} ${ca.name}?`}
          confirmLabel="Delete certificate authority"
          onConfirm={async () => {
            await gql(DeleteCa, { orgId, caId: ca.id });
            await onChanged(`${ca.name} deleted.`);
          }}
        >
          <p>
            Its keys leave the lines servers trust, and nothing more can be signed with it. Servers that still list its key keep accepting certificates it signed until you
            remove the key from them.
          </p>
        </ConfirmDialog>
      </div>
    </li>
  );
}

function CaEdit({ orgId, ca, onSaved }: { orgId: string; ca: Ca; onSaved: (message: string) => Promise<void> }) {
  const [name, setName] = useState(ca.name);
  const [description, setDescription] = useState(ca.description ?? "");
  const [def, setDef] = useState(String(ca.defaultValidityHours));
  const [max, setMax] = useState(String(ca.maxValidityHours));
  const [patterns, setPatterns] = useState((ca.hostPatterns ?? []).join(", "));
  const [anyHost, setAnyHost] = useState(false);
  const [local, setLocal] = useState<Record<string, string>>({});
  // Host patterns: comma or space separated here, a list on the wire; empty clears them.
  const hostInput = () => {
    if (ca.caType !== "host") return {};
    const list = patterns.split(/[\s,]+/).filter(Boolean);
    return { hostPatterns: list.length ? list : null, ...(anyHost ? { allowAnyHost: true } : {}) };
  };
  const save = useMutation({
    mutationFn: (v: { defaultCertValidityHours: number; maxCertValidityHours: number }) => gql(UpdateCa, { orgId, caId: ca.id, input: { name, description, ...v, ...hostInput() } }),
    onSuccess: (d) => onSaved(`${d.updateCertificateAuthority.name} saved.`),
  });
  const submit = useSubmit(async () => {
    const d = wholeHours(def);
    const m = wholeHours(max);
    setLocal({ ...(typeof d === "string" ? { defaultCertValidityHours: d } : {}), ...(typeof m === "string" ? { maxCertValidityHours: m } : {}) });
    if (typeof d === "string" || typeof m === "string") return;
    await save.mutateAsync({ defaultCertValidityHours: d, maxCertValidityHours: m });
  });
  const fields = { ...fieldErrorsOf(save.error), ...local };
  return (
    <details className="ssh-edit">
      <summary>Edit {ca.name}</summary>
      <Form validationBehavior="aria" aria-label={`Edit ${ca.name}`} onSubmit={submit}>
        <Field label="Name" value={name} onChange={setName} isRequired error={fields.name} />
        <Field label="Description" value={description} onChange={setDescription} error={fields.description} />
        <div className="ssh-pair">
          <Field label="Lifetime by default (hours)" inputMode="numeric" value={def} onChange={setDef} error={fields.defaultCertValidityHours} />
          <Field label="Longest lifetime (hours)" inputMode="numeric" value={max} onChange={setMax} error={fields.maxCertValidityHours} />
        </div>
        {ca.caType === "host" && (
          <>
            <Field
              label="Hosts (patterns, comma separated)"
              value={patterns}
              onChange={setPatterns}
              error={fields.hostPatterns}
              description="Which hosts this CA vouches for, such as *.prod.example.com, 10.0.0.*; ! first excludes one."
            />
            <label className="dir-check">
              <input type="checkbox" checked={anyHost} onChange={(e) => setAnyHost(e.target.checked)} />
              Allow a pattern that matches every host (*)
            </label>
          </>
        )}
        {Object.keys(fields).length === 0 && <FormError error={save.error} />}
        <div className="actions">
          <Button type="submit" isPending={save.isPending}>
            Save
          </Button>
        </div>
      </Form>
    </details>
  );
}

function NewCa({ orgId, kinds, onCreated }: { orgId: string; kinds: Array<"user" | "host">; onCreated: (message: string) => Promise<void> }) {
  const [caType, setCaType] = useState<"user" | "host">(kinds[0]!);
  const kind = kinds.includes(caType) ? caType : kinds[0]!;
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [keyType, setKeyType] = useState("ed25519");
  const [def, setDef] = useState("");
  const [max, setMax] = useState("");
  const [local, setLocal] = useState<Record<string, string>>({});
  const create = useMutation({
    mutationFn: (v: { defaultCertValidityHours?: number; maxCertValidityHours?: number }) =>
      gql(CreateCa, { orgId, input: { name, caType: kind, keyType, description: description.trim() || undefined, ...v } }),
    onSuccess: async (d) => {
      setName("");
      setDescription("");
      setDef("");
      setMax("");
      await onCreated(`${d.createCertificateAuthority.name} created: copy its lines to your servers.`);
    },
  });
  const submit = useSubmit(async () => {
    // Empty means the API's default; anything else must be a whole number of hours.
    const d = def.trim() ? wholeHours(def) : undefined;
    const m = max.trim() ? wholeHours(max) : undefined;
    setLocal({ ...(typeof d === "string" ? { defaultCertValidityHours: d } : {}), ...(typeof m === "string" ? { maxCertValidityHours: m } : {}) });
    if (typeof d === "string" || typeof m === "string") return;
    await create.mutateAsync({ defaultCertValidityHours: d, maxCertValidityHours: m });
  });
  const fields = { ...fieldErrorsOf(create.error), ...local };
  return (
    <Form validationBehavior="aria" className="card ssh-new" aria-label="New certificate authority" onSubmit={submit}>
      <h3>New certificate authority</h3>
      <div className="ssh-pair">
        <SelectField label="Signs" value={kind} onChange={(v) => setCaType(v as "user" | "host")}>
          {kinds.map((k) => (
            <option key={k} value={k}>
              {k === "user" ? "people's keys (user CA)" : "servers' keys (host CA)"}
            </option>
          ))}
        </SelectField>
        <SelectField label="Key type" value={keyType} onChange={setKeyType}>
          {KEY_TYPES.map(([v, words]) => (
            <option key={v} value={v}>
              {words}
            </option>
          ))}
        </SelectField>
      </div>
      <Field label="Name" value={name} onChange={setName} isRequired error={fields.name} placeholder={kind === "user" ? "User CA" : "Host CA"} />
      <Field label="Description" value={description} onChange={setDescription} error={fields.description} />
      <div className="ssh-pair">
        <Field label="Lifetime by default (hours)" inputMode="numeric" value={def} onChange={setDef} placeholder="8" error={fields.defaultCertValidityHours} description="Empty: 8 hours." />
        <Field label="Longest lifetime (hours)" inputMode="numeric" value={max} onChange={setMax} placeholder="720" error={fields.maxCertValidityHours} description="Empty: 720 hours (30 days)." />
      </div>
      {Object.keys(fields).length === 0 && <FormError error={create.error} />}
      <div className="actions">
        <Button type="submit" isPending={create.isPending}>
          Create certificate authority
        </Button>
      </div>
    </Form>
  );
}
