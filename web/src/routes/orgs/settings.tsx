import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql } from "../../graphql";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { useSubmit } from "../../ui/useSubmit";
import { ErrorState, FormError, Loading, Success } from "../../ui/States";
import { isAdmin, useOrg } from "./layout";

const SettingsQuery = graphql(`
  query OrgSettings($orgId: ID!) {
    organization(orgId: $orgId) { id name slug description }
    members(orgId: $orgId) { userId email fullName role }
  }
`);
const UpdateOrganization = graphql(`
  mutation UpdateOrganization($orgId: ID!, $input: UpdateOrganizationInput!) { updateOrganization(orgId: $orgId, input: $input) { id name description } }
`);
const TransferOwnership = graphql(`
  mutation TransferOwnership($orgId: ID!, $newOwnerUserId: ID!) { transferOwnership(orgId: $orgId, newOwnerUserId: $newOwnerUserId) { newOwner { userId } } }
`);
const DeleteOrganization = graphql(`
  mutation DeleteOrganization($orgId: ID!) { deleteOrganization(orgId: $orgId, confirm: true) { message } }
`);
const LeaveOrganization = graphql(`
  mutation LeaveOrganization($orgId: ID!) { leaveOrganization(orgId: $orgId) { message } }
`);

/** /orgs/<slug>/settings: name and description (admins), ownership and deletion (the owner), leaving (anyone else). */
export function OrgSettings() {
  const org = useOrg();
  const q = useQuery({ queryKey: ["org", org.id, "settings"], queryFn: () => gql(SettingsQuery, { orgId: org.id }) });
  const qc = useQueryClient();
  const navigate = useNavigate();
  const left = async () => {
    await qc.invalidateQueries();
    await navigate({ to: "/" });
  };
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  const owner = org.role === "owner";
  const others = q.data.members.filter((m) => m.role !== "owner");
  return (
    <div className="page narrow">
      <h1>Settings</h1>
      {isAdmin(org) ? <Details orgId={org.id} initial={q.data.organization} /> : <p>Only the organization's owner and admins change its settings.</p>}
      <p className="muted">
        Address: <code>{q.data.organization.slug}</code> (set when the organization was created).
      </p>
      {owner && <Transfer orgId={org.id} candidates={others} />}
      <section aria-labelledby="danger" className="danger-zone">
        <h2 id="danger">{owner ? "Delete the organization" : "Leave the organization"}</h2>
        {owner ? (
          <ConfirmDialog
            trigger={<Button variant="danger">Delete {org.name}</Button>}
            title={`Delete ${org.name}?`}
            confirmLabel="Delete organization"
            typeToConfirm={org.name}
            onConfirm={async () => {
              await gql(DeleteOrganization, { orgId: org.id });
              await left();
            }}
          >
            <p>Every membership, invitation, certificate authority and network of {org.name} ends. This cannot be undone.</p>
          </ConfirmDialog>
        ) : (
          <ConfirmDialog
            trigger={<Button variant="danger">Leave {org.name}</Button>}
            title={`Leave ${org.name}?`}
            confirmLabel="Leave"
            onConfirm={async () => {
              await gql(LeaveOrganization, { orgId: org.id });
              await left();
            }}
          >
            <p>You lose access to {org.name}; an admin must invite you again to return.</p>
          </ConfirmDialog>
        )}
      </section>
    </div>
  );
}

function Details({ orgId, initial }: { orgId: string; initial: { name: string; description?: string | null } }) {
  const [name, setName] = useState(initial.name);
  const [description, setDescription] = useState(initial.description ?? "");
  const qc = useQueryClient();
  const save = useMutation({
    mutationFn: () => gql(UpdateOrganization, { orgId, input: { name, description } }),
    onSuccess: () => Promise.all([qc.invalidateQueries({ queryKey: ["shell"] }), qc.invalidateQueries({ queryKey: ["org", orgId] })]),
  });
  const submit = useSubmit(() => save.mutateAsync());
  const fields = save.error instanceof ApiError ? save.error.fieldErrors : {};
  return (
    <Form
      validationBehavior="aria"
      aria-label="Organization details"
      onSubmit={submit}
    >
      <Field label="Name" name="name" value={name} onChange={setName} isRequired error={fields.name} />
      <Field label="Description" name="description" value={description} onChange={setDescription} multiline error={fields.description} />
      {save.isSuccess && <Success>Saved.</Success>}
      {Object.keys(fields).length === 0 && <FormError error={save.error} />}
      <div className="actions">
        <Button type="submit" isPending={save.isPending}>
          Save
        </Button>
      </div>
    </Form>
  );
}

function Transfer({ orgId, candidates }: { orgId: string; candidates: Array<{ userId: string; email: string; fullName?: string | null }> }) {
  const [to, setTo] = useState("");
  const qc = useQueryClient();
  const chosen = candidates.find((c) => c.userId === to);
  return (
    <section aria-labelledby="transfer">
      <h2 id="transfer">Transfer ownership</h2>
      {candidates.length === 0 ? (
        <p className="muted">Invite someone first: ownership goes to another member.</p>
      ) : (
        <>
          <label className="field">
            <span className="label">New owner</span>
            <select value={to} onChange={(e) => setTo(e.target.value)}>
              <option value="">Choose a member…</option>
              {candidates.map((c) => (
                <option key={c.userId} value={c.userId}>
                  {c.fullName ? `${c.fullName} (${c.email})` : c.email}
                </option>
              ))}
            </select>
          </label>
          <ConfirmDialog
            trigger={
              <Button variant="secondary" isDisabled={!chosen}>
                Transfer ownership
              </Button>
            }
            title={`Make ${chosen?.fullName || chosen?.email} the owner?`}
            confirmLabel="Transfer"
            onConfirm={async () => {
              await gql(TransferOwnership, { orgId, newOwnerUserId: to });
              await qc.invalidateQueries();
            }}
          >
            <p>You become an admin. Only the new owner can transfer ownership back or delete the organization.</p>
          </ConfirmDialog>
        </>
      )}
    </section>
  );
}
