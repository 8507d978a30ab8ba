import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Form } from "react-aria-components";
import { ApiError, gql } from "../api";
import { graphql, type ResultOf } from "../graphql";
import type { MyOrganization } from "../shell";
import { Badge } from "../ui/Badge";
import { Button } from "../ui/Button";
import { Field } from "../ui/Field";
import { SelectField } from "../ui/SelectField";
import { FormError, Success } from "../ui/States";
import { Time } from "../ui/Time";
import { useSubmit } from "../ui/useSubmit";

/**
 * Just-in-time access on the home page (issue 37): approvers see the requests waiting for them in
 * every organization where they approve (never their own) and approve, possibly for less time, or
 * reject with a reason; members ask for a principal or a department's grants for a bounded time
 * and see their requests.
 * Two queries whatever the organizations' sizes.
 */
export const AccessRequestsQuery = graphql(`
  query AccessRequestsHome {
    pendingApprovals { id organizationId organizationName userEmail userName kind principal department role requestedMinutes reason createdAt }
    myAccessRequests { id organizationName kind principal department role state requestedMinutes grantEndsAt active decisionReason revokedAt revokeReason createdAt }
  }
`);
const Approve = graphql(`
  mutation ApproveAccessRequest($orgId: ID!, $requestId: ID!, $input: ApproveAccessInput) {
    approveAccessRequest(orgId: $orgId, requestId: $requestId, input: $input) { id state grantEndsAt }
  }
`);
const Reject = graphql(`
  mutation RejectAccessRequest($orgId: ID!, $requestId: ID!, $reason: String!) { rejectAccessRequest(orgId: $orgId, requestId: $requestId, reason: $reason) { id state } }
`);
const Ask = graphql(`
  mutation RequestAccess($orgId: ID!, $input: RequestAccessInput!) { requestAccess(orgId: $orgId, input: $input) { id state kind principal department role grantEndsAt } }
`);

type Pending = ResultOf<typeof AccessRequestsQuery>["pendingApprovals"][number];
/** What a request is for: a principal, a department's grants (its principals, as if a member), or an organization role. */
const what = (r: { kind: string; principal?: string | null; department?: string | null; role?: string | null }) =>
  r.kind === "role" ? `the ${r.role} role` : r.kind === "department" ? `the department ${r.department}` : (r.principal ?? "");
const fieldErrors = (e: unknown) => (e instanceof ApiError ? e.fieldErrors : {});

