import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { duration } from "../../ui/TimeLeft";
import { useSubmit } from "../../ui/useSubmit";

const ClientsQuery = graphql(`
  query AdminBuiltInClients {
    builtInOidcClients { clientId name public grantTypes redirectUris tokenEndpointAuthMethod accessTokenTtl idTokenTtl refreshTokenTtl allowedApiScopes updatedAt }
  }
`);
const ClientQuery = graphql(`
  query AdminOidcClient($clientId: String!) {
    adminOidcClient(clientId: $clientId) { clientId name builtIn organizationId public grantTypes allowedApiScopes updatedAt }
  }
`);
const Configure = graphql(`
  mutation AdminConfigureOidcClient($clientId: String!, $input: ConfigureOidcClientInput!) {
    configureOidcClient(clientId: $clientId, input: $input) { clientId name accessTokenTtl idTokenTtl refreshTokenTtl allowedApiScopes updatedAt }
  }
`);

/** Keyward's own API scopes a client may ask a person to delegate (the API names them). */
const API_SCOPES: Array<[string, string]> = [
  ["profile:read", "read the person's profile"],
  ["orgs:read", "read their organizations, departments and principals"],
  ["ssh:keys", "manage their SSH public keys"],
  ["ssh:sign", "sign SSH certificates for them"],
  ["networks:activate", "switch their network access on and off"],
];

type BuiltIn = ResultOf<typeof ClientsQuery>["builtInOidcClients"][number];

/** Seconds typed by a person: a whole number, or null when it is not one (said at the field before anything is sent). */
const seconds = (text: string): number | null => (/^\d+$/.test(text.trim()) ? Number(text.trim()) : null);
const NOT_SECONDS = "Enter a whole number of seconds.";

/**
 * /admin/clients: Keyward's built-in OpenID Connect clients (the `keyward` command-line client),
 * which no organization owns: their name, token lifetimes and the Keyward API scopes they may ask
 * for; and the API scopes any other application may ask for, found by its client ID.
 */
export function BuiltInClients() {
  const q = useQuery({ queryKey: ["admin", "clients"], queryFn: () => gql(ClientsQuery) });
  const [done, setDone] = useState("");
  const qc = useQueryClient();
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["admin", "clients"] });
  };
  return (
    <div className="page">
      <h1>Built-in clients</h1>
      <p className="lead">Keyward's own applications. No organization owns them, so only operators change them.</p>
      {done && <Success>{done}</Success>}
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      ) : q.data.builtInOidcClients.length === 0 ? (
        <Empty>
          <p>No built-in client: they are created when Keyward starts.</p>
        </Empty>
      ) : (
        <div className="objects">
          {q.data.builtInOidcClients.map((c) => (
            <BuiltInCard key={c.clientId} client={c} onDone={changed} />
          ))}
        </div>
      )}
      <OtherClient onDone={setDone} />
    </div>
  );
}

function ScopeChoices({ label, value, onChange, error }: { label: string; value: string[]; onChange: (v: string[]) => void; error?: string }) {
  return (
    <fieldset className="choices" data-invalid={error ? true : undefined}>
      <legend>{label}</legend>
      <div className="choice-list">
        {API_SCOPES.map(([scope, what]) => (
          <label key={scope} className="choice">
            <input type="checkbox" checked={value.includes(scope)} onChange={(e) => onChange(e.target.checked ? [...value, scope] : value.filter((s) => s !== scope))} />
            <span className="choice-text">
              <code>{scope}</code>
              <span className="hint">{what}</span>
            </span>
          </label>
        ))}
      </div>
      {error && <span className="field-error">{error}</span>}
    </fieldset>
  );
}

