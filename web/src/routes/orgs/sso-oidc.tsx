import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { CopyText } from "../../ui/CopyText";
import { Field } from "../../ui/Field";
import { ConnectionFormFrame, fieldSetter, useUpdateConnection, type EditProps, type FormBase } from "./sso-form";
import { accessDraftOf, accessInput, blankAccess, errorsByField, type AccessDraft, type Connection, type Department } from "./sso-shared";

/** An OpenID Connect connection: its form (create and edit), what the card shows, and help per provider. */
const CreateConnection = graphql(`
  mutation CreateOidcConnection($orgId: ID!, $input: CreateOidcConnectionInput!) { createOidcConnection(orgId: $orgId, input: $input) { id name } }
`);

interface Draft extends AccessDraft {
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  emailClaim: string;
  nameClaim: string;
  groupsClaim: string;
}
const blank = (): Draft => ({
  ...blankAccess(),
  issuer: "",
  clientId: "",
  clientSecret: "",
  scopes: "openid email profile",
  emailClaim: "email",
  nameClaim: "name",
  groupsClaim: "groups",
});
const draftOf = (c: Connection): Draft => ({
  ...accessDraftOf(c),
  issuer: c.issuer ?? "",
  clientId: c.clientId ?? "",
  clientSecret: "",
  scopes: c.scopes.join(" "),
  emailClaim: c.emailClaim ?? "",
  nameClaim: c.nameClaim ?? "",
  groupsClaim: c.groupsClaim ?? "",
});
const words = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** What create and update share: scopes, claims, roles, mappings, the SSO requirement and the session limit. */
function commonInput(d: Draft) {
  const { defaultRole, groupMappings, requireSso, ...session } = accessInput(d);
  return {
    scopes: words(d.scopes),
    ...(d.emailClaim.trim() ? { emailClaim: d.emailClaim.trim() } : {}),
    ...(d.nameClaim.trim() ? { nameClaim: d.nameClaim.trim() } : {}),
    ...(d.groupsClaim.trim() ? { groupsClaim: d.groupsClaim.trim() } : {}),
    defaultRole,
    groupMappings,
    requireSso,
    ...session,
  };
}
const FORM_FIELDS = ["name", "issuer", "clientId", "clientSecret", "scopes", "emailClaim", "nameClaim", "groupsClaim", "defaultRole", "groupMappings", "sessionMaxAgeSeconds"];

export function OidcCreateForm({ orgId, orgName, departments, onCreated }: { orgId: string; orgName: string; departments: Department[]; onCreated: (c: { id: string; name: string }) => Promise<void> }) {
  const [draft, setDraft] = useState<Draft>(blank);
  const create = useMutation({
    mutationFn: () =>
      gql(CreateConnection, {
        orgId,
        input: {
          name: draft.name,
          issuer: draft.issuer.trim(),
          clientId: draft.clientId,
          ...(draft.clientSecret ? { clientSecret: draft.clientSecret } : {}),
          ...commonInput(draft),
        },
      }),
    onSuccess: async (d) => {
      setDraft(blank());
      await onCreated(d.createOidcConnection);
    },
  });
  return (
    <section aria-labelledby="sso-add" className="panel">
      <h2 id="sso-add">Add an OpenID Connect connection</h2>
      <OidcForm label="Add an OpenID Connect connection" orgName={orgName} draft={draft} setDraft={setDraft} departments={departments} mutation={create} submitLabel="Add connection" creating />
    </section>
  );
}

export function OidcEditForm(props: EditProps) {
  const { orgName, connection: c, departments, onCancel } = props;
  const [draft, setDraft] = useState<Draft>(() => draftOf(c));
  const update = useUpdateConnection(props, () => ({ name: draft.name, clientId: draft.clientId, ...(draft.clientSecret ? { clientSecret: draft.clientSecret } : {}), ...commonInput(draft) }));
  return (
    <OidcForm
      label={`Edit ${c.name}`}
      orgName={orgName}
      draft={draft}
      setDraft={setDraft}
      departments={departments}
      mutation={update}
      submitLabel="Save"
      issuerFixed
      hasSecret={c.hasSecret}
      onCancel={onCancel}
    />
  );
}

