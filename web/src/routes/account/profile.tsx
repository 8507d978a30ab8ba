import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Form } from "react-aria-components";
import { gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { Field } from "../../ui/Field";
import { ErrorState, FormError, Loading, Success } from "../../ui/States";
import { useSubmit } from "../../ui/useSubmit";
import { fieldsOf, generalError } from "./parts";

const ProfileQuery = graphql(`
  query AccountProfile {
    me { id email emailVerified fullName hasPassword managedBy { id name } }
  }
`);
type Me = ResultOf<typeof ProfileQuery>["me"];

const UpdateName = graphql(`
  mutation UpdateMyName($input: UpdateMeInput!) { updateMe(input: $input) { id fullName } }
`);
const ResendVerification = graphql(`
  mutation ResendMyVerification { resendVerification { message } }
`);
const RequestEmailChange = graphql(`
  mutation RequestEmailChange($input: ChangeEmailInput!) { requestEmailChange(input: $input) { message } }
`);

/** /account: who manages the account, the name, the email address and changing it. */
export function Profile() {
  const q = useQuery({ queryKey: ["account", "profile"], queryFn: () => gql(ProfileQuery) });
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  const me = q.data.me;
  return (
    <div className="page narrow">
      <h1>Profile</h1>
      {me.managedBy ? (
        <p className="notice" id="managed-by">
          Your account is managed by <strong>{me.managedBy.name}</strong>: while you are a member, its owners and admins can reset your password, remove your
          second factors, and suspend or delete the account. Leaving {me.managedBy.name} ends this.
        </p>
      ) : (
        <p className="muted" id="managed-by">
          No organization manages your account: only you can change how you sign in.
        </p>
      )}
      <NameForm me={me} />
      <EmailSection me={me} />
    </div>
  );
}

function NameForm({ me }: { me: Me }) {
  const [fullName, setFullName] = useState(me.fullName ?? "");
  const qc = useQueryClient();
  const save = useMutation({
    mutationFn: () => gql(UpdateName, { input: { fullName: fullName.trim() } }),
    onSuccess: () => Promise.all([qc.invalidateQueries({ queryKey: ["account"] }), qc.invalidateQueries({ queryKey: ["shell"] })]),
  });
  const submit = useSubmit(() => save.mutateAsync());
  const fields = fieldsOf(save.error);
  return (
    <section aria-labelledby="name-title">
      <h2 id="name-title">Name</h2>
      <Form validationBehavior="aria" aria-labelledby="name-title" onSubmit={submit}>
        <Field label="Full name" name="fullName" autoComplete="name" value={fullName} onChange={setFullName} isRequired error={fields.fullName} />
        {save.isSuccess && <Success>Name saved.</Success>}
        <FormError error={generalError(save.error, ["fullName"])} />
        <div className="actions">
          <Button type="submit" isPending={save.isPending}>
            Save name
          </Button>
        </div>
      </Form>
    </section>
  );
}

function EmailSection({ me }: { me: Me }) {
  const [newEmail, setNewEmail] = useState("");
  const [password, setPassword] = useState("");
  const [sent, setSent] = useState("");
  const resend = useMutation({ mutationFn: () => gql(ResendVerification) });
  const change = useMutation({
    mutationFn: () => gql(RequestEmailChange, { input: { newEmail: newEmail.trim(), ...(me.hasPassword ? { password } : {}) } }),
    onSuccess: (d) => {
      setSent(d.requestEmailChange.message);
      setNewEmail("");
      setPassword("");
    },
  });
  const submit = useSubmit(() => change.mutateAsync());
  const fields = fieldsOf(change.error);
  return (
    <section aria-labelledby="email-title">
      <h2 id="email-title">Email address</h2>
      <p id="current-email">
        <strong>{me.email}</strong> {me.emailVerified ? <Badge tone="good">verified</Badge> : <Badge tone="warn">not verified</Badge>}
      </p>
      {!me.emailVerified && (
        <>
          <p className="muted">Open the link we emailed you to verify it: invitations sent to this address show once it is verified.</p>
          <Button variant="secondary" size="small" isPending={resend.isPending} onPress={() => resend.mutate()}>
            Send a new verification link
          </Button>
          {resend.isSuccess && <Success>{resend.data.resendVerification.message}</Success>}
          <FormError error={resend.error} />
        </>
      )}
      <h3>Change it</h3>
      <Form validationBehavior="aria" aria-label="Change your email address" onSubmit={submit}>
        <Field
          label="New email address"
          name="newEmail"
          type="email"
          autoComplete="email"
          value={newEmail}
          onChange={setNewEmail}
          isRequired
          description={`We send a link to the new address. Your account keeps ${me.email} until you open it.`}
          error={fields.newEmail}
        />
        {me.hasPassword && (
          <Field label="Current password" name="password" type="password" autoComplete="current-password" value={password} onChange={setPassword} isRequired error={fields.password} />
        )}
        {sent && change.isSuccess && <Success>{sent}</Success>}
        <FormError error={generalError(change.error, ["newEmail", "password"])} />
        <div className="actions">
          <Button type="submit" isPending={change.isPending}>
            Send confirmation link
          </Button>
        </div>
      </Form>
    </section>
  );
}
