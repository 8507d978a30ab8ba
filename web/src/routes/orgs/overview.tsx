import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { ErrorState, Loading } from "../../ui/States";
import { ElevatedNotice } from "./elevated";
import { canHold, isAdmin, useOrg } from "./layout";

const OverviewQuery = graphql(`
  query OrgOverview($orgId: ID!) {
    organization(orgId: $orgId) { id name slug description memberCount createdAt }
    certificateAuthorities(orgId: $orgId) { id caType }
    principals(orgId: $orgId) { id }
    departments(orgId: $orgId) { id }
    orgSecurityPolicy(orgId: $orgId) { mfaPolicyMode }
  }
`);

/** /orgs/<slug>: the organization at a glance, and the ten-minute path to a working one, with what is done. */
export function OrgOverview() {
  const org = useOrg();
  const q = useQuery({ queryKey: ["org", org.id, "overview"], queryFn: () => gql(OverviewQuery, { orgId: org.id }) });
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  const { organization, certificateAuthorities, principals, departments, orgSecurityPolicy } = q.data;
  const steps = [
    { done: (organization.memberCount ?? 1) > 1, text: "Invite people", to: canHold(org) ? ("/orgs/$slug/members" as const) : undefined },
    { done: orgSecurityPolicy.mfaPolicyMode === "required", text: "Require two-step verification", to: "/orgs/$slug/security" as const },
    { done: certificateAuthorities.some((c) => c.caType === "user"), text: "Create a user certificate authority", to: "/orgs/$slug/ssh" as const },
    { done: principals.length > 0 && departments.length > 0, text: "Add principals and departments with a certificate policy", to: "/orgs/$slug/departments" as const },
  ];
  return (
    <div className="page">
      <h1>{organization.name}</h1>
      <ElevatedNotice org={org} />
      {organization.description && <p className="lead">{organization.description}</p>}
      <dl className="facts">
        <div>
          <dt>Members</dt>
          <dd>{organization.memberCount ?? 0}</dd>
        </div>
        <div>
          <dt>Address</dt>
          <dd>
            <code>{organization.slug}</code>
          </dd>
        </div>
        <div>
          <dt>Certificate authorities</dt>
          <dd>{certificateAuthorities.length}</dd>
        </div>
      </dl>
      {isAdmin(org) && (
        <section aria-labelledby="path">
          <h2 id="path">To a working organization</h2>
          <ol className="checklist">
            {steps.map((s) => (
              <li key={s.text} className={s.done ? "done" : ""}>
                <Badge tone={s.done ? "good" : "neutral"}>{s.done ? "Done" : "To do"}</Badge>{" "}
                {s.to && !s.done ? (
                  <Link to={s.to} params={{ slug: org.slug }}>
                    {s.text}
                  </Link>
                ) : (
                  s.text
                )}
              </li>
            ))}
            <li>
              Members run <code>keyward login</code> and <code>keyward ssh sign</code>
            </li>
          </ol>
        </section>
      )}
    </div>
  );
}
