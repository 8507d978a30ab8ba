import { useMutation, useQuery } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { CopyButton } from "../../ui/CopyButton";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useSubmit } from "../../ui/useSubmit";
import { ElevatedOnly } from "./elevated";
import { canHold, isAdmin, useOrg } from "./layout";
import { AdminsOnly, RemoveAction, useArrivalFocus, useObjectList, type ItemProps } from "./object-list";
import "./org-admin.css";
import "./domains.css";

const DomainsQuery = graphql(`
  query OrganizationDomains($orgId: ID!) {
    organizationDomains(orgId: $orgId) { id domain status recordName recordValue createdAt verifiedAt lastCheckedAt lastCheckError nextCheckAt }
  }
`);
const AddDomain = graphql(`
  mutation AddOrganizationDomain($orgId: ID!, $domain: String!) { addOrganizationDomain(orgId: $orgId, domain: $domain) { id domain status } }
`);
const VerifyDomain = graphql(`
  mutation VerifyOrganizationDomain($orgId: ID!, $domainId: ID!) { verifyOrganizationDomain(orgId: $orgId, domainId: $domainId) { id domain status lastCheckError } }
`);
const RemoveDomain = graphql(`
  mutation RemoveOrganizationDomain($orgId: ID!, $domainId: ID!) { removeOrganizationDomain(orgId: $orgId, domainId: $domainId) { id domain } }
`);

type Domain = ResultOf<typeof DomainsQuery>["organizationDomains"][number];

const STATUS: Record<string, { label: string; tone: "good" | "warn" | "bad" | "neutral" }> = {
  pending: { label: "Pending", tone: "warn" },
  verified: { label: "Verified", tone: "good" },
  lapsed: { label: "Lapsed", tone: "bad" },
};
const statusOf = (s: string) => STATUS[s] ?? { label: s, tone: "neutral" as const };

/** The errors of adding a domain that are about the name typed: shown at the field. */
const NAME_ERRORS = new Set(["DOMAIN_NOT_CLAIMABLE", "DOMAIN_EXISTS"]);

/** "in 42 seconds", "in about 7 minutes" (the API's Retry-After, in seconds). */
function waitWords(seconds: unknown): string {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0) return "later";
  if (seconds < 90) return `in ${Math.ceil(seconds)} seconds`;
  return `in about ${Math.ceil(seconds / 60)} minutes`;
}

/** What a failed "Verify now" means, in words (the record's own problems come back as lastCheckError instead). */
function verifyProblem(error: unknown, orgName: string, domain: string): string {
  if (!(error instanceof ApiError)) return "The check could not be made. Try again.";
  switch (error.code) {
    case "RATE_LIMIT_EXCEEDED":
      return `Keyward has looked up the domains of ${orgName} many times in the last hour and is pausing to spare the DNS servers. Try again ${waitWords(error.details?.retry_after)}; the record does not need to change.`;
    case "DOMAIN_ALREADY_VERIFIED":
      return `Another organization has already verified ${domain}, and a domain belongs to one organization at most. It becomes free to verify here once they remove it.`;
    case "DOMAIN_NOT_FOUND":
      return `${domain} is no longer claimed by ${orgName} (it was removed meanwhile).`;
    default:
      return error.message;
  }
}

/**
 * /orgs/<slug>/domains (owners and admins): the domains the organization claims, each proved by a
 * DNS TXT record. Adding one shows the record to publish (name and value to copy); "Verify now"
 * looks it up and says what was found; a verified domain is re-checked daily and lapses when its
 * record goes missing; removing one lets it go.
 */
