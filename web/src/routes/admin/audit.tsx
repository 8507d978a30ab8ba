import { keepPreviousData, useMutation, useQuery } from "@tanstack/react-query";
import { Link, useNavigate, useSearch } from "@tanstack/react-router";
import { useState } from "react";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Button } from "../../ui/Button";
import { SelectField } from "../../ui/SelectField";
import { Empty, ErrorState, FormError, Loading } from "../../ui/States";
import { Time } from "../../ui/Time";
import { AuditItem, EVENTS, useNames } from "./audit-entry";
import { Pager } from "./shared";

const LogQuery = graphql(`
  query AdminSystemAuditLog($action: String, $userId: ID, $resourceType: String, $success: Boolean, $q: String, $page: Int, $perPage: Int) {
    systemAuditLog(action: $action, userId: $userId, resourceType: $resourceType, success: $success, q: $q, page: $page, perPage: $perPage) {
      count page pages
      items { id createdAt action actorId userId organizationId resourceType resourceId success ipAddress userAgent requestId metadata }
    }
  }
`);
const VerifyChains = graphql(`
  query AdminAuditChainVerification {
    auditChainVerification {
      ok checkedAt organizationsChecked unchained
      global { ok headSeq records }
      brokenOrganizations { chain ok headSeq records break { kind seq recordId detail } }
    }
  }
`);

const RESOURCES: Array<[string, string]> = [
  ["user", "Accounts"],
  ["session", "Sessions"],
  ["webauthn_credential", "Passkeys"],
  ["organization", "Organizations"],
  ["invite", "Invitations"],
  ["ssh_key", "SSH keys"],
  ["ssh_certificate", "SSH certificates"],
  ["ca", "Certificate authorities"],
  ["api_key", "API keys"],
  ["oidc_client", "Applications"],
  ["oauth_provider", "Sign-in providers"],
  ["email", "Emails"],
  ["kill_switch_event", "Kill switches"],
  ["portal_network", "Networks"],
  ["device", "Devices"],
];
const PER_PAGE = 25;

interface Filters {
  q: string;
  action: string;
  resourceType: string;
  result: "" | "ok" | "failed";
}
const NONE: Filters = { q: "", action: "", resourceType: "", result: "" };

/**
 * /admin/audit: the system audit log, newest first: every record of the installation, searched,
 * filtered by event, kind of object, outcome and account, and paged; the global audit chain's
 * verification and export (plain downloads from the REST API on the same session).
 */