function BuiltInCard({ client: c, onDone }: { client: BuiltIn; onDone: (message: string) => Promise<unknown> }) {
  const [name, setName] = useState(c.name);
  const [access, setAccess] = useState(String(c.accessTokenTtl));
  const [id, setId] = useState(String(c.idTokenTtl));
  const [refresh, setRefresh] = useState(String(c.refreshTokenTtl));
  const [scopes, setScopes] = useState<string[]>(c.allowedApiScopes);
  const [local, setLocal] = useState<Record<string, string>>({});
  const save = useMutation({
    mutationFn: () =>
      gql(Configure, {
        clientId: c.clientId,
        input: { name: name.trim(), accessTokenTtl: seconds(access)!, idTokenTtl: seconds(id)!, refreshTokenTtl: seconds(refresh)!, allowedApiScopes: scopes },
      }),
    onSuccess: (d) => onDone(`${d.configureOidcClient.name} was saved.`),
  });
  const submit = useSubmit(() => {
    const wrong = Object.fromEntries(
      ([["accessTokenTtl", access], ["idTokenTtl", id], ["refreshTokenTtl", refresh]] as const).filter(([, v]) => seconds(v) === null).map(([k]) => [k, NOT_SECONDS]),
    );
    setLocal(wrong);
    return Object.keys(wrong).length > 0 ? Promise.resolve() : save.mutateAsync();
  });
  const fields = { ...(save.error instanceof ApiError ? save.error.fieldErrors : {}), ...local };
  const head = `client-${c.clientId}`;
  return (
    <section className="object" aria-labelledby={head}>
      <div className="object-head">
        <h2 id={head}>{c.name}</h2>
        <code>{c.clientId}</code>
        {c.public && <Badge>public: PKCE, no secret</Badge>}
      </div>
      <dl className="kv">
        <dt>Grants</dt>
        <dd>{c.grantTypes.join(", ")}</dd>
        <dt>Redirects</dt>
        <dd>{c.redirectUris.join(", ")}</dd>
        <dt>Changed</dt>
        <dd>
          <Time iso={c.updatedAt} />
        </dd>
      </dl>
      <Form className="admin-form" aria-label={`Settings of ${c.name}`} validationBehavior="aria" onSubmit={submit}>
        <Field label="Name" value={name} onChange={setName} isRequired error={fields.name} description="Shown to people on the consent and device pages." />
        <div className="field-pair">
          <Field label="Access tokens last (seconds)" inputMode="numeric" value={access} onChange={setAccess} error={fields.accessTokenTtl} description={`Now ${duration(c.accessTokenTtl / 60)}; 60 to 86400.`} />
          <Field label="ID tokens last (seconds)" inputMode="numeric" value={id} onChange={setId} error={fields.idTokenTtl} description={`Now ${duration(c.idTokenTtl / 60)}; 60 to 86400.`} />
          <Field label="Refresh tokens last (seconds)" inputMode="numeric" value={refresh} onChange={setRefresh} error={fields.refreshTokenTtl} description={`Now ${duration(c.refreshTokenTtl / 60)}; 300 to 31536000.`} />
        </div>
        <ScopeChoices label="Keyward API scopes it may ask for" value={scopes} onChange={setScopes} error={fields.allowedApiScopes} />
        {Object.keys(fields).length === 0 && <FormError error={save.error} />}
        <div className="actions">
          <Button type="submit" isPending={save.isPending}>
            Save {c.name}
          </Button>
        </div>
      </Form>
    </section>
  );
}

/** Any application, by its client ID: the Keyward API scopes it may ask people for (narrowing applies to tokens already issued). */
function OtherClient({ onDone }: { onDone: (message: string) => void }) {
  const [text, setText] = useState("");
  const [clientId, setClientId] = useState("");
  const [scopes, setScopes] = useState<string[] | null>(null);
  const found = useQuery({ queryKey: ["admin", "clients", "one", clientId], queryFn: () => gql(ClientQuery, { clientId }), enabled: !!clientId, retry: false });
  const save = useMutation({
    mutationFn: () => gql(Configure, { clientId, input: { allowedApiScopes: scopes ?? found.data?.adminOidcClient.allowedApiScopes ?? [] } }),
    onSuccess: (d) => {
      setScopes(d.configureOidcClient.allowedApiScopes);
      onDone(`${d.configureOidcClient.name} may now ask for ${d.configureOidcClient.allowedApiScopes.length === 0 ? "no Keyward API scope" : d.configureOidcClient.allowedApiScopes.join(", ")}.`);
      void found.refetch();
    },
  });
  const submit = useSubmit(() => save.mutateAsync());
  const c = found.data?.adminOidcClient;
  return (
    <section aria-labelledby="other-client" className="panel">
      <h2 id="other-client">Another application's API scopes</h2>
      <p className="muted">Applications registered by organizations may ask people for Keyward API access only within what an operator allows here.</p>
      <form
        className="filters"
        role="search"
        aria-label="Find an application"
        onSubmit={(e) => {
          e.preventDefault();
          setScopes(null);
          setClientId(text.trim());
        }}
      >
        <label className="field">
          <span className="label">Client ID</span>
          <input value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <Button type="submit" variant="secondary">
          Find
        </Button>
      </form>
      {clientId && found.isPending && <Loading />}
      {found.isError && <ErrorState error={found.error} />}
      {c && (
        <Form className="admin-form" aria-label={`API scopes of ${c.name}`} validationBehavior="aria" onSubmit={submit}>
          <p>
            <strong>{c.name}</strong> <code>{c.clientId}</code> {c.builtIn ? <Badge>built-in</Badge> : <Badge>an organization's</Badge>}
          </p>
          <ScopeChoices label={`Keyward API scopes ${c.name} may ask for`} value={scopes ?? c.allowedApiScopes} onChange={setScopes} error={save.error instanceof ApiError ? save.error.fieldErrors.allowedApiScopes : undefined} />
          <FormError error={save.error} />
          <div className="actions">
            <Button type="submit" isPending={save.isPending}>
              Save scopes
            </Button>
          </div>
        </Form>
      )}
    </section>
  );
}
