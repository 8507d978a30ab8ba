import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { CopyText } from "../../ui/CopyText";
import { FormError } from "../../ui/States";
import { Time } from "../../ui/Time";
import { TimeLeft, useNow } from "../../ui/TimeLeft";
import { RemoveAction, useArrivalFocus, type ItemProps } from "./object-list";
import { OidcClaims, OidcEditForm, OidcFacts } from "./sso-oidc";
import { SamlEditForm } from "./sso-saml";
import { duration, MappingList, roleLabel, UpdateConnection, type Connection, type Department } from "./sso-shared";

const DeleteConnection = graphql(`
  mutation DeleteSsoConnection($orgId: ID!, $connectionId: ID!) { deleteSsoConnection(orgId: $orgId, connectionId: $connectionId) { id name } }
`);

/**
 * One connection's card, OpenID Connect or SAML: what it is set to, what its identity provider is
 * given (the redirect URI; for SAML the SP's entity ID, ACS and SLO URLs and metadata), and Edit,
 * Enable/Disable and Delete (after a confirmation that says what happens).
 */
export function ConnectionItem({
  orgId,
  orgName,
  connection: c,
  departments,
  focus,
  onFocused,
  onDone,
  onRemoved,
}: ItemProps & { connection: Connection; departments: Department[] }) {
  const heading = useArrivalFocus(focus, onFocused);
  const [editing, setEditing] = useState(false);
  const toggle = useMutation({
    mutationFn: () => gql(UpdateConnection, { orgId, connectionId: c.id, input: { enabled: !c.enabled } }),
    onSuccess: (d) => onDone(d.updateSsoConnection.enabled ? `${c.name} is enabled: sign-ins go through it.` : `${c.name} is disabled: nobody signs in through it until it is enabled again.`),
  });
  const edit = {
    orgId,
    orgName,
    connection: c,
    departments,
    onSaved: async (name: string) => {
      setEditing(false);
      await onDone(`${name} saved.`);
      heading.current?.focus();
    },
    onCancel: () => {
      setEditing(false);
      requestAnimationFrame(() => heading.current?.focus());
    },
  };
  const saml = c.kind === "saml" ? c.saml : null;
  return (
    <li className="object sso-connection">
      <div className="object-head">
        <h3 ref={heading} tabIndex={-1}>
          {c.name}
        </h3>
        <Badge tone="accent">{c.kind === "oidc" ? "OpenID Connect" : c.kind === "saml" ? "SAML 2.0" : c.kind.toUpperCase()}</Badge>
        <Badge tone={c.enabled ? "good" : "neutral"}>{c.enabled ? "Enabled" : "Disabled"}</Badge>
        {c.requireSso && <Badge tone="warn">SSO required</Badge>}
      </div>
      {editing ? (
        c.kind === "saml" ? (
          <SamlEditForm {...edit} />
        ) : (
          <OidcEditForm {...edit} />
        )
      ) : (
        <>
          <dl className="kv">
            {saml ? <SamlFacts saml={saml} /> : <OidcFacts connection={c} />}
            <dt>Role of a new member</dt>
            <dd>{roleLabel(c.defaultRole)}</dd>
            <dt>Group mappings</dt>
            <dd>
              <MappingList connection={c} departments={departments} />
            </dd>
            <dt>Require single sign-on</dt>
            <dd>{c.requireSso ? `Yes: sessions last at most ${duration(c.sessionMaxAgeSeconds)}` : "No"}</dd>
            {saml ? <SamlSettings saml={saml} /> : <OidcClaims connection={c} />}
            <dt>Updated</dt>
            <dd>
              <Time iso={c.updatedAt} />
            </dd>
          </dl>
          {saml ? (
            <SamlSpValues name={c.name} saml={saml} />
          ) : (
            <>
              <CopyText label={`Redirect URI of ${c.name}`} value={c.redirectUri} />
              {c.backchannelLogoutUri && (
                <CopyText
                  label={`Back-channel logout URI of ${c.name}`}
                  value={c.backchannelLogoutUri}
                  hint="Register it at your provider so that signing out there ends the Keyward sessions this connection started."
                />
              )}
            </>
          )}
          <CopyText label={`Sign-in link of ${c.name}`} value={c.startUrl} hint="Starts a sign-in through this connection directly (for a bookmark or your provider's app launcher)." />
        </>
      )}
      {toggle.error ? <FormError error={toggle.error} /> : null}
      {!editing && (
        <div className="actions">
          <Button variant="secondary" aria-label={`Edit ${c.name}`} onPress={() => setEditing(true)}>
            Edit
          </Button>
          <Button variant="secondary" isPending={toggle.isPending} aria-label={`${c.enabled ? "Disable" : "Enable"} ${c.name}`} onPress={() => toggle.mutate()}>
            {c.enabled ? "Disable" : "Enable"}
          </Button>
          <RemoveAction
            verb="Delete"
            noun="connection"
            name={c.name}
            onConfirm={async () => {
              await gql(DeleteConnection, { orgId, connectionId: c.id });
              await onRemoved(`${c.name} was deleted.`);
            }}
          >
            <p>
              Nobody signs in through {c.name} any more{c.requireSso ? `, and ${orgName}'s addresses may use passwords and passkeys again` : ""}. Accounts created through it stay, with their memberships; they
              sign in another way (a password reset) or through a new connection.
              {saml ? " Remove Keyward's application at your IdP too: its metadata address stops answering." : ""}
            </p>
          </RemoveAction>
        </div>
      )}
    </li>
  );
}

