import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { CopyText } from "../../ui/CopyText";
import { Empty, ErrorState, Loading } from "../../ui/States";
import { Time } from "../../ui/Time";
import { ElevatedNotice } from "./elevated";
import { canHold, isAdmin, useOrg } from "./layout";
import { AdminsOnly } from "./object-list";
import "./org-admin.css";
import "./provisioning.css";

const ScimActivityQuery = graphql(`
  query ScimActivity($orgId: ID!) {
    scimActivity(orgId: $orgId) {
      baseUrl lastRequestAt lastWriteAt lastWrite
      lastError { at status scimType detail request }
      keys { apiKeyId name prefix hasScimScope revokedAt lastRequestAt lastRequest lastWriteAt lastWrite lastError { at status scimType detail request } }
    }
  }
`);

type Activity = ResultOf<typeof ScimActivityQuery>["scimActivity"];
type KeyActivity = Activity["keys"][number];
type ScimFailure = NonNullable<Activity["lastError"]>;

/** What an error status means to the admin fixing the identity provider's side. */
const STATUS_WORDS: Record<number, string> = {
  400: "refused as malformed",
  401: "not signed in",
  403: "not allowed",
  404: "not found",
  409: "conflict",
  412: "changed meanwhile",
  413: "too large",
  429: "rate limited",
  500: "failed on the server",
};

function ErrorText({ e }: { e: ScimFailure }) {
  return (
    <>
      <Badge tone="bad">
        {e.status} {STATUS_WORDS[e.status] ?? "error"}
      </Badge>{" "}
      {e.scimType && <code>{e.scimType}</code>} <code>{e.request}</code> <Time iso={e.at} />
      <p className="scim-error-detail">{e.detail}</p>
    </>
  );
}

/**
 * /orgs/<slug>/provisioning (owners and admins): connecting Okta or Entra ID over SCIM 2.0 — the
 * base URL to paste, the key to create — and what each SCIM key last did: its last request (the
 * last sync), its last successful write and its last error with the detail the IdP was told.
 */
export function Provisioning() {
  const org = useOrg();
  const admin = isAdmin(org);
  const q = useQuery({ queryKey: ["org", org.id, "scim"], queryFn: () => gql(ScimActivityQuery, { orgId: org.id }), enabled: admin });
  if (!admin) return <AdminsOnly title="Provisioning (SCIM)">Only the owner and admins of {org.name} connect an identity provider and see its activity.</AdminsOnly>;
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  const a = q.data.scimActivity;
  const live = a.keys.filter((k) => k.hasScimScope && !k.revokedAt);
  return (
    <div className="page">
      <h1>Provisioning (SCIM)</h1>
      <p className="muted">
        Your identity provider (Okta, Entra ID) can create, update, deactivate and remove the people {org.name} manages, and push its groups as departments, over SCIM 2.0. Deactivating someone there offboards them
        here in one step.
      </p>
      <ElevatedNotice org={org}>Connecting an identity provider (a SCIM key) is not shown; its activity is.</ElevatedNotice>
      {/* Connecting takes an API key, which outlives a role grant: a lasting admin role does it. */}
      {canHold(org) && (
        <section aria-labelledby="scim-connect">
          <h2 id="scim-connect">Connect your identity provider</h2>
          <ol className="scim-steps">
            <li>
              <CopyText label="SCIM base URL" value={a.baseUrl} hint="Okta: SCIM connector base URL. Entra ID: Tenant URL. The same for every organization: the key decides which one." />
            </li>
            <li>
              Create an API key with the <strong>SCIM provisioning</strong> scope and paste its secret as the token (Okta: HTTP Header, Bearer; Entra ID: Secret Token).{" "}
              <Link to="/orgs/$slug/security" params={{ slug: org.slug }} search={{ newKey: "scim" }} hash="api-keys">
                Create a SCIM key
              </Link>
            </li>
            <li>
              Use the work email address as the unique identifier (<code>userName</code>). Addresses must be at a domain {org.name} has{" "}
              <Link to="/orgs/$slug/domains" params={{ slug: org.slug }}>
                verified
              </Link>
              .
            </li>
            <li>Test the connection in the identity provider: it shows below as the key's last request.</li>
          </ol>
        </section>
      )}
      <section aria-labelledby="scim-activity">
        <div className="section-head">
          <h2 id="scim-activity">Activity</h2>
          <Button variant="secondary" size="small" isPending={q.isFetching} onPress={() => void q.refetch()}>
            Refresh
          </Button>
        </div>
        {a.keys.length === 0 ? (
          <Empty>
            <p>No SCIM key yet: create one (step 2 above) and your identity provider's requests will show here.</p>
          </Empty>
        ) : (
          <>
            <dl className="kv panel" aria-label={`SCIM activity of ${org.name}`}>
              <dt>Last sync</dt>
              <dd>{a.lastRequestAt ? <Time iso={a.lastRequestAt} /> : <span className="muted">no request yet</span>}</dd>
              <dt>Last change</dt>
              <dd>
                {a.lastWrite ? (
                  <>
                    <code>{a.lastWrite}</code> <Time iso={a.lastWriteAt} />
                  </>
                ) : (
                  <span className="muted">none yet</span>
                )}
              </dd>
              <dt>Last error</dt>
              <dd>{a.lastError ? <ErrorText e={a.lastError} /> : <span className="muted">none</span>}</dd>
            </dl>
            {live.length === 0 && <p className="notice notice-warn">No live key holds the SCIM scope: your identity provider's requests are refused.</p>}
            <h3>By key</h3>
            <ul className="objects" aria-label={`SCIM keys of ${org.name}`}>
              {a.keys.map((k) => (
                <KeyItem key={k.apiKeyId} k={k} />
              ))}
            </ul>
          </>
        )}
      </section>
    </div>
  );
}

function KeyItem({ k }: { k: KeyActivity }) {
  return (
    <li className={`object${k.revokedAt ? " revoked" : ""}`}>
      <div className="object-head">
        <h4>{k.name}</h4>
        {k.revokedAt ? <Badge tone="bad">Revoked</Badge> : k.hasScimScope ? <Badge tone="good">Active</Badge> : <Badge tone="warn">No SCIM scope</Badge>}
      </div>
      <dl className="kv">
        <dt>Starts with</dt>
        <dd>
          <code>{k.prefix}_…</code>
        </dd>
        <dt>Last request</dt>
        <dd>
          {k.lastRequestAt ? (
            <>
              <code>{k.lastRequest}</code> <Time iso={k.lastRequestAt} />
            </>
          ) : (
            <span className="muted">never</span>
          )}
        </dd>
        <dt>Last change</dt>
        <dd>
          {k.lastWrite ? (
            <>
              <code>{k.lastWrite}</code> <Time iso={k.lastWriteAt} />
            </>
          ) : (
            <span className="muted">none</span>
          )}
        </dd>
        <dt>Last error</dt>
        <dd>{k.lastError ? <ErrorText e={k.lastError} /> : <span className="muted">none</span>}</dd>
      </dl>
    </li>
  );
}
