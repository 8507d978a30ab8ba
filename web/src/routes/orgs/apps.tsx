import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql, type FieldError } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { Secret } from "../../ui/Secret";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useEditInPlace } from "../../ui/useEditInPlace";
import { useSubmit } from "../../ui/useSubmit";
import { ElevatedOnly } from "./elevated";
import { canHold, isAdmin, useOrg } from "./layout";
import "./org-admin.css";

const AppsQuery = graphql(`
  query OrgApplications($orgId: ID!) {
    oidcClients(orgId: $orgId) { clientId name public redirectUris postLogoutRedirectUris grantTypes idTokenSignedResponseAlg corsOrigins accessTokenTtl idTokenTtl refreshTokenTtl tokenEndpointAuthMethod createdAt updatedAt }
  }
`);
const CreateClient = graphql(`
  mutation CreateOidcClient($orgId: ID!, $input: OidcClientInput!) { createOidcClient(orgId: $orgId, input: $input) { clientId name clientSecret } }
`);
const UpdateClient = graphql(`
  mutation UpdateOidcClient($orgId: ID!, $clientId: String!, $input: UpdateOidcClientInput!) { updateOidcClient(orgId: $orgId, clientId: $clientId, input: $input) { clientId name } }
`);
const RotateSecret = graphql(`
  mutation RotateOidcClientSecret($orgId: ID!, $clientId: String!) { rotateOidcClientSecret(orgId: $orgId, clientId: $clientId) { clientId clientSecret } }
`);
const DeleteClient = graphql(`
  mutation DeleteOidcClient($orgId: ID!, $clientId: String!) { deleteOidcClient(orgId: $orgId, clientId: $clientId) }
`);

type Client = ResultOf<typeof AppsQuery>["oidcClients"][number];

const GRANTS: Array<{ value: string; label: string; hint: string }> = [
  { value: "authorization_code", label: "Authorization code", hint: "People sign in through Keyward and come back to a redirect URI (with PKCE)." },
  { value: "refresh_token", label: "Refresh token", hint: "The application stays signed in without asking again." },
  { value: "client_credentials", label: "Client credentials", hint: "The application acts as itself, with its secret (confidential applications only)." },
  { value: "urn:ietf:params:oauth:grant-type:device_code", label: "Device code", hint: "Sign in on a device without a browser by entering a code elsewhere." },
];
const grantLabel = (g: string) => GRANTS.find((x) => x.value === g)?.label ?? g;
const ALGS = [
  { value: "RS256", label: "RS256 (RSA, the OpenID Connect default)" },
  { value: "ES256", label: "ES256 (elliptic curve, smaller tokens)" },
];
const TTL_LIMITS = {
  accessTokenTtl: "60 to 86400 seconds (a day)",
  idTokenTtl: "60 to 86400 seconds (a day)",
  refreshTokenTtl: "300 to 31536000 seconds (a year)",
};

/** One URI or origin a line; blank lines ignored. */
const lines = (text: string) =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
/** The fields the form shows an error at; any other error is shown under the form. */
const FORM_FIELDS = ["name", "redirectUris", "postLogoutRedirectUris", "grantTypes", "idTokenSignedResponseAlg", "corsOrigins", "accessTokenTtl", "idTokenTtl", "refreshTokenTtl"];
const seconds = (text: string): number | null => (/^\s*\d{1,9}\s*$/.test(text) ? Number(text) : null);

/**
 * The API's validation messages by the field they are about: "redirectUris.1" is the second line
 * of the redirect URIs (ApiError.fieldErrors keys by the last segment, which for a list is a number).
 */
function errorsByField(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const out: Record<string, string> = {};
  for (const e of (error.details?.errors as FieldError[] | undefined) ?? []) {
    const [top, index] = e.path.split(".");
    if (!top) continue;
    out[top] ??= index !== undefined && /^\d+$/.test(index) ? `Line ${Number(index) + 1}: ${e.message}` : e.message;
  }
  return out;
}