function OidcForm({ creating, issuerFixed, hasSecret, ...base }: FormBase<Draft> & { creating?: boolean; issuerFixed?: boolean; hasSecret?: boolean }) {
  const { draft, mutation } = base;
  const errors = errorsByField(mutation.error, { SSO_DISCOVERY_FAILED: "issuer" });
  const set = fieldSetter(base.setDraft);
  return (
    <ConnectionFormFrame
      base={base}
      errors={errors}
      placed={FORM_FIELDS}
      nameHint="How the connection is shown here and in the activity log, e.g. Entra ID."
      groupHint="The group's value as the provider sends it: a name (Okta, Keycloak) or an object id (Entra ID)."
    >
      {issuerFixed ? (
        <p className="field">
          <span className="label">Issuer</span> <code>{draft.issuer}</code>
          <span className="hint">The issuer cannot change: add a new connection for another provider.</span>
          {errors.issuer && (
            <span className="field-error" tabIndex={-1} data-error-focus>
              {errors.issuer}
            </span>
          )}
        </p>
      ) : (
        <Field
          label="Issuer"
          name="issuer"
          type="url"
          value={draft.issuer}
          onChange={set("issuer")}
          isRequired
          error={errors.issuer}
          placeholder="https://login.microsoftonline.com/<tenant-id>/v2.0"
          description="Exactly as the provider's /.well-known/openid-configuration says; Keyward reads it when you save."
        />
      )}
      <div className="field-pair">
        <Field label="Client ID" name="clientId" value={draft.clientId} onChange={set("clientId")} isRequired error={errors.clientId} />
        <Field
          label="Client secret"
          name="clientSecret"
          type="password"
          autoComplete="new-password"
          value={draft.clientSecret}
          onChange={set("clientSecret")}
          isRequired={creating}
          error={errors.clientSecret}
          description={hasSecret ? "A secret is stored and never shown. Leave empty to keep it." : "Stored sealed and never shown again."}
        />
      </div>
      <details className="more">
        <summary>Scopes and claim names</summary>
        <Field label="Scopes" name="scopes" value={draft.scopes} onChange={set("scopes")} error={errors.scopes} description="Separated by spaces. Okta needs groups as well for group claims." />
        <div className="field-pair">
          <Field label="Email claim" name="emailClaim" value={draft.emailClaim} onChange={set("emailClaim")} error={errors.emailClaim} description="preferred_username for Entra accounts without a mailbox." />
          <Field label="Name claim" name="nameClaim" value={draft.nameClaim} onChange={set("nameClaim")} error={errors.nameClaim} />
          <Field label="Groups claim" name="groupsClaim" value={draft.groupsClaim} onChange={set("groupsClaim")} error={errors.groupsClaim} description="The claim whose values the group mappings below name." />
        </div>
      </details>
    </ConnectionFormFrame>
  );
}

/** An OpenID Connect connection's own facts on its card (after the shared ones). */
export function OidcFacts({ connection: c }: { connection: Connection }) {
  return (
    <>
      <dt>Issuer</dt>
      <dd>
        <code>{c.issuer}</code>
      </dd>
      <dt>Client ID</dt>
      <dd>
        <code>{c.clientId}</code> {c.hasSecret ? "(secret stored)" : "(no secret stored)"}
      </dd>
    </>
  );
}
export function OidcClaims({ connection: c }: { connection: Connection }) {
  return (
    <>
      <dt>Claims</dt>
      <dd>
        email <code>{c.emailClaim ?? "email"}</code>, name <code>{c.nameClaim ?? "name"}</code>, groups <code>{c.groupsClaim ?? "none"}</code>; scopes <code>{c.scopes.join(" ")}</code>
      </dd>
    </>
  );
}

/** The redirect URI every OpenID Connect connection registers at its provider. */
export function OidcRedirectPanel({ redirectUri }: { redirectUri: string }) {
  return (
    <section aria-labelledby="sso-redirect" className="panel">
      <h2 id="sso-redirect">At your identity provider</h2>
      <p>
        Register Keyward as a web application (authorization code flow, a client secret) with this redirect URI, exactly as shown. <a href="#sso-help">How to, for Entra ID, Okta, Google Workspace and Keycloak</a>.
      </p>
      <CopyText label="Redirect URI" value={redirectUri} />
    </section>
  );
}
