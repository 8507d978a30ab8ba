import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { useShell } from "../../shell";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useSubmit } from "../../ui/useSubmit";
import { CopyButton, fieldsOf, generalError } from "./parts";

const KeysQuery = graphql(`
  query AccountSshKeys {
    mySshKeys { id description keyComment keyType keyBits fingerprint verified createdAt hardwareBacked skUserPresence skUserVerification }
  }
`);
type Key = ResultOf<typeof KeysQuery>["mySshKeys"][number];
const CertificatesQuery = graphql(`
  query AccountSshCertificates($page: Int!, $perPage: Int!) {
    mySshCertificates(page: $page, perPage: $perPage) { count page pages items { id serial principals organizationId validBefore status } }
  }
`);
const AddKey = graphql(`
  mutation AddMySshKey($publicKey: String!, $description: String) {
    addSshKey(publicKey: $publicKey, description: $description) { isNew key { id description keyComment keyType verified } }
  }
`);
const Challenge = graphql(`
  mutation MySshKeyChallenge($id: ID!) { sshKeyChallenge(id: $id) { keyId challengeText } }
`);
const Verify = graphql(`
  mutation VerifyMySshKey($id: ID!, $signature: String!) { verifySshKey(id: $id, signature: $signature) { verified key { id } } }
`);
const Rename = graphql(`
  mutation RenameMySshKey($id: ID!, $description: String) { updateSshKeyDescription(id: $id, description: $description) { id description } }
`);
const Remove = graphql(`
  mutation RemoveMySshKey($id: ID!) { deleteSshKey(id: $id) { message } }
`);

const PER_PAGE = 20;
const keyName = (k: { description?: string | null; keyComment?: string | null; keyType: string }) => k.description || k.keyComment || `${k.keyType} key`;
const STATUS_TONE: Record<string, "good" | "warn" | "bad" | "neutral"> = { active: "good", expired: "neutral", revoked: "bad" };

/** /account/ssh: your public keys (added with a proof that you hold the private key, renamed, removed) and your certificates. */
export function SshKeys() {
  const keys = useQuery({ queryKey: ["account", "ssh-keys"], queryFn: () => gql(KeysQuery) });
  const [done, setDone] = useState("");
  // The key whose possession is being proved (just added, or an older unverified one).
  const [proving, setProving] = useState<{ id: string; name: string } | null>(null);
  return (
    <div className="page">
      <h1>SSH keys and certificates</h1>
      {done && <Success>{done}</Success>}
      {proving ? (
        <Prove
          keyRef={proving}
          onDone={(message) => {
            setProving(null);
            setDone(message);
          }}
          onCancel={() => setProving(null)}
        />
      ) : (
        <AddKeyForm
          onAdded={(k, isNew) => {
            if (k.verified) setDone(isNew ? `SSH key ${keyName(k)} added.` : `You had already added ${keyName(k)}; it is verified.`);
            else {
              setDone("");
              setProving({ id: k.id, name: keyName(k) });
            }
          }}
        />
      )}
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">Your keys</h2>
        {keys.isPending ? (
          <Loading />
        ) : keys.isError ? (
          <ErrorState error={keys.error} retry={() => void keys.refetch()} />
        ) : keys.data.mySshKeys.length === 0 ? (
          <Empty>
            <p>No SSH keys yet. Add the public key of the computer you connect from, or run <code>keyward keys add ~/.ssh/id_ed25519.pub</code> there.</p>
          </Empty>
        ) : (
          <ul className="rows" aria-label="Your SSH keys" id="ssh-key-list">
            {keys.data.mySshKeys.map((k) => (
              <KeyRow key={k.id} k={k} onDone={setDone} onProve={() => (setDone(""), setProving({ id: k.id, name: keyName(k) }))} />
            ))}
          </ul>
        )}
      </section>
      <Certificates />
    </div>
  );
}

