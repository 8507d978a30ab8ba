import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate, useParams } from "@tanstack/react-router";
import { useState } from "react";
import { Form } from "react-aria-components";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { useSubmit } from "../../ui/useSubmit";
import { LinkForm } from "./directory-department";
import { carryToDirectory, fieldErrorsOf, GroupPeople, personName } from "./directory-shared";
import { ElevatedNotice } from "./elevated";
import { canHold, isAdmin, useOrg } from "./layout";

const PrincipalQuery = graphql(`
  query PrincipalDetail($orgId: ID!, $principalId: ID!, $admin: Boolean!) {
    principal(orgId: $orgId, principalId: $principalId) { id name description }
    principalMembers(orgId: $orgId, principalId: $principalId) { userId email fullName addedAt }
    principalDepartments(orgId: $orgId, principalId: $principalId) { id name canSudo }
    departments(orgId: $orgId) @include(if: $admin) { id name }
    members(orgId: $orgId) @include(if: $admin) { userId email fullName }
  }
`);
const UpdatePrincipal = graphql(`
  mutation UpdatePrincipal($orgId: ID!, $principalId: ID!, $input: UpdatePrincipalInput!) {
    updatePrincipal(orgId: $orgId, principalId: $principalId, input: $input) { id name description }
  }
`);
const DeletePrincipal = graphql(`
  mutation DeletePrincipal($orgId: ID!, $principalId: ID!) { deletePrincipal(orgId: $orgId, principalId: $principalId) { message } }
`);
const AddPrincipalMember = graphql(`
  mutation AddPrincipalMember($orgId: ID!, $principalId: ID!, $email: String!) { addPrincipalMember(orgId: $orgId, principalId: $principalId, email: $email) { userId } }
`);
const RemovePrincipalMember = graphql(`
  mutation RemovePrincipalMember($orgId: ID!, $principalId: ID!, $userId: ID!) { removePrincipalMember(orgId: $orgId, principalId: $principalId, userId: $userId) { message } }
`);
const LinkDepartment = graphql(`
  mutation LinkDepartmentToPrincipal($orgId: ID!, $principalId: ID!, $departmentId: ID!) {
    linkPrincipalDepartment(orgId: $orgId, principalId: $principalId, departmentId: $departmentId) { message }
  }
`);
const UnlinkDepartment = graphql(`
  mutation UnlinkDepartmentFromPrincipal($orgId: ID!, $principalId: ID!, $departmentId: ID!) {
    unlinkPrincipalDepartment(orgId: $orgId, principalId: $principalId, departmentId: $departmentId) { message }
  }
`);

