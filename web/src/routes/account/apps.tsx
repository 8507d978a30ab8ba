import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Empty, ErrorState, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";

const AppsQuery = graphql(`
  query AccountApps { myConsents { clientId clientName scopes updatedAt } }
`);
const RevokeConsent = graphql(`
  mutation RevokeMyConsent($clientId: String!) { revokeConsent(clientId: $clientId) }
`);

/** /account/apps: the applications you allowed to sign you in; withdrawing ends their access. */
export function Apps() {
  const q = useQuery({ queryKey: ["account", "apps"], queryFn: () => gql(AppsQuery) });
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  return (
    <div className="page narrow">
      <h1>Applications</h1>
      <p className="muted">Applications you allowed to sign you in and read your profile. Withdrawing ends their access.</p>
      {done && <Success>{done}</Success>}
      {q.data.myConsents.length === 0 ? (
        <Empty>
          <p>No application has access to your account.</p>
        </Empty>
      ) : (
        <ul className="rows" aria-label="Applications you allowed" id="consent-list">
          {q.data.myConsents.map((c) => (
            <li key={c.clientId}>
              <span className="row-main">
                <strong>{c.clientName}</strong>
                <span className="muted">
                  allowed <Time iso={c.updatedAt} />
                </span>
                <span className="scopes">
                  {c.scopes.map((s) => (
                    <code key={s}>{s}</code>
                  ))}
                </span>
              </span>
              <ConfirmDialog
                trigger={
                  <Button variant="secondary" size="small" aria-label={`Withdraw access of ${c.clientName}`}>
                    Withdraw
                  </Button>
                }
                title={`Withdraw ${c.clientName}'s access?`}
                confirmLabel="Withdraw access"
                onConfirm={async () => {
                  await gql(RevokeConsent, { clientId: c.clientId });
                  setDone(`${c.clientName} no longer has access to your account.`);
                  await qc.invalidateQueries({ queryKey: ["account", "apps"] });
                }}
              >
                <p>Its sign-ins and tokens end now; it must ask you again before it can sign you in.</p>
              </ConfirmDialog>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