export function AccessRequests({ orgs }: { orgs: MyOrganization[] }) {
  const q = useQuery({ queryKey: ["access-requests"], queryFn: () => gql(AccessRequestsQuery), staleTime: 0 });
  const [done, setDone] = useState("");
  const members = orgs.filter((o) => o.role !== "guest");
  if (!q.data || (members.length === 0 && q.data.pendingApprovals.length === 0)) return null;
  const { pendingApprovals, myAccessRequests } = q.data;
  const refresh = (message: string) => {
    setDone(message);
    return q.refetch();
  };
  return (
    <section aria-labelledby="access-requests">
      <h2 id="access-requests">Access requests</h2>
      {done && <Success>{done}</Success>}
      {pendingApprovals.length > 0 && (
        <ul className="cards" aria-label="Requests waiting for your decision">
          {pendingApprovals.map((r) => (
            <Decide key={r.id} request={r} onDone={refresh} />
          ))}
        </ul>
      )}
      {members.length > 0 && <RequestForm orgs={members} onDone={refresh} />}
      {myAccessRequests.length > 0 && (
        <ul className="rows" aria-label="Your requests">
          {myAccessRequests.slice(0, 10).map((r) => (
            <li key={r.id}>
              <strong>{what(r)}</strong> in {r.organizationName}:{" "}
              {r.active && r.grantEndsAt ? (
                <>
                  <Badge tone="accent">granted</Badge> until <Time iso={r.grantEndsAt} mode="full" />
                </>
              ) : (
                <Badge>{r.state === "approved" ? (r.revokedAt ? "ended early" : "ended") : r.state}</Badge>
              )}
              {(r.revokeReason ?? r.decisionReason) && <span className="muted"> ({r.revokeReason ?? r.decisionReason})</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Decide({ request: r, onDone }: { request: Pending; onDone: (message: string) => Promise<unknown> }) {
  const [minutes, setMinutes] = useState(String(r.requestedMinutes));
  const [reason, setReason] = useState("");
  const qc = useQueryClient();
  const who = r.userName || r.userEmail || "Someone";
  const approve = useMutation({
    mutationFn: () => gql(Approve, { orgId: r.organizationId, requestId: r.id, input: { durationMinutes: Number(minutes) || undefined, reason: reason || undefined } }),
    onSuccess: () => Promise.all([onDone(`${who} has ${what(r)} for ${minutes} minutes.`), qc.invalidateQueries({ queryKey: ["home"] })]),
  });
  const reject = useMutation({
    mutationFn: () => gql(Reject, { orgId: r.organizationId, requestId: r.id, reason }),
    onSuccess: () => onDone(`${who}'s request for ${what(r)} was rejected.`),
  });
  const approveSubmit = useSubmit(() => approve.mutateAsync());
  const errors = { ...fieldErrors(approve.error), ...fieldErrors(reject.error) };
  return (
    <li className="card">
      <p>
        <strong>{who}</strong> asks for <strong>{what(r)}</strong> in {r.organizationName} for {r.requestedMinutes} minutes
      </p>
      <p className="muted">
        “{r.reason}”, <Time iso={r.createdAt} />
      </p>
      <Form aria-label={`Decide ${who}'s request for ${what(r)}`} validationBehavior="aria" onSubmit={approveSubmit}>
        <Field label="Minutes to grant" inputMode="numeric" value={minutes} onChange={setMinutes} error={errors.durationMinutes} description={`At most the ${r.requestedMinutes} asked for.`} />
        <Field label="Reason" value={reason} onChange={setReason} error={errors.reason} description="Required to reject; optional to approve." />
        {Object.keys(errors).length === 0 && <FormError error={approve.error ?? reject.error} />}
        <div className="actions">
          <Button type="submit" isPending={approve.isPending}>
            Approve
          </Button>
          <Button variant="secondary" isPending={reject.isPending} onPress={() => reject.mutate()}>
            Reject
          </Button>
        </div>
      </Form>
    </li>
  );
}

function RequestForm({ orgs, onDone }: { orgs: MyOrganization[]; onDone: (message: string) => Promise<unknown> }) {
  const [orgId, setOrgId] = useState(orgs[0]!.id);
  const [kind, setKind] = useState<"principal" | "department" | "role">("principal");
  // Only a role above one's own can be asked for (never owner): a member may ask to be an admin for a while.
  const canAskRole = orgs.find((o) => o.id === orgId)?.role === "member";
  const asking = kind === "role" && !canAskRole ? "principal" : kind;
  const [target, setTarget] = useState("");
  const [duration, setDuration] = useState("1h");
  const [reason, setReason] = useState("");
  const ask = useMutation({
    mutationFn: () => {
      const subject = asking === "role" ? { role: "admin" } : asking === "department" ? { department: target.trim() } : { principal: target.trim() };
      return gql(Ask, { orgId, input: { ...subject, duration: duration.trim(), reason } });
    },
    onSuccess: (d) => {
      const r = d.requestAccess;
      setTarget("");
      setReason("");
      const now = r.kind === "role" ? `You have ${what(r)} now, until the grant ends.` : `You have ${what(r)} now: keyward ssh sign includes it until the grant ends.`;
      return onDone(r.state === "approved" ? now : `Requested ${what(r)}: an approver was told.`);
    },
  });
  const submit = useSubmit(() => ask.mutateAsync());
  const errors = fieldErrors(ask.error);
  return (
    <Form className="admin-form" aria-label="Request access" validationBehavior="aria" onSubmit={submit}>
      <h3>Request access</h3>
      {orgs.length > 1 && (
        <SelectField label="Organization" value={orgId} onChange={setOrgId}>
          {orgs.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </SelectField>
      )}
      <SelectField label="Ask for" value={asking} onChange={(v) => setKind(v === "department" || v === "role" ? v : "principal")}>
        <option value="principal">A principal</option>
        <option value="department">A department's grants</option>
        {canAskRole && <option value="role">The admin role</option>}
      </SelectField>
      <div className="field-pair">
        {asking === "role" ? (
          <p className="hint">The organization's admin role for a while: an owner decides. While it lasts you sign with every principal; members, invitations, API keys and sign-in settings stay with the organization's own admins.</p>
        ) : asking === "department" ? (
          <Field label="Department" value={target} onChange={setTarget} isRequired error={errors.department} description="Its name, for example Operations: its principals, as if a member, while the grant lasts." />
        ) : (
          <Field label="Principal" value={target} onChange={setTarget} isRequired error={errors.principal} description="For example deploy." />
        )}
        <Field label="For how long" value={duration} onChange={setDuration} isRequired error={errors.duration ?? errors.durationMinutes} description="30m, 2h, 1h30m or 1d." />
      </div>
      <Field label="Reason" value={reason} onChange={setReason} isRequired error={errors.reason} description="The approvers read it; it is kept in the audit." />
      {Object.keys(errors).length === 0 && <FormError error={ask.error} />}
      <div className="actions">
        <Button type="submit" isPending={ask.isPending}>
          Request access
        </Button>
      </div>
    </Form>
  );
}
