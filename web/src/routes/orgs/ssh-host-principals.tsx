import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql } from "../../graphql";
import { Button } from "../../ui/Button";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, FormError, Loading } from "../../ui/States";
import { useSubmit } from "../../ui/useSubmit";

const PrincipalsQuery = graphql(`
  query SshHostPrincipals($orgId: ID!) { sshHostPrincipals(orgId: $orgId) { id hostPattern login principals } }
`);
const SetPrincipals = graphql(`
  mutation SetSshHostPrincipals($orgId: ID!, $input: SshHostPrincipalsInput!) { setSshHostPrincipals(orgId: $orgId, input: $input) { id hostPattern login principals } }
`);
const RemovePrincipals = graphql(`
  mutation RemoveSshHostPrincipals($orgId: ID!, $mapId: ID!) { removeSshHostPrincipals(orgId: $orgId, mapId: $mapId) { id } }
`);

/** The API's field messages; a principal's own message (principals.0) shows under the principals field. */
function fieldErrors(e: unknown): Record<string, string> {
  if (!(e instanceof ApiError)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(e.fieldErrors)) out[k.startsWith("principals") ? "principals" : k] ??= v;
  return out;
}

/**
 * Per-host principals on the Enrolled servers page: which certificate principals may log in as which
 * account on the servers a pattern matches (their AuthorizedPrincipalsFile, written at the next
 * `keyward host renew`). One query for the list; set replaces a (pattern, login) whole.
 */
export function HostPrincipals({ orgId, orgName, onDone, canSet = true }: { orgId: string; orgName: string; onDone: (message: string) => Promise<unknown>; canSet?: boolean }) {
  const list = useQuery({ queryKey: ["org", orgId, "ssh-host-principals"], queryFn: () => gql(PrincipalsQuery, { orgId }) });
  const [hostPattern, setHostPattern] = useState("");
  const [login, setLogin] = useState("");
  const [principals, setPrincipals] = useState("");
  const save = useMutation({
    mutationFn: () => gql(SetPrincipals, { orgId, input: { hostPattern: hostPattern.trim(), login: login.trim(), principals: principals.split(",").map((p) => p.trim()).filter(Boolean) } }),
    onSuccess: async (d) => {
      const m = d.setSshHostPrincipals;
      setHostPattern("");
      setLogin("");
      setPrincipals("");
      await list.refetch();
      await onDone(`On ${m.hostPattern}, ${m.login} now takes certificates with ${m.principals.join(", ")} (from each server's next renewal).`);
    },
  });
  const remove = useMutation({
    mutationFn: (m: { id: string; hostPattern: string; login: string }) => gql(RemovePrincipals, { orgId, mapId: m.id }).then(() => m),
    onSuccess: async (m) => {
      await list.refetch();
      await onDone(`Removed the principals of ${m.login} on ${m.hostPattern}.`);
    },
  });
  const submit = useSubmit(() => save.mutateAsync());
  const errors = fieldErrors(save.error);
  return (
    <section aria-labelledby="host-principals">
      <h2 id="host-principals">Principals per server</h2>
      <p className="muted">
        Once a server's name matches a pattern here, a certificate logs in as an account there only if it carries one of the account's principals; an account with none
        listed takes no certificate. Servers pick changes up at their next <code>keyward host renew</code>.
      </p>
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorState error={list.error} retry={() => void list.refetch()} />
      ) : list.data.sshHostPrincipals.length === 0 ? (
        <Empty>
          <p>No mapping: servers leave principals to sshd's default (the certificate names the account).</p>
        </Empty>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={`Principals per server of ${orgName}`}>
          <table className="ssh-certs">
            <thead>
              <tr>
                <th scope="col">Servers</th>
                <th scope="col">Account</th>
                <th scope="col">Principals</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.sshHostPrincipals.map((m) => (
                <tr key={m.id}>
                  <td>
                    <code>{m.hostPattern}</code>
                  </td>
                  <td>
                    <code>{m.login}</code>
                  </td>
                  <td>{m.principals.join(", ")}</td>
                  <td>
                    <Button variant="secondary" size="small" aria-label={`Remove ${m.login} on ${m.hostPattern}`} isPending={remove.isPending && remove.variables?.id === m.id} onPress={() => remove.mutate(m)}>
                      Remove
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {/* Who logs in as whom, for good: not on a role held through a role grant (removing stays). */}
      {canSet && (
        <Form className="admin-form" aria-label="Set principals for servers" validationBehavior="aria" onSubmit={submit}>
          <h3>Set principals</h3>
          <div className="field-pair">
            <Field label="Servers" value={hostPattern} onChange={setHostPattern} isRequired error={errors.hostPattern} description="A name, or a pattern such as web*.example.com." />
            <Field label="Account" value={login} onChange={setLogin} isRequired error={errors.login} description="The local account, for example root or deploy." />
          </div>
          <Field label="Principals" value={principals} onChange={setPrincipals} isRequired error={errors.principals} description="Comma-separated, for example ops, oncall." />
          {Object.keys(errors).length === 0 && <FormError error={save.error ?? remove.error} />}
          <div className="actions">
            <Button type="submit" isPending={save.isPending}>
              Save principals
            </Button>
          </div>
        </Form>
      )}
    </section>
  );
}
