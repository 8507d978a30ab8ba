import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { gql } from "../api";
import { graphql } from "../graphql";
import type { MyOrganization } from "../shell";
import { canHold } from "./orgs/layout";

/**
 * What an organization's admin should look at now, for one organization they administer: its
 * invitations waiting for an answer, members past the two-step deadline, network requests someone
 * else asked for (the admin decides them; their own wait for another manager), certificate
 * authorities whose key is over a year old, and an audit chain found broken (or not verified for a
 * quarter) at its last verification, by the organization's admins or an operator. One query per
 * organization administered, each a fixed number of statements whatever the organization's size.
 */
export const OrgAttentionQuery = graphql(`
  query OrgAttention($orgId: ID!, $lasting: Boolean = true) {
    invites(orgId: $orgId) @include(if: $lasting) { id expired }
    orgMfaCompliance(orgId: $orgId) @include(if: $lasting) { userId status }
    pendingNetworkApprovals(orgId: $orgId) { id userId }
    certificateAuthorities(orgId: $orgId) { id name caType updatedAt }
    organizationAuditChainCheck(orgId: $orgId) { ok checkedAt break { kind seq } }
  }
`);

const DAY_MS = 86_400_000;
const YEAR_MS = 365 * DAY_MS;
const QUARTER_MS = 90 * DAY_MS;
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * The query of one organization's attention, for useQueries: always read again on opening. A
 * temporary admin (a role grant) reads neither invitations nor two-step standing: they need a
 * lasting admin role (invites.manage, members.manage).
 */
export const orgAttentionQuery = (org: MyOrganization) => {
  const lasting = canHold(org);
  return { queryKey: ["org", org.id, "attention", lasting], queryFn: () => gql(OrgAttentionQuery, { orgId: org.id, lasting }), staleTime: 0 };
};

type OrgAttentionData = Awaited<ReturnType<ReturnType<typeof orgAttentionQuery>["queryFn"]>>;

/** What needs an admin in one organization, as list items (none when nothing does). */
export function orgAttentionItems(org: MyOrganization, data: OrgAttentionData, me: string, now: number) {
  const { invites = [], orgMfaCompliance = [], pendingNetworkApprovals, certificateAuthorities, organizationAuditChainCheck: chain } = data;
  const waiting = invites.filter((i) => !i.expired).length;
  const expired = invites.length - waiting;
  const pastDue = orgMfaCompliance.filter((c) => c.status === "past_due").length;
  const requests = pendingNetworkApprovals.filter((a) => a.userId !== me).length;
  const oldCas = certificateAuthorities.filter((c) => now - new Date(c.updatedAt).getTime() > YEAR_MS);
  const slug = { slug: org.slug };
  const staleChain = chain?.ok && now - new Date(chain.checkedAt).getTime() > QUARTER_MS;
  const items = [
    chain && !chain.ok && (
      <li key="chain" className="notice notice-error">
        The audit chain of {org.name} was found broken at record {chain.break?.seq ?? "?"} ({chain.break?.kind.replace("_", " ") ?? "unknown"}): records were changed after they were written.{" "}
        <Link to="/orgs/$slug/audit" params={slug}>
          See the audit
        </Link>
      </li>
    ),
    pastDue > 0 && (
      <li key="mfa" className="notice notice-error">
        {plural(pastDue, "member is", "members are")} past the two-step deadline in {org.name}.{" "}
        <Link to="/orgs/$slug/security" params={slug}>
          See who
        </Link>
      </li>
    ),
    requests > 0 && (
      <li key="requests" className="notice notice-warn">
        {plural(requests, "network request waits", "network requests wait")} for a decision in {org.name}.{" "}
        <Link to="/orgs/$slug/networks/requests" params={slug}>
          Decide
        </Link>
      </li>
    ),
    (waiting > 0 || expired > 0) && (
      <li key="invites" className="notice">
        {waiting > 0 && `${plural(waiting, "invitation waits", "invitations wait")} for an answer in ${org.name}. `}
        {expired > 0 && `${plural(expired, "invitation", "invitations")} expired unanswered. `}
        <Link to="/orgs/$slug/members" params={slug}>
          {expired > 0 ? "Resend or cancel" : "See them"}
        </Link>
      </li>
    ),
    oldCas.length > 0 && (
      <li key="cas" className="notice">
        {oldCas.map((c) => c.name).join(", ")} in {org.name} {oldCas.length === 1 ? "has" : "have"} used the same key for over a year: rotate it (the old key stays trusted during the overlap).{" "}
        <Link to="/orgs/$slug/ssh" params={slug}>
          Certificate authorities
        </Link>
      </li>
    ),
    staleChain && (
      <li key="chain-stale" className="notice">
        The audit chain of {org.name} was last verified {Math.floor((now - new Date(chain.checkedAt).getTime()) / DAY_MS)} days ago.{" "}
        <Link to="/orgs/$slug/audit" params={slug}>
          Verify it
        </Link>
      </li>
    ),
  ].filter(Boolean);
  return items;
}

/**
 * What Keyward's operators should look at now: email that could not be delivered (failed for good,
 * or out of attempts), and people cut off every network by a global kill switch still in force.
 */
export const OperatorAttentionQuery = graphql(`
  query OperatorAttention {
    failed: emailOutbox(status: "failed", perPage: 1) { count }
    dead: emailOutbox(status: "dead", perPage: 1) { count }
    globalKillSwitches(inForce: true, perPage: 1) { count }
  }
`);

export function OperatorAttention() {
  const q = useQuery({ queryKey: ["admin", "attention"], queryFn: () => gql(OperatorAttentionQuery), staleTime: 0 });
  if (!q.data) return null;
  const undelivered = q.data.failed.count + q.data.dead.count;
  const cut = q.data.globalKillSwitches.count;
  const items = [
    undelivered > 0 && (
      <li key="outbox" className="notice notice-error">
        {plural(undelivered, "email was", "emails were")} not delivered.{" "}
        <Link to="/admin/outbox">See why and retry</Link>
      </li>
    ),
    cut > 0 && (
      <li key="kill-switch" className="notice notice-warn">
        {plural(cut, "person is", "people are")} cut off every network by a global kill switch.{" "}
        <Link to="/admin/kill-switch">Review</Link>
      </li>
    ),
  ].filter(Boolean);
  if (items.length === 0) return null;
  return (
    <section aria-labelledby="as-operator">
      <h2 id="as-operator">For Keyward's operators</h2>
      <ul className="attention" aria-label="What needs an operator">
        {items}
      </ul>
    </section>
  );
}
