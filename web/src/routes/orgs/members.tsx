import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Checkbox, Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { useSubmit } from "../../ui/useSubmit";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useShell } from "../../shell";
import { ElevatedNotice } from "./elevated";
import { canHold, isAdmin, useOrg } from "./layout";
import { loadReceipt, OffboardAction, type OffboardingReceipt, ReceiptPanel } from "./offboard";

const MembersQuery = graphql(`
  query OrgMembers($orgId: ID!) {
    members(orgId: $orgId) { userId email fullName role status joinedAt lastLoginAt managed }
  }
`);
/** Two-step standing is the admins' to see (the API refuses it to others). */
const ComplianceQuery = graphql(`
  query OrgMembersCompliance($orgId: ID!) {
    orgMfaCompliance(orgId: $orgId) { userId status deadlineAt }
  }
`);
const InvitesQuery = graphql(`
  query OrgInvites($orgId: ID!) {
    invites(orgId: $orgId) { id email role expiresAt expired createdAt }
  }
`);
const AddMember = graphql(`
  mutation AddMember($orgId: ID!, $input: AddMemberInput!) { addMember(orgId: $orgId, input: $input) { id email role } }
`);
const SuspendUser = graphql(`
  mutation SuspendUser($userId: ID!) { suspendUser(userId: $userId) { id status } }
`);
const UnsuspendUser = graphql(`
  mutation UnsuspendUser($userId: ID!) { unsuspendUser(userId: $userId) { id status } }
`);
const SetUserPassword = graphql(`
  mutation SetUserPassword($userId: ID!, $password: String!) { setUserPassword(userId: $userId, password: $password) { message } }
`);
const RemoveUserMfa = graphql(`
  mutation RemoveUserMfa($userId: ID!, $method: String!) { removeUserMfa(userId: $userId, method: $method) { message } }
`);
const SendInvite = graphql(`
  mutation SendInvite($orgId: ID!, $input: InviteInput!) { sendInvite(orgId: $orgId, input: $input) { id email role } }
`);
const ResendInvite = graphql(`
  mutation ResendInvite($orgId: ID!, $inviteId: ID!) { resendInvite(orgId: $orgId, inviteId: $inviteId) { id email expiresAt } }
`);
const CancelInvite = graphql(`
  mutation CancelInvite($orgId: ID!, $inviteId: ID!) { cancelInvite(orgId: $orgId, inviteId: $inviteId) { message } }
`);
const ChangeRole = graphql(`
  mutation ChangeMemberRole($orgId: ID!, $userId: ID!, $role: OrgRole!) { changeMemberRole(orgId: $orgId, userId: $userId, role: $role) { userId role } }
`);
const RemoveMember = graphql(`
  mutation RemoveMember($orgId: ID!, $userId: ID!) { removeMember(orgId: $orgId, userId: $userId) { message receiptId } }
`);

