import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { AuditDetails } from "../../ui/AuditDetails";
import { useState } from "react";
import { gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { useShell } from "../../shell";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { Empty, ErrorState, FormError, Loading } from "../../ui/States";
import { Time } from "../../ui/Time";
import { isAdmin, useOrg } from "./layout";
import "./org-admin.css";

const PeopleQuery = graphql(`
  query OrgAuditPeople($orgId: ID!) { members(orgId: $orgId) { userId email fullName } }
`);
const ActivityQuery = graphql(`
  query OrgActivity($orgId: ID!, $userId: ID, $action: String, $since: DateTimeISO, $until: DateTimeISO, $cursor: String, $limit: Int) {
    organizationActivity(orgId: $orgId, userId: $userId, action: $action, since: $since, until: $until, cursor: $cursor, limit: $limit) {
      nextCursor
      items { id createdAt action actorId userId resourceType resourceId success ipAddress userAgent requestId metadata }
    }
  }
`);
const VerifyChains = graphql(`
  query AuditChainVerification {
    auditChainVerification {
      ok checkedAt organizationsChecked unchained
      global { ok headSeq records }
      brokenOrganizations { chain ok fromSeq headSeq records break { kind seq recordId detail } }
    }
  }
`);

/** The start of a calendar day (YYYY-MM-DD from a date input) in the reader's zone, `days` later. */
const dayStart = (day: string, days = 0): string | undefined => {
  const [y, m, d] = day.split("-").map(Number);
  if (!y || !m || !d) return undefined;
  return new Date(y, m - 1, d + days).toISOString();
};

const LastCheck = graphql(`
  query OrgAuditChainCheck($orgId: ID!) {
    organizationAuditChainCheck(orgId: $orgId) { ok checkedAt fromSeq headSeq records break { kind seq recordId detail } }
  }
`);
const VerifyOrgChain = graphql(`
  mutation VerifyOrgAuditChain($orgId: ID!) {
    verifyOrganizationAuditChain(orgId: $orgId) { ok checkedAt fromSeq headSeq records break { kind seq recordId detail } }
  }
`);
type Check = NonNullable<ResultOf<typeof LastCheck>["organizationAuditChainCheck"]>;

type Entry = ResultOf<typeof ActivityQuery>["organizationActivity"]["items"][number];
const PAGE = 25;

/** The events an organization's log holds, by area, in words (the API filters on the exact name). */
const EVENTS: Array<[string, Array<[string, string]>]> = [
  [
    "Organization",
    [
      ["org.create", "Organization created"],
      ["org.update", "Organization changed"],
      ["org.ownership.transferred", "Ownership transferred"],
      ["org.security_policy.update", "Two-step policy changed"],
    ],
  ],
  [
    "Members",
    [
      ["ORG_INVITE_SENT", "Invitation sent"],
      ["ORG_INVITE_RESENT", "Invitation resent"],
      ["ORG_INVITE_ACCEPTED", "Invitation accepted"],
      ["ORG_INVITE_DECLINED", "Invitation declined"],
      ["ORG_INVITE_CANCELLED", "Invitation cancelled"],
      ["org.member.add", "Member added"],
      ["org.member.role_change", "Role changed"],
      ["org.member.remove", "Member removed"],
      ["org.member.leave", "Member left"],
      ["org.member.offboarded", "Member offboarded"],
      ["org.member.reinstated", "Member reinstated"],
      ["mfa.policy.reminder_sent", "Two-step reminder sent"],
      ["mfa.policy.user_suspended", "Member past the two-step deadline"],
      ["mfa.policy.user_compliant", "Member added a second step"],
    ],
  ],
  [
    "Departments and principals",
    [
      ["department.created", "Department created"],
      ["department.updated", "Department changed"],
      ["department.deleted", "Department deleted"],
      ["department.member.added", "Added to a department"],
      ["department.member.removed", "Removed from a department"],
      ["department.cert_policy.updated", "Certificate policy changed"],
      ["principal.created", "Principal created"],
      ["principal.deleted", "Principal deleted"],
      ["principal.member.added", "Principal granted"],
      ["principal.member.removed", "Principal withdrawn"],
    ],
  ],
  [
    "SSH",
    [
      ["ca.created", "Certificate authority created"],
      ["ca.updated", "Certificate authority changed"],
      ["ca.key.rotated", "CA key rotated"],
      ["ca.deleted", "Certificate authority deleted"],
      ["ssh.cert.issued", "Certificate issued"],
      ["ssh.cert.failed", "Certificate refused"],
      ["ssh.cert.revoked", "Certificate revoked"],
      ["sudo.check", "Sudo check"],
    ],
  ],
  [
    "API keys and applications",
    [
      ["api_key.created", "API key created"],
      ["api_key.updated", "API key changed"],
      ["api_key.revoked", "API key revoked"],
      ["oidc.client.created", "Application registered"],
      ["oidc.client.updated", "Application changed"],
      ["oidc.client.secret_rotated", "Application secret rotated"],
      ["oidc.client.deleted", "Application deleted"],
      ["oidc.grant.success", "Signed in to an application"],
      ["oidc.token.issued", "Application token issued"],
      ["oidc.revocation", "Application token revoked"],
      ["oidc.refresh_token.reuse", "Refresh token reused"],
      ["oidc.error", "Application request refused"],
    ],
  ],
  [
    "Networks",
    [
      ["network.approval.requested", "Network access requested"],
      ["network.approval.approved", "Network access approved"],
      ["network.approval.rejected", "Network access rejected"],
      ["network.activation.started", "Network activation started"],
      ["network.kill_switch.triggered", "Kill switch triggered"],
      ["network.kill_switch.lifted", "Kill switch lifted"],
    ],
  ],
  ["Audit", [["audit.chain.exported", "Audit chain exported"]]],
];
const EVENT_WORDS = new Map(EVENTS.flatMap(([, list]) => list));

/**
 * /orgs/<slug>/audit: the organization's activity, newest first, filtered by person and event and
 * paged by cursor; the audit chain's export (JSONL, CSV: plain downloads from the REST API on the
 * same session) and, for operators, its verification.
 */
export function Audit() {
  const org = useOrg();
  const admin = isAdmin(org);
  const superadmin = useShell().data?.me.isSuperadmin ?? false;
  const [person, setPerson] = useState("");
  const [event, setEvent] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const since = dayStart(from);
  const until = dayStart(to, 1);
  const people = useQuery({ queryKey: ["org", org.id, "audit", "people"], queryFn: () => gql(PeopleQuery, { orgId: org.id }), enabled: admin });
  const activity = useInfiniteQuery({
    queryKey: ["org", org.id, "audit", "activity", person, event, since, until],
    queryFn: ({ pageParam }) =>
      gql(ActivityQuery, {
        orgId: org.id,
        limit: PAGE,
        ...(person ? { userId: person } : {}),
        ...(event ? { action: event } : {}),
        ...(since ? { since } : {}),
        ...(until ? { until } : {}),
        ...(pageParam ? { cursor: pageParam } : {}),
      }),
    initialPageParam: "",
    getNextPageParam: (last) => last.organizationActivity.nextCursor ?? undefined,
    enabled: admin,
  });

  if (!admin) {
    return (
      <div className="page">
        <h1>Audit</h1>
        <Empty>
          <p>Only the owner and admins of {org.name} read its activity.</p>
        </Empty>
      </div>
    );
  }
  const names = new Map((people.data?.members ?? []).map((m) => [m.userId, m.fullName || m.email]));
  const nameOf = (id: string) => names.get(id) ?? `a former member (${id.slice(0, 8)})`;
  const entries = activity.data?.pages.flatMap((p) => p.organizationActivity.items) ?? [];
  const filtered = !!person || !!event || !!since || !!until;
  // An event seen in the log that the list above does not name can still be chosen.
  const others = [...new Set(entries.map((e) => e.action))].filter((a) => !EVENT_WORDS.has(a) && a !== event).sort();

  return (
    <div className="page">
      <h1>Audit</h1>
      <section aria-labelledby="activity">
        <h2 id="activity">Activity</h2>
        <div className="filters" role="search" aria-label={`Filter the activity of ${org.name}`}>
          <label className="field">
            <span className="label">Person</span>
            <select value={person} onChange={(e) => setPerson(e.target.value)} disabled={people.isPending}>
              <option value="">Anyone</option>
              {(people.data?.members ?? []).map((m) => (
                <option key={m.userId} value={m.userId}>
                  {m.fullName ? `${m.fullName} (${m.email})` : m.email}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span className="label">Event</span>
            <select value={event} onChange={(e) => setEvent(e.target.value)}>
              <option value="">Any event</option>
              {EVENTS.map(([group, list]) => (
                <optgroup key={group} label={group}>
                  {list.map(([value, words]) => (
                    <option key={value} value={value}>
                      {words}
                    </option>
                  ))}
                </optgroup>
              ))}
              {(others.length > 0 || (event && !EVENT_WORDS.has(event))) && (
                <optgroup label="Other">
                  {[...(event && !EVENT_WORDS.has(event) ? [event] : []), ...others].map((a) => (
                    <option key={a} value={a}>
                      {a}
                    </option>
                  ))}
                </optgroup>
              )}
            </select>
          </label>
          <label className="field">
            <span className="label">From</span>
            <input type="date" value={from} max={to || undefined} onChange={(e) => setFrom(e.target.value)} />
          </label>
          <label className="field">
            <span className="label">To</span>
            <input type="date" value={to} min={from || undefined} onChange={(e) => setTo(e.target.value)} />
          </label>
          {filtered && (
            <Button
              variant="secondary"
              onPress={() => {
                setPerson("");
                setEvent("");
                setFrom("");
                setTo("");
              }}
            >
              Clear filters
            </Button>
          )}
        </div>
        {people.isError && <ErrorState error={people.error} retry={() => void people.refetch()} />}
        {activity.isPending ? (
          <Loading label="Loading activity…" />
        ) : activity.isError && entries.length === 0 ? (
          <ErrorState error={activity.error} retry={() => void activity.refetch()} />
        ) : entries.length === 0 ? (
          <Empty>
            <p>{filtered ? "Nothing matches these filters." : `Nothing has happened in ${org.name} yet.`}</p>
          </Empty>
        ) : (
          <>
            <p className="muted" role="status" aria-live="polite">
              {entries.length === 1 ? "1 record" : `${entries.length} records`}
              {activity.hasNextPage ? ", newest first; older ones below" : ", newest first"}
            </p>
            <ol className="activity" aria-label={`Activity of ${org.name}`}>
              {entries.map((e) => (
                <ActivityItem key={e.id} entry={e} nameOf={nameOf} />
              ))}
            </ol>
            {activity.isFetchNextPageError && <ErrorState error={activity.error} retry={() => void activity.fetchNextPage()} />}
            {activity.hasNextPage && (
              <div className="actions">
                <Button variant="secondary" isPending={activity.isFetchingNextPage} onPress={() => void activity.fetchNextPage()}>
                  Show older
                </Button>
              </div>
            )}
          </>
        )}
      </section>
      <section aria-labelledby="chain">
        <h2 id="chain">Audit chain</h2>
        <p>
          Every record of {org.name} is linked to the one before it by a hash, and the chain's head is signed: a record edited, removed or inserted afterwards breaks
          the chain.
        </p>
        <h3>Export</h3>
        <p className="muted">The whole chain with each record's seq, prev_hash and hash, after the signed head and its public key, to keep or to verify elsewhere.</p>
        <div className="downloads">
          <a className="btn btn-secondary" href={`/api/v1/organizations/${org.id}/audit/export?format=jsonl`} download>
            Download JSONL
          </a>
          <a className="btn btn-secondary" href={`/api/v1/organizations/${org.id}/audit/export?format=csv`} download>
            Download CSV
          </a>
        </div>
        <OrgChainCheck orgId={org.id} orgName={org.name} />
        {superadmin && <AllChainsCheck orgId={org.id} orgName={org.name} />}
      </section>
    </div>
  );
}

function ActivityItem({ entry: e, nameOf }: { entry: Entry; nameOf: (id: string) => string }) {
  const words = EVENT_WORDS.get(e.action);
  // A record made by an organization API key names the key (metadata.actor), not a person.
  const key = (e.metadata as { actor?: { kind?: string; prefix?: string } }).actor;
  const actor = e.actorId ? nameOf(e.actorId) : key?.kind === "api_key" ? `API key ${key.prefix ?? ""}_…` : "Keyward";
  const about = e.userId && e.userId !== e.actorId ? nameOf(e.userId) : null;
  const metadata = Object.keys(e.metadata).length > 0 ? JSON.stringify(e.metadata, null, 2) : null;
  return (
    <li>
      <div className="activity-line">
        <strong>{words ?? e.action}</strong>
        {words && <code className="muted">{e.action}</code>}
        {!e.success && <Badge tone="bad">Failed</Badge>}
        <span className="activity-when">
          <Time iso={e.createdAt} mode="full" />
        </span>
      </div>
      <div className="muted">
        by {actor}
        {about && <> · about {about}</>}
        {e.resourceType && (
          <>
            {" "}
            · {e.resourceType.replace(/_/g, " ")} <code>{e.resourceId}</code>
          </>
        )}
      </div>
      <AuditDetails e={e} metadata={metadata} />
    </li>
  );
}

/** What a check found, in words: intact, or the first broken link. */
function CheckOutcome({ check, orgName }: { check: Check; orgName: string }) {
  return (
    <div className={`notice ${check.ok ? "notice-success" : "notice-error"}`}>
      {check.ok ? (
        <p>
          The chain of {orgName} verifies: {check.records === 1 ? "1 record" : `${check.records} records`} from {check.fromSeq === 0 ? "the start" : `checkpoint ${check.fromSeq}`} to the signed head ({check.headSeq}).
        </p>
      ) : (
        <p>
          The chain of {orgName} is broken at record {check.break?.seq ?? "?"} ({check.break?.kind.replace("_", " ") ?? "unknown"}): {check.break?.detail}
        </p>
      )}
      <p className="muted">
        Checked <Time iso={check.checkedAt} mode="full" />.
      </p>
    </div>
  );
}

/**
 * The organization's admins verify its chain from its signed checkpoint to its signed head; the
 * last outcome (theirs or an operator's) shows here and on their home screen.
 */
function OrgChainCheck({ orgId, orgName }: { orgId: string; orgName: string }) {
  const qc = useQueryClient();
  const last = useQuery({ queryKey: ["org", orgId, "audit", "check"], queryFn: () => gql(LastCheck, { orgId }) });
  const verify = useMutation({
    mutationFn: () => gql(VerifyOrgChain, { orgId }),
    onSuccess: async () => qc.invalidateQueries({ queryKey: ["org", orgId] }),
  });
  const check = verify.data?.verifyOrganizationAuditChain ?? last.data?.organizationAuditChainCheck ?? null;
  return (
    <>
      <h3>Verification</h3>
      <p className="muted">Recompute every hash from the signed checkpoint to the signed head and check both signatures. With the export you can also check it yourself.</p>
      <div role="status" aria-live="polite">
        {last.isPending ? (
          <Loading label="Loading the last verification…" />
        ) : last.isError ? (
          <ErrorState error={last.error} retry={() => void last.refetch()} />
        ) : check ? (
          <CheckOutcome check={check} orgName={orgName} />
        ) : (
          <p>The chain of {orgName} has not been verified yet.</p>
        )}
      </div>
      <Button variant="secondary" isPending={verify.isPending} onPress={() => verify.mutate()}>
        Verify the chain now
      </Button>
      <FormError error={verify.error} />
    </>
  );
}

/** Operators (superadmins) verify every chain at once: this organization's, every other one, and the global one. */
function AllChainsCheck({ orgId, orgName }: { orgId: string; orgName: string }) {
  const verify = useMutation({ mutationFn: () => gql(VerifyChains) });
  const r = verify.data?.auditChainVerification;
  const broken = r?.brokenOrganizations.find((b) => b.chain === orgId);
  return (
    <>
      <h3>Every chain</h3>
      <p className="muted">As an operator you can verify every chain now, from its signed checkpoint to its signed head.</p>
      <Button variant="secondary" isPending={verify.isPending} onPress={() => verify.mutate()}>
        Verify the audit chains
      </Button>
      <FormError error={verify.error} />
      {r && (
        <div className={`notice ${broken || !r.global.ok ? "notice-error" : "notice-success"}`} role="status" aria-live="polite">
          {broken ? (
            <p>
              The chain of {orgName} is broken at record {broken.break?.seq ?? "?"} ({broken.break?.kind ?? "unknown"}): {broken.break?.detail}
            </p>
          ) : (
            <p>The chain of {orgName} verifies.</p>
          )}
          <p>
            Global chain: {r.global.ok ? "verifies" : "broken"} ({r.global.records} records to head {r.global.headSeq}); {r.organizationsChecked} organizations checked
            {r.brokenOrganizations.length > 0 ? `, ${r.brokenOrganizations.length} broken` : ""}; {r.unchained} records not chained yet. Checked <Time iso={r.checkedAt} mode="full" />.
          </p>
        </div>
      )}
    </>
  );
}
