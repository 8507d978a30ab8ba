import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Form } from "react-aria-components";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Button } from "../../ui/Button";
import { Field } from "../../ui/Field";
import { ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useSubmit } from "../../ui/useSubmit";
import { BackupCodesPanel, fieldsOf, generalError } from "./parts";
import { SecurityQuery, useRefreshSecurity, type Security } from "./security-data";
import { AuthenticatorApp, Passkeys } from "./two-step";

const ChangePassword = graphql(`
  mutation ChangeMyPassword($input: ChangePasswordInput!) { changePassword(input: $input) { message } }
`);
const RegenerateBackupCodes = graphql(`
  mutation RegenerateBackupCodes($password: String) { regenerateBackupCodes(password: $password) { backupCodes } }
`);

/**
 * /account/security: the password, and two-step verification (authenticator app with its QR code,
 * passkeys through the browser's WebAuthn, backup codes shown once).
 */
export function SecurityScreen() {
  const q = useQuery({ queryKey: ["account", "security"], queryFn: () => gql(SecurityQuery) });
  // New backup codes live here, above the sections that make them, so a redraw keeps them.
  const [codes, setCodes] = useState<string[] | null>(null);
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  const d = q.data;
  return (
    <div className="page narrow">
      <h1>Password and two-step verification</h1>
      <Password hasPassword={d.me.hasPassword} email={d.me.email} />
      <section aria-labelledby="two-step">
        <h2 id="two-step">Two-step verification</h2>
        <Summary d={d} />
        {codes && <BackupCodesPanel codes={codes} onDone={() => setCodes(null)} />}
        <AuthenticatorApp d={d} onCodes={setCodes} />
        <Passkeys d={d} onCodes={setCodes} />
        <BackupCodes d={d} onCodes={setCodes} />
      </section>
    </div>
  );
}

function Summary({ d }: { d: Security }) {
  const due = d.myMfaCompliance.filter((c) => c.status === "in_grace" || c.status === "past_due");
  if (d.mfaStatus.mfaEnabled) {
    const how = [d.mfaStatus.totpEnabled ? "your authenticator app" : "", d.mfaStatus.webauthnEnabled ? "a passkey" : ""].filter(Boolean).join(" or ");
    return (
      <p className="notice notice-success" id="mfa-summary">
        Two-step verification is on: after your password, you confirm with {how}.
      </p>
    );
  }
  return (
    <div className="notice notice-warn" id="mfa-summary">
      <p>Two-step verification is off: your password alone signs you in.</p>
      {due.map((c) => (
        <p key={c.organizationId}>
          {c.organizationName} requires it{" "}
          {c.deadlineAt &&
            (c.status === "past_due" ? (
              <>
                and your deadline has passed (<Time iso={c.deadlineAt} />)
              </>
            ) : (
              <>
                by <Time iso={c.deadlineAt} mode="full" />
              </>
            ))}
          .
        </p>
      ))}
    </div>
  );
}

function Password({ hasPassword, email }: { hasPassword: boolean; email: string }) {
  const [currentPassword, setCurrent] = useState("");
  const [newPassword, setNew] = useState("");
  const [newPasswordConfirm, setConfirm] = useState("");
  const refresh = useRefreshSecurity();
  const change = useMutation({
    mutationFn: () => gql(ChangePassword, { input: { currentPassword, newPassword, newPasswordConfirm } }),
    onSuccess: async () => {
      setCurrent("");
      setNew("");
      setConfirm("");
      await refresh();
    },
  });
  const submit = useSubmit(() => change.mutateAsync());
  const fields = fieldsOf(change.error);
  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      {hasPassword ? (
        <Form validationBehavior="aria" aria-labelledby="password-title" onSubmit={submit}>
          <p className="muted">Changing it signs out your other sessions.</p>
          <Field label="Current password" name="currentPassword" type="password" autoComplete="current-password" value={currentPassword} onChange={setCurrent} isRequired error={fields.currentPassword} />
          <Field
            label="New password"
            name="newPassword"
            type="password"
            autoComplete="new-password"
            value={newPassword}
            onChange={setNew}
            isRequired
            description="8 to 128 characters; a passphrase of a few words is easy to remember and hard to guess."
            error={fields.newPassword}
          />
          <Field label="Repeat the new password" name="newPasswordConfirm" type="password" autoComplete="new-password" value={newPasswordConfirm} onChange={setConfirm} isRequired error={fields.newPasswordConfirm} />
          {change.isSuccess && <Success>{change.data.changePassword.message}</Success>}
          <FormError error={generalError(change.error, ["currentPassword", "newPassword", "newPasswordConfirm"])} />
          <div className="actions">
            <Button type="submit" isPending={change.isPending}>
              Change password
            </Button>
          </div>
        </Form>
      ) : (
        <p>
          Your account has no password: you sign in with a passkey or a linked account. To add one, use <a href="/forgot-password">Forgot password</a> with {email}.
        </p>
      )}
    </section>
  );
}

function BackupCodes({ d, onCodes }: { d: Security; onCodes: (codes: string[]) => void }) {
  const [password, setPassword] = useState("");
  const refresh = useRefreshSecurity();
  const make = useMutation({
    mutationFn: () => gql(RegenerateBackupCodes, { password: d.me.hasPassword ? password : null }),
    onSuccess: async (r) => {
      setPassword("");
      if (r.regenerateBackupCodes.backupCodes) onCodes(r.regenerateBackupCodes.backupCodes);
      await refresh();
    },
  });
  const submit = useSubmit(() => make.mutateAsync());
  const fields = fieldsOf(make.error);
  const left = d.mfaStatus.backupCodesRemaining;
  return (
    <section aria-labelledby="backup-title">
      <h3 id="backup-title">Backup codes</h3>
      {d.mfaStatus.mfaEnabled ? (
        <>
          <p id="backup-state">
            {left === 1 ? "1 backup code left" : `${left} backup codes left`}. Each works once, when your phone or security key is not at hand.
          </p>
          <Form validationBehavior="aria" aria-label="Make new backup codes" onSubmit={submit}>
            {d.me.hasPassword && (
              <Field label="Current password" description="To make new backup codes" name="password" type="password" autoComplete="current-password" value={password} onChange={setPassword} isRequired error={fields.password} />
            )}
            {make.isSuccess && <Success>New backup codes made: the previous ones no longer work.</Success>}
            <FormError error={generalError(make.error, ["password"])} />
            <div className="actions">
              <Button type="submit" variant="secondary" isPending={make.isPending}>
                Make new backup codes
              </Button>
            </div>
          </Form>
        </>
      ) : (
        <p id="backup-state" className="muted">
          Backup codes come with your first authenticator app or passkey.
        </p>
      )}
    </section>
  );
}
