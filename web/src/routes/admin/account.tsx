import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useParams } from "@tanstack/react-router";
import { useState } from "react";
import { ApiError, gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { useShell } from "../../shell";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { Empty, ErrorState, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";
import { AuditItem, useNames } from "./audit-entry";
import { Pager, plural, who } from "./shared";

const AccountQuery = graphql(`
  query AdminAccount($userId: ID!) {
    adminUser(userId: $userId) {
      id email fullName status emailVerified emailVerifiedAt isSuperadmin lastLoginAt createdAt updatedAt
      managedBy { id name }
      organizations { id name role }
    }
    adminUserLinkedAccounts(userId: $userId) { provider providerName email username displayName linkedAt lastUsedAt }
    userMfaMethods(userId: $userId) { totpEnabled backupCodesRemaining webauthn { id name deviceType backedUp createdAt lastUsedAt } }
    userSshKeys(userId: $userId) { id description keyType keyBits fingerprint verified createdAt }
  }
`);
const AccountAuditQuery = graphql(`
  query AdminAccountAudit($userId: ID!, $page: Int, $perPage: Int) {
    superadminUserAudit(userId: $userId, page: $page, perPage: $perPage) {
      count page pages
      items { id createdAt action actorId userId organizationId resourceType resourceId success ipAddress userAgent requestId metadata }
    }
  }
`);
const Suspend = graphql(`
  mutation AdminSuspendUser($userId: ID!, $reason: String) { suspendUser(userId: $userId, reason: $reason) { id status } }
`);
const Unsuspend = graphql(`
  mutation AdminUnsuspendUser($userId: ID!) { unsuspendUser(userId: $userId) { id status } }
`);
const VerifyEmail = graphql(`
  mutation AdminVerifyUserEmail($userId: ID!) { verifyUserEmail(userId: $userId) { id emailVerified } }
`);
const SetPassword = graphql(`
  mutation AdminSetUserPassword($userId: ID!, $password: String!) { setUserPassword(userId: $userId, password: $password) { message } }
`);
const Promote = graphql(`
  mutation AdminPromoteUser($userId: ID!) { promoteUser(userId: $userId) { id isSuperadmin } }
`);
const Demote = graphql(`
  mutation AdminDemoteUser($userId: ID!) { demoteUser(userId: $userId) { id isSuperadmin } }
`);
const RemoveMfa = graphql(`
  mutation AdminRemoveUserMfa($userId: ID!, $method: String!, $credentialId: ID) { removeUserMfa(userId: $userId, method: $method, credentialId: $credentialId) { message } }
`);
const Unlink = graphql(`
  mutation AdminUnlinkExternalAccount($userId: ID!, $provider: String!) { adminUnlinkExternalAccount(userId: $userId, provider: $provider) }
`);
const DeleteUser = graphql(`
  mutation AdminDeleteUser($userId: ID!) { deleteUser(userId: $userId, confirm: true) { message } }
`);
const RestoreUser = graphql(`
  mutation AdminRestoreDeletedUser($userId: ID!) { restoreUser(userId: $userId) { id } }
`);

type Data = ResultOf<typeof AccountQuery>;
type Account = Data["adminUser"];
type Done = (message: string) => Promise<unknown>;

/**
 * /admin/accounts/<id>: one account as an operator sees it (organizations, two-step methods,
 * linked accounts, SSH keys, its audit records), and what an operator does to it: suspend or lift
 * the suspension, mark the address verified, set a password, remove two-step methods, unlink a
 * provider, make or unmake a superadmin, delete (typing its address) and restore.
 */
export function AccountDetail() {
  const { userId } = useParams({ from: "/admin/accounts/$userId" });
  const me = useShell().data?.me;
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  const [deleted, setDeleted] = useState<string | null>(null);
  const q = useQuery({ queryKey: ["admin", "account", userId], queryFn: () => gql(AccountQuery, { userId }), enabled: !deleted });
  const changed: Done = async (message) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["admin"] });
  };

  if (deleted) return <DeletedNow userId={userId} email={deleted} onRestored={() => (setDeleted(null), changed("The account was restored: it can sign in again."))} />;
  if (q.isPending) return <Loading />;
  if (q.isError) {
    return (
      <div className="page">
        <h1>Account</h1>
        {q.error instanceof ApiError && q.error.code === "USER_NOT_FOUND" ? (
          <Empty>
            <p>There is no account at this address: it may have been deleted.</p>
            <Link to="/admin/accounts" search={{ show: "deleted" }}>
              Deleted accounts
            </Link>
          </Empty>
        ) : (
          <ErrorState error={q.error} retry={() => void q.refetch()} />
        )}
      </div>
    );
  }
  const u = q.data.adminUser;
  const name = who(u);
  const self = u.id === me?.id;
  return (
    <div className="page admin-account">
      <p>
        <Link to="/admin/accounts">← Accounts</Link>
      </p>
      <h1>{name}</h1>
      <div className="member-tags">
        {u.isSuperadmin && <Badge tone="accent">superadmin</Badge>}
        {u.status === "suspended" && <Badge tone="bad">suspended</Badge>}
        {u.status === "pending_activation" && <Badge tone="warn">not activated</Badge>}
        {u.status === "active" && <Badge tone="good">active</Badge>}
        {self && <Badge>you</Badge>}
      </div>
      {done && <Success>{done}</Success>}
      <dl className="kv">
        <dt>Email</dt>
        <dd>
          {u.email} {u.emailVerified ? <span className="muted">verified <Time iso={u.emailVerifiedAt} /></span> : <Badge tone="warn">not verified</Badge>}
        </dd>
        <dt>Created</dt>
        <dd>
          <Time iso={u.createdAt} mode="full" />
        </dd>
        <dt>Last sign-in</dt>
        <dd>
          <Time iso={u.lastLoginAt} />
        </dd>
        <dt>Managed by</dt>
        <dd>{u.managedBy ? `${u.managedBy.name} (its owners and admins administer this account's sign-in)` : <span className="muted">nobody: the account is its owner's alone</span>}</dd>
        <dt>Organizations</dt>
        <dd>
          {u.organizations.length === 0 ? (
            <span className="muted">none</span>
          ) : (
            <ul>
              {u.organizations.map((o) => (
                <li key={o.id}>
                  {o.name} <Badge>{o.role}</Badge>
                </li>
              ))}
            </ul>
          )}
        </dd>
      </dl>
      {self ? (
        <p className="notice">
          This is your own account: change it in <Link to="/account">My account</Link>. Another operator administers it here.
        </p>
      ) : (
        <Manage account={u} onDone={changed} onDeleted={async () => {
          qc.removeQueries({ queryKey: ["admin", "account", userId] });
          setDeleted(u.email);
          setDone("");
          await qc.invalidateQueries({ queryKey: ["admin", "accounts"] });
        }} />
      )}
      <TwoStep data={q.data} self={self} onDone={changed} />
      <Linked data={q.data} self={self} onDone={changed} />
      <SshKeys data={q.data} />
      <AccountAudit userId={u.id} name={name} />
    </div>
  );
}

