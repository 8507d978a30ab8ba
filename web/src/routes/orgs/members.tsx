import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { useSubmit } from "../../ui/useSubmit";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useShell } from "../../shell";
import { isAdmin, useOrg } from "./layout";

const MembersQuery = graphql(`
  query OrgMembers($orgId: ID!) {
    members(orgId: $orgId) { userId email fullName role status joinedAt }
    orgMfaCompliance(orgId: $orgId) { userId status deadlineAt }
  }
`);
const InvitesQuery = graphql(`
  query OrgInvites($orgId: ID!) {
    invites(orgId: $orgId) { id email role expiresAt expired createdAt }
  }
`);
const SendInvite = graphql(`
  mutation SendInvite($orgId: ID!, $input: InviteInput!) { sendInvite(orgId: $orgId, input: $input) { id email role } }
`);
const CancelInvite = graphql(`
  mutation CancelInvite($orgId: ID!, $inviteId: ID!) { cancelInvite(orgId: $orgId, inviteId: $inviteId) { message } }
`);
const ChangeRole = graphql(`
  mutation ChangeMemberRole($orgId: ID!, $userId: ID!, $role: OrgRole!) { changeMemberRole(orgId: $orgId, userId: $userId, role: $role) { userId role } }
`);
const RemoveMember = graphql(`
  mutation RemoveMember($orgId: ID!, $userId: ID!) { removeMember(orgId: $orgId, userId: $userId) { message } }
`);

const ROLES = ["guest", "member", "admin"] as const;
type Role = (typeof ROLES)[number];
const MFA_WORDS: Record<string, [string, "good" | "warn" | "bad" | "neutral"]> = {
  compliant: ["Two-step on", "good"],
  in_grace: ["Two-step due", "warn"],
  past_due: ["Past the deadline", "bad"],
  not_applicable: ["Not required", "neutral"],
};

/** /orgs/<slug>/members: members (role, two-step standing), invitations; admins invite, change roles and remove. */
export function Members() {
  const org = useOrg();
  const admin = isAdmin(org);
  const me = useShell().data?.me;
  const qc = useQueryClient();
  const members = useQuery({ queryKey: ["org", org.id, "members"], queryFn: () => gql(MembersQuery, { orgId: org.id }) });
  const invites = useQuery({ queryKey: ["org", org.id, "invites"], queryFn: () => gql(InvitesQuery, { orgId: org.id }), enabled: admin });
  const [done, setDone] = useState("");
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };
  const changeRole = useMutation({
    mutationFn: (v: { userId: string; role: Role }) => gql(ChangeRole, { orgId: org.id, ...v }),
    onSuccess: (d) => changed(`Role changed to ${d.changeMemberRole.role}.`),
  });

  if (members.isPending) return <Loading />;
  if (members.isError) return <ErrorState error={members.error} retry={() => void members.refetch()} />;
  const standing = new Map(members.data.orgMfaCompliance.map((c) => [c.userId, c]));
  return (
    <div className="page">
      <h1>Members</h1>
      {done && <Success>{done}</Success>}
      {admin && <InviteForm orgId={org.id} onSent={(email) => changed(`Invitation sent to ${email}.`)} />}
      <FormError error={changeRole.error} />
      <div className="table-wrap" tabIndex={0} role="region" aria-label={`Members of ${org.name}`}>
        <table>
          <thead>
            <tr>
              <th scope="col">Person</th>
              <th scope="col">Role</th>
              <th scope="col">Two-step</th>
              <th scope="col">Joined</th>
              {admin && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {members.data.members.map((m) => {
              const mfa = MFA_WORDS[standing.get(m.userId)?.status ?? "not_applicable"] ?? MFA_WORDS.not_applicable!;
              const self = m.userId === me?.id;
              return (
                <tr key={m.userId}>
                  <td>
                    <strong>{m.fullName || m.email}</strong>
                    {m.fullName && <div className="muted">{m.email}</div>}
                  </td>
                  <td>
                    {admin && m.role !== "owner" && !self ? (
                      <select
                        aria-label={`Role of ${m.fullName || m.email}`}
                        value={m.role}
                        disabled={changeRole.isPending}
                        onChange={(e) => changeRole.mutate({ userId: m.userId, role: e.target.value as Role })}
                      >
                        {ROLES.map((r) => (
                          <option key={r} value={r}>
                            {r}
                          </option>
                        ))}
                      </select>
                    ) : (
                      <Badge tone={m.role === "owner" ? "accent" : "neutral"}>{m.role}</Badge>
                    )}
                  </td>
                  <td>
                    <Badge tone={mfa[1]}>{mfa[0]}</Badge>
                  </td>
                  <td>
                    <Time iso={m.joinedAt} />
                  </td>
                  {admin && (
                    <td>
                      {m.role !== "owner" && !self && (
                        <ConfirmDialog
                          trigger={
                            <Button variant="secondary" size="small">
                              Remove
                            </Button>
                          }
                          title={`Remove ${m.fullName || m.email}?`}
                          confirmLabel="Remove"
                          onConfirm={async () => {
                            await gql(RemoveMember, { orgId: org.id, userId: m.userId });
                            await changed(`${m.fullName || m.email} was removed.`);
                          }}
                        >
                          <p>
                            {m.fullName || m.email} loses access to {org.name} at once: their certificates of the organization are revoked and its networks drop their devices.
                          </p>
                        </ConfirmDialog>
                      )}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {admin && (
        <section aria-labelledby="invitations">
          <h2 id="invitations">Invitations</h2>
          {invites.isPending ? (
            <Loading />
          ) : invites.isError ? (
            <ErrorState error={invites.error} retry={() => void invites.refetch()} />
          ) : invites.data.invites.length === 0 ? (
            <Empty>
              <p>No invitations waiting.</p>
            </Empty>
          ) : (
            <ul className="rows" aria-label="Invitations waiting">
              {invites.data.invites.map((i) => (
                <li key={i.id}>
                  <span>
                    <strong>{i.email}</strong> as <Badge>{i.role}</Badge> {i.expired ? <Badge tone="bad">expired</Badge> : <span className="muted">expires <Time iso={i.expiresAt} /></span>}
                  </span>
                  <ConfirmDialog
                    trigger={
                      <Button variant="secondary" size="small">
                        Cancel invitation
                      </Button>
                    }
                    title={`Cancel the invitation to ${i.email}?`}
                    confirmLabel="Cancel invitation"
                    onConfirm={async () => {
                      await gql(CancelInvite, { orgId: org.id, inviteId: i.id });
                      await changed(`The invitation to ${i.email} was cancelled.`);
                    }}
                  >
                    <p>The link in the email stops working.</p>
                  </ConfirmDialog>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </div>
  );
}

function InviteForm({ orgId, onSent }: { orgId: string; onSent: (email: string) => void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const send = useMutation({
    mutationFn: () => gql(SendInvite, { orgId, input: { email, role } }),
    onSuccess: (d) => {
      setEmail("");
      onSent(d.sendInvite.email);
    },
  });
  const submit = useSubmit(() => send.mutateAsync());
  const fields = send.error instanceof ApiError ? send.error.fieldErrors : {};
  return (
    <Form
      validationBehavior="aria"
      className="inline-form"
      aria-label="Invite someone"
      onSubmit={submit}
    >
      <Field label="Invite by email" type="email" name="email" value={email} onChange={setEmail} isRequired error={fields.email} />
      <label className="field">
        <span className="label">Role</span>
        <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <Button type="submit" isPending={send.isPending}>
        Send invitation
      </Button>
      {!fields.email && <FormError error={send.error} />}
    </Form>
  );
}
