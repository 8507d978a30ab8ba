import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate, useSearch } from "@tanstack/react-router";
import { useState } from "react";
import { gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Button } from "../../ui/Button";
import { SelectField } from "../../ui/SelectField";
import { Empty, ErrorState, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { SHOWS, type AccountsSearch, type Show } from "./search";
import { Pager, plural, who } from "./shared";

const AccountsQuery = graphql(`
  query AdminAccounts($q: String, $show: String, $page: Int, $perPage: Int) {
    adminUsers(q: $q, show: $show, page: $page, perPage: $perPage) {
      count page pages
      items { id email fullName status emailVerified isSuperadmin lastLoginAt createdAt updatedAt managedBy { id name } organizations { id name role } }
    }
  }
`);
const RestoreUser = graphql(`
  mutation AdminRestoreUser($userId: ID!) { restoreUser(userId: $userId) { id email } }
`);

type Account = ResultOf<typeof AccountsQuery>["adminUsers"]["items"][number];
const PER_PAGE = 25;
const SHOW_WORDS: Record<Show | "all", string> = { all: "All accounts", superadmins: "Superadmins", suspended: "Suspended", deleted: "Deleted" };

/** /admin/accounts: every account, searched by address or name, filtered and paged; deleted ones are restored here. */
export function Accounts() {
  const search = useSearch({ from: "/admin/accounts" });
  const navigate = useNavigate({ from: "/admin/accounts" });
  const qc = useQueryClient();
  const [text, setText] = useState(search.q ?? "");
  const [done, setDone] = useState("");
  const show = search.show ?? "all";
  const page = search.page ?? 1;
  const list = useQuery({
    queryKey: ["admin", "accounts", search.q ?? "", show, page],
    queryFn: () => gql(AccountsQuery, { q: search.q ?? null, show: search.show ?? null, page, perPage: PER_PAGE }),
    placeholderData: keepPreviousData,
  });
  const restore = useMutation({
    mutationFn: (userId: string) => gql(RestoreUser, { userId }),
    onSuccess: async (d) => {
      setDone(`${d.restoreUser.email} was restored: it can sign in again.`);
      await qc.invalidateQueries({ queryKey: ["admin"] });
    },
  });
  const go = (next: AccountsSearch) => {
    setDone("");
    void navigate({ search: next });
  };
  const deleted = show === "deleted";

  return (
    <div className="page">
      <h1>Accounts</h1>
      <form
        className="filters"
        role="search"
        aria-label="Find accounts"
        onSubmit={(e) => {
          e.preventDefault();
          go({ q: text.trim() || undefined, show: search.show });
        }}
      >
        <label className="field">
          <span className="label">Email or name</span>
          <input type="search" value={text} onChange={(e) => setText(e.target.value)} placeholder="ada@example.com" />
        </label>
        <SelectField label="Show" value={show} onChange={(v) => go({ q: search.q, show: SHOWS.find((s) => s === v) })}>
          {(["all", ...SHOWS] as const).map((s) => (
            <option key={s} value={s}>
              {SHOW_WORDS[s]}
            </option>
          ))}
        </SelectField>
        <Button type="submit" variant="secondary">
          Search
        </Button>
      </form>
      {done && <Success>{done}</Success>}
      {list.isPending ? (
        <Loading label="Loading accounts…" />
      ) : list.isError ? (
        <ErrorState error={list.error} retry={() => void list.refetch()} />
      ) : list.data.adminUsers.items.length === 0 ? (
        <Empty>
          <p>{search.q ? `No ${deleted ? "deleted " : ""}account matches “${search.q}”.` : deleted ? "No account has been deleted." : `No ${SHOW_WORDS[show].toLowerCase()} account.`}</p>
          {(search.q || search.show) && (
            <Button variant="secondary" size="small" onPress={() => (setText(""), go({}))}>
              Show all accounts
            </Button>
          )}
        </Empty>
      ) : (
        <>
          <div className="table-wrap" tabIndex={0} role="region" aria-label={deleted ? "Deleted accounts" : "Accounts"}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Account</th>
                  <th scope="col">Organizations</th>
                  <th scope="col">{deleted ? "Deleted" : "Last sign-in"}</th>
                  <th scope="col">{deleted ? "Actions" : "Created"}</th>
                </tr>
              </thead>
              <tbody>
                {list.data.adminUsers.items.map((u) => (
                  <Row key={u.id} account={u} deleted={deleted} restoring={restore.isPending && restore.variables === u.id} onRestore={() => restore.mutateAsync(u.id)} />
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={list.data.adminUsers.page} pages={list.data.adminUsers.pages} count={list.data.adminUsers.count} noun={["account", "accounts"]} busy={list.isFetching} onPage={(p) => go({ ...search, page: p > 1 ? p : undefined })} />
        </>
      )}
    </div>
  );
}

function Row({ account: u, deleted, restoring, onRestore }: { account: Account; deleted: boolean; restoring: boolean; onRestore: () => Promise<unknown> }) {
  const name = who(u);
  const orgs = u.organizations;
  return (
    <tr>
      <td>
        {deleted ? <strong>{name}</strong> : (
          <Link to="/admin/accounts/$userId" params={{ userId: u.id }}>
            <strong>{name}</strong>
          </Link>
        )}
        {u.fullName && <div className="muted">{u.email}</div>}
        <div className="member-tags">
          {u.isSuperadmin && <Badge tone="accent">superadmin</Badge>}
          {u.status === "suspended" && <Badge tone="bad">suspended</Badge>}
          {u.status === "pending_activation" && <Badge tone="warn">not activated</Badge>}
          {!u.emailVerified && <Badge tone="warn">email not verified</Badge>}
          {u.managedBy && <Badge>managed by {u.managedBy.name}</Badge>}
        </div>
      </td>
      <td>
        {orgs.length === 0 ? (
          <span className="muted">none</span>
        ) : (
          <span>
            {orgs
              .slice(0, 3)
              .map((o) => `${o.name} (${o.role})`)
              .join(", ")}
            {orgs.length > 3 && <span className="muted"> and {plural(orgs.length - 3, "more", "more")}</span>}
          </span>
        )}
      </td>
      <td>{deleted ? <Time iso={u.updatedAt} /> : <Time iso={u.lastLoginAt} />}</td>
      <td>
        {deleted ? (
          <ConfirmDialog
            trigger={
              <Button variant="secondary" size="small" isPending={restoring} aria-label={`Restore ${name}`}>
                Restore
              </Button>
            }
            title={`Restore ${name}?`}
            confirmLabel="Restore account"
            danger={false}
            onConfirm={onRestore}
          >
            <p>
              {u.email} can sign in again with its password and two-step methods. Certificates and network access that ended with the deletion stay ended.
            </p>
          </ConfirmDialog>
        ) : (
          <Time iso={u.createdAt} mode="date" />
        )}
      </td>
    </tr>
  );
}
