import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";

const LinkedQuery = graphql(`
  query AccountLinked {
    linkedAccounts {
      unlinkAvailable
      linkedAccounts { provider providerName username email displayName linkedAt lastUsedAt }
      ssoIdentities { id connectionId connectionName organization { id name } email linkedAt lastUsedAt unlinkBlockedBy }
    }
    externalProviders { id name isActive }
    mySsoConnections { id name kind organization { id name } linked }
  }
`);
const UnlinkSso = graphql(`
  mutation UnlinkSsoIdentity($identityId: ID!) { unlinkSsoIdentity(identityId: $identityId) }
`);
const StartSsoLink = graphql(`
  mutation StartSsoLink($connectionId: ID!) { startSsoLink(connectionId: $connectionId) { authorizationUrl } }
`);
const Unlink = graphql(`
  mutation UnlinkProvider($provider: String!) { unlinkExternalAccount(provider: $provider) }
`);
const StartLink = graphql(`
  mutation StartLinking($provider: String!, $next: String) { startExternalAuth(provider: $provider, flow: "link", next: $next) { authorizationUrl } }
`);

/** Where a link attempt sends the browser back. */
const HERE = "/account/linked";

const PROVIDER_NAMES: Record<string, string> = { github: "GitHub", google: "Google", sso: "Your organization's single sign-on" };

/** Back from the provider: only known codes are shown, in our own words, so a crafted link cannot put text here. */
const LINK_ERRORS: Record<string, string> = {
  OAUTH_STATE_INVALID: "This link attempt has expired, was already used, or was started in another browser. Start again.",
  OAUTH_ERROR: "The provider did not complete the request. Try again.",
  OAUTH_CANCELLED: "The link was cancelled at the provider.",
  EMAIL_MISMATCH: "That account at the provider does not list your email address as verified, so it cannot be linked.",
  IDENTITY_ALREADY_LINKED: "That account at the provider is already linked to another account.",
  PROVIDER_ALREADY_LINKED: "Your account is already linked to a different account at this provider: unlink it first.",
  PROVIDER_NOT_CONFIGURED: "Linking this provider is not available.",
  RATE_LIMIT_EXCEEDED: "Too many attempts. Wait a moment and try again.",
  SSO_NOT_AVAILABLE: "Single sign-on is not available for this organization any more (its connection was disabled or removed).",
  SSO_SAML_REFUSED: "Your organization's identity provider sent an answer that could not be accepted. Start again.",
  SSO_SAML_REPLAY: "This answer from your organization's identity provider was already used. Start again.",
  ACCOUNT_SUSPENDED: "This account is suspended. Contact your administrator.",
};

const KIND_NAMES: Record<string, string> = { oidc: "OpenID Connect", saml: "SAML" };
const own = (map: Record<string, string>, key: string | null) => (key !== null && Object.hasOwn(map, key) ? map[key] : undefined);

/** The outcome in the address when the provider sent the browser back (read once). */
function outcomeOfReturn(): { ok: string } | { error: string } | null {
  const params = new URLSearchParams(window.location.search);
  const linked = params.get("linked");
  const errorType = params.get("error_type");
  if (linked) return { ok: `${own(PROVIDER_NAMES, linked) ?? "The provider"} is linked: you can sign in with it.` };
  if (errorType || params.has("error")) return { error: own(LINK_ERRORS, errorType) ?? "The provider could not be linked. Try again." };
  return null;
}

/**
 * /account/linked: GitHub and Google accounts, and your organizations' single sign-on, to sign in
 * with; linking leaves for the provider and comes back here (single sign-on comes back to
 * /account?linked=sso, which the router sends here).
 */