type Saml = NonNullable<Connection["saml"]>;

/** What Keyward holds about the IdP. */
function SamlFacts({ saml: s }: { saml: Saml }) {
  return (
    <>
      <dt>IdP entity ID</dt>
      <dd>
        <code>{s.idpEntityId}</code>
      </dd>
      <dt>IdP sign-in URL</dt>
      <dd>
        <code>{s.idpSsoUrl}</code>
      </dd>
      <dt>IdP sign-out URL</dt>
      <dd>{s.idpSloUrl ? <code>{s.idpSloUrl}</code> : "None"}</dd>
      <dt>IdP signing certificates</dt>
      <dd>
        <IdpCertificates certificates={s.idpCertificates} />
      </dd>
      <dt>IdP metadata</dt>
      <dd>
        {s.idpMetadataUrl ? (
          <>
            <code>{s.idpMetadataUrl}</code>, last read <Time iso={s.metadataFetchedAt} />; re-read periodically.
          </>
        ) : (
          "Given once (a document or by hand), not re-read."
        )}
      </dd>
    </>
  );
}

const SOON_MS = 30 * 86_400_000;
/**
 * The pinned IdP signing certificates, to compare with the IdP's console: SHA-256 fingerprint,
 * subject, validity; a warning when one expires within 30 days or is only kept for the rollover
 * overlap (the IdP's metadata dropped it).
 */