/**
 * /orgs/<slug>/apps: the organization's OpenID Connect applications. Admins register one (redirect
 * URIs, grants, signing algorithm, lifetimes; a confidential one's secret shown once), edit it,
 * rotate its secret (shown once) and delete it.
 */
export function Applications() {
  const org = useOrg();
  const admin = isAdmin(org);
  const qc = useQueryClient();
  const apps = useQuery({ queryKey: ["org", org.id, "apps"], queryFn: () => gql(AppsQuery, { orgId: org.id }), enabled: admin && canHold(org) });
  const [done, setDone] = useState("");
  const [secret, setSecret] = useState<{ name: string; clientId: string; value: string } | null>(null);
  const [registering, setRegistering] = useState(false);
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", org.id] });
  };
  // Focus follows what needs the person next: a secret to copy, else the button that opened the form.
  const secretHeading = useRef<HTMLHeadingElement>(null);
  const head = useRef<HTMLDivElement>(null);
  const wasRegistering = useRef(false);
  useEffect(() => {
    if (secret) secretHeading.current?.focus();
  }, [secret]);
  useEffect(() => {
    if (wasRegistering.current && !registering && !secret) head.current?.querySelector("button")?.focus();
    wasRegistering.current = registering;
  }, [registering, secret]);
  if (!admin) {
    return (
      <div className="page">
        <h1>Applications</h1>
        <Empty>
          <p>Only the owner and admins of {org.name} see and register its applications.</p>
        </Empty>
      </div>
    );
  }
  // Applications and their secrets outlive a role grant: a lasting admin role registers them.
  if (!canHold(org)) return <ElevatedOnly org={org} title="Applications">Registering applications is not shown.</ElevatedOnly>;
  if (apps.isPending) return <Loading />;
  if (apps.isError) return <ErrorState error={apps.error} retry={() => void apps.refetch()} />;
  const list = apps.data.oidcClients;
  const issuer = window.location.origin;
  return (
    <div className="page">
      <div className="section-head" ref={head}>
        <h1>Applications</h1>
        {!registering && (
          <Button
            onPress={() => {
              setSecret(null);
              setRegistering(true);
            }}
          >
            Register an application
          </Button>
        )}
      </div>
      <p className="muted">
        Applications where the people of {org.name} sign in with their Keyward account (OpenID Connect). Issuer <code>{issuer}</code>, discovery at{" "}
        <a href="/.well-known/openid-configuration">/.well-known/openid-configuration</a>.
      </p>
      {done && <Success>{done}</Success>}
      {secret && (
        <div className="panel">
          <h2 ref={secretHeading} tabIndex={-1}>
            Credentials of {secret.name}
          </h2>
          <p>
            Client ID <code>{secret.clientId}</code>
          </p>
          <Secret label={`Client secret of ${secret.name}`} value={secret.value} />
        </div>
      )}
      {registering && (
        <AppForm
          orgId={org.id}
          onCancel={() => setRegistering(false)}
          onSaved={async (r) => {
            setRegistering(false);
            if (r.clientSecret) setSecret({ name: r.name, clientId: r.clientId, value: r.clientSecret });
            await changed(r.clientSecret ? `${r.name} registered: copy its secret now.` : `${r.name} registered (public: it has no secret).`);
          }}
        />
      )}
      {list.length === 0 ? (
        !registering && (
          <Empty>
            <p>No applications yet. Register one to let people sign in to it with their Keyward account.</p>
          </Empty>
        )
      ) : (
        <ul className="objects" aria-label={`Applications of ${org.name}`}>
          {list.map((c) => (
            <AppItem
              key={c.clientId}
              orgId={org.id}
              client={c}
              onDone={changed}
              onSecret={(value) => setSecret({ name: c.name, clientId: c.clientId, value })}
            />
          ))}
        </ul>
      )}
    </div>
  );
}

