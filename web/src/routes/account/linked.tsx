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
    linkedAccounts { unlinkAvailable linkedAccounts { provider providerName username email displayName linkedAt lastUsedAt } }
    externalProviders { id name isActive }
  }
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
};
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

/** /account/linked: GitHub and Google accounts to sign in with; linking leaves for the provider and comes back here. */
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
    </div>
  );
}