/** The account's standing: suspension, address, password, operator role, networks, deletion. */
function Manage({ account: u, onDone, onDeleted }: { account: Account; onDone: Done; onDeleted: () => Promise<void> }) {
  const name = who(u);
  const [reason, setReason] = useState("");
  const [password, setPassword] = useState("");
  const [passwordError, setPasswordError] = useState<string | undefined>();
  const suspend = useMutation({ mutationFn: () => gql(Suspend, { userId: u.id, reason: reason.trim() || null }) });
  return (
    <section aria-labelledby="manage" className="panel">
      <h2 id="manage">Manage the account</h2>
      <div className="actions">
        {u.status === "suspended" ? (
          <ConfirmDialog
            trigger={<Button variant="secondary">Lift the suspension</Button>}
            title={`Lift ${name}'s suspension?`}
            confirmLabel="Lift suspension"
            danger={false}
            onConfirm={async () => {
              await gql(Unsuspend, { userId: u.id });
              await onDone(`${name} can sign in again.`);
            }}
          >
            <p>{name} can sign in again with their password and two-step methods. Certificates revoked and network access ended by the suspension stay so.</p>
          </ConfirmDialog>
        ) : (
          <ConfirmDialog
            trigger={<Button variant="secondary">Suspend…</Button>}
            title={`Suspend ${name}?`}
            confirmLabel="Suspend account"
            onConfirm={async () => {
              await suspend.mutateAsync();
              setReason("");
              await onDone(`${name} is suspended: signed out everywhere, certificates revoked, network access ended.`);
            }}
          >
            <p>
              {name} is signed out everywhere at once and cannot sign in until the suspension is lifted; their SSH certificates are revoked, their devices come off every network, and an
              email tells them why.
            </p>
            <Field label="Reason (sent to them)" value={reason} onChange={setReason} error={suspend.error instanceof ApiError ? suspend.error.fieldErrors.reason : undefined} />
          </ConfirmDialog>
        )}
        {!u.emailVerified && (
          <ConfirmDialog
            trigger={<Button variant="secondary">Mark the address verified…</Button>}
            title={`Mark ${u.email} verified?`}
            confirmLabel="Mark verified"
            danger={false}
            onConfirm={async () => {
              await gql(VerifyEmail, { userId: u.id });
              await onDone(`${u.email} is marked verified.`);
            }}
          >
            <p>Do this only if you checked another way that the address is theirs: a verified address receives the invitations sent to it and is vouched for to applications.</p>
          </ConfirmDialog>
        )}
        <ConfirmDialog
          trigger={<Button variant="secondary">Set a password…</Button>}
          title={`Set a new password for ${name}`}
          confirmLabel="Set password"
          danger={false}
          onConfirm={async () => {
            setPasswordError(undefined);
            try {
              await gql(SetPassword, { userId: u.id, password });
            } catch (e) {
              setPasswordError(e instanceof ApiError ? e.fieldErrors.password : undefined);
              throw e;
            }
            setPassword("");
            await onDone(`${name}'s password was set; their sessions were ended.`);
          }}
        >
          <p>Their sessions end; give them the password in person. They can change it after signing in.</p>
          <Field label="New password" type="password" value={password} onChange={setPassword} error={passwordError} autoComplete="new-password" />
        </ConfirmDialog>
        {u.isSuperadmin ? (
          <ConfirmDialog
            trigger={<Button variant="secondary">Remove superadmin…</Button>}
            title={`Remove ${name}'s superadmin role?`}
            confirmLabel="Remove superadmin"
            onConfirm={async () => {
              await gql(Demote, { userId: u.id });
              await onDone(`${name} is no longer a superadmin.`);
            }}
          >
            <p>{name} loses the operators' pages and powers with their next request: accounts, organizations, sign-in providers, the outbox and the global kill switch.</p>
          </ConfirmDialog>
        ) : (
          <ConfirmDialog
            trigger={<Button variant="secondary">Make superadmin…</Button>}
            title={`Make ${name} a superadmin?`}
            confirmLabel="Make superadmin"
            onConfirm={async () => {
              await gql(Promote, { userId: u.id });
              await onDone(`${name} is now a superadmin.`);
            }}
          >
            <p>
              {name} ({u.email}) gets every operator power: administering every account, reading every organization and the system audit log, configuring sign-in, and the
              global kill switch. Only an active account with a verified address can be made one.
            </p>
          </ConfirmDialog>
        )}
        <Link className="btn btn-secondary" to="/admin/kill-switch" search={{ userId: u.id }}>
          Cut off networks everywhere…
        </Link>
      </div>
      <div className="danger-zone">
        <h3>Delete the account</h3>
        <p className="muted">Deleted accounts can be restored from the accounts list.</p>
        <ConfirmDialog
          trigger={<Button variant="danger">Delete {name}…</Button>}
          title={`Delete ${name}'s account?`}
          confirmLabel="Delete account"
          typeToConfirm={u.email}
          onConfirm={async () => {
            await gql(DeleteUser, { userId: u.id });
            await onDeleted();
          }}
        >
          <p>
            {u.email} can no longer sign in: its sessions end, its SSH certificates are revoked and its devices come off every network. An account that is the only owner of an
            organization with other members cannot be deleted until ownership is transferred.
          </p>
        </ConfirmDialog>
      </div>
    </section>
  );
}

