import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { gql } from "../../api";
import { graphql } from "../../graphql";
import { Button } from "../../ui/Button";
import { Empty, ErrorState, Loading } from "../../ui/States";
import { Time } from "../../ui/Time";
import { Pager, who } from "./shared";

const OrganizationsQuery = graphql(`
  query AdminOrganizations($q: String, $page: Int, $perPage: Int) {
    adminOrganizations(q: $q, page: $page, perPage: $perPage) {
      count page pages
      items { id name slug description memberCount createdAt owners { id email fullName } }
    }
  }
`);
const PER_PAGE = 25;

/** /admin/organizations: every organization of the installation, with its members counted and its owners named. */
export function AdminOrganizations() {
  const [text, setText] = useState("");
  const [q, setQ] = useState("");
  const [page, setPage] = useState(1);
  const list = useQuery({
    queryKey: ["admin", "organizations", q, page],
    queryFn: () => gql(OrganizationsQuery, { q: q || null, page, perPage: PER_PAGE }),
    placeholderData: keepPreviousData,
  });
  return (
    <div className="page">
      <h1>Organizations</h1>
      <p className="lead">Every organization on this Keyward. Their owners and admins run them from their own pages; as an operator you see them here without being a member.</p>
      <form
        className="filters"
        role="search"
        aria-label="Find organizations"
        onSubmit={(e) => {
          e.preventDefault();
          setQ(text.trim());
          setPage(1);
        }}
      >
        <label className="field">
          <span className="label">Name or address</span>
          <input type="search" value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <Button type="submit" variant="secondary">
          Search
        </Button>
      </form>
      {list.isPending ? (
        <Loading label="Loading organizations…" />
      ) : list.isError ? (
        <ErrorState error={list.error} retry={() => void list.refetch()} />
      ) : list.data.adminOrganizations.items.length === 0 ? (
        <Empty>
          <p>{q ? `No organization matches “${q}”.` : "Nobody has created an organization yet: anyone with an account can, from their home page."}</p>
        </Empty>
      ) : (
        <>
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Organizations">
            <table>
              <thead>
                <tr>
                  <th scope="col">Organization</th>
                  <th scope="col">Members</th>
                  <th scope="col">Owners</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.adminOrganizations.items.map((o) => (
                  <tr key={o.id}>
                    <td>
                      <strong>{o.name}</strong>
                      <div className="muted">
                        <code>{o.slug}</code>
                      </div>
                      {o.description && <div className="muted">{o.description}</div>}
                    </td>
                    <td>{o.memberCount}</td>
                    <td>
                      {o.owners.length === 0 ? (
                        <span className="muted">none</span>
                      ) : (
                        <ul className="admin-inline-list">
                          {o.owners.map((w) => (
                            <li key={w.id}>
                              <Link to="/admin/accounts/$userId" params={{ userId: w.id }}>
                                {who(w)}
                              </Link>
                            </li>
                          ))}
                        </ul>
                      )}
                    </td>
                    <td>
                      <Time iso={o.createdAt} mode="date" />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={list.data.adminOrganizations.page} pages={list.data.adminOrganizations.pages} count={list.data.adminOrganizations.count} noun={["organization", "organizations"]} busy={list.isFetching} onPage={setPage} />
        </>
      )}
    </div>
  );
}
