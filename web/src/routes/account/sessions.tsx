import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Empty, ErrorState, FormError, Loading, Success } from "../../ui/States";
import { Time } from "../../ui/Time";

const SessionsQuery = graphql(`
  query AccountSessions {
    mySessions { id current createdAt lastActivityAt ipAddress userAgent rememberMe }
  }
`);
type Session = ResultOf<typeof SessionsQuery>["mySessions"][number];

const RevokeSession = graphql(`
  mutation RevokeSession($id: ID!) { revokeSession(id: $id) { message } }
`);
const RevokeOthers = graphql(`
  mutation RevokeOtherSessions { revokeOtherSessions }
`);
const SignOut = graphql(`
  mutation SignOutHere { logout { message idpLogoutUrl } }
`);

const BROWSERS: Array<[RegExp, string]> = [
  [/Edg(e|A|iOS)?\//, "Edge"],
  [/OPR\//, "Opera"],
  [/Firefox\/|FxiOS\//, "Firefox"],
  [/Chrome\/|CriOS\//, "Chrome"],
  [/Safari\//, "Safari"],
  [/^curl\//, "curl"],
  [/^keyward\//i, "Keyward CLI"],
  [/^(node|undici)/i, "Node.js"],
];
const SYSTEMS: Array<[RegExp, string]> = [
  [/Windows/, "Windows"],
  [/Android/, "Android"],
  [/iPhone|iPad|iPod/, "iOS"],
  [/Mac OS X|Macintosh/, "macOS"],
  [/CrOS/, "ChromeOS"],
  [/Linux/, "Linux"],
];

/** "Firefox on Linux" from a User-Agent header: enough to recognise a session, nothing more. */
export function describeAgent(ua: string | null | undefined): string {
  if (!ua) return "Unknown device";
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1] ?? ua.split(/[\s/]/)[0]!.slice(0, 40);
  const os = SYSTEMS.find(([re]) => re.test(ua))?.[1];
  return os ? `${browser} on ${os}` : browser;
}

/** To the sign-in page, or first to the organization's SAML IdP to sign out there too (single logout). */
const goToSignIn = (idpLogoutUrl?: string | null) => window.location.assign(idpLogoutUrl ?? "/login");

/** /account/sessions: where the account is signed in; sign out one, the others, or everywhere. */
export function Sessions() {
  const q = useQuery({ queryKey: ["account", "sessions"], queryFn: () => gql(SessionsQuery) });
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  const refresh = () => qc.invalidateQueries({ queryKey: ["account", "sessions"] });
  const revoke = useMutation({
    mutationFn: (s: Session) => gql(RevokeSession, { id: s.id }),
    onSuccess: async (_r, s) => {
      setDone(`Signed out ${describeAgent(s.userAgent)}${s.ipAddress ? ` (${s.ipAddress})` : ""}.`);
      await refresh();
    },
  });
  const others = useMutation({
    mutationFn: () => gql(RevokeOthers),
    onSuccess: async (r) => {
      const n = r.revokeOtherSessions;
      setDone(n === 0 ? "There were no other sessions." : n === 1 ? "1 other session signed out." : `${n} other sessions signed out.`);
      await refresh();
    },
  });
  const here = useMutation({ mutationFn: () => gql(SignOut), onSettled: (r) => goToSignIn(r?.logout.idpLogoutUrl) });

  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => void q.refetch()} />;
  // This browser first, then the most recently used.
  const sessions = [...q.data.mySessions].sort((a, b) => Number(b.current) - Number(a.current) || b.lastActivityAt.localeCompare(a.lastActivityAt));
  return (
    <div className="page">
      <h1>Sessions</h1>
      <p className="muted">Where your account is signed in: browsers, the command-line client, and scripts using a session token.</p>
      {done && <Success>{done}</Success>}
      <FormError error={revoke.error ?? others.error} />
      {sessions.length === 0 ? (
        <Empty>
          <p>No sessions.</p>
        </Empty>
      ) : (
        <ul className="rows" aria-label="Your sessions" id="session-list">
          {sessions.map((s) => {
            const device = describeAgent(s.userAgent);
            return (
              <li key={s.id} data-session-id={s.id}>
                <span className="row-main">
                  <span>
                    <strong>{device}</strong> {s.current && <Badge tone="good">this browser</Badge>}
                  </span>
                  <span className="muted">
                    {s.ipAddress ? `from ${s.ipAddress} · ` : ""}signed in <Time iso={s.createdAt} /> · last active <Time iso={s.lastActivityAt} />
                    {s.rememberMe ? " · kept signed in" : ""}
                  </span>
                </span>
                {s.current ? (
                  <Button variant="secondary" size="small" aria-label="Sign out of this browser" isPending={here.isPending} onPress={() => here.mutate()}>
                    Sign out
                  </Button>
                ) : (
                  <Button
                    variant="secondary"
                    size="small"
                    aria-label={`Sign out ${device}${s.ipAddress ? ` from ${s.ipAddress}` : ""}, last active ${new Date(s.lastActivityAt).toLocaleString()}`}
                    isPending={revoke.isPending && revoke.variables?.id === s.id}
                    onPress={() => revoke.mutate(s)}
                  >
                    Sign out
                  </Button>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <div className="actions">
        <Button variant="secondary" isDisabled={sessions.length < 2} isPending={others.isPending} onPress={() => others.mutate()}>
          Sign out all other sessions
        </Button>
        <ConfirmDialog
          trigger={<Button variant="danger">Sign out everywhere</Button>}
          title="Sign out everywhere?"
          confirmLabel="Sign out everywhere"
          onConfirm={async () => {
            await gql(RevokeOthers);
            const out = await gql(SignOut).catch(() => undefined);
            goToSignIn(out?.logout.idpLogoutUrl);
          }}
        >
          <p>Every session ends, this browser included: browsers, the command-line client and scripts must sign in again.</p>
        </ConfirmDialog>
      </div>
    </div>
  );
}