function AddKeyForm({ onAdded }: { onAdded: (k: ResultOf<typeof AddKey>["addSshKey"]["key"], isNew: boolean) => void }) {
  const [publicKey, setPublicKey] = useState("");
  const [description, setDescription] = useState("");
  const qc = useQueryClient();
  const add = useMutation({
    mutationFn: () => gql(AddKey, { publicKey: publicKey.trim(), description: description.trim() || null }),
    onSuccess: async (r) => {
      setPublicKey("");
      setDescription("");
      onAdded(r.addSshKey.key, r.addSshKey.isNew);
      await qc.invalidateQueries({ queryKey: ["account", "ssh-keys"] });
    },
  });
  const submit = useSubmit(() => add.mutateAsync());
  const fields = fieldsOf(add.error);
  return (
    <Form validationBehavior="aria" className="panel" aria-labelledby="add-key-title" onSubmit={submit}>
      <h2 id="add-key-title">Add a key</h2>
      <Field
        label="Public key"
        name="publicKey"
        multiline
        value={publicKey}
        onChange={setPublicKey}
        isRequired
        placeholder="ssh-ed25519 AAAA… you@laptop"
        description="The one line of ~/.ssh/id_ed25519.pub (never the private key). Next, you prove you hold its private key."
        error={fields.publicKey ?? fields.key}
      />
      <Field label="Name (optional)" name="description" value={description} onChange={setDescription} placeholder="e.g. Work laptop" error={fields.description} />
      <FormError error={generalError(add.error, ["publicKey", "key", "description"])} />
      <div className="actions">
        <Button type="submit" isPending={add.isPending}>
          Add key
        </Button>
      </div>
    </Form>
  );
}

