import { useMutation } from "@tanstack/react-query";
import { useId, useState } from "react";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Button } from "../../ui/Button";
import { Field } from "../../ui/Field";
import { ConnectionFormFrame, fieldSetter, RadioChoices, useUpdateConnection, type EditProps, type FormBase } from "./sso-form";
import { accessDraftOf, accessInput, blankAccess, errorsByField, nextRowKey, type AccessDraft, type Connection, type Department } from "./sso-shared";

/**
 * A SAML 2.0 connection's form: the IdP by its metadata URL (re-read periodically), by its metadata
 * document (a file or pasted), or by hand; then the attribute names, IdP-initiated sign-in, signing
 * and encryption, and the access settings every connection has. Editing keeps the IdP.
 */
const CreateSaml = graphql(`
  mutation CreateSamlConnection($orgId: ID!, $input: CreateSamlConnectionInput!) { createSamlConnection(orgId: $orgId, input: $input) { id name } }
`);

type Source = "url" | "xml" | "manual";
interface Cert {
  key: number;
  pem: string;
}
interface Draft extends AccessDraft {
  source: Source;
  metadataUrl: string;
  metadataXml: string;
  idpEntityId: string;
  idpSsoUrl: string;
  idpSloUrl: string;
  certificates: Cert[];
  allowIdpInitiated: boolean;
  signAuthnRequests: boolean;
  preferPostBinding: boolean;
  wantEncryptedAssertions: boolean;
  emailAttribute: string;
  nameAttribute: string;
  groupsAttribute: string;
}
const blank = (): Draft => ({
  ...blankAccess(),
  source: "url",
  metadataUrl: "",
  metadataXml: "",
  idpEntityId: "",
  idpSsoUrl: "",
  idpSloUrl: "",
  certificates: [{ key: nextRowKey(), pem: "" }],
  allowIdpInitiated: false,
  signAuthnRequests: true,
  preferPostBinding: false,
  wantEncryptedAssertions: true,
  emailAttribute: "email",
  nameAttribute: "name",
  groupsAttribute: "groups",
});
const draftOf = (c: Connection): Draft => ({
  ...blank(),
  ...accessDraftOf(c),
  allowIdpInitiated: c.saml?.allowIdpInitiated ?? false,
  signAuthnRequests: c.saml?.signAuthnRequests ?? true,
  preferPostBinding: c.saml?.preferPostBinding ?? false,
  wantEncryptedAssertions: c.saml?.wantEncryptedAssertions ?? true,
  emailAttribute: c.saml?.emailAttribute ?? "",
  nameAttribute: c.saml?.nameAttribute ?? "",
  groupsAttribute: c.saml?.groupsAttribute ?? "",
});

/** The settings create and update share; an empty email attribute means the NameID. */
function settingsInput(d: Draft) {
  return {
    allowIdpInitiated: d.allowIdpInitiated,
    signAuthnRequests: d.signAuthnRequests,
    preferPostBinding: d.preferPostBinding,
    wantEncryptedAssertions: d.wantEncryptedAssertions,
    emailAttribute: d.emailAttribute.trim() || null,
    ...(d.nameAttribute.trim() ? { nameAttribute: d.nameAttribute.trim() } : {}),
    ...(d.groupsAttribute.trim() ? { groupsAttribute: d.groupsAttribute.trim() } : {}),
    ...accessInput(d),
  };
}
function idpInput(d: Draft) {
  if (d.source === "url") return { metadataUrl: d.metadataUrl.trim() };
  if (d.source === "xml") return { metadataXml: d.metadataXml };
  return {
    idpEntityId: d.idpEntityId.trim(),
    idpSsoUrl: d.idpSsoUrl.trim(),
    ...(d.idpSloUrl.trim() ? { idpSloUrl: d.idpSloUrl.trim() } : {}),
    idpCertificates: d.certificates.map((c) => c.pem.trim()).filter(Boolean),
  };
}
const SOURCE_FIELDS: Record<Source, string[]> = { url: ["metadataUrl"], xml: ["metadataXml"], manual: ["idpEntityId", "idpSsoUrl", "idpSloUrl", "idpCertificates"] };
const FORM_FIELDS = ["name", "allowIdpInitiated", "signAuthnRequests", "preferPostBinding", "wantEncryptedAssertions", "emailAttribute", "nameAttribute", "groupsAttribute", "defaultRole", "groupMappings", "sessionMaxAgeSeconds"];
const SOURCES: { value: Source; label: string; hint: string }[] = [
  { value: "url", label: "Metadata URL", hint: "Keyward reads it now and every 12 hours, so a new IdP certificate is picked up by itself." },
  { value: "xml", label: "Metadata file", hint: "The IdP's metadata document (XML), uploaded or pasted. Upload it again when the IdP's certificate changes." },
  { value: "manual", label: "By hand", hint: "The IdP's entity ID, sign-in URL and signing certificate, from its setup page." },
];

