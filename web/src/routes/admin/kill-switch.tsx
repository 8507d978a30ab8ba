import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useSearch } from "@tanstack/react-router";
import { useState } from "react";
import { ApiError, gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { useShell } from "../../shell";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { SelectField } from "../../ui/SelectField";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Empty, ErrorState, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { TimeLeft } from "../../ui/TimeLeft";
import { Pager, plural, who, words } from "./shared";

const EventsQuery = graphql(`
  query AdminGlobalKillSwitches($inForce: Boolean, $page: Int, $perPage: Int) {
    globalKillSwitches(inForce: $inForce, page: $page, perPage: $perPage) {
      count page pages
      items { id reason sessionsEnded createdAt liftedAt target { id email fullName deleted } triggeredBy { id email fullName } liftedBy { id email fullName } }
    }
  }
`);
const PeopleQuery = graphql(`
  query AdminKillSwitchPeople($q: String) { adminUsers(q: $q, perPage: 10) { count items { id email fullName } } }
`);
const PreviewQuery = graphql(`
  query AdminGlobalKillSwitchPreview($userId: ID!) {
    globalKillSwitchPreview(userId: $userId) {
      person { id email fullName }
      inForceEventId
      memberships { organizationName networkName deviceName state activeUntil }
    }
  }
`);
const Trigger = graphql(`
  mutation AdminTriggerGlobalKillSwitch($input: GlobalKillSwitchInput!) {
    triggerGlobalKillSwitch(input: $input) { controllerSynced event { id sessionsEnded target { email fullName } } }
  }
`);
const Lift = graphql(`
  mutation AdminLiftGlobalKillSwitch($eventId: ID!) { liftGlobalKillSwitch(eventId: $eventId) { id liftedAt } }
`);

type Event = ResultOf<typeof EventsQuery>["globalKillSwitches"]["items"][number];
type Preview = ResultOf<typeof PreviewQuery>["globalKillSwitchPreview"];
type Done = (text: string, warn?: string) => Promise<unknown>;
// Memberships a kill switch still has something to cut on.
const LIVE = new Set(["approved_inactive", "joined_deauthorized", "active_authorized", "activation_expired", "pending_manager_approval", "pending_request"]);

/**
 * /admin/kill-switch: the global kill switch. An operator cuts one person off every network of
 * every organization at once (activations end, devices are deauthorized at each controller, access
 * stays suspended) after a confirmation naming what it cuts; the ones in force, lifted here; and
 * the history.
 */
export function GlobalKillSwitch() {
  const search = useSearch({ from: "/admin/kill-switch" });
  const qc = useQueryClient();
  const [done, setDone] = useState<{ text: string; warn?: string } | null>(null);
  const changed: Done = async (text, warn) => {
    setDone({ text, warn });
    await qc.invalidateQueries({ queryKey: ["admin"] });
  };
  return (
    <div className="page">
      <h1>Global kill switch</h1>
      <p className="lead">
        Cut one person off every network of every organization at once: their activations end, their devices are deauthorized at each organization's controller, and their access stays
        suspended until an operator lifts it. An organization's admins can do this within their own organization; only operators can do it everywhere.
      </p>
      {done && (
        <>
          <Success>{done.text}</Success>
          {done.warn && <p className="notice notice-warn">{done.warn}</p>}
        </>
      )}
      <CutSomeoneOff key={search.userId ?? ""} initialUserId={search.userId} onDone={changed} />
      <InForce onDone={changed} />
      <History />
    </div>
  );
}

function CutSomeoneOff({ initialUserId, onDone }: { initialUserId?: string; onDone: Done }) {
  const me = useShell().data?.me;
  const [text, setText] = useState("");
  const [q, setQ] = useState<string | null>(null);
  const [userId, setUserId] = useState(initialUserId ?? "");
  const [reason, setReason] = useState("");
  const people = useQuery({ queryKey: ["admin", "kill-switch", "people", q], queryFn: () => gql(PeopleQuery, { q }), enabled: q !== null });
  const preview = useQuery({ queryKey: ["admin", "kill-switch", "preview", userId], queryFn: () => gql(PreviewQuery, { userId }), enabled: !!userId });
  const trigger = useMutation({ mutationFn: () => gql(Trigger, { input: { targetUserId: userId, reason: reason.trim() || null } }) });
  const candidates = (people.data?.adminUsers.items ?? []).filter((p) => p.id !== me?.id);
  const p = preview.data?.globalKillSwitchPreview;
  const name = p ? who(p.person) : "";
  const reasonError = trigger.error instanceof ApiError ? trigger.error.fieldErrors.reason : undefined;

  return (
    <section aria-labelledby="cut-off" className="panel">
      <h2 id="cut-off">Cut someone off everywhere</h2>
      <form
        className="filters"
        role="search"
        aria-label="Find the person"
        onSubmit={(e) => {
          e.preventDefault();
          setQ(text.trim());
        }}
      >
        <label className="field">
          <span className="label">Email or name</span>
          <input type="search" value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <Button type="submit" variant="secondary">
          Find
        </Button>
      </form>
      {people.isError && <ErrorState error={people.error} retry={() => void people.refetch()} />}
      {q !== null && people.data && (
        candidates.length === 0 ? (
          <p className="muted">No account matches “{q}”{people.data.adminUsers.count > 0 ? " besides yours" : ""}.</p>
        ) : (
          <SelectField label="Person" value={userId} onChange={(v) => setUserId(v)}>
            <option value="">Choose a person…</option>
            {candidates.map((c) => (
              <option key={c.id} value={c.id}>
                {c.fullName ? `${c.fullName} (${c.email})` : c.email}
              </option>
            ))}
            {people.data.adminUsers.count > candidates.length + 1 && <option disabled>More match: narrow the search</option>}
          </SelectField>
        )
      )}
      {userId && preview.isPending && <Loading label="Looking up their network access…" />}
      {preview.isError && <ErrorState error={preview.error} retry={() => void preview.refetch()} />}
      {p && (
        <>
          <h3>
            {name} <span className="muted">{p.person.fullName ? p.person.email : ""}</span>
          </h3>
          <Reach preview={p} />
          {p.inForceEventId ? (
            <p className="notice notice-warn">{name} is already cut off everywhere: lift that kill switch below before using it again.</p>
          ) : p.person.id === me?.id ? (
            <p className="notice">This is you: another operator would have to do it.</p>
          ) : (
            <>
              <label className="field">
                <span className="label">Reason</span>
                <input value={reason} onChange={(e) => setReason(e.target.value)} aria-describedby="gks-reason-hint" aria-invalid={!!reasonError || undefined} />
                <span id="gks-reason-hint" className="hint">
                  Kept in the history and the audit log.
                </span>
                {reasonError && <span className="field-error">{reasonError}</span>}
              </label>
              <div className="actions">
                <ConfirmDialog
                  trigger={<Button variant="danger">Cut {name} off everywhere…</Button>}
                  title={`Cut ${name} off every network of every organization?`}
                  confirmLabel={`Cut ${name} off`}
                  onConfirm={async () => {
                    const d = (await trigger.mutateAsync()).triggerGlobalKillSwitch;
                    setReason("");
                    await onDone(
                      `${name} is cut off everywhere: ${plural(d.event.sessionsEnded, "activation")} ended.`,
                      d.controllerSynced ? undefined : "A controller could not be reached: reconciliation deauthorizes the devices as soon as it answers. Access is suspended already.",
                    );
                  }}
                >
                  <Effects preview={p} name={name} />
                  {reason.trim() && <p>Reason: “{reason.trim()}”</p>}
                </ConfirmDialog>
              </div>
            </>
          )}
        </>
      )}
    </section>
  );
}

/** Where the person is on networks now, by organization. */
function Reach({ preview: p }: { preview: Preview }) {
  if (p.memberships.length === 0) return <p className="muted">{who(p.person)} has no device on any network now.</p>;
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={`Network access of ${who(p.person)}`}>
      <table>
        <thead>
          <tr>
            <th scope="col">Organization</th>
            <th scope="col">Network</th>
            <th scope="col">Device</th>
            <th scope="col">Now</th>
          </tr>
        </thead>
        <tbody>
          {p.memberships.map((m, i) => (
            <tr key={i}>
              <td>{m.organizationName}</td>
              <td>{m.networkName}</td>
              <td>{m.deviceName}</td>
              <td>{m.activeUntil ? <TimeLeft until={m.activeUntil} /> : <span className="muted">{m.state.replace(/_/g, " ")}</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What the kill switch will cut, in words, for the confirmation. */
function Effects({ preview: p, name }: { preview: Preview; name: string }) {
  const running = p.memberships.filter((m) => m.activeUntil);
  const devices = [...new Set(p.memberships.filter((m) => LIVE.has(m.state)).map((m) => `${m.deviceName} (${m.organizationName})`))];
  const orgs = [...new Set(p.memberships.map((m) => m.organizationName))];
  return (
    <ul className="admin-effects">
      <li>
        {running.length === 0
          ? `No activation of ${name} is running now.`
          : `Ends ${plural(running.length, "running activation")}: ${words(running.map((m) => `${m.deviceName} on ${m.networkName} (${m.organizationName})`))}.`}
      </li>
      <li>{devices.length === 0 ? `${name} has no device on a network to deauthorize.` : `Deauthorizes ${plural(devices.length, "device")} at the controllers: ${words(devices)}.`}</li>
      <li>
        Suspends {name}'s access{orgs.length > 0 ? ` in ${words(orgs)}` : ""} until an operator lifts it: nothing can be switched on for them on any network of any organization meanwhile.
      </li>
    </ul>
  );
}

function InForce({ onDone }: { onDone: Done }) {
  const [page, setPage] = useState(1);
  const q = useQuery({ queryKey: ["admin", "kill-switch", "in-force", page], queryFn: () => gql(EventsQuery, { inForce: true, page, perPage: 25 }), placeholderData: keepPreviousData });
  return (
    <section aria-labelledby="in-force">
      <h2 id="in-force">In force</h2>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      ) : q.data.globalKillSwitches.items.length === 0 ? (
        <Empty>
          <p>Nobody is cut off everywhere.</p>
        </Empty>
      ) : (
        <>
          <EventTable events={q.data.globalKillSwitches.items} label="Global kill switches in force" onDone={onDone} />
          <Pager page={q.data.globalKillSwitches.page} pages={q.data.globalKillSwitches.pages} count={q.data.globalKillSwitches.count} noun={["kill switch in force", "kill switches in force"]} busy={q.isFetching} onPage={setPage} />
        </>
      )}
    </section>
  );
}

function History() {
  const [page, setPage] = useState(1);
  const q = useQuery({ queryKey: ["admin", "kill-switch", "lifted", page], queryFn: () => gql(EventsQuery, { inForce: false, page, perPage: 25 }), placeholderData: keepPreviousData });
  return (
    <section aria-labelledby="ks-history">
      <h2 id="ks-history">Lifted</h2>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      ) : q.data.globalKillSwitches.items.length === 0 ? (
        <p className="muted">No global kill switch has been lifted yet.</p>
      ) : (
        <>
          <EventTable events={q.data.globalKillSwitches.items} label="Lifted global kill switches" />
          <Pager page={q.data.globalKillSwitches.page} pages={q.data.globalKillSwitches.pages} count={q.data.globalKillSwitches.count} noun={["lifted kill switch", "lifted kill switches"]} busy={q.isFetching} onPage={setPage} />
        </>
      )}
    </section>
  );
}

function EventTable({ events, label, onDone }: { events: Event[]; label: string; onDone?: Done }) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={label}>
      <table>
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">When</th>
            <th scope="col">Reason</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => {
            const name = who(e.target);
            return (
              <tr key={e.id}>
                <td>
                  {e.target.deleted ? (
                    <strong>{name} (deleted)</strong>
                  ) : (
                    <Link to="/admin/accounts/$userId" params={{ userId: e.target.id }}>
                      <strong>{name}</strong>
                    </Link>
                  )}
                  {e.target.fullName && <div className="muted">{e.target.email}</div>}
                </td>
                <td>
                  <Time iso={e.createdAt} />
                  <div className="muted">
                    by {e.triggeredBy ? who(e.triggeredBy) : "a removed account"}, {plural(e.sessionsEnded, "activation")} ended
                  </div>
                </td>
                <td>{e.reason ?? <span className="muted">none given</span>}</td>
                <td>
                  {e.liftedAt ? (
                    <>
                      <Badge>Lifted</Badge> <Time iso={e.liftedAt} />
                      {e.liftedBy && <div className="muted">by {who(e.liftedBy)}</div>}
                    </>
                  ) : (
                    <div className="row-actions">
                      <Badge tone="bad">In force</Badge>
                      {onDone && (
                        <ConfirmDialog
                          trigger={
                            <Button variant="secondary" size="small" aria-label={`Lift the kill switch on ${name}`}>
                              Lift
                            </Button>
                          }
                          title={`Lift the kill switch on ${name}?`}
                          confirmLabel="Lift kill switch"
                          danger={false}
                          onConfirm={async () => {
                            await gql(Lift, { eventId: e.id });
                            await onDone(`The kill switch on ${name} was lifted.`);
                          }}
                        >
                          <p>
                            {name}'s network access comes back in every organization as it was approved (except where an organization's own kill switch still holds it); their devices
                            stay off until they switch them on.
                          </p>
                        </ConfirmDialog>
                      )}
                    </div>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