/** After deleting: what happened, and the way back. */
function DeletedNow({ userId, email, onRestored }: { userId: string; email: string; onRestored: () => void }) {
  return (
    <div className="page">
      <p>
        <Link to="/admin/accounts">← Accounts</Link>
      </p>
      <h1>Account deleted</h1>
      <Success>{email} was deleted: it no longer signs in, its certificates were revoked and its network access ended.</Success>
      <div className="actions">
        <ConfirmDialog
          trigger={<Button variant="secondary">Restore {email}</Button>}
          title={`Restore ${email}?`}
          confirmLabel="Restore account"
          danger={false}
          onConfirm={async () => {
            await gql(RestoreUser, { userId });
            onRestored();
          }}
        >
          <p>The account can sign in again with its password and two-step methods.</p>
        </ConfirmDialog>
        <Link className="btn btn-secondary" to="/admin/accounts" search={{ show: "deleted" }}>
          Deleted accounts
        </Link>
      </div>
    </div>
  );
}

function TwoStep({ data, self, onDone }: { data: Data; self: boolean; onDone: Done }) {
  const u = data.adminUser;
  const name = who(u);
  const m = data.userMfaMethods;
  const any = m.totpEnabled || m.webauthn.length > 0;
  const remove = (method: "totp" | "webauthn" | "all", credentialId?: string) => gql(RemoveMfa, { userId: u.id, method, credentialId: credentialId ?? null });
  return (
    <section aria-labelledby="two-step">
      <h2 id="two-step">Two-step verification</h2>
      {!any ? (
        <p className="muted">{name} has no second step: they sign in with a password or a linked provider alone.</p>
      ) : (
        <ul className="rows" aria-label={`${name}'s two-step methods`}>
          {m.totpEnabled && (
            <li>
              <span>
                <strong>Authenticator app</strong> <Badge tone="good">on</Badge> <span className="muted">{plural(m.backupCodesRemaining, "backup code")} left</span>
              </span>
              {!self && (
                <ConfirmDialog
                  trigger={
                    <Button variant="secondary" size="small" aria-label={`Remove ${name}'s authenticator app`}>
                      Remove
                    </Button>
                  }
                  title={`Remove ${name}'s authenticator app?`}
                  confirmLabel="Remove authenticator app"
                  onConfirm={async () => {
                    await remove("totp");
                    await onDone(`${name}'s authenticator app was removed; an email tells them.`);
                  }}
                >
                  <p>Their codes stop working, and so do their backup codes. An email tells them it was removed and by whom.</p>
                </ConfirmDialog>
              )}
            </li>
          )}
          {m.webauthn.map((c) => (
            <li key={c.id}>
              <span>
                <strong>Passkey {c.name}</strong> <span className="muted">added <Time iso={c.createdAt} mode="date" />, last used <Time iso={c.lastUsedAt} /></span>
              </span>
              {!self && (
                <ConfirmDialog
                  trigger={
                    <Button variant="secondary" size="small" aria-label={`Remove passkey ${c.name}`}>
                      Remove
                    </Button>
                  }
                  title={`Remove ${name}'s passkey ${c.name}?`}
                  confirmLabel="Remove passkey"
                  onConfirm={async () => {
                    await remove("webauthn", c.id);
                    await onDone(`Passkey ${c.name} was removed; an email tells ${name}.`);
                  }}
                >
                  <p>The passkey no longer signs them in. An email tells them it was removed and by whom.</p>
                </ConfirmDialog>
              )}
            </li>
          ))}
        </ul>
      )}
      {any && !self && (
        <div className="actions">
          <ConfirmDialog
            trigger={<Button variant="secondary">Remove every two-step method…</Button>}
            title={`Remove all of ${name}'s two-step methods?`}
            confirmLabel="Remove all methods"
            onConfirm={async () => {
              await remove("all");
              await onDone(`${name}'s two-step methods were removed; an email tells them.`);
            }}
          >
            <p>Their authenticator app, passkeys and backup codes are removed: they sign in with their password and set up two-step again (an organization that requires it asks them to).</p>
          </ConfirmDialog>
        </div>
      )}
    </section>
  );
}

