import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Checkbox, Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { CopyText } from "../../ui/CopyText";
import { Field } from "../../ui/Field";
import { ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useSubmit } from "../../ui/useSubmit";

const ProvidersQuery = graphql(`
  query AdminOAuthProviders { oauthProviderConfigs { provider name source clientId scopes isEnabled hasClientSecret callbackUrl updatedAt } }
`);
const Configure = graphql(`
  mutation AdminConfigureOAuthProvider($provider: String!, $input: OAuthProviderConfigInput!) {
    configureOAuthProvider(provider: $provider, input: $input) { provider source clientId scopes isEnabled hasClientSecret updatedAt }
  }
`);
const Remove = graphql(`
  mutation AdminDeleteOAuthProviderConfig($provider: String!) { deleteOAuthProviderConfig(provider: $provider) }
`);

type Provider = ResultOf<typeof ProvidersQuery>["oauthProviderConfigs"][number];

/** Where each provider registers its OAuth application. */
const WHERE: Record<string, string> = {
  github: "GitHub → Settings → Developer settings → OAuth Apps",
  google: "Google Cloud console → APIs & Services → Credentials → OAuth client ID (web application)",
};

/**
 * /admin/sign-in: GitHub and Google sign-in. An operator's configuration (secret sealed at rest)
 * wins over the environment's; secrets are never shown back, only whether one is stored.
 */
export function SignInProviders() {
  const q = useQuery({ queryKey: ["admin", "oauth-providers"], queryFn: () => gql(ProvidersQuery) });
  const [done, setDone] = useState("");
  const qc = useQueryClient();
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["admin"] });
  };
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  return (
    <div className="page">
      <h1>Sign-in providers</h1>
      <p className="lead">Let people sign in and register with GitHub or Google. What you set here replaces the environment's variables; removing it brings them back.</p>
      {done && <Success>{done}</Success>}
      <div className="objects">
        {q.data.oauthProviderConfigs.map((p) => (
          <ProviderCard key={p.provider} provider={p} onDone={changed} />
        ))}
      </div>
    </div>
  );
}

function state(p: Provider): [string, "good" | "warn" | "bad" | "neutral"] {
  if (p.source === "none") return ["not set up", "warn"];
  return p.isEnabled ? ["on", "good"] : ["off", "bad"];
}

function ProviderCard({ provider: p, onDone }: { provider: Provider; onDone: (message: string) => Promise<unknown> }) {
  const [clientId, setClientId] = useState(p.clientId ?? "");
  const [secret, setSecret] = useState("");
  const [scopes, setScopes] = useState(p.scopes.join(" "));
  const [enabled, setEnabled] = useState(p.source === "none" ? true : p.isEnabled);
  const save = useMutation({
    mutationFn: () =>
      gql(Configure, {
        provider: p.provider,
        // Absent, not null: an empty secret keeps the stored one.
        input: { clientId: clientId.trim(), isEnabled: enabled, scopes: scopes.split(/[\s,]+/).filter(Boolean), ...(secret ? { clientSecret: secret } : {}) },
      }),
    onSuccess: async (d) => {
      setSecret("");
      await onDone(`${p.name} sign-in was saved: it is ${d.configureOAuthProvider.isEnabled ? "on" : "off"}.`);
    },
  });
  const submit = useSubmit(() => save.mutateAsync());
  const fields = save.error instanceof ApiError ? save.error.fieldErrors : {};
  const [word, tone] = state(p);
  const id = `provider-${p.provider}`;
  return (
    <section className="object" aria-labelledby={id}>
      <div className="object-head">
        <h2 id={id}>{p.name}</h2>
        <Badge tone={tone}>{word}</Badge>
        {p.hasClientSecret && <Badge>secret stored</Badge>}
      </div>
      <p className="muted">
        {p.source === "database" ? (
          <>
            Configured here, last changed <Time iso={p.updatedAt} />.
          </>
        ) : p.source === "environment" ? (
          "Configured by the server's environment variables; saving here replaces them."
        ) : (
          "Not set up: register an OAuth application at the provider, then enter its client ID and secret."
        )}
      </p>
      <CopyText label={`${p.name} callback URL`} value={p.callbackUrl} hint={`Register it at ${WHERE[p.provider] ?? p.name}.`} />
      <Form className="admin-form" aria-label={`${p.name} sign-in settings`} validationBehavior="aria" onSubmit={submit}>
        <Field label="Client ID" value={clientId} onChange={setClientId} isRequired error={fields.clientId} />
        <Field
          label="Client secret"
          type="password"
          value={secret}
          onChange={setSecret}
          autoComplete="off"
          description={p.hasClientSecret ? "A secret is stored and never shown: leave this empty to keep it, or enter a new one to replace it." : "Required the first time; sealed at rest."}
          error={fields.clientSecret}
        />
        <Field label="Scopes" value={scopes} onChange={setScopes} description={p.provider === "google" ? "Separated by spaces; Google needs openid." : "Separated by spaces."} error={fields.scopes} />
        <Checkbox isSelected={enabled} onChange={setEnabled} className="check">
          People may sign in with {p.name}
        </Checkbox>
        {Object.keys(fields).length === 0 && <FormError error={save.error} />}
        <div className="actions">
          <Button type="submit" isPending={save.isPending}>
            Save {p.name}
          </Button>
          {p.source === "database" && (
            <ConfirmDialog
              trigger={<Button variant="secondary">Remove the stored settings…</Button>}
              title={`Remove ${p.name}'s stored settings?`}
              confirmLabel="Remove settings"
              onConfirm={async () => {
                await gql(Remove, { provider: p.provider });
                setClientId("");
                setSecret("");
                await onDone(`${p.name}'s stored settings were removed.`);
              }}
            >
              <p>
                The client ID and sealed secret stored here are deleted. {p.name} sign-in then uses the server's environment variables if it has them, and is off otherwise; accounts
                already linked stay linked.
              </p>
            </ConfirmDialog>
          )}
        </div>
      </Form>
    </section>
  );
}