function IdpCertificates({ certificates }: { certificates: Saml["idpCertificates"] }) {
  const now = useNow();
  const current = certificates.filter((c) => !c.inRolloverOverlap).length;
  return (
    <>
      {current === 1 ? "1 certificate pinned" : `${current} certificates pinned`}
      {certificates.length > current ? `, ${certificates.length - current} kept for the rollover` : ""}
      <ul className="sso-idp-certs">
        {certificates.map((c) => {
          const ends = c.notAfter ? new Date(c.notAfter).getTime() : null;
          return (
            <li key={c.fingerprintSha256}>
              <span className="sso-idp-cert-head">
                {c.subjectCn ? <strong>{c.subjectCn}</strong> : <span className="muted">No subject name</span>}
                {c.inRolloverOverlap && <Badge tone="warn">Rollover: no longer in the IdP's metadata</Badge>}
                {ends !== null && ends <= now && <Badge tone="bad">Expired</Badge>}
                {ends !== null && ends > now && ends - now < SOON_MS && <Badge tone="warn">Expires soon</Badge>}
              </span>
              <span>
                SHA-256 <code className="sso-fingerprint">{c.fingerprintSha256}</code>
              </span>
              <span>
                {c.notBefore && c.notAfter ? (
                  <>
                    Valid <Time iso={c.notBefore} mode="date" /> to <Time iso={c.notAfter} mode="date" />
                    {ends !== null && ends > now && (
                      <>
                        {" "}
                        (<TimeLeft until={c.notAfter} />)
                      </>
                    )}
                  </>
                ) : (
                  "Its dates cannot be read."
                )}
              </span>
              {c.inRolloverOverlap && c.overlapEndsAt && (
                <span>
                  Still accepted for <TimeLeft until={c.overlapEndsAt} />, so that answers signed before the IdP switched keys pass.
                </span>
              )}
            </li>
          );
        })}
      </ul>
    </>
  );
}

/** How AuthnRequests go to the IdP, and why when it is not what the admin asked for. */
function bindingText(s: Saml): string {
  if (s.authnRequestBinding === "post") return s.preferPostBinding ? "HTTP-POST" : "HTTP-POST (the IdP offers only POST)";
  return s.preferPostBinding ? "HTTP-Redirect (HTTP-POST is preferred, but the IdP offers no POST sign-in URL)" : "HTTP-Redirect";
}

function SamlSettings({ saml: s }: { saml: Saml }) {
  return (
    <>
      <dt>Requests sent by</dt>
      <dd>{bindingText(s)}</dd>
      <dt>Attributes</dt>
      <dd>
        email {s.emailAttribute ? <code>{s.emailAttribute}</code> : "the NameID"}, name <code>{s.nameAttribute}</code>, groups <code>{s.groupsAttribute}</code>
      </dd>
      <dt>Security</dt>
      <dd>
        {s.allowIdpInitiated ? "Sign-in started at the IdP allowed" : "Only sign-ins Keyward started"}; requests {s.signAuthnRequests ? "signed" : "not signed"}; assertions{" "}
        {s.wantEncryptedAssertions ? "encrypted" : "not encrypted"}
      </dd>
    </>
  );
}

/** What the admin enters at the IdP: Keyward's SP values, each with a Copy button, and its metadata to download. */
function SamlSpValues({ name, saml: s }: { name: string; saml: Saml }) {
  return (
    <div className="sso-sp">
      <h4>At your IdP</h4>
      <p className="hint">Give your IdP Keyward's metadata URL, or upload the file; or enter the entity ID and ACS URL by hand.</p>
      <p>
        <a className="btn btn-secondary btn-small" href={s.spMetadataUrl} download={`keyward-saml-metadata-${name.replace(/[^\w-]+/g, "-").toLowerCase()}.xml`}>
          Download the SP metadata of {name}
        </a>
      </p>
      <CopyText label={`SP metadata URL of ${name}`} value={s.spMetadataUrl} />
      <CopyText label={`SP entity ID of ${name}`} value={s.spEntityId} hint="Also called audience or identifier." />
      <CopyText label={`ACS URL of ${name}`} value={s.acsUrl} hint="Assertion Consumer Service (reply URL), HTTP-POST." />
      <CopyText label={`SLO URL of ${name}`} value={s.sloUrl} hint="Single logout, HTTP-Redirect." />
      <details className="more">
        <summary>Keyward's certificates for {name}</summary>
        <CopyText label={`SP signing certificate of ${name}`} value={s.spSigningCertificate} hint="Keyward signs its requests with it; an IdP set up by hand may ask for it." />
        {s.wantEncryptedAssertions && <CopyText label={`SP encryption certificate of ${name}`} value={s.spEncryptionCertificate} hint="The IdP encrypts assertions to it." />}
      </details>
    </div>
  );
}