export function Linked() {
  const q = useQuery({ queryKey: ["account", "linked"], queryFn: () => gql(LinkedQuery) });
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [returned] = useState(outcomeOfReturn);
  // The outcome is shown once: a reload or a shared address does not repeat it.
  useEffect(() => {
    if (returned) void navigate({ to: HERE, replace: true });
  }, [returned, navigate]);
  const [done, setDone] = useState(returned && "ok" in returned ? returned.ok : "");
  const link = useMutation({
    mutationFn: (provider: string) => gql(StartLink, { provider, next: HERE }),
    onSuccess: (r) => window.location.assign(r.startExternalAuth.authorizationUrl),
  });
  // The browser leaves for the organization's provider; the callback brings it back to /account?linked=sso.
  const linkSso = useMutation({
    mutationFn: (connectionId: string) => gql(StartSsoLink, { connectionId }),
    onSuccess: (r) => window.location.assign(r.startSsoLink.authorizationUrl),
  });

  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  const { linkedAccounts, unlinkAvailable } = q.data.linkedAccounts;
  const linkedIds = new Set(linkedAccounts.map((a) => a.provider));
  const linkable = q.data.externalProviders.filter((p) => p.isActive && !linkedIds.has(p.id));
  return (
    <div className="page narrow">
      <h1>Linked accounts</h1>
      <p className="muted">Sign in with GitHub or Google instead of a password.</p>
      {done && <Success>{done}</Success>}
      {returned && "error" in returned && !done && (
        <p className="notice notice-error" role="alert">
          {returned.error}
        </p>
      )}
      {linkedAccounts.length === 0 ? (
        <Empty>
          <p>No linked accounts.</p>
        </Empty>
      ) : (
        <ul className="rows" aria-label="Linked accounts" id="linked">
          {linkedAccounts.map((a) => (
            <li key={a.provider}>
              <span className="row-main">
                <strong>
                  {a.providerName}: {a.username || a.email || a.displayName || "linked"}
                </strong>
                <span className="muted">
                  linked <Time iso={a.linkedAt} />, last used <Time iso={a.lastUsedAt} />
                </span>
              </span>
              <ConfirmDialog
                trigger={
                  <Button variant="secondary" size="small" isDisabled={!unlinkAvailable}>
                    Unlink {a.providerName}
                  </Button>
                }
                title={`Unlink ${a.providerName}?`}
                confirmLabel={`Unlink ${a.providerName}`}
                onConfirm={async () => {
                  await gql(Unlink, { provider: a.provider });
                  setDone(`${a.providerName} unlinked.`);
                  await qc.invalidateQueries({ queryKey: ["account", "linked"] });
                }}
              >
                <p>You will no longer be able to sign in with {a.providerName}. You can link it again later.</p>
              </ConfirmDialog>
            </li>
          ))}
        </ul>
      )}
      {linkedAccounts.length > 0 && !unlinkAvailable && <p className="hint">This is your only way to sign in: add a password or a passkey before unlinking it.</p>}
      <FormError error={link.error} />
      {linkable.length > 0 && (
        <div className="actions">
          {linkable.map((p) => (
            <Button key={p.id} variant="secondary" isPending={link.isPending && link.variables === p.id} onPress={() => link.mutate(p.id)}>
              Link {p.name}
            </Button>
          ))}
        </div>
      )}
      {linkable.length === 0 && linkedAccounts.length === 0 && <p className="muted">Sign-in with GitHub or Google is not set up on this server.</p>}
      <SingleSignOn
        identities={q.data.linkedAccounts.ssoIdentities}
        connections={q.data.mySsoConnections}
        linking={linkSso}
        onUnlinked={async (name) => {
          setDone(`${name} unlinked.`);
          await qc.invalidateQueries({ queryKey: ["account", "linked"] });
        }}
      />
    </div>
  );
}

type SsoIdentity = { id: string; connectionId: string; connectionName: string; organization: { name: string }; linkedAt: string; lastUsedAt: string | null; unlinkBlockedBy: string | null };
type SsoConnection = { id: string; name: string; kind: string; organization: { name: string }; linked: boolean };

const BLOCKED: Record<string, (org: string) => string> = {
  managed: (org) => `${org} created and manages your account, so this cannot be unlinked.`,
  sso_required: (org) => `${org} requires single sign-on for your email address, so this cannot be unlinked.`,
};

/** Your organizations' identity providers: the identities linked, and the connections you can link to. */
function SingleSignOn({
  identities,
  connections,
  linking,
  onUnlinked,
}: {
  identities: SsoIdentity[];
  connections: SsoConnection[];
  linking: { mutate: (id: string) => void; isPending: boolean; variables?: string; error: unknown };
  onUnlinked: (name: string) => Promise<void>;
}) {
  const linkedIds = new Set(identities.map((i) => i.connectionId));
  const linkable = connections.filter((c) => !c.linked && !linkedIds.has(c.id));
  return (
    <section aria-labelledby="sso-title">
      <h2 id="sso-title">Single sign-on</h2>
      <p className="muted">Sign in through your organization's identity provider.</p>
      {identities.length > 0 && (
        <ul className="rows" aria-label="Single sign-on identities">
          {identities.map((i) => {
            const blocked = i.unlinkBlockedBy ? BLOCKED[i.unlinkBlockedBy]?.(i.organization.name) : undefined;
            return (
              <li key={i.id}>
                <span className="row-main">
                  <strong>{i.connectionName}</strong>
                  <span className="muted">
                    {i.organization.name} · linked <Time iso={i.linkedAt} />, last used <Time iso={i.lastUsedAt} />
                  </span>
                  {blocked && <span className="hint">{blocked}</span>}
                </span>
                {!blocked && (
                  <ConfirmDialog
                    trigger={
                      <Button variant="secondary" size="small">
                        Unlink {i.connectionName}
                      </Button>
                    }
                    title={`Unlink ${i.connectionName}?`}
                    confirmLabel={`Unlink ${i.connectionName}`}
                    onConfirm={async () => {
                      await gql(UnlinkSso, { identityId: i.id });
                      await onUnlinked(i.connectionName);
                    }}
                  >
                    <p>
                      You will no longer be able to sign in through {i.organization.name}'s identity provider ({i.connectionName}). You can link it again later.
                    </p>
                  </ConfirmDialog>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {linkable.length > 0 && (
        <ul className="rows" aria-label="Single sign-on you can link">
          {linkable.map((c) => (
            <li key={c.id}>
              <span className="row-main">
                <strong>{c.name}</strong>
                <span className="muted">
                  {c.organization.name} · {own(KIND_NAMES, c.kind) ?? c.kind}
                </span>
              </span>
              <Button variant="secondary" size="small" isPending={linking.isPending && linking.variables === c.id} onPress={() => linking.mutate(c.id)}>
                Link {c.name}
              </Button>
            </li>
          ))}
        </ul>
      )}
      <FormError error={linking.error} />
      {identities.length === 0 && linkable.length === 0 && <p className="muted">None of your organizations offers single sign-on.</p>}
    </section>
  );
}