/** /orgs/<slug>/departments/principals/<id>: one principal, who holds it directly and the departments that grant it. */
export function PrincipalDetail() {
  const org = useOrg();
  const admin = isAdmin(org);
  const { principalId } = useParams({ from: "/orgs/$slug/departments/principals/$principalId" });
  const qc = useQueryClient();
  const navigate = useNavigate();
  const q = useQuery({
    queryKey: ["org", org.id, "principal", principalId, admin],
    queryFn: () => gql(PrincipalQuery, { orgId: org.id, principalId, admin }),
  });
  const [done, setDone] = useState("");
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };
  const back = (
    <p>
      <Link to="/orgs/$slug/departments" params={{ slug: org.slug }}>
        ← Directory
      </Link>
    </p>
  );
  if (q.isPending) return <Loading />;
  if (q.isError)
    return (
      <div className="page dir-page">
        {back}
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      </div>
    );
  const { principal: p, principalMembers, principalDepartments, departments, members } = q.data;
  const linked = new Set(principalDepartments.map((d) => d.id));
  const linkable = (departments ?? []).filter((d) => !linked.has(d.id));
  return (
    <div className="page dir-page">
      {back}
      <h1>
        Principal <code>{p.name}</code>
      </h1>
      {p.description && <p className="lead">{p.description}</p>}
      <p className="muted">
        A certificate naming <code>{p.name}</code> logs in as the account <code>{p.name}</code> on servers that trust the organization.
      </p>
      {done && <Success>{done}</Success>}

      <ElevatedNotice org={org}>Giving the principal to people and departments is not shown.</ElevatedNotice>
      {admin && <PrincipalDetails key={`${p.name}|${p.description}`} orgId={org.id} principal={p} onSaved={changed} />}

      <GroupPeople
        title="People who hold it directly"
        groupName={p.name}
        people={principalMembers}
        candidates={admin ? (members ?? []) : undefined}
        // A lasting holding: giving it needs a lasting admin role (not a role grant).
        canAdd={canHold(org)}
        empty="Nobody holds it directly."
        removal={(m) => `New certificates of ${personName(m)} no longer name ${p.name}, unless a department of theirs grants it. Certificates already issued keep it until they expire or are revoked.`}
        onAdd={async (m) => {
          await gql(AddPrincipalMember, { orgId: org.id, principalId: p.id, email: m.email });
          await changed(`${personName(m)} now holds ${p.name}.`);
        }}
        onRemove={async (m) => {
          await gql(RemovePrincipalMember, { orgId: org.id, principalId: p.id, userId: m.userId });
          await changed(`${personName(m)} no longer holds ${p.name} directly.`);
        }}
      />

      <section aria-labelledby="granted-by">
        <h2 id="granted-by">Departments that grant it</h2>
        {admin && canHold(org) && (
          <LinkForm
            label="Grant through a department"
            formLabel={`Grant ${p.name} through a department`}
            placeholder={linkable.length === 0 ? "Every department grants it" : "Choose a department…"}
            options={linkable}
            onLink={async (d) => {
              await gql(LinkDepartment, { orgId: org.id, principalId: p.id, departmentId: d.id });
              await changed(`${d.name} now grants ${p.name}.`);
            }}
          />
        )}
        {principalDepartments.length === 0 ? (
          <Empty>
            <p>No department grants it.</p>
          </Empty>
        ) : (
          <ul className="rows" aria-label={`Departments that grant ${p.name}`}>
            {principalDepartments.map((d) => (
              <li key={d.id}>
                <span>
                  <Link to="/orgs/$slug/departments/$departmentId" params={{ slug: org.slug, departmentId: d.id }}>
                    {d.name}
                  </Link>{" "}
                  {d.canSudo && <Badge tone="warn">sudo</Badge>}
                </span>
                {admin && (
                  <ConfirmDialog
                    trigger={
                      <Button variant="secondary" size="small" aria-label={`Unlink ${d.name}`}>
                        Unlink
                      </Button>
                    }
                    title={`Stop granting ${p.name} through ${d.name}?`}
                    confirmLabel="Unlink"
                    onConfirm={async () => {
                      await gql(UnlinkDepartment, { orgId: org.id, principalId: p.id, departmentId: d.id });
                      await changed(`${d.name} no longer grants ${p.name}.`);
                    }}
                  >
                    <p>
                      New certificates of the people of {d.name} no longer name <code>{p.name}</code>, unless they hold it otherwise.
                    </p>
                  </ConfirmDialog>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      {admin && (
        <section aria-labelledby="delete-principal" className="danger-zone">
          <h2 id="delete-principal">Delete the principal</h2>
          <ConfirmDialog
            trigger={<Button variant="danger">Delete {p.name}</Button>}
            title={`Delete the principal ${p.name}?`}
            confirmLabel="Delete principal"
            onConfirm={async () => {
              await gql(DeletePrincipal, { orgId: org.id, principalId: p.id });
              carryToDirectory(`Principal ${p.name} deleted.`);
              await navigate({ to: "/orgs/$slug/departments", params: { slug: org.slug } });
              await qc.invalidateQueries({ queryKey: ["org", org.id] });
            }}
          >
            <p>
              New certificates no longer name <code>{p.name}</code>: {principalMembers.length} {principalMembers.length === 1 ? "person" : "people"} and{" "}
              {principalDepartments.length} department{principalDepartments.length === 1 ? "" : "s"} lose it. Certificates already issued keep it until they expire or are
              revoked.
            </p>
          </ConfirmDialog>
        </section>
      )}
    </div>
  );
}

function PrincipalDetails({ orgId, principal, onSaved }: { orgId: string; principal: { id: string; name: string; description?: string | null }; onSaved: (message: string) => Promise<void> }) {
  const [name, setName] = useState(principal.name);
  const [description, setDescription] = useState(principal.description ?? "");
  const save = useMutation({
    mutationFn: () => gql(UpdatePrincipal, { orgId, principalId: principal.id, input: { name, description } }),
    onSuccess: (d) => onSaved(`Principal ${d.updatePrincipal.name} saved.`),
  });
  const submit = useSubmit(() => save.mutateAsync());
  const fields = fieldErrorsOf(save.error);
  return (
    <details className="dir-edit">
      <summary>Rename or describe</summary>
      <Form validationBehavior="aria" aria-label="Principal details" onSubmit={submit}>
        <Field label="Name" name="name" value={name} onChange={setName} isRequired error={fields.name} description="Renaming changes what new certificates name; servers' accounts must match." />
        <Field label="Description" name="description" value={description} onChange={setDescription} multiline error={fields.description} />
        {!fields.name && !fields.description && <FormError error={save.error} />}
        <div className="actions">
          <Button type="submit" isPending={save.isPending}>
            Save
          </Button>
        </div>
      </Form>
    </details>
  );
}
