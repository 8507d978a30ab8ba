import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { CopyText } from "../../ui/CopyText";
import { Field } from "../../ui/Field";
import { Secret } from "../../ui/Secret";
import { ErrorState, FormError, Loading } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useSubmit } from "../../ui/useSubmit";
import "./org-admin.css";

const TokensQuery = graphql(`
  query HostEnrollmentTokens($orgId: ID!) {
    hostEnrollmentTokens(orgId: $orgId) { id prefix names description status expiresAt usedAt hostId }
  }
`);
const CreateToken = graphql(`
  mutation CreateHostEnrollmentToken($orgId: ID!, $input: HostEnrollmentTokenInput!) {
    createHostEnrollmentToken(orgId: $orgId, input: $input) { id token names expiresAt }
  }
`);
const RevokeToken = graphql(`
  mutation RevokeHostEnrollmentToken($orgId: ID!, $tokenId: ID!) { revokeHostEnrollmentToken(orgId: $orgId, tokenId: $tokenId) { id status } }
`);

const tone = { active: "accent", used: "good", expired: "neutral", revoked: "warn" } as const;

/** "web1.example.com, 10.0.0.5" or one per line → the names, as the API takes them. */
const namesOf = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/**
 * Enrolling a server, for an organization's admins: a one-time token naming what the server's host
 * certificate may say (shown once, with the command to run on the server), and the tokens made so
 * far: waiting, used by which server, expired or revoked (an unused one can be revoked).
 */
export function EnrollServer({ orgId, orgName, onDone, canCreate = true }: { orgId: string; orgName: string; onDone: (message: string) => Promise<void>; canCreate?: boolean }) {
  const qc = useQueryClient();
  const tokens = useQuery({ queryKey: ["org", orgId, "host-enrollment-tokens"], queryFn: () => gql(TokensQuery, { orgId }) });
  const [names, setNames] = useState("");
  const [minutes, setMinutes] = useState("60");
  const [description, setDescription] = useState("");
  const [created, setCreated] = useState<{ token: string; names: string[]; expiresAt: string } | null>(null);
  const create = useMutation({
    mutationFn: () =>
      gql(CreateToken, {
        orgId,
        input: { names: namesOf(names), ...(minutes.trim() ? { lifetimeMinutes: Number(minutes) } : {}), ...(description.trim() ? { description: description.trim() } : {}) },
      }),
    onSuccess: async (d) => {
      setCreated(d.createHostEnrollmentToken);
      setNames("");
      setDescription("");
      await qc.invalidateQueries({ queryKey: ["org", orgId, "host-enrollment-tokens"] });
    },
  });
  const submit = useSubmit(() => {
    setCreated(null);
    return create.mutateAsync();
  });
  const fields = create.error instanceof ApiError ? create.error.fieldErrors : {};
  const command = created && `sudo keyward host enroll --server ${window.location.origin} --token ${created.token}`;
  return (
    <section aria-labelledby="enroll-server">
      <h2 id="enroll-server">Enroll a server</h2>
      <p className="muted">
        A one-time token lets one server of {orgName} get host certificates for the names it lists, trust the organization's user CA and keep its revocation list fresh. It is shown once and works once.
      </p>
      {/* A token lets a server in for good: not on a role held through a role grant (listing and revoking stay). */}
      {canCreate && (
        <Form validationBehavior="aria" aria-label="Create an enrollment token" onSubmit={submit} className="inline-form fields-top">
          <Field label="Host names" name="names" value={names} onChange={setNames} isRequired error={fields.names} placeholder="web1.example.com 10.0.0.5" description="Exact names and addresses, separated by spaces or commas" />
          <Field label="Usable for (minutes)" name="lifetimeMinutes" inputMode="numeric" value={minutes} onChange={setMinutes} error={fields.lifetimeMinutes} description="60 unless said, a day (1440) at most" />
          <Field label="Description (optional)" name="description" value={description} onChange={setDescription} error={fields.description} />
          <Button type="submit" isPending={create.isPending}>
            Create enrollment token
          </Button>
          {!fields.names && !fields.lifetimeMinutes && !fields.description && <FormError error={create.error} />}
        </Form>
      )}
      {created && command && (
        <div className="panel">
          <h3>Token for {created.names.join(", ")}</h3>
          <Secret label={`Enrollment token for ${created.names.join(", ")}`} value={created.token} />
          <CopyText
            label="On the server, as root"
            value={command}
            hint={`Usable until ${new Date(created.expiresAt).toLocaleString()}. It writes the host certificates, the trusted user CA, the KRL and an sshd snippet; then run sshd -t and reload sshd, and keyward host install-timer for renewals.`}
          />
        </div>
      )}
      <h3>Enrollment tokens</h3>
      {tokens.isPending ? (
        <Loading />
      ) : tokens.isError ? (
        <ErrorState error={tokens.error} retry={() => void tokens.refetch()} />
      ) : tokens.data.hostEnrollmentTokens.length === 0 ? (
        <p className="muted">None yet.</p>
      ) : (
        <ul className="objects" aria-label={`Enrollment tokens of ${orgName}`}>
          {tokens.data.hostEnrollmentTokens.map((t) => (
            <li key={t.id} className="object">
              <div className="object-head">
                <code>{t.prefix}…</code>
                <Badge tone={tone[t.status as keyof typeof tone] ?? "neutral"}>{t.status}</Badge>
              </div>
              <dl className="kv">
                <dt>Names</dt>
                <dd>{t.names.map((n) => <code key={n}>{n} </code>)}</dd>
                {t.description && (
                  <>
                    <dt>Description</dt>
                    <dd>{t.description}</dd>
                  </>
                )}
                {t.status === "used" && t.usedAt ? (
                  <>
                    <dt>Used</dt>
                    <dd>
                      <Time iso={t.usedAt} />
                    </dd>
                  </>
                ) : (
                  <>
                    <dt>{t.status === "active" ? "Expires" : "Expired"}</dt>
                    <dd>
                      <Time iso={t.expiresAt} />
                    </dd>
                  </>
                )}
              </dl>
              {t.status === "active" && (
                <div className="actions">
                  <Revoke orgId={orgId} token={{ id: t.id, label: `${t.prefix}… for ${t.names.join(", ")}` }} onRevoked={onDone} />
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Revoke({ orgId, token, onRevoked }: { orgId: string; token: { id: string; label: string }; onRevoked: (message: string) => Promise<void> }) {
  return (
    <ConfirmDialog
      trigger={
        <Button variant="secondary" size="small" aria-label={`Revoke the enrollment token ${token.label}`}>
          Revoke
        </Button>
      }
      title="Revoke this enrollment token?"
      confirmLabel="Revoke"
      onConfirm={async () => {
        await gql(RevokeToken, { orgId, tokenId: token.id });
        await onRevoked(`Revoked the enrollment token ${token.label}: no server can enroll with it.`);
      }}
    >
      <p>The token {token.label} stops working at once. A server already enrolled with another token is not affected.</p>
    </ConfirmDialog>
  );
}
