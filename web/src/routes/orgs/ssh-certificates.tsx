import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql } from "../../graphql";
import type { MyOrganization } from "../../shell";
import { Button } from "../../ui/Button";
import { SelectField } from "../../ui/SelectField";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { CopyText } from "../../ui/CopyText";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useSubmit } from "../../ui/useSubmit";
import { fieldErrorsOf, personName, wholeHours } from "./directory-shared";
import { isAdmin, useOrg } from "./layout";
import { CertStatus, SshTabs } from "./ssh-shared";

const FiltersQuery = graphql(`
  query CertificateFilters($orgId: ID!) {
    members(orgId: $orgId) { userId email fullName }
    principals(orgId: $orgId) { id name }
    certificateAuthorities(orgId: $orgId) { id name caType }
  }
`);
const CertificatesQuery = graphql(`
  query OrgCertificates($orgId: ID!, $userId: ID, $principal: String, $status: String, $certType: String, $page: Int, $perPage: Int) {
    organizationCertificates(orgId: $orgId, userId: $userId, principal: $principal, status: $status, certType: $certType, page: $page, perPage: $perPage) {
      count page pages
      items { id userId keyId certType principals status serial validAfter validBefore revokedAt revokeReason }
    }
  }
`);
const RevokeCertificate = graphql(`
  mutation RevokeCertificate($id: ID!, $reason: String) { revokeCertificate(id: $id, reason: $reason) { id status } }
`);
const RevokeUserCertificates = graphql(`
  mutation RevokeUserCertificates($orgId: ID!, $userId: ID!, $reason: String) { revokeUserCertificates(orgId: $orgId, userId: $userId, reason: $reason) { revoked } }
`);
const SignHost = graphql(`
  mutation SignHostCertificate($input: SignHostCertificateInput!) { signHostCertificate(input: $input) { id certificate principals validBefore serial } }
`);

const PER_PAGE = 20;
type Kind = "user" | "host";
type Person = { userId: string; email: string; fullName?: string | null };

/** Admins only: members are told so, with the way back to what they may see. */
function AdminsOnly({ org }: { org: MyOrganization }) {
  return (
    <div className="page ssh-page">
      <h1>SSH certificates</h1>
      <Empty>
        <p>Only the organization's owner and admins see its certificates.</p>
        <Link to="/orgs/$slug/ssh" params={{ slug: org.slug }}>
          How to get your own certificate
        </Link>
      </Empty>
    </div>
  );
}

/** /orgs/<slug>/ssh/certificates: every certificate issued to people: filter by person, principal and status; revoke. */
export function SshCertificates() {
  const org = useOrg();
  if (!isAdmin(org)) return <AdminsOnly org={org} />;
  return <Inventory org={org} kind="user" />;
}

/** /orgs/<slug>/ssh/hosts: host certificates: sign one for a server's key, list and revoke them. */
export function SshHosts() {
  const org = useOrg();
  if (!isAdmin(org)) return <AdminsOnly org={org} />;
  return <Inventory org={org} kind="host" />;
}