const ROLES = ["guest", "member", "admin"] as const;
/** A list longer than this gets a search box. */
const SEARCH_FROM = 8;
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
  // Roles, invitations, removals, managed accounts and two-step standing (members.manage) need a lasting admin role (not a role grant).
  const lasting = admin && canHold(org);
  const me = useShell().data?.me;
  const qc = useQueryClient();
  const members = useQuery({ queryKey: ["org", org.id, "members"], queryFn: () => gql(MembersQuery, { orgId: org.id }) });
  const invites = useQuery({ queryKey: ["org", org.id, "invites"], queryFn: () => gql(InvitesQuery, { orgId: org.id }), enabled: lasting });
  const compliance = useQuery({ queryKey: ["org", org.id, "compliance"], queryFn: () => gql(ComplianceQuery, { orgId: org.id }), enabled: lasting });
  const [done, setDone] = useState("");
  const [search, setSearch] = useState("");
  const [receipt, setReceipt] = useState<{ name: string; receipt: OffboardingReceipt } | null>(null);
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };
  const changeRole = useMutation({
    mutationFn: (v: { userId: string; role: Role }) => gql(ChangeRole, { orgId: org.id, ...v }),
    onSuccess: (d) => changed(`Role changed to ${d.changeMemberRole.role}.`),
  });

  const resend = useMutation({
    mutationFn: (inviteId: string) => gql(ResendInvite, { orgId: org.id, inviteId }),
    onSuccess: (d) => changed(`A new link was sent to ${d.resendInvite.email}; the old one no longer works.`),
  });

  if (members.isPending) return <Loading />;
  if (members.isError) return <ErrorState error={members.error} retry={() => void members.refetch()} />;
  const standing = new Map((compliance.data?.orgMfaCompliance ?? []).map((c) => [c.userId, c]));
  const needle = search.trim().toLowerCase();
  const shown = needle ? members.data.members.filter((m) => m.email.toLowerCase().includes(needle) || (m.fullName ?? "").toLowerCase().includes(needle)) : members.data.members;
  return (
    <div className="page">
      <h1>Members</h1>
      <ElevatedNotice org={org}>Inviting people, changing roles and removing members are not shown.</ElevatedNotice>
      {done && <Success>{done}</Success>}
      {receipt && <ReceiptPanel name={receipt.name} receipt={receipt.receipt} onClose={() => setReceipt(null)} />}
      {lasting && <InviteForm orgId={org.id} onSent={(email, managed) => changed(managed ? `${email} was added: an email asks them to activate their account.` : `Invitation sent to ${email}.`)} />}
      <FormError error={changeRole.error ?? resend.error} />
      {members.data.members.length > SEARCH_FROM && (
        <Field label="Find a member" type="search" name="search" value={search} onChange={setSearch} description={`${shown.length} of ${members.data.members.length} shown`} />
      )}
      <div className="table-wrap" tabIndex={0} role="region" aria-label={`Members of ${org.name}`}>
        <table>
          <thead>
            <tr>
              <th scope="col">Person</th>
              <th scope="col">Role</th>
              {lasting && <th scope="col">Two-step</th>}
              <th scope="col">Joined</th>
              {admin && <th scope="col">Last sign-in</th>}
              {lasting && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {shown.map((m) => {
              const mfa = MFA_WORDS[standing.get(m.userId)?.status ?? "not_applicable"] ?? MFA_WORDS.not_applicable!;
              const self = m.userId === me?.id;
              return (
                <tr key={m.userId}>
                  <td>
                    <strong>{m.fullName || m.email}</strong>
                    {m.fullName && <div className="muted">{m.email}</div>}
                    <div className="member-tags">
                      {m.managed && <Badge tone="accent">managed</Badge>}
                      {m.status === "suspended" && <Badge tone="bad">suspended</Badge>}
                      {m.status === "pending_activation" && <Badge tone="warn">not activated</Badge>}
                    </div>
                  </td>
                  <td>
                    {lasting && m.role !== "owner" && !self ? (
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
                  {lasting && (
                    <td>
                      <Badge tone={mfa[1]}>{mfa[0]}</Badge>
                    </td>
                  )}
                  <td>
                    <Time iso={m.joinedAt} />
                  </td>
                  {admin && (
                    <td>
                      <Time iso={m.lastLoginAt} />
                    </td>
                  )}
                  {lasting && (
                    <td className="row-actions">
                      {m.managed && !self && <ManagedAccountActions member={m} onDone={changed} />}
                      {m.role !== "owner" && !self && (
                        <OffboardAction
                          orgId={org.id}
                          orgName={org.name}
                          member={m}
                          onDone={async (name, r) => {
                            setReceipt({ name, receipt: r });
                            setDone("");
                            await qc.invalidateQueries({ queryKey: ["org", org.id] });
                          }}
                        />
                      )}
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
                            const name = m.fullName || m.email;
                            const { receiptId } = (await gql(RemoveMember, { orgId: org.id, userId: m.userId })).removeMember;
                            // Removing is offboarding: show what it cut, as Offboard does (the removal
                            // itself is done even if the receipt cannot be read now).
                            const r = receiptId ? await loadReceipt(org.id, receiptId).catch(() => null) : null;
                            if (r) {
                              setReceipt({ name, receipt: r });
                              setDone("");
                              await qc.invalidateQueries({ queryKey: ["org", org.id] });
                            } else await changed(`${name} was removed.`);
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
      {lasting && (
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
                  <span className="row-actions">
                  <Button
                    variant="secondary"
                    size="small"
                    isPending={resend.isPending && resend.variables === i.id}
                    onPress={() => resend.mutate(i.id)}
                  >
                    Resend
                  </Button>
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
                  </span>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </div>
  );
}

function InviteForm({ orgId, onSent }: { orgId: string; onSent: (email: string, managed: boolean) => void }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [managed, setManaged] = useState(false);
  const [fullName, setFullName] = useState("");
  const send = useMutation({
    mutationFn: async () =>
      managed
        ? (await gql(AddMember, { orgId, input: { email, role, ...(fullName ? { fullName } : {}) } })).addMember
        : (await gql(SendInvite, { orgId, input: { email, role } })).sendInvite,
    onSuccess: (d) => {
      setEmail("");
      setFullName("");
      onSent(d.email, managed);
    },
  });
  const submit = useSubmit(() => send.mutateAsync());
  const fields = send.error instanceof ApiError ? send.error.fieldErrors : {};
  return (
    <Form className="inline-form" aria-label="Invite someone" validationBehavior="aria" onSubmit={submit}>
      <Field label={managed ? "Email of the new account" : "Invite by email"} type="email" name="email" value={email} onChange={setEmail} isRequired error={fields.email} />
      {managed && <Field label="Full name" name="fullName" value={fullName} onChange={setFullName} error={fields.fullName} />}
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
        {managed ? "Add member" : "Send invitation"}
      </Button>
      <Checkbox isSelected={managed} onChange={setManaged} className="check">
        Create an account this organization manages, for someone without one (you may then reset its password, remove its two-step, suspend it)
      </Checkbox>
      {!fields.email && <FormError error={send.error} />}
    </Form>
  );
}

type Member = ResultOf<typeof MembersQuery>["members"][number];

/** A managed account's admin actions: suspend or restore it, set its password, remove its two-step methods. */
function ManagedAccountActions({ member, onDone }: { member: Member; onDone: (message: string) => Promise<void> }) {
  const who = member.fullName || member.email;
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(null);
  const suspended = member.status === "suspended";
  return (
    <>
      {suspended ? (
        <ConfirmDialog
          trigger={<Button variant="secondary" size="small">Restore</Button>}
          title={`Restore ${who}'s account?`}
          confirmLabel="Restore"
          danger={false}
          onConfirm={async () => {
            await gql(UnsuspendUser, { userId: member.userId });
            await onDone(`${who} can sign in again.`);
          }}
        >
          <p>{who} can sign in again with their password and two-step methods.</p>
        </ConfirmDialog>
      ) : (
        <ConfirmDialog
          trigger={<Button variant="secondary" size="small">Suspend</Button>}
          title={`Suspend ${who}?`}
          confirmLabel="Suspend"
          onConfirm={async () => {
            await gql(SuspendUser, { userId: member.userId });
            await onDone(`${who} is suspended.`);
          }}
        >
          <p>{who} is signed out everywhere and cannot sign in until restored; their tokens and API keys stop working.</p>
        </ConfirmDialog>
      )}
      <ConfirmDialog
        trigger={<Button variant="secondary" size="small">Set password</Button>}
        title={`Set a new password for ${who}`}
        confirmLabel="Set password"
        danger={false}
        onConfirm={async () => {
          setError(null);
          try {
            await gql(SetUserPassword, { userId: member.userId, password });
          } catch (e) {
            setError(e);
            throw e;
          }
          setPassword("");
          await onDone(`${who}'s password was changed; their sessions were ended.`);
        }}
      >
        <Field label="New password" type="password" name="password" value={password} onChange={setPassword} description="Give it to them in person; they can change it after signing in." error={error instanceof ApiError ? error.fieldErrors.password : undefined} />
      </ConfirmDialog>
      <ConfirmDialog
        trigger={<Button variant="secondary" size="small">Remove two-step</Button>}
        title={`Remove ${who}'s two-step verification?`}
        confirmLabel="Remove all methods"
        onConfirm={async () => {
          await gql(RemoveUserMfa, { userId: member.userId, method: "all" });
          await onDone(`${who}'s two-step methods were removed.`);
        }}
      >
        <p>Their authenticator app, passkeys and backup codes are removed; they sign in with their password and set up two-step again.</p>
      </ConfirmDialog>
    </>
  );
}