/** The proof of possession: sign a fresh challenge with the private key (ssh-keygen -Y sign), paste the signature. */
function Prove({ keyRef, onDone, onCancel }: { keyRef: { id: string; name: string }; onDone: (message: string) => void; onCancel: () => void }) {
  const [signature, setSignature] = useState("");
  const qc = useQueryClient();
  const challenge = useMutation({ mutationFn: () => gql(Challenge, { id: keyRef.id }) });
  const { mutate: ask } = challenge;
  // One challenge per key shown: asking again replaces it (only the newest can be signed).
  useEffect(() => ask(), [ask, keyRef.id]);
  const verify = useMutation({
    mutationFn: () => gql(Verify, { id: keyRef.id, signature: signature.trim() }),
    onSuccess: async () => {
      onDone(`SSH key ${keyRef.name} verified: certificates can be signed for it.`);
      await qc.invalidateQueries({ queryKey: ["account", "ssh-keys"] });
    },
  });
  const submit = useSubmit(() => verify.mutateAsync());
  // A signature that does not verify is about the signature: say so at its field.
  const signatureError = fieldsOf(verify.error).signature ?? (verify.error instanceof ApiError && verify.error.code === "VERIFICATION_FAILED" ? verify.error.message : undefined);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const text = challenge.data?.sshKeyChallenge.challengeText;
  const commands = text ? `echo '${text}' > keyward-challenge.txt\nssh-keygen -Y sign -n file -f ~/.ssh/id_ed25519 keyward-challenge.txt\ncat keyward-challenge.txt.sig` : "";
  return (
    <section className="panel" aria-labelledby="prove-title">
      <h2 id="prove-title" ref={heading} tabIndex={-1}>
        Prove you hold {keyRef.name}
      </h2>
      {challenge.isPending ? (
        <Loading label="Asking for a challenge…" />
      ) : challenge.isError ? (
        <ErrorState error={challenge.error} retry={() => ask()} />
      ) : (
        <>
          <p>On the computer that holds the private key, sign this challenge (use your key's file name if it is not id_ed25519), then paste the signature below:</p>
          <pre className="command" id="ssh-challenge-commands" tabIndex={0} role="region" aria-label="Commands that sign the challenge">
            {commands}
          </pre>
          <CopyButton text={commands} label="Copy commands" />
          <Form validationBehavior="aria" aria-label={`Verify ${keyRef.name}`} onSubmit={submit}>
            <Field
              label="Signature"
              name="signature"
              multiline
              value={signature}
              onChange={setSignature}
              isRequired
              placeholder="-----BEGIN SSH SIGNATURE-----"
              error={signatureError}
            />
            {!signatureError && <FormError error={verify.error} />}
            <div className="actions">
              <Button type="submit" isPending={verify.isPending}>
                Verify key
              </Button>
              <Button variant="secondary" onPress={onCancel}>
                Later
              </Button>
            </div>
          </Form>
        </>
      )}
    </section>
  );
}

function KeyRow({ k, onDone, onProve }: { k: Key; onDone: (message: string) => void; onProve: () => void }) {
  const name = keyName(k);
  const [renaming, setRenaming] = useState(false);
  const [description, setDescription] = useState(k.description ?? "");
  const qc = useQueryClient();
  const refresh = () => qc.invalidateQueries({ queryKey: ["account", "ssh-keys"] });
  const rename = useMutation({
    mutationFn: () => gql(Rename, { id: k.id, description: description.trim() || null }),
    onSuccess: async (r) => {
      setRenaming(false);
      onDone(`SSH key renamed to ${keyName({ ...k, description: r.updateSshKeyDescription.description })}.`);
      await refresh();
    },
  });
  const submit = useSubmit(() => rename.mutateAsync());
  const fields = fieldsOf(rename.error);
  return (
    <li>
      <span className="row-main">
        <span>
          <strong>{name}</strong> {k.verified ? <Badge tone="good">verified</Badge> : <Badge tone="warn">not verified</Badge>}{" "}
          {k.hardwareBacked && <Badge tone="accent">hardware key</Badge>}
        </span>
        <span className="muted">
          {k.keyType} {k.keyBits} · added <Time iso={k.createdAt} />
          {k.hardwareBacked && k.skUserPresence !== null && ` · proved ${k.skUserPresence ? "with a touch" : "without a touch"}${k.skUserVerification ? " and a PIN or biometric" : ""}`}
        </span>
        <code className="fingerprint">{k.fingerprint}</code>
      </span>
      <span className="row-actions">
        {!k.verified && (
          <Button size="small" aria-label={`Verify SSH key ${name}`} onPress={onProve}>
            Verify
          </Button>
        )}
        <Button variant="secondary" size="small" aria-expanded={renaming} aria-label={`Rename SSH key ${name}`} onPress={() => (setDescription(k.description ?? ""), setRenaming(!renaming))}>
          Rename
        </Button>
        <ConfirmDialog
          trigger={
            <Button variant="secondary" size="small" aria-label={`Remove SSH key ${name}`}>
              Remove
            </Button>
          }
          title={`Remove the SSH key ${name}?`}
          confirmLabel="Remove key"
          onConfirm={async () => {
            await gql(Remove, { id: k.id });
            onDone(`SSH key ${name} removed.`);
            await refresh();
          }}
        >
          <p>Certificates can no longer be signed for it. Certificates already issued stay valid until they expire or are revoked.</p>
        </ConfirmDialog>
      </span>
      {renaming && (
        <Form validationBehavior="aria" className="inline-form row-form" aria-label={`Rename SSH key ${name}`} onSubmit={submit}>
          <Field label={`New name for ${name}`} name="description" value={description} onChange={setDescription} autoFocus error={fields.description} />
          <Button type="submit" size="small" isPending={rename.isPending}>
            Save name
          </Button>
          <FormError error={generalError(rename.error, ["description"])} />
        </Form>
      )}
    </li>
  );
}

function Certificates() {
  const [page, setPage] = useState(1);
  const q = useQuery({ queryKey: ["account", "certificates", page], queryFn: () => gql(CertificatesQuery, { page, perPage: PER_PAGE }), placeholderData: (previous) => previous });
  const orgs = new Map((useShell().data?.myOrganizations ?? []).map((o) => [o.id, o.name]));
  return (
    <section aria-labelledby="certs-title">
      <h2 id="certs-title">Your certificates</h2>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      ) : q.data.mySshCertificates.count === 0 ? (
        <Empty>
          <p>
            No certificates issued to you yet. With a verified key, run <code>keyward ssh sign</code> to get one.
          </p>
        </Empty>
      ) : (
        <>
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Your certificates">
            <table id="cert-table">
              <thead>
                <tr>
                  <th scope="col">Serial</th>
                  <th scope="col">Principals</th>
                  <th scope="col">Organization</th>
                  <th scope="col">Valid until</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {q.data.mySshCertificates.items.map((c) => (
                  <tr key={c.id}>
                    <td>
                      <code>{c.serial}</code>
                    </td>
                    <td>{c.principals.join(", ")}</td>
                    <td>{orgs.get(c.organizationId) ?? "—"}</td>
                    <td>
                      <Time iso={c.validBefore} mode="full" />
                    </td>
                    <td>
                      <Badge tone={STATUS_TONE[c.status] ?? "neutral"}>{c.status}</Badge>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {q.data.mySshCertificates.pages > 1 && (
            <nav className="pager" aria-label="Certificate pages">
              <Button variant="secondary" size="small" isDisabled={page <= 1} onPress={() => setPage(page - 1)}>
                Newer
              </Button>
              <span>
                Page {q.data.mySshCertificates.page} of {q.data.mySshCertificates.pages}
              </span>
              <Button variant="secondary" size="small" isDisabled={page >= q.data.mySshCertificates.pages} onPress={() => setPage(page + 1)}>
                Older
              </Button>
            </nav>
          )}
        </>
      )}
    </section>
  );
}