function AppItem({ orgId, client: c, onDone, onSecret }: { orgId: string; client: Client; onDone: (message: string) => Promise<void>; onSecret: (secret: string) => void }) {
  const { editing, setEditing, ref } = useEditInPlace<HTMLLIElement>();
  if (editing) {
    return (
      <li className="object" ref={ref}>
        <AppForm
          orgId={orgId}
          client={c}
          onCancel={() => setEditing(false)}
          onSaved={async (r) => {
            setEditing(false);
            await onDone(`${r.name} saved.`);
          }}
        />
      </li>
    );
  }
  return (
    <li className="object" ref={ref}>
      <div className="object-head">
        <h3>{c.name}</h3>
        <Badge tone={c.public ? "neutral" : "accent"}>{c.public ? "Public" : "Confidential"}</Badge>
      </div>
      <dl className="kv">
        <dt>Client ID</dt>
        <dd>
          <code>{c.clientId}</code>
        </dd>
        <dt>Redirect URIs</dt>
        <dd>
          <UriList uris={c.redirectUris} none="None" />
        </dd>
        <dt>After sign-out</dt>
        <dd>
          <UriList uris={c.postLogoutRedirectUris} none="None" />
        </dd>
        <dt>Grants</dt>
        <dd>{c.grantTypes.map(grantLabel).join(", ")}</dd>
        <dt>ID token signature</dt>
        <dd>{c.idTokenSignedResponseAlg}</dd>
        <dt>Client authentication</dt>
        <dd>
          <code>{c.tokenEndpointAuthMethod}</code>
        </dd>
        {c.corsOrigins.length > 0 && (
          <>
            <dt>Browser origins</dt>
            <dd>
              <UriList uris={c.corsOrigins} none="None" />
            </dd>
          </>
        )}
        <dt>Token lifetimes</dt>
        <dd>
          access {duration(c.accessTokenTtl)}, ID {duration(c.idTokenTtl)}, refresh {duration(c.refreshTokenTtl)}
        </dd>
        <dt>Registered</dt>
        <dd>
          <Time iso={c.createdAt} />
        </dd>
      </dl>
      <div className="actions">
        <Button variant="secondary" size="small" onPress={() => setEditing(true)} aria-label={`Edit ${c.name}`} data-edit-trigger>
          Edit
        </Button>
        {!c.public && (
          <ConfirmDialog
            trigger={
              <Button variant="secondary" size="small" aria-label={`Rotate secret of ${c.name}`}>
                Rotate secret
              </Button>
            }
            title={`Rotate the secret of ${c.name}?`}
            confirmLabel="Rotate secret"
            onConfirm={async () => {
              const r = await gql(RotateSecret, { orgId, clientId: c.clientId });
              onSecret(r.rotateOidcClientSecret.clientSecret);
              await onDone(`${c.name} has a new secret: copy it now.`);
            }}
          >
            <p>
              The current secret of {c.name} stops working at once: the application cannot sign anyone in until it is given the new one, which is shown once.
            </p>
          </ConfirmDialog>
        )}
        <ConfirmDialog
          trigger={
            <Button variant="secondary" size="small" aria-label={`Delete ${c.name}`}>
              Delete
            </Button>
          }
          title={`Delete ${c.name}?`}
          confirmLabel="Delete application"
          onConfirm={async () => {
            await gql(DeleteClient, { orgId, clientId: c.clientId });
            await onDone(`${c.name} was deleted.`);
          }}
        >
          <p>
            Nobody can sign in to {c.name} with Keyward any more, and every token issued to it stops working. This cannot be undone.
          </p>
        </ConfirmDialog>
      </div>
    </li>
  );
}

function UriList({ uris, none }: { uris: string[]; none: string }) {
  if (uris.length === 0) return <span className="muted">{none}</span>;
  return (
    <ul>
      {uris.map((u) => (
        <li key={u}>
          <code>{u}</code>
        </li>
      ))}
    </ul>
  );
}

