import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { gql } from "../../api";
import { Empty, ErrorState, Loading, Success } from "../../ui/States";
import { ElevatedOnly } from "./elevated";
import { canHold, isAdmin, useOrg } from "./layout";
import { AdminsOnly, useObjectList } from "./object-list";
import { ConnectionItem } from "./sso-connection";
import { ProviderHelp, SamlHelp } from "./sso-help";
import { OidcCreateForm, OidcRedirectPanel } from "./sso-oidc";
import { SamlCreateForm } from "./sso-saml";
import { RadioChoices } from "./sso-form";
import { SsoQuery } from "./sso-shared";
import "./org-admin.css";
import "./sso.css";

const PROTOCOLS = [
  { value: "oidc", label: "OpenID Connect", hint: "Entra ID, Okta, Google Workspace, Keycloak and most current providers." },
  { value: "saml", label: "SAML 2.0", hint: "ADFS, Okta, Entra ID, Google Workspace, JumpCloud, Shibboleth: providers that give a metadata URL or file." },
] as const;

/**
 * /orgs/<slug>/sso (owners and admins): the organization's own identity provider. Lists its
 * connections; creates an OpenID Connect one (the secret is write-only) or a SAML 2.0 one (from the
 * IdP's metadata URL or document, or by hand), edits, enables or disables and deletes them; shows
 * what to register at the provider (the redirect URI; for SAML the SP values on each card), with
 * help per provider. Single sign-on only reaches addresses in the organization's verified domains:
 * without one, the screen says so and links to Domains.
 */
export function SingleSignOn() {
  const org = useOrg();
  const admin = isAdmin(org);
  const data = useQuery({ queryKey: ["org", org.id, "sso"], queryFn: () => gql(SsoQuery, { orgId: org.id }), enabled: admin && canHold(org) });
  const { done, changed, removed, focusId, setFocusId, listHeading } = useObjectList(org.id);
  const [protocol, setProtocol] = useState<"oidc" | "saml">("oidc");
  if (!admin) return <AdminsOnly title="Single sign-on">Only the owner and admins of {org.name} see and set up its single sign-on.</AdminsOnly>;
  // Single sign-on decides who signs in: a lasting admin role sets it up.
  if (!canHold(org)) return <ElevatedOnly org={org} title="Single sign-on">Setting up single sign-on is not shown.</ElevatedOnly>;
  if (data.isPending) return <Loading />;
  if (data.isError) return <ErrorState error={data.error} retry={() => void data.refetch()} />;
  const { ssoConnections: connections, departments, organizationDomains } = data.data;
  const verified = organizationDomains.filter((d) => d.status === "verified").map((d) => d.domain);
  const redirectUri = connections.find((c) => c.kind === "oidc")?.redirectUri ?? `${window.location.origin}/sso/oidc/callback`;
  const created = async (c: { id: string; name: string }) => {
    setFocusId(c.id);
    await changed(`${c.name} added. Try it with one account before requiring single sign-on.`);
  };
  return (
    <div className="page">
      <h1>Single sign-on</h1>
      <p className="muted">
        Let the people of {org.name} sign in through your organization's own identity provider (OpenID Connect or SAML 2.0). Addresses in {org.name}'s verified domains are sent there from the sign-in page;
        someone new gets an account managed by {org.name}, with the role and departments their groups map to.
      </p>
      {verified.length === 0 ? (
        <div className="notice notice-warn">
          <p>
            <strong>{org.name} has no verified domain yet.</strong> Single sign-on only reaches addresses in a verified domain, and only those get an account on their first sign-in. Verify your email domain on{" "}
            <Link to="/orgs/$slug/domains" params={{ slug: org.slug }}>
              Domains
            </Link>{" "}
            first.
          </p>
        </div>
      ) : (
        <p>
          Verified {verified.length === 1 ? "domain" : "domains"}: {verified.join(", ")}.
        </p>
      )}
      {done && <Success>{done}</Success>}
      <section aria-labelledby="sso-list">
        <h2 id="sso-list" ref={listHeading} tabIndex={-1}>
          Connections of {org.name}
        </h2>
        {connections.length === 0 ? (
          <Empty>
            <p>No connection yet. Register Keyward at your identity provider, then add the connection below.</p>
          </Empty>
        ) : (
          <ul className="objects" aria-label={`Connections of ${org.name}`}>
            {connections.map((c) => (
              <ConnectionItem
                key={c.id}
                orgId={org.id}
                orgName={org.name}
                connection={c}
                departments={departments}
                focus={focusId === c.id}
                onFocused={() => setFocusId(null)}
                onDone={changed}
                onRemoved={removed}
              />
            ))}
          </ul>
        )}
      </section>
      <RadioChoices legend="Add a connection" name="sso-protocol" options={PROTOCOLS} value={protocol} onChange={setProtocol} className="choices-row sso-protocol" />
      {protocol === "oidc" ? (
        <>
          <OidcRedirectPanel redirectUri={redirectUri} />
          <OidcCreateForm orgId={org.id} orgName={org.name} departments={departments} onCreated={created} />
          <ProviderHelp redirectUri={redirectUri} />
        </>
      ) : (
        <>
          <SamlCreateForm orgId={org.id} orgName={org.name} departments={departments} onCreated={created} />
          <SamlHelp />
        </>
      )}
    </div>
  );
}
