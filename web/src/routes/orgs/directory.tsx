import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { Form } from "react-aria-components";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { useSubmit } from "../../ui/useSubmit";
import { fieldErrorsOf, useCarriedMessage } from "./directory-shared";
import { isAdmin, useOrg } from "./layout";

const DirectoryQuery = graphql(`
  query OrgDirectory($orgId: ID!) {
    departments(orgId: $orgId) { id name description canSudo }
    principals(orgId: $orgId) { id name description }
  }
`);
const CreateDepartment = graphql(`
  mutation CreateDepartment($orgId: ID!, $input: DepartmentInput!) { createDepartment(orgId: $orgId, input: $input) { id name } }
`);
const CreatePrincipal = graphql(`
  mutation CreatePrincipal($orgId: ID!, $input: PrincipalInput!) { createPrincipal(orgId: $orgId, input: $input) { id name } }
`);

/** Lists longer than this get a filter box. */
const FILTER_FROM = 8;

const matches = (q: string, ...texts: Array<string | null | undefined>) => {
  const needle = q.trim().toLowerCase();
  return !needle || texts.some((t) => t?.toLowerCase().includes(needle));
};

/**
 * /orgs/<slug>/departments: the organization's directory. Departments group people (and set the
 * certificate policy they sign under); principals are the account names a certificate logs in as.
 * Everyone reads; admins create here and change each one on its own screen.
 */
export function Directory() {
  const org = useOrg();
  const admin = isAdmin(org);
  const q = useQuery({ queryKey: ["org", org.id, "directory"], queryFn: () => gql(DirectoryQuery, { orgId: org.id }) });
  const carried = useCarriedMessage();
  const [done, setDone] = useState(carried);
  const [deptFilter, setDeptFilter] = useState("");
  const [principalFilter, setPrincipalFilter] = useState("");

  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  const departments = q.data.departments.filter((d) => matches(deptFilter, d.name, d.description));
  const principals = q.data.principals.filter((p) => matches(principalFilter, p.name, p.description));
  return (
    <div className="page dir-page">
      <h1>Directory</h1>
      <p className="lead">
        Principals are the account names a certificate may log in as on your servers. People hold a principal directly or through a department; a department also sets the
        certificate policy its members sign under.
      </p>
      {done && <Success>{done}</Success>}

      <section aria-labelledby="departments">
        <h2 id="departments">Departments</h2>
        {admin && <NewDepartment orgId={org.id} onCreated={setDone} />}
        {q.data.departments.length > FILTER_FROM && <Field label="Filter departments" type="search" value={deptFilter} onChange={setDeptFilter} />}
        {q.data.departments.length === 0 ? (
          <Empty>
            <p>No departments yet.</p>
            <p className="muted">{admin ? "Create one above, then add people and link the principals it grants." : "An admin of the organization creates them."}</p>
          </Empty>
        ) : departments.length === 0 ? (
          <p className="muted">No department matches “{deptFilter}”.</p>
        ) : (
          <ul className="dir-list" aria-label="Departments">
            {departments.map((d) => (
              <li key={d.id}>
                <Link to="/orgs/$slug/departments/$departmentId" params={{ slug: org.slug, departmentId: d.id }}>
                  {d.name}
                </Link>{" "}
                {d.canSudo && <Badge tone="warn">sudo</Badge>}
                {d.description && <p className="muted">{d.description}</p>}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="principals">
        <h2 id="principals">Principals</h2>
        {admin && <NewPrincipal orgId={org.id} onCreated={setDone} />}
        {q.data.principals.length > FILTER_FROM && <Field label="Filter principals" type="search" value={principalFilter} onChange={setPrincipalFilter} />}
        {q.data.principals.length === 0 ? (
          <Empty>
            <p>No principals yet.</p>
            <p className="muted">{admin ? "Create one for each account people log in as on your servers (deploy, ubuntu, root)." : "An admin of the organization creates them."}</p>
          </Empty>
        ) : principals.length === 0 ? (
          <p className="muted">No principal matches “{principalFilter}”.</p>
        ) : (
          <ul className="dir-list" aria-label="Principals">
            {principals.map((p) => (
              <li key={p.id}>
                <Link to="/orgs/$slug/departments/principals/$principalId" params={{ slug: org.slug, principalId: p.id }}>
                  <code>{p.name}</code>
                </Link>
                {p.description && <p className="muted">{p.description}</p>}
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

function NewDepartment({ orgId, onCreated }: { orgId: string; onCreated: (message: string) => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [canSudo, setCanSudo] = useState(false);
  const qc = useQueryClient();
  const create = useMutation({
    mutationFn: () => gql(CreateDepartment, { orgId, input: { name, description: description.trim() || undefined, canSudo } }),
    onSuccess: async (d) => {
      setName("");
      setDescription("");
      setCanSudo(false);
      onCreated(`Department ${d.createDepartment.name} created.`);
      await qc.invalidateQueries({ queryKey: ["org", orgId] });
    },
  });
  const submit = useSubmit(() => create.mutateAsync());
  const fields = fieldErrorsOf(create.error);
  return (
    <Form validationBehavior="aria" className="inline-form" aria-label="New department" onSubmit={submit}>
      <Field label="New department" name="name" value={name} onChange={setName} isRequired error={fields.name} placeholder="Engineering" />
      <Field label="Description" name="description" value={description} onChange={setDescription} error={fields.description} />
      <label className="dir-check">
        <input type="checkbox" checked={canSudo} onChange={(e) => setCanSudo(e.target.checked)} />
        Its members may use sudo
      </label>
      <Button type="submit" isPending={create.isPending}>
        Create department
      </Button>
      {!fields.name && !fields.description && <FormError error={create.error} />}
    </Form>
  );
}

function NewPrincipal({ orgId, onCreated }: { orgId: string; onCreated: (message: string) => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const qc = useQueryClient();
  const create = useMutation({
    mutationFn: () => gql(CreatePrincipal, { orgId, input: { name, description: description.trim() || undefined } }),
    onSuccess: async (d) => {
      setName("");
      setDescription("");
      onCreated(`Principal ${d.createPrincipal.name} created.`);
      await qc.invalidateQueries({ queryKey: ["org", orgId] });
    },
  });
  const submit = useSubmit(() => create.mutateAsync());
  const fields = fieldErrorsOf(create.error);
  return (
    <Form validationBehavior="aria" className="inline-form" aria-label="New principal" onSubmit={submit}>
      <Field
        label="New principal"
        name="name"
        value={name}
        onChange={setName}
        isRequired
        error={fields.name}
        placeholder="deploy"
        description="The account name on your servers: letters, digits, . _ @ -"
      />
      <Field label="Description" name="description" value={description} onChange={setDescription} error={fields.description} />
      <Button type="submit" isPending={create.isPending}>
        Create principal
      </Button>
      {!fields.name && !fields.description && <FormError error={create.error} />}
    </Form>
  );
}