export function SamlCreateForm({ orgId, orgName, departments, onCreated }: { orgId: string; orgName: string; departments: Department[]; onCreated: (c: { id: string; name: string }) => Promise<void> }) {
  const [draft, setDraft] = useState<Draft>(blank);
  const create = useMutation({
    mutationFn: () => gql(CreateSaml, { orgId, input: { name: draft.name, ...idpInput(draft), ...settingsInput(draft) } }),
    onSuccess: async (d) => {
      setDraft(blank());
      await onCreated(d.createSamlConnection);
    },
  });
  return (
    <section aria-labelledby="sso-add-saml" className="panel">
      <h2 id="sso-add-saml">Add a SAML connection</h2>
      <p className="muted">Once it is added, its card shows what to enter at your IdP: Keyward's entity ID, ACS URL and metadata.</p>
      <SamlForm label="Add a SAML connection" orgName={orgName} draft={draft} setDraft={setDraft} departments={departments} mutation={create} submitLabel="Add SAML connection" />
    </section>
  );
}

export function SamlEditForm(props: EditProps) {
  const { orgName, connection: c, departments, onCancel } = props;
  const [draft, setDraft] = useState<Draft>(() => draftOf(c));
  const update = useUpdateConnection(props, () => ({ name: draft.name, ...settingsInput(draft) }));
  return (
    <SamlForm
      label={`Edit ${c.name}`}
      orgName={orgName}
      draft={draft}
      setDraft={setDraft}
      departments={departments}
      mutation={update}
      submitLabel="Save"
      idpEntityId={c.saml?.idpEntityId ?? ""}
      onCancel={onCancel}
    />
  );
}