export function SystemAudit() {
  const search = useSearch({ from: "/admin/audit" });
  const navigate = useNavigate({ from: "/admin/audit" });
  const [draft, setDraft] = useState<Filters>(NONE);
  const [filters, setFilters] = useState<Filters>(NONE);
  const [page, setPage] = useState(1);
  const log = useQuery({
    queryKey: ["admin", "audit", filters, search.userId ?? "", page],
    queryFn: () =>
      gql(LogQuery, {
        q: filters.q || null,
        action: filters.action || null,
        resourceType: filters.resourceType || null,
        success: filters.result === "" ? null : filters.result === "ok",
        userId: search.userId ?? null,
        page,
        perPage: PER_PAGE,
      }),
    placeholderData: keepPreviousData,
  });
  const entries = log.data?.systemAuditLog.items ?? [];
  const names = useNames(entries, search.userId ? [search.userId] : []);
  const filtered = !!(filters.q || filters.action || filters.resourceType || filters.result || search.userId);
  const apply = (next: Filters) => {
    setFilters(next);
    setPage(1);
  };
  // A choice in a list applies at once; the search text when the form is sent.
  const choose = (patch: Partial<Filters>) => {
    const next = { ...draft, ...patch };
    setDraft(next);
    apply({ ...next, q: next.q.trim() });
  };
  const person = search.userId ? names.person(search.userId) : null;

  return (
    <div className="page">
      <h1>Audit log</h1>
      <form
        className="filters"
        role="search"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          apply({ ...draft, q: draft.q.trim() });
        }}
      >
        <label className="field">
          <span className="label">Search</span>
          <input type="search" value={draft.q} onChange={(e) => setDraft({ ...draft, q: e.target.value })} placeholder="an address, a resource, a browser" />
        </label>
        <SelectField label="Event" value={draft.action} onChange={(v) => choose({ action: v })}>
          <option value="">Any event</option>
          {EVENTS.map(([group, list]) => (
            <optgroup key={group} label={group}>
              {list.map(([value, text]) => (
                <option key={value} value={value}>
                  {text}
                </option>
              ))}
            </optgroup>
          ))}
        </SelectField>
        <SelectField label="About" value={draft.resourceType} onChange={(v) => choose({ resourceType: v })}>
          <option value="">Anything</option>
          {RESOURCES.map(([value, text]) => (
            <option key={value} value={value}>
              {text}
            </option>
          ))}
        </SelectField>
        <SelectField label="Outcome" value={draft.result} onChange={(v) => choose({ result: v as Filters["result"] })}>
          <option value="">Any outcome</option>
          <option value="ok">Succeeded</option>
          <option value="failed">Failed</option>
        </SelectField>
        <Button type="submit" variant="secondary">
          Search
        </Button>
        {filtered && (
          <Button
            variant="quiet"
            onPress={() => {
              setDraft(NONE);
              apply(NONE);
              if (search.userId) void navigate({ search: {} });
            }}
          >
            Clear filters
          </Button>
        )}
      </form>
      {search.userId && (
        <p className="notice">
          Only records about{" "}
          <Link to="/admin/accounts/$userId" params={{ userId: search.userId }}>
            {person?.label ?? "this account"}
          </Link>
          .
        </p>
      )}
      {log.isPending ? (
        <Loading label="Loading the audit log…" />
      ) : log.isError ? (
        <ErrorState error={log.error} retry={() => void log.refetch()} />
      ) : entries.length === 0 ? (
        <Empty>
          <p>{filtered ? "No record matches these filters." : "Nothing has been recorded yet."}</p>
        </Empty>
      ) : (
        <>
          <ol className="activity" aria-label="Audit records">
            {entries.map((e) => (
              <AuditItem key={e.id} entry={e} names={names} />
            ))}
          </ol>
          <Pager page={log.data.systemAuditLog.page} pages={log.data.systemAuditLog.pages} count={log.data.systemAuditLog.count} noun={["record", "records"]} busy={log.isFetching} onPage={setPage} />
        </>
      )}
      <Chain />
    </div>
  );
}

/** The global chain: verified on demand, exported as a file. */
function Chain() {
  const verify = useMutation({ mutationFn: () => gql(VerifyChains) });
  const r = verify.data?.auditChainVerification;
  return (
    <section aria-labelledby="chain" className="danger-zone">
      <h2 id="chain">Audit chain</h2>
      <p>Every record is linked to the one before it by a hash and the chains' heads are signed: a record edited, removed or inserted afterwards breaks its chain.</p>
      <div className="actions">
        <Button variant="secondary" isPending={verify.isPending} onPress={() => verify.mutate()}>
          Verify every chain now
        </Button>
        <a className="btn btn-secondary" href="/api/v1/admin/audit/export?format=jsonl" download>
          Download the global chain (JSONL)
        </a>
        <a className="btn btn-secondary" href="/api/v1/admin/audit/export?format=csv" download>
          Download the global chain (CSV)
        </a>
      </div>
      <FormError error={verify.error} />
      {r && (
        <div className={`notice ${r.ok ? "notice-success" : "notice-error"}`} role="status" aria-live="polite">
          <p>
            {r.ok ? "Every chain verifies." : "A chain is broken."} Global chain: {r.global.ok ? "verifies" : "broken"} ({r.global.records} records to head {r.global.headSeq});{" "}
            {r.organizationsChecked} organizations checked
            {r.brokenOrganizations.length > 0 ? `, ${r.brokenOrganizations.length} broken` : ""}; {r.unchained} records not chained yet. Checked <Time iso={r.checkedAt} mode="full" />.
          </p>
          {r.brokenOrganizations.map((b) => (
            <p key={b.chain}>
              Organization {b.chain}: broken at record {b.break?.seq ?? "?"} ({b.break?.kind ?? "unknown"}): {b.break?.detail}
            </p>
          ))}
        </div>
      )}
    </section>
  );
}