export function Domains() {
  const org = useOrg();
  const admin = isAdmin(org);
  const list = useQuery({ queryKey: ["org", org.id, "domains"], queryFn: () => gql(DomainsQuery, { orgId: org.id }), enabled: admin && canHold(org) });
  const { done, changed, removed, focusId, setFocusId, listHeading } = useObjectList(org.id);
  if (!admin) return <AdminsOnly title="Domains">Only the owner and admins of {org.name} see and verify its domains.</AdminsOnly>;
  // Verified domains decide who joins and is managed: a lasting admin role sets them.
  if (!canHold(org)) return <ElevatedOnly org={org} title="Domains">Verifying the organization's domains is not shown.</ElevatedOnly>;
  if (list.isPending) return <Loading />;
  if (list.isError) return <ErrorState error={list.error} retry={() => void list.refetch()} />;
  const domains = list.data.organizationDomains;
  return (
    <div className="page">
      <h1>Domains</h1>
      <p className="muted">
        Prove that {org.name} holds a domain by publishing a TXT record in the domain's DNS. A domain is verified for one organization at most; Keyward looks the record up again every day, and the domain lapses if
        the record goes missing.
      </p>
      {done && <Success>{done}</Success>}
      <AddForm
        orgId={org.id}
        onAdded={async (d) => {
          setFocusId(d.id);
          await changed(`${d.domain} added. Publish its TXT record below, then choose Verify now.`);
        }}
      />
      <section aria-labelledby="domain-list">
        <h2 id="domain-list" ref={listHeading} tabIndex={-1}>
          Domains of {org.name}
        </h2>
        {domains.length === 0 ? (
          <Empty>
            <p>No domains yet. Add the domain of your organization's email addresses above, e.g. example.com.</p>
          </Empty>
        ) : (
          <ul className="objects" aria-label={`Domains of ${org.name}`}>
            {domains.map((d) => (
              <DomainItem
                key={d.id}
                orgId={org.id}
                orgName={org.name}
                domain={d}
                focus={focusId === d.id}
                onFocused={() => setFocusId(null)}
                onDone={changed}
                onRemoved={removed}
              />
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

function AddForm({ orgId, onAdded }: { orgId: string; onAdded: (d: { id: string; domain: string }) => Promise<void> }) {
  const [domain, setDomain] = useState("");
  const add = useMutation({
    mutationFn: () => gql(AddDomain, { orgId, domain }),
    onSuccess: async (d) => {
      setDomain("");
      await onAdded(d.addOrganizationDomain);
    },
  });
  const submit = useSubmit(() => add.mutateAsync());
  const error = add.error instanceof ApiError ? add.error : null;
  // A malformed name (VALIDATION_ERROR at "domain"), one nobody may claim, or one already here: at the field.
  const atField = error ? (error.fieldErrors.domain ?? (NAME_ERRORS.has(error.code) ? error.message : undefined)) : undefined;
  return (
    <section aria-labelledby="add-domain">
      <h2 id="add-domain">Add a domain</h2>
      <Form validationBehavior="aria" aria-label="Add a domain" onSubmit={submit} className="inline-form">
        <Field
          label="Domain"
          name="domain"
          value={domain}
          onChange={(v) => {
            setDomain(v);
            // The API's word was about the name as it was: editing it clears the message.
            if (add.error) add.reset();
          }}
          isRequired
          error={atField}
          placeholder="example.com"
          description="The part after the @ of your organization's email addresses. Consumer mail providers (gmail.com, outlook.com…) cannot be claimed."
        />
        <Button type="submit" isPending={add.isPending}>
          Add domain
        </Button>
        {!atField && <FormError error={add.error} />}
      </Form>
    </section>
  );
}

/** A value to publish, with a Copy button named after what it copies; the outcome is announced. */
function CopyValue({ value, copyLabel }: { value: string; copyLabel: string }) {
  return (
    <div className="dns-value">
      <code>{value}</code>
      <span className="dns-copy">
        <CopyButton value={value} label={copyLabel} />
      </span>
    </div>
  );
}

/** The TXT record that proves a domain: type, name and value, and how to publish it. */
function TxtRecord({ d }: { d: Domain }) {
  const host = d.recordName.endsWith(`.${d.domain}`) ? d.recordName.slice(0, -(d.domain.length + 1)) : null;
  return (
    <>
      <dl className="kv dns-record">
        <dt>Type</dt>
        <dd>
          <code>TXT</code>
        </dd>
        <dt>Name</dt>
        <dd>
          <CopyValue value={d.recordName} copyLabel={`Copy the record name for ${d.domain}`} />
          {host && (
            <p className="hint">
              If your DNS provider adds the domain by itself, enter only <code>{host}</code>.
            </p>
          )}
        </dd>
        <dt>Value</dt>
        <dd>
          <CopyValue value={d.recordValue} copyLabel={`Copy the record value for ${d.domain}`} />
          <p className="hint">Exactly as shown; some providers put it in quotes, which is fine.</p>
        </dd>
      </dl>
      <details className="more">
        <summary>As a zone file line</summary>
        <code className="code-block">{`${d.recordName}. 3600 IN TXT "${d.recordValue}"`}</code>
      </details>
    </>
  );
}

function DomainItem({
  orgId,
  orgName,
  domain: d,
  focus,
  onFocused,
  onDone,
  onRemoved,
}: ItemProps & { domain: Domain }) {
  // A domain just added: focus goes to it, so the keyboard continues to its record and "Verify now".
  const heading = useArrivalFocus(focus, onFocused);
  const [checked, setChecked] = useState(false);
  const verify = useMutation({
    mutationFn: () => gql(VerifyDomain, { orgId, domainId: d.id }),
    onSuccess: async (r) => {
      setChecked(true);
      const v = r.verifyOrganizationDomain;
      await onDone(v.status === "verified" ? `${v.domain} is verified.` : "");
      // "Verify now" is gone once the domain is verified: focus stays with the domain, not lost to the page.
      if (v.status === "verified") heading.current?.focus();
    },
  });
  const busy = useRef(false);
  const check = () => {
    if (busy.current) return;
    busy.current = true;
    setChecked(false);
    verify
      .mutateAsync()
      .catch(() => undefined)
      .finally(() => (busy.current = false));
  };
  const st = statusOf(d.status);
  const proving = d.status !== "verified";
  return (
    <li className="object domain">
      <div className="object-head">
        <h3 ref={heading} tabIndex={-1}>
          {d.domain}
        </h3>
        <Badge tone={st.tone}>{st.label}</Badge>
      </div>
      {d.status === "verified" ? (
        <>
          <p>
            Verified on <Time iso={d.verifiedAt} mode="full" />. Keep the TXT record published: Keyward looks it up again every day.
          </p>
          {d.lastCheckError && (
            <p className="notice notice-warn">
              The last re-check did not find the record: {d.lastCheckError}. Publish it again before the domain lapses.
            </p>
          )}
          <details className="more">
            <summary>The TXT record</summary>
            <TxtRecord d={d} />
          </details>
        </>
      ) : (
        <>
          <p>
            {d.status === "lapsed"
              ? `The TXT record went missing on consecutive checks, so ${d.domain} no longer counts for ${orgName}. Publish the record again, then choose Verify now.`
              : `To prove ${orgName} holds ${d.domain}, add this record where ${d.domain}'s DNS is managed (your registrar or DNS provider), then choose Verify now. A new record can take a few minutes to be seen.`}
          </p>
          <TxtRecord d={d} />
        </>
      )}
      <dl className="kv">
        <dt>Added</dt>
        <dd>
          <Time iso={d.createdAt} />
        </dd>
        <dt>Last checked</dt>
        <dd>
          <Time iso={d.lastCheckedAt} />
        </dd>
        {d.status === "verified" && d.nextCheckAt && (
          <>
            <dt>Next check</dt>
            <dd>
              <Time iso={d.nextCheckAt} />
            </dd>
          </>
        )}
      </dl>
      {/* The outcome of the last look-up, announced when "Verify now" brings a new one. */}
      <div role="status" aria-live="polite" className="check-outcome">
        {proving && d.lastCheckedAt && d.lastCheckError && (
          <p className="notice notice-warn">
            <strong>{checked ? "Not verified yet." : "Not found at the last check."}</strong> {d.lastCheckError}.
          </p>
        )}
      </div>
      {verify.error ? (
        <p className="notice notice-error" role="alert">
          {verifyProblem(verify.error, orgName, d.domain)}
        </p>
      ) : null}
      <div className="actions">
        {proving && (
          <Button isPending={verify.isPending} onPress={check} aria-label={`Verify now: ${d.domain}`}>
            Verify now
          </Button>
        )}
        <RemoveAction
          verb="Remove"
          noun="domain"
          name={d.domain}
          onConfirm={async () => {
            await gql(RemoveDomain, { orgId, domainId: d.id });
            await onRemoved(`${d.domain} was removed.`);
          }}
        >
          {d.status === "verified" ? (
            <p>
              {orgName} lets go of {d.domain}: it no longer counts for {orgName}, and another organization may verify it. The TXT record can then be deleted from DNS.
            </p>
          ) : (
            <p>The claim on {d.domain} is dropped and its TXT record value stops counting. Adding the domain again gives a new value to publish.</p>
          )}
        </RemoveAction>
      </div>
    </li>
  );
}