function SamlForm({ idpEntityId, ...base }: FormBase<Draft> & { /** Editing: the IdP, which does not change. */ idpEntityId?: string }) {
  const { draft, setDraft, mutation } = base;
  const ids = useId();
  const creating = idpEntityId === undefined;
  const errors = errorsByField(mutation.error, { SSO_METADATA_INVALID: draft.source === "xml" ? "metadataXml" : "metadataUrl" });
  const set = fieldSetter(setDraft);
  const setCert = (key: number, pem: string) => setDraft((d) => ({ ...d, certificates: d.certificates.map((c) => (c.key === key ? { ...c, pem } : c)) }));
  const [file, setFile] = useState("");
  return (
    <ConnectionFormFrame
      base={base}
      errors={errors}
      placed={[...FORM_FIELDS, ...(creating ? SOURCE_FIELDS[draft.source] : [])]}
      nameHint="How the connection is shown here and in the activity log, e.g. Okta or ADFS."
      groupHint="A value of the groups attribute as the IdP sends it: a group name (Okta, ADFS, Keycloak) or an object id (Entra ID)."
    >
      {!creating ? (
        <p className="field">
          <span className="label">Identity provider</span> <code>{idpEntityId}</code>
          <span className="hint">The IdP cannot change: add a new connection for another one.</span>
        </p>
      ) : (
        <>
          <RadioChoices legend="How Keyward learns about your IdP" name={`${ids}-source`} options={SOURCES}
            value={draft.source}
            onChange={(v) => {
              // A refusal was about the source given before: it does not carry over to another one.
              mutation.reset();
              set("source")(v);
            }}
          />
          {draft.source === "url" && (
            <Field
              label="Metadata URL"
              name="metadataUrl"
              type="url"
              value={draft.metadataUrl}
              onChange={set("metadataUrl")}
              isRequired
              error={errors.metadataUrl}
              placeholder="https://idp.example.com/saml/metadata"
              description="The IdP's federation metadata address (https). Entra ID: App Federation Metadata Url; Okta: Metadata URL."
            />
          )}
          {draft.source === "xml" && (
            <>
              <div className="field">
                <label htmlFor={`${ids}-file`}>Metadata file</label>
                <input
                  id={`${ids}-file`}
                  type="file"
                  accept=".xml,text/xml,application/xml,application/samlmetadata+xml"
                  aria-describedby={`${ids}-file-hint`}
                  onChange={async (e) => {
                    const f = e.target.files?.[0];
                    if (!f) return;
                    const text = await f.text();
                    setFile(`Read ${f.name} (${Math.max(1, Math.round(f.size / 1024))} KB) into the field below.`);
                    set("metadataXml")(text);
                  }}
                />
                <span id={`${ids}-file-hint`} className="hint" role="status" aria-live="polite">
                  {(draft.metadataXml && file) || "Choose the XML file your IdP gives for download, or paste its contents below."}
                </span>
              </div>
              <Field label="Metadata XML" name="metadataXml" multiline value={draft.metadataXml} onChange={set("metadataXml")} isRequired error={errors.metadataXml} placeholder="<EntityDescriptor …>" />
            </>
          )}
          {draft.source === "manual" && (
            <>
              <Field label="IdP entity ID" name="idpEntityId" value={draft.idpEntityId} onChange={set("idpEntityId")} isRequired error={errors.idpEntityId} description="Also called issuer or identifier." />
              <div className="field-pair">
                <Field label="Sign-in URL" name="idpSsoUrl" type="url" value={draft.idpSsoUrl} onChange={set("idpSsoUrl")} isRequired error={errors.idpSsoUrl} description="The IdP's SSO URL (HTTP-Redirect)." />
                <Field label="Sign-out URL (optional)" name="idpSloUrl" type="url" value={draft.idpSloUrl} onChange={set("idpSloUrl")} error={errors.idpSloUrl} description="The IdP's SLO URL, if it has one." />
              </div>
              <fieldset className="choices" data-invalid={errors.idpCertificates ? true : undefined}>
                <legend>Signing certificates</legend>
                <span className="hint">PEM, from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----. Add the next one before the IdP changes over.</span>
                {draft.certificates.map((c, i) => (
                  <div key={c.key} className="mapping-row sso-cert">
                    <Field
                      label={`Certificate ${i + 1}`}
                      multiline
                      value={c.pem}
                      onChange={(v) => setCert(c.key, v)}
                      isRequired={i === 0}
                      error={errors.idpCertificates?.startsWith(`Certificate ${i + 1}:`) || (i === 0 && errors.idpCertificates && !/^Certificate \d+:/.test(errors.idpCertificates)) ? errors.idpCertificates : undefined}
                    />
                    {draft.certificates.length > 1 && (
                      <Button variant="secondary" size="small" aria-label={`Remove certificate ${i + 1}`} onPress={() => setDraft((d) => ({ ...d, certificates: d.certificates.filter((x) => x.key !== c.key) }))}>
                        Remove
                      </Button>
                    )}
                  </div>
                ))}
                {draft.certificates.length < 5 && (
                  <Button variant="secondary" size="small" onPress={() => setDraft((d) => ({ ...d, certificates: [...d.certificates, { key: nextRowKey(), pem: "" }] }))}>
                    Add a certificate
                  </Button>
                )}
              </fieldset>
            </>
          )}
        </>
      )}
      <div className="sso-require">
        <label className="sso-check">
          <input type="checkbox" checked={draft.allowIdpInitiated} onChange={(e) => set("allowIdpInitiated")(e.target.checked)} aria-describedby={`${ids}-idpi`} />
          Allow sign-in started at the IdP
        </label>
        <p id={`${ids}-idpi`} className="hint">
          For the IdP's app portal (IdP-initiated). Off, Keyward accepts only answers to its own requests, which is safer: the portal can use the sign-in link on the connection's card instead.
        </p>
      </div>
      <details className="more">
        <summary>Attribute names, binding, signing and encryption</summary>
        <div className="field-pair">
          <Field label="Email attribute" name="emailAttribute" value={draft.emailAttribute} onChange={set("emailAttribute")} error={errors.emailAttribute} description="Empty: the NameID is the address." />
          <Field label="Name attribute" name="nameAttribute" value={draft.nameAttribute} onChange={set("nameAttribute")} error={errors.nameAttribute} />
          <Field label="Groups attribute" name="groupsAttribute" value={draft.groupsAttribute} onChange={set("groupsAttribute")} error={errors.groupsAttribute} description="Entra ID: http://schemas.microsoft.com/ws/2008/06/identity/claims/groups" />
        </div>
        <label className="sso-check">
          <input type="checkbox" checked={draft.preferPostBinding} onChange={(e) => set("preferPostBinding")(e.target.checked)} aria-describedby={`${ids}-post`} />
          Send authentication requests by HTTP-POST
        </label>
        <p id={`${ids}-post`} className="hint">
          Use it when your IdP accepts AuthnRequests only by HTTP-POST. Off: HTTP-Redirect, unless the IdP's metadata offers only POST.
        </p>
        <label className="sso-check">
          <input type="checkbox" checked={draft.signAuthnRequests} onChange={(e) => set("signAuthnRequests")(e.target.checked)} />
          Sign authentication requests
        </label>
        <label className="sso-check">
          <input type="checkbox" checked={draft.wantEncryptedAssertions} onChange={(e) => set("wantEncryptedAssertions")(e.target.checked)} />
          Ask the IdP to encrypt assertions (Keyward's metadata then carries an encryption certificate)
        </label>
      </details>
    </ConnectionFormFrame>
  );
}
