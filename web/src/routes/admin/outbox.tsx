import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { Pager } from "./shared";

const STATUSES = ["pending", "sent", "failed", "dead"] as const;
type Status = (typeof STATUSES)[number];

const CountsQuery = graphql(`
  query AdminOutboxCounts {
    pending: emailOutbox(status: "pending", perPage: 1) { count }
    sent: emailOutbox(status: "sent", perPage: 1) { count }
    failed: emailOutbox(status: "failed", perPage: 1) { count }
    dead: emailOutbox(status: "dead", perPage: 1) { count }
  }
`);
const OutboxQuery = graphql(`
  query AdminOutbox($status: String, $page: Int, $perPage: Int) {
    emailOutbox(status: $status, page: $page, perPage: $perPage) {
      count page pages
      items { id template toAddress status attempts nextAttemptAt lastError provider sentAt createdAt }
    }
  }
`);
const Retry = graphql(`
  mutation AdminRetryEmail($id: ID!) { retryEmail(id: $id) { id } }
`);

const WORDS: Record<Status, [string, string, "neutral" | "good" | "warn" | "bad"]> = {
  pending: ["Waiting", "waiting to be sent", "neutral"],
  sent: ["Sent", "sent", "good"],
  failed: ["Failed", "failed, to be tried again", "warn"],
  dead: ["Gave up", "given up after every attempt", "bad"],
};
const PER_PAGE = 25;

/**
 * /admin/outbox: every email Keyward sends goes through the outbox; a worker sends it with
 * retries. Operators see what waits, what went out and what failed, and queue a failed or
 * abandoned message again.
 */
export function Outbox() {
  const [status, setStatus] = useState<Status | "">("");
  const [page, setPage] = useState(1);
  const [done, setDone] = useState("");
  const qc = useQueryClient();
  const counts = useQuery({ queryKey: ["admin", "outbox", "counts"], queryFn: () => gql(CountsQuery) });
  const list = useQuery({
    queryKey: ["admin", "outbox", status, page],
    queryFn: () => gql(OutboxQuery, { status: status || null, page, perPage: PER_PAGE }),
    placeholderData: keepPreviousData,
  });
  const retry = useMutation({
    mutationFn: (m: { id: string; to: string }) => gql(Retry, { id: m.id }),
    onSuccess: async (_, m) => {
      setDone(`The message to ${m.to} is queued again: the worker sends it shortly.`);
      await qc.invalidateQueries({ queryKey: ["admin"] });
    },
  });
  const filter = (next: Status | "") => {
    setStatus(next);
    setPage(1);
    setDone("");
  };
  return (
    <div className="page">
      <h1>Email outbox</h1>
      <p className="lead">Every email Keyward sends waits here until the worker delivers it, with retries.</p>
      {counts.isError ? (
        <ErrorState error={counts.error} retry={() => void counts.refetch()} />
      ) : (
        <div className="tally" role="group" aria-label="Show messages by status">
          <Button variant={status === "" ? "primary" : "secondary"} size="small" aria-pressed={status === ""} onPress={() => filter("")}>
            All
          </Button>
          {STATUSES.map((s) => (
            <Button key={s} variant={status === s ? "primary" : "secondary"} size="small" aria-pressed={status === s} onPress={() => filter(s)}>
              {WORDS[s][0]}: {counts.data ? counts.data[s].count : "…"}
            </Button>
          ))}
        </div>
      )}
      {done && <Success>{done}</Success>}
      <FormError error={retry.error} />
      {list.isPending ? (
        <Loading label="Loading messages…" />
      ) : list.isError ? (
        <ErrorState error={list.error} retry={() => void list.refetch()} />
      ) : list.data.emailOutbox.items.length === 0 ? (
        <Empty>
          <p>{status ? `No message is ${WORDS[status][1]}.` : "No email has been sent yet."}</p>
        </Empty>
      ) : (
        <>
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Messages">
            <table>
              <thead>
                <tr>
                  <th scope="col">To</th>
                  <th scope="col">Message</th>
                  <th scope="col">Status</th>
                  <th scope="col">When</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.emailOutbox.items.map((m) => {
                  const s = STATUSES.find((v) => v === m.status);
                  const [word, , tone] = s ? WORDS[s] : [m.status, m.status, "neutral" as const];
                  return (
                    <tr key={m.id}>
                      <td className="admin-wrap">{m.toAddress}</td>
                      <td>
                        <code>{m.template}</code>
                      </td>
                      <td>
                        <Badge tone={tone}>{word}</Badge>
                        <div className="muted">{m.attempts === 1 ? "1 attempt" : `${m.attempts} attempts`}</div>
                        {m.lastError && <div className="admin-error">{m.lastError}</div>}
                      </td>
                      <td>
                        {m.sentAt ? (
                          <>
                            sent <Time iso={m.sentAt} />
                            {m.provider && <div className="muted">by {m.provider}</div>}
                          </>
                        ) : m.status === "dead" ? (
                          <>
                            queued <Time iso={m.createdAt} />
                          </>
                        ) : (
                          <>
                            next try <Time iso={m.nextAttemptAt} />
                          </>
                        )}
                      </td>
                      <td>
                        {(m.status === "failed" || m.status === "dead") && (
                          <Button
                            variant="secondary"
                            size="small"
                            aria-label={`Send again to ${m.toAddress}`}
                            isPending={retry.isPending && retry.variables?.id === m.id}
                            onPress={() => retry.mutate({ id: m.id, to: m.toAddress })}
                          >
                            Send again
                          </Button>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <Pager page={list.data.emailOutbox.page} pages={list.data.emailOutbox.pages} count={list.data.emailOutbox.count} noun={["message", "messages"]} busy={list.isFetching} onPage={setPage} />
        </>
      )}
    </div>
  );
}