function Inventory({ org, kind }: { org: MyOrganization; kind: Kind }) {
  const qc = useQueryClient();
  const [userId, setUserId] = useState("");
  const [principal, setPrincipal] = useState("");
  const [status, setStatus] = useState("");
  const [page, setPage] = useState(1);
  const [done, setDone] = useState("");
  const filters = useQuery({ queryKey: ["org", org.id, "certificate-filters"], queryFn: () => gql(FiltersQuery, { orgId: org.id }) });
  const vars = { orgId: org.id, certType: kind, userId: userId || undefined, principal: principal.trim() || undefined, status: status || undefined, page, perPage: PER_PAGE };
  const certs = useQuery({
    queryKey: ["org", org.id, "certificates", vars],
    queryFn: () => gql(CertificatesQuery, vars),
    placeholderData: keepPreviousData,
  });
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };
  const filter = (set: (v: string) => void) => (v: string) => {
    set(v);
    setPage(1);
  };

  const people = new Map<string, Person>((filters.data?.members ?? []).map((m) => [m.userId, m]));
  const chosen = userId ? people.get(userId) : undefined;
  const hostCa = filters.data?.certificateAuthorities.find((c) => c.caType === "host");
  const title = kind === "user" ? "Certificates" : "Host certificates";

  return (
    <div className="page ssh-page">
      <h1>SSH</h1>
      <SshTabs org={org} />
      {done && <Success>{done}</Success>}
      {filters.isError && <ErrorState error={filters.error} retry={() => void filters.refetch()} />}
      {kind === "host" && filters.data && (hostCa ? <SignHostForm orgId={org.id} onSigned={changed} /> : <NoHostCa org={org} />)}
      <h2>{title}</h2>

      <div className="ssh-filters" role="group" aria-label={`Filter ${title.toLowerCase()}`}>
        {kind === "user" ? (
          <>
            <SelectField label="Person" value={userId} onChange={filter(setUserId)}>
              <option value="">Everyone</option>
              {(filters.data?.members ?? []).map((m) => (
                <option key={m.userId} value={m.userId}>
                  {m.fullName ? `${m.fullName} (${m.email})` : m.email}
                </option>
              ))}
            </SelectField>
            <SelectField label="Principal" value={principal} onChange={filter(setPrincipal)}>
              <option value="">Any</option>
              {(filters.data?.principals ?? []).map((p) => (
                <option key={p.id} value={p.name}>
                  {p.name}
                </option>
              ))}
            </SelectField>
          </>
        ) : (
          <Field label="Host name" type="search" value={principal} onChange={filter(setPrincipal)} description="Exactly as signed, such as web1.example.com" />
        )}
        <SelectField label="Status" value={status} onChange={filter(setStatus)}>
          <option value="">Any</option>
          <option value="active">Valid</option>
          <option value="expired">Expired</option>
          <option value="revoked">Revoked</option>
        </SelectField>
      </div>

      {kind === "user" &&
        (chosen ? <RevokePerson orgId={org.id} person={chosen} onRevoked={changed} /> : <p className="muted">Choose a person to revoke all of their certificates at once.</p>)}

      {certs.isPending ? (
        <Loading />
      ) : certs.isError ? (
        <ErrorState error={certs.error} retry={() => void certs.refetch()} />
      ) : certs.data.organizationCertificates.count === 0 ? (
        <Empty>
          {userId || principal || status ? (
            <p>No certificate matches these filters.</p>
          ) : kind === "user" ? (
            <>
              <p>No certificate issued yet.</p>
              <p className="muted">
                Members get one with <code>keyward ssh sign</code>; see{" "}
                <Link to="/orgs/$slug/ssh" params={{ slug: org.slug }}>
                  how
                </Link>
                .
              </p>
            </>
          ) : (
            <p>No host certificate signed yet.</p>
          )}
        </Empty>
      ) : (
        <>
          <div className="table-wrap" tabIndex={0} role="region" aria-label={`${title} of ${org.name}`} aria-busy={certs.isFetching || undefined}>
            <table className="ssh-certs">
              <thead>
                <tr>
                  <th scope="col">{kind === "user" ? "Person" : "Hosts"}</th>
                  <th scope="col">{kind === "user" ? "Principals" : "Key ID"}</th>
                  <th scope="col">Status</th>
                  <th scope="col">Valid until</th>
                  <th scope="col">Serial</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {certs.data.organizationCertificates.items.map((c) => {
                  const holder = c.userId ? people.get(c.userId) : undefined;
                  const who = holder ? personName(holder) : c.keyId;
                  const label = kind === "user" ? `certificate ${c.serial} of ${who}` : `host certificate ${c.serial} for ${c.principals.join(", ")}`;
                  return (
                    <tr key={c.id}>
                      {kind === "user" ? (
                        <>
                          <td>
                            <strong>{who}</strong>
                            {holder?.fullName && <div className="muted">{holder.email}</div>}
                          </td>
                          <td>{c.principals.length ? c.principals.map((p) => <code key={p}>{p} </code>) : <span className="muted">none</span>}</td>
                        </>
                      ) : (
                        <>
                          <td>
                            {c.principals.map((p) => (
                              <code key={p}>{p} </code>
                            ))}
                          </td>
                          <td>
                            <code>{c.keyId}</code>
                          </td>
                        </>
                      )}
                      <td>
                        <CertStatus status={c.status} />
                        {c.revokeReason && <div className="muted">{c.revokeReason}</div>}
                      </td>
                      <td>
                        <Time iso={c.validBefore} mode={c.status === "active" ? "relative" : "full"} />
                      </td>
                      <td>
                        <code>{c.serial}</code>
                      </td>
                      <td>{c.status !== "revoked" && <RevokeOne cert={{ id: c.id, label }} onRevoked={changed} />}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <Pager page={certs.data.organizationCertificates.page} pages={certs.data.organizationCertificates.pages} count={certs.data.organizationCertificates.count} onPage={setPage} />
        </>
      )}
    </div>
  );
}

function Pager({ page, pages, count, onPage }: { page: number; pages: number; count: number; onPage: (p: number) => void }) {
  return (
    <nav className="ssh-pager" aria-label="Pages">
      <Button variant="secondary" size="small" isDisabled={page <= 1} onPress={() => onPage(page - 1)}>
        Previous
      </Button>
      <span>
        Page {page} of {Math.max(pages, 1)} · {count} certificate{count === 1 ? "" : "s"}
      </span>
      <Button variant="secondary" size="small" isDisabled={page >= pages} onPress={() => onPage(page + 1)}>
        Next
      </Button>
    </nav>
  );
}

function RevokeOne({ cert, onRevoked }: { cert: { id: string; label: string }; onRevoked: (message: string) => Promise<void> }) {
  const [reason, setReason] = useState("");
  return (
    <ConfirmDialog
      trigger={
        <Button variant="secondary" size="small" aria-label={`Revoke ${cert.label}`}>
          Revoke
        </Button>
      }
      title={`Revoke ${cert.label}?`}
      confirmLabel="Revoke"
      onConfirm={async () => {
        await gql(RevokeCertificate, { id: cert.id, reason: reason.trim() || undefined });
        setReason("");
        await onRevoked(`Revoked ${cert.label}.`);
      }}
    >
      <p>It goes on the organization's revocation list (KRL) at once; servers refuse it once they fetch the list.</p>
      <Field label="Reason (for the audit log)" value={reason} onChange={setReason} />
    </ConfirmDialog>
  );
}

function RevokePerson({ orgId, person, onRevoked }: { orgId: string; person: Person; onRevoked: (message: string) => Promise<void> }) {
  const [reason, setReason] = useState("");
  const name = personName(person);
  return (
    <div className="ssh-person-actions">
      <ConfirmDialog
        trigger={<Button variant="danger">Revoke every certificate of {name}</Button>}
        title={`Revoke every certificate of ${name}?`}
        confirmLabel="Revoke all"
        onConfirm={async () => {
          const r = await gql(RevokeUserCertificates, { orgId, userId: person.userId, reason: reason.trim() || undefined });
          setReason("");
          const n = r.revokeUserCertificates.revoked;
          await onRevoked(n === 0 ? `${name} had no certificate left to revoke.` : `Revoked ${n} certificate${n === 1 ? "" : "s"} of ${name}.`);
        }}
      >
        <p>
          Every certificate of {name} in this organization that is not revoked yet goes on the revocation list. They can still sign new ones while they are a member: to
          stop that, remove them from the organization.
        </p>
        <Field label="Reason (for the audit log)" value={reason} onChange={setReason} />
      </ConfirmDialog>
    </div>
  );
}

function NoHostCa({ org }: { org: MyOrganization }) {
  return (
    <Empty>
      <p>Create a host certificate authority first: it signs your servers' keys, so that people need not accept unknown host keys.</p>
      <Link to="/orgs/$slug/ssh" params={{ slug: org.slug }}>
        Certificate authorities
      </Link>
    </Empty>
  );
}

function SignHostForm({ orgId, onSigned }: { orgId: string; onSigned: (message: string) => Promise<void> }) {
  const [key, setKey] = useState("");
  const [names, setNames] = useState("");
  const [validity, setValidity] = useState("");
  const [local, setLocal] = useState<Record<string, string>>({});
  const sign = useMutation({
    mutationFn: (validityHours: number | undefined) =>
      gql(SignHost, {
        input: {
          orgId,
          hostPublicKey: key.trim(),
          principals: names
            .split(/[\s,]+/)
            .map((s) => s.trim())
            .filter(Boolean),
          validityHours,
        },
      }),
    onSuccess: async (d) => {
      setKey("");
      setNames("");
      setValidity("");
      await onSigned(`Host certificate ${d.signHostCertificate.serial} signed for ${d.signHostCertificate.principals.join(", ")}.`);
    },
  });
  const submit = useSubmit(async () => {
    const v = validity.trim() ? wholeHours(validity) : undefined;
    setLocal(typeof v === "string" ? { validityHours: v } : {});
    if (typeof v === "string") return;
    await sign.mutateAsync(v);
  });
  const fields = { ...fieldErrorsOf(sign.error), ...local };
  // The key's own problems (not an OpenSSH public key) belong at the key.
  const keyProblem = sign.error instanceof ApiError && (sign.error.code === "WRONG_KEY_MATERIAL" || sign.error.code === "SSH_KEY_ERROR") ? sign.error.message : undefined;
  const signed = sign.data?.signHostCertificate;
  return (
    <section aria-labelledby="sign-host" className="card ssh-sign">
      <h2 id="sign-host">Sign a host certificate</h2>
      <Form validationBehavior="aria" aria-labelledby="sign-host" onSubmit={submit}>
        <Field
          label="The server's public key"
          multiline
          value={key}
          onChange={setKey}
          isRequired
          error={fields.hostPublicKey ?? keyProblem}
          description="On the server: cat /etc/ssh/ssh_host_ed25519_key.pub"
          placeholder="ssh-ed25519 AAAA… root@web1"
        />
        <div className="ssh-pair">
          <Field label="Host names" value={names} onChange={setNames} isRequired error={fields.principals} description="The names people connect to, separated by spaces or commas" placeholder="web1.example.com web1" />
          <Field label="Lifetime (hours)" inputMode="numeric" value={validity} onChange={setValidity} error={fields.validityHours} description="Empty: the host CA's default" />
        </div>
        {Object.keys(fields).length === 0 && !keyProblem && <FormError error={sign.error} />}
        <div className="actions">
          <Button type="submit" isPending={sign.isPending}>
            Sign host certificate
          </Button>
        </div>
      </Form>
      {signed && (
        <CopyText
          label={`Certificate for ${signed.principals.join(", ")}`}
          value={signed.certificate}
          hint="Save it on the server beside its key (for ssh_host_ed25519_key.pub: /etc/ssh/ssh_host_ed25519_key-cert.pub), name that file in sshd's HostCertificate and reload sshd."
        />
      )}
    </section>
  );
}