function Linked({ data, self, onDone }: { data: Data; self: boolean; onDone: Done }) {
  const name = who(data.adminUser);
  const linked = data.adminUserLinkedAccounts;
  return (
    <section aria-labelledby="linked">
      <h2 id="linked">Linked accounts</h2>
      {linked.length === 0 ? (
        <p className="muted">No GitHub or Google account is linked.</p>
      ) : (
        <ul className="rows" aria-label={`${name}'s linked accounts`}>
          {linked.map((l) => (
            <li key={l.provider}>
              <span>
                <strong>{l.providerName}</strong>: {l.username ?? l.displayName ?? l.email ?? "linked"}{" "}
                <span className="muted">
                  linked <Time iso={l.linkedAt} mode="date" />, last used <Time iso={l.lastUsedAt} />
                </span>
              </span>
              {!self && (
                <ConfirmDialog
                  trigger={
                    <Button variant="secondary" size="small" aria-label={`Unlink ${l.providerName} from ${name}`}>
                      Unlink
                    </Button>
                  }
                  title={`Unlink ${l.providerName} from ${name}?`}
                  confirmLabel={`Unlink ${l.providerName}`}
                  onConfirm={async () => {
                    await gql(Unlink, { userId: data.adminUser.id, provider: l.provider });
                    await onDone(`${l.providerName} was unlinked from ${name}.`);
                  }}
                >
                  <p>
                    {name} can no longer sign in with {l.providerName}. It is refused if it is their last way to sign in.
                  </p>
                </ConfirmDialog>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function SshKeys({ data }: { data: Data }) {
  const keys = data.userSshKeys;
  return (
    <section aria-labelledby="ssh-keys">
      <h2 id="ssh-keys">SSH keys</h2>
      {keys.length === 0 ? (
        <p className="muted">No SSH public key registered.</p>
      ) : (
        <ul className="rows" aria-label="SSH keys">
          {keys.map((k) => (
            <li key={k.id}>
              <span className="admin-key">
                <strong>{k.description || `${k.keyType} key`}</strong> {k.verified ? <Badge tone="good">proved</Badge> : <Badge tone="warn">not proved</Badge>}
                <code className="admin-fingerprint">{k.fingerprint}</code>
              </span>
              <span className="muted">
                {k.keyType} {k.keyBits} bits, added <Time iso={k.createdAt} mode="date" />
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function AccountAudit({ userId, name }: { userId: string; name: string }) {
  const [page, setPage] = useState(1);
  const q = useQuery({
    queryKey: ["admin", "account", userId, "audit", page],
    queryFn: () => gql(AccountAuditQuery, { userId, page, perPage: 20 }),
    placeholderData: keepPreviousData,
  });
  const entries = q.data?.superadminUserAudit.items ?? [];
  const names = useNames(entries);
  return (
    <section aria-labelledby="account-audit">
      <h2 id="account-audit">Audit records</h2>
      {q.isPending ? (
        <Loading label="Loading audit records…" />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => void q.refetch()} />
      ) : entries.length === 0 ? (
        <p className="muted">No record is about {name} yet.</p>
      ) : (
        <>
          <ol className="activity" aria-label={`Audit records about ${name}`}>
            {entries.map((e) => (
              <AuditItem key={e.id} entry={e} names={names} />
            ))}
          </ol>
          <Pager page={q.data.superadminUserAudit.page} pages={q.data.superadminUserAudit.pages} count={q.data.superadminUserAudit.count} noun={["record", "records"]} busy={q.isFetching} onPage={setPage} />
        </>
      )}
    </section>
  );
}
