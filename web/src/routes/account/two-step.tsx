import { startRegistration, type PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/browser";
import { useMutation } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { Empty, FormError, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useSubmit } from "../../ui/useSubmit";
import { CopyButton, fieldsOf, generalError } from "./parts";
import { useRefreshSecurity, type Security } from "./security-data";

const EnrollTotp = graphql(`
  mutation EnrollTotp { enrollTotp { secret qrCode provisioningUri } }
`);
const VerifyTotp = graphql(`
  mutation VerifyTotpEnrollment($code: String!) { verifyTotpEnrollment(code: $code) { backupCodes } }
`);
const DisableTotp = graphql(`
  mutation DisableTotp($password: String) { disableTotp(password: $password) { message } }
`);
const BeginPasskey = graphql(`
  mutation BeginPasskeyRegistration { beginWebauthnRegistration { challengeId options } }
`);
const CompletePasskey = graphql(`
  mutation CompletePasskeyRegistration($challengeId: String!, $response: JSON!, $name: String) {
    completeWebauthnRegistration(challengeId: $challengeId, response: $response, name: $name) { backupCodes credential { id name } }
  }
`);
const RenamePasskey = graphql(`
  mutation RenamePasskey($id: ID!, $name: String!) { renameWebauthnCredential(id: $id, name: $name) { id name } }
`);
const RemovePasskey = graphql(`
  mutation RemovePasskey($id: ID!) { deleteWebauthnCredential(id: $id) { message } }
`);

type Enrollment = ResultOf<typeof EnrollTotp>["enrollTotp"];

/** The authenticator app: set up from its QR code (or the key typed in), confirmed with a code; or turned off. */
export function AuthenticatorApp({ d, onCodes }: { d: Security; onCodes: (codes: string[]) => void }) {
  const [setup, setSetup] = useState<Enrollment | null>(null);
  const [done, setDone] = useState("");
  const start = useMutation({
    mutationFn: () => gql(EnrollTotp),
    onSuccess: (r) => {
      setDone("");
      setSetup(r.enrollTotp);
    },
  });
  return (
    <section aria-labelledby="totp-title">
      <h3 id="totp-title">Authenticator app</h3>
      {done && <Success>{done}</Success>}
      {d.mfaStatus.totpEnabled ? (
        <>
          <p id="totp-state">
            <Badge tone="good">on</Badge> Your authenticator app gives the second step.
          </p>
          <TurnOff hasPassword={d.me.hasPassword} onDone={() => setDone("Authenticator app turned off.")} />
        </>
      ) : setup ? (
        <TotpSetup
          setup={setup}
          onCancel={() => setSetup(null)}
          onDone={(codes) => {
            setSetup(null);
            setDone(`Authenticator app turned on.${codes ? " Store your backup codes now." : ""}`);
            if (codes) onCodes(codes);
          }}
        />
      ) : (
        <>
          <p id="totp-state">
            <Badge>off</Badge> An app on your phone (such as Aegis, Google Authenticator or 1Password) shows a new code every 30 seconds.
          </p>
          <FormError error={start.error} />
          <Button isPending={start.isPending} onPress={() => start.mutate()}>
            Set up an authenticator app
          </Button>
        </>
      )}
    </section>
  );
}

function TotpSetup({ setup, onCancel, onDone }: { setup: Enrollment; onCancel: () => void; onDone: (codes: string[] | null | undefined) => void }) {
  const [code, setCode] = useState("");
  const refresh = useRefreshSecurity();
  const verify = useMutation({
    mutationFn: () => gql(VerifyTotp, { code: code.replace(/\s+/g, "") }),
    onSuccess: async (r) => {
      onDone(r.verifyTotpEnrollment.backupCodes);
      await refresh();
    },
  });
  const submit = useSubmit(() => verify.mutateAsync());
  // A refused code is about the code: say so at its field.
  const codeError = verify.error instanceof ApiError ? (fieldsOf(verify.error).code ?? verify.error.message) : undefined;
  const first = useRef<HTMLParagraphElement>(null);
  useEffect(() => first.current?.focus(), []);
  // Only what the server made: a data: PNG, and an otpauth: link (never another scheme).
  const qr = setup.qrCode.startsWith("data:image/png;base64,") ? setup.qrCode : null;
  const uri = /^otpauth:\/\//.test(setup.provisioningUri) ? setup.provisioningUri : null;
  return (
    <div className="setup-box" id="totp-setup">
      <ol className="steps">
        <li>
          <p ref={first} tabIndex={-1}>
            Scan this code with the app.
          </p>
          {qr && <img id="totp-qr" className="qr" src={qr} alt="QR code to scan with your authenticator app" width={220} height={220} />}
        </li>
        <li>
          <p>
            Cannot scan it? Enter this key in the app instead: <code id="totp-secret">{setup.secret}</code> <CopyButton text={setup.secret} label="Copy key" />
          </p>
          {uri && (
            <p>
              <a id="totp-uri" href={uri}>
                Open in an authenticator app on this device
              </a>
            </p>
          )}
        </li>
        <li>
          <Form validationBehavior="aria" aria-label="Confirm the authenticator app" onSubmit={submit}>
            <Field label="Code the app shows" name="code" inputMode="numeric" autoComplete="one-time-code" value={code} onChange={setCode} isRequired error={codeError} />
            <div className="actions">
              <Button type="submit" isPending={verify.isPending}>
                Turn on
              </Button>
              <Button variant="secondary" onPress={onCancel}>
                Cancel
              </Button>
            </div>
          </Form>
        </li>
      </ol>
    </div>
  );
}

function TurnOff({ hasPassword, onDone }: { hasPassword: boolean; onDone: () => void }) {
  const [password, setPassword] = useState("");
  const refresh = useRefreshSecurity();
  return (
    <ConfirmDialog
      trigger={<Button variant="danger">Turn off the authenticator app</Button>}
      title="Turn off the authenticator app?"
      confirmLabel="Turn off"
      onConfirm={async () => {
        await gql(DisableTotp, { password: hasPassword ? password : null });
        setPassword("");
        onDone();
        await refresh();
      }}
    >
      <p>Its codes stop working at once. If it is your only second step, your password alone signs you in again.</p>
      {hasPassword && <Field label="Current password" name="password" type="password" autoComplete="current-password" value={password} onChange={setPassword} isRequired />}
    </ConfirmDialog>
  );
}

/** What the browser said, in words: a cancelled or timed-out prompt is the common case. */
function passkeyProblem(e: unknown): Error {
  if (e instanceof ApiError) return e;
  const name = e instanceof Error ? e.name : "";
  if (name === "NotAllowedError") return new Error("No passkey was created: the request was cancelled or timed out.");
  if (name === "InvalidStateError") return new Error("This authenticator already holds a passkey for your account.");
  if (name === "NotSupportedError" || name === "SecurityError") return new Error("This browser cannot create a passkey for this site.");
  return new Error(e instanceof Error ? e.message : "No passkey was created.");
}

/** Passkeys and security keys: added through the browser's WebAuthn prompt, renamed, removed. */
export function Passkeys({ d, onCodes }: { d: Security; onCodes: (codes: string[]) => void }) {
  const [name, setName] = useState("");
  const [done, setDone] = useState("");
  const refresh = useRefreshSecurity();
  const add = useMutation({
    mutationFn: async () => {
      const begin = (await gql(BeginPasskey)).beginWebauthnRegistration;
      let response: unknown;
      try {
        response = await startRegistration({ optionsJSON: begin.options as unknown as PublicKeyCredentialCreationOptionsJSON });
      } catch (e) {
        throw passkeyProblem(e);
      }
      return gql(CompletePasskey, { challengeId: begin.challengeId, response, name: name.trim() || null });
    },
    onSuccess: async (r) => {
      setName("");
      setDone(`Passkey ${r.completeWebauthnRegistration.credential.name} added.`);
      if (r.completeWebauthnRegistration.backupCodes) onCodes(r.completeWebauthnRegistration.backupCodes);
      await refresh();
    },
  });
  const submit = useSubmit(() => add.mutateAsync());
  const fields = fieldsOf(add.error);
  return (
    <section aria-labelledby="passkeys-title">
      <h3 id="passkeys-title">Passkeys and security keys</h3>
      {done && <Success>{done}</Success>}
      {d.myWebauthnCredentials.length === 0 ? (
        <Empty>
          <p>No passkeys yet. A passkey signs you in with your fingerprint, face or screen lock, or a security key.</p>
        </Empty>
      ) : (
        <ul className="rows" aria-label="Your passkeys" id="passkeys">
          {d.myWebauthnCredentials.map((c) => (
            <PasskeyRow key={c.id} c={c} onDone={setDone} />
          ))}
        </ul>
      )}
      <Form validationBehavior="aria" className="inline-form add-form" aria-label="Add a passkey" onSubmit={submit}>
        <Field label="Name for the new passkey" name="name" placeholder="e.g. Work laptop" value={name} onChange={setName} error={fields.name} />
        <Button type="submit" isPending={add.isPending}>
          Add a passkey
        </Button>
        <FormError error={generalError(add.error, ["name"])} />
      </Form>
    </section>
  );
}

function PasskeyRow({ c, onDone }: { c: Security["myWebauthnCredentials"][number]; onDone: (message: string) => void }) {
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(c.name);
  const refresh = useRefreshSecurity();
  const rename = useMutation({
    mutationFn: () => gql(RenamePasskey, { id: c.id, name: name.trim() }),
    onSuccess: async (r) => {
      setRenaming(false);
      onDone(`Passkey renamed to ${r.renameWebauthnCredential.name}.`);
      await refresh();
    },
  });
  const submit = useSubmit(() => rename.mutateAsync());
  const fields = fieldsOf(rename.error);
  return (
    <li>
      <span className="row-main">
        <strong>{c.name}</strong>
        <span className="muted">
          added <Time iso={c.createdAt} />, last used <Time iso={c.lastUsedAt} />
        </span>
      </span>
      <span className="row-actions">
        <Button variant="secondary" size="small" aria-expanded={renaming} aria-label={`Rename passkey ${c.name}`} onPress={() => (setName(c.name), setRenaming(!renaming))}>
          Rename
        </Button>
        <ConfirmDialog
          trigger={
            <Button variant="secondary" size="small" aria-label={`Remove passkey ${c.name}`}>
              Remove
            </Button>
          }
          title={`Remove the passkey ${c.name}?`}
          confirmLabel="Remove passkey"
          onConfirm={async () => {
            await gql(RemovePasskey, { id: c.id });
            onDone(`Passkey ${c.name} removed.`);
            await refresh();
          }}
        >
          <p>It no longer signs you in. If it is your only second step, your password alone signs you in again.</p>
        </ConfirmDialog>
      </span>
      {renaming && (
        <Form validationBehavior="aria" className="inline-form row-form" aria-label={`Rename passkey ${c.name}`} onSubmit={submit}>
          <Field label={`New name for ${c.name}`} name="name" value={name} onChange={setName} isRequired autoFocus error={fields.name} />
          <Button type="submit" size="small" isPending={rename.isPending}>
            Save name
          </Button>
          <FormError error={generalError(rename.error, ["name"])} />
        </Form>
      )}
    </li>
  );
}