function duration(s: number): string {
  if (s % 86_400 === 0) return `${s / 86_400} d`;
  if (s % 3_600 === 0) return `${s / 3_600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

interface Saved {
  clientId: string;
  name: string;
  clientSecret?: string | null;
}

/** Registration (no `client`) or an edit of `client`: the same fields, the API's messages at them. */
function AppForm({ orgId, client, onCancel, onSaved }: { orgId: string; client?: Client; onCancel: () => void; onSaved: (r: Saved) => Promise<void> }) {
  const [name, setName] = useState(client?.name ?? "");
  const [isPublic, setPublic] = useState(client?.public ?? false);
  const [redirects, setRedirects] = useState(client?.redirectUris.join("\n") ?? "");
  const [logouts, setLogouts] = useState(client?.postLogoutRedirectUris.join("\n") ?? "");
  const [grants, setGrants] = useState<string[]>(client?.grantTypes ?? ["authorization_code", "refresh_token"]);
  const [alg, setAlg] = useState(client?.idTokenSignedResponseAlg ?? "RS256");
  const [origins, setOrigins] = useState(client?.corsOrigins.join("\n") ?? "");
  const [accessTtl, setAccessTtl] = useState(String(client?.accessTokenTtl ?? 3600));
  const [idTtl, setIdTtl] = useState(String(client?.idTokenTtl ?? 3600));
  const [refreshTtl, setRefreshTtl] = useState(String(client?.refreshTokenTtl ?? 2_592_000));
  const [local, setLocal] = useState<Record<string, string>>({});
  const save = useMutation({
    mutationFn: async (): Promise<Saved> => {
      const common = {
        name,
        redirectUris: lines(redirects),
        postLogoutRedirectUris: lines(logouts),
        grantTypes: grants,
        idTokenSignedResponseAlg: alg,
        corsOrigins: lines(origins),
        accessTokenTtl: seconds(accessTtl)!,
        idTokenTtl: seconds(idTtl)!,
        refreshTokenTtl: seconds(refreshTtl)!,
      };
      if (client) return (await gql(UpdateClient, { orgId, clientId: client.clientId, input: common })).updateOidcClient;
      return (await gql(CreateClient, { orgId, input: { ...common, public: isPublic } })).createOidcClient;
    },
    onSuccess: onSaved,
  });
  const submit = useSubmit(async () => {
    // What cannot be sent as a number at all is said here; the API judges the range.
    const problems: Record<string, string> = {};
    for (const [field, text] of [["accessTokenTtl", accessTtl], ["idTokenTtl", idTtl], ["refreshTokenTtl", refreshTtl]] as const) {
      if (seconds(text) === null) problems[field] = `Enter a whole number of seconds: ${TTL_LIMITS[field]}.`;
    }
    setLocal(problems);
    if (Object.keys(problems).length > 0) return;
    await save.mutateAsync();
  });
  const fields = { ...errorsByField(save.error), ...local };
  const label = client ? `Edit ${client.name}` : "Register an application";
  const toggle = (g: string, on: boolean) => setGrants((now) => (on ? [...now, g].filter((x, i, all) => all.indexOf(x) === i) : now.filter((x) => x !== g)));
  const ttlOpen = !!(fields.accessTokenTtl || fields.idTokenTtl || fields.refreshTokenTtl || fields.corsOrigins);
  return (
    <Form validationBehavior="aria" aria-label={label} onSubmit={submit} className={client ? undefined : "panel"}>
      <h2>{label}</h2>
      <Field label="Name" name="name" value={name} onChange={setName} isRequired error={fields.name} autoFocus description="Shown to people when they are asked to allow it." />
      {!client && (
        <fieldset className="choices choices-row">
          <legend>Kind</legend>
          <div className="choice-list">
            <label className="choice">
              <input type="radio" name="public" checked={!isPublic} onChange={() => setPublic(false)} />
              <span className="choice-text">
                <strong>Confidential</strong>
                <span className="hint">A server-side application that keeps a secret.</span>
              </span>
            </label>
            <label className="choice">
              <input type="radio" name="public" checked={isPublic} onChange={() => setPublic(true)} />
              <span className="choice-text">
                <strong>Public</strong>
                <span className="hint">A single-page or native app: no secret, PKCE only. Cannot be changed later.</span>
              </span>
            </label>
          </div>
        </fieldset>
      )}
      <Field label="Redirect URIs" name="redirectUris" multiline value={redirects} onChange={setRedirects} error={fields.redirectUris} description="One a line: https, a loopback http address, or an app's own scheme." placeholder="https://app.example.com/callback" />
      <Field label="Redirect URIs after sign-out" name="postLogoutRedirectUris" multiline value={logouts} onChange={setLogouts} error={fields.postLogoutRedirectUris} description="One a line (optional)." />
      <fieldset className="choices" data-invalid={fields.grantTypes ? true : undefined} aria-describedby={fields.grantTypes ? `grants-error-${client?.clientId ?? "new"}` : undefined}>
        <legend>Grants</legend>
        <div className="choice-list">
          {GRANTS.map((g) => (
            <label key={g.value} className="choice">
              <input type="checkbox" name="grantTypes" value={g.value} checked={grants.includes(g.value)} onChange={(e) => toggle(g.value, e.target.checked)} />
              <span className="choice-text">
                <strong>{g.label}</strong>
                <span className="hint">{g.hint}</span>
              </span>
            </label>
          ))}
        </div>
        {fields.grantTypes && (
          <p id={`grants-error-${client?.clientId ?? "new"}`} className="field-error">
            {fields.grantTypes}
          </p>
        )}
      </fieldset>
      <label className="field">
        <span className="label">ID token signing algorithm</span>
        <select name="idTokenSignedResponseAlg" value={alg} onChange={(e) => setAlg(e.target.value)} aria-invalid={fields.idTokenSignedResponseAlg ? true : undefined}>
          {ALGS.map((a) => (
            <option key={a.value} value={a.value}>
              {a.label}
            </option>
          ))}
        </select>
        {fields.idTokenSignedResponseAlg && <span className="field-error">{fields.idTokenSignedResponseAlg}</span>}
      </label>
      <details className="more" open={ttlOpen || undefined}>
        <summary>Browser origins and token lifetimes</summary>
        <Field label="Browser origins (CORS)" name="corsOrigins" multiline value={origins} onChange={setOrigins} error={fields.corsOrigins} description="Origins allowed to call the token and userinfo endpoints from a browser, one a line." placeholder="https://app.example.com" />
        <div className="field-pair">
          <Field label="Access token (seconds)" name="accessTokenTtl" inputMode="numeric" value={accessTtl} onChange={setAccessTtl} error={fields.accessTokenTtl} description={TTL_LIMITS.accessTokenTtl} />
          <Field label="ID token (seconds)" name="idTokenTtl" inputMode="numeric" value={idTtl} onChange={setIdTtl} error={fields.idTokenTtl} description={TTL_LIMITS.idTokenTtl} />
          <Field label="Refresh token (seconds)" name="refreshTokenTtl" inputMode="numeric" value={refreshTtl} onChange={setRefreshTtl} error={fields.refreshTokenTtl} description={TTL_LIMITS.refreshTokenTtl} />
        </div>
      </details>
      {!Object.keys(fields).some((f) => FORM_FIELDS.includes(f)) && <FormError error={save.error} />}
      <div className="actions">
        <Button type="submit" isPending={save.isPending}>
          {client ? "Save" : "Register"}
        </Button>
        <Button variant="secondary" onPress={onCancel}>
          Cancel
        </Button>
      </div>
    </Form>
  );
}
