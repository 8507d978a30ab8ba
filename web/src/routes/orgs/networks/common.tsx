import { useMutation } from "@tanstack/react-query";
import { useRef, useState, type ReactNode } from "react";
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from "react-aria-components";
import { ApiError, gql } from "../../../api";
import { graphql } from "../../../graphql";
import { Badge } from "../../../ui/Badge";
import { Button } from "../../../ui/Button";
import { Field } from "../../../ui/Field";
import { Empty, FormError } from "../../../ui/States";
import { Time } from "../../../ui/Time";

/** What the network screens share: words for states and modes, people's names, the approve/reject pair. */

type Tone = "neutral" | "good" | "warn" | "bad" | "accent";

/** A device membership's state, in words a person understands (colour is never the only signal). */
const STATES: Record<string, [string, Tone]> = {
  pending_device_registration: ["Waiting for the device", "neutral"],
  pending_request: ["Not requested", "neutral"],
  pending_manager_approval: ["Waiting for a manager", "warn"],
  approved_inactive: ["Approved, off", "neutral"],
  joined_deauthorized: ["Approved, off", "neutral"],
  active_authorized: ["On", "good"],
  activation_expired: ["Approved, off (ran out)", "neutral"],
  suspended: ["Suspended", "bad"],
  revoked: ["Revoked", "bad"],
  rejected: ["Rejected", "bad"],
};

export function StateBadge({ state }: { state: string }) {
  const [words, tone] = STATES[state] ?? [state.replaceAll("_", " "), "neutral" as Tone];
  return <Badge tone={tone}>{words}</Badge>;
}

export const REQUEST_MODES = [
  { value: "approval_required", label: "People ask, a manager approves" },
  { value: "open", label: "Open: asking is enough" },
  { value: "invite_only", label: "Invite only: managers grant access" },
] as const;
export type RequestMode = (typeof REQUEST_MODES)[number]["value"];
export const requestModeLabel = (mode: string) => REQUEST_MODES.find((m) => m.value === mode)?.label ?? mode;

export const ENVIRONMENTS = [
  { value: "production", label: "Production" },
  { value: "staging", label: "Staging" },
  { value: "development", label: "Development" },
  { value: "lab", label: "Lab" },
] as const;
export type Environment = (typeof ENVIRONMENTS)[number]["value"];
export const environmentLabel = (env: string) => ENVIRONMENTS.find((e) => e.value === env)?.label ?? env;

/** A person as people know them: the name, else the address. */
export const who = (name: string | null | undefined, email: string | null | undefined) => name || email || "someone";

/** The device as its owner named it, and its node id when that differs. */
export function DeviceName({ displayName, nodeId }: { displayName: string; nodeId: string }) {
  return (
    <>
      <strong>{displayName}</strong>
      {displayName !== nodeId && (
        <div className="muted">
          <code>{nodeId}</code>
        </div>
      )}
    </>
  );
}

/** What a screen only admins use says to anyone else who opens its address (the API refuses them anyway). */
export function AdminsOnly({ orgName, what }: { orgName: string; what: string }) {
  return (
    <div className="page">
      <Empty>
        <p>
          Only the owners and admins of {orgName} {what}.
        </p>
      </Empty>
    </div>
  );
}

/** A button's action that runs once at a time: a double click acts once (the request's own state shows the outcome). */
export function useOnce(run: () => Promise<unknown>): () => void {
  const busy = useRef(false);
  return () => {
    if (busy.current) return;
    busy.current = true;
    void run()
      .catch(() => undefined)
      .finally(() => {
        busy.current = false;
      });
  };
}

/** A whole number of minutes typed in a field, or the reason it is not one (null when left empty). */
export function minutesFrom(text: string): { value: number | null; error?: string } {
  const t = text.trim();
  if (t === "") return { value: null };
  if (!/^\d+$/.test(t)) return { value: null, error: "Enter a whole number of minutes." };
  return { value: Number(t) };
}

/** A list that grows: the first `size` items, and a way to see more. */
export function usePaged<T>(items: T[], size = 50): { shown: T[]; more: ReactNode } {
  const [count, setCount] = useState(size);
  const shown = items.slice(0, count);
  const more =
    items.length > count ? (
      <div className="actions">
        <Button variant="secondary" size="small" onPress={() => setCount((c) => c + size)}>
          Show {Math.min(size, items.length - count)} more of {items.length - count}
        </Button>
      </div>
    ) : null;
  return { shown, more };
}

/** A search box over a list (filters what is already loaded). */
export function SearchBox({ label, value, onChange }: { label: string; value: string; onChange: (v: string) => void }) {
  return (
    <label className="field net-search">
      <span className="label">{label}</span>
      <input type="search" value={value} onChange={(e) => onChange(e.target.value)} />
    </label>
  );
}

export const matches = (query: string, ...texts: Array<string | null | undefined>) => {
  const q = query.trim().toLowerCase();
  return q === "" || texts.some((t) => t?.toLowerCase().includes(q));
};

export interface ReasonDialogProps {
  trigger: ReactNode;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  reasonLabel: string;
  reasonHint?: string;
  /** The action is not allowed until a reason is typed. */
  reasonRequired?: boolean;
  onConfirm: (reason: string) => Promise<unknown>;
}

/**
 * A decision that carries a reason (reject a request, revoke access): a dialog naming the object,
 * with the reason's field; the API's message about the reason appears under it. One press acts once.
 */
export function ReasonDialog({ trigger, title, children, confirmLabel, reasonLabel, reasonHint, reasonRequired, onConfirm }: ReasonDialogProps) {
  const [reason, setReason] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const busy = useRef(false);
  const fields = error instanceof ApiError ? error.fieldErrors : {};
  return (
    <DialogTrigger onOpenChange={(open) => (open ? (setReason(""), setError(null)) : undefined)}>
      {trigger}
      <ModalOverlay className="modal-overlay" isDismissable={!pending}>
        <Modal className="modal">
          <Dialog className="dialog" role="alertdialog">
            {({ close }) => (
              <>
                <Heading slot="title">{title}</Heading>
                <div className="dialog-body">{children}</div>
                <Field label={reasonLabel} description={reasonHint} value={reason} onChange={setReason} multiline isRequired={reasonRequired} error={fields.reason} autoFocus />
                {!fields.reason && <FormError error={error} />}
                <div className="actions">
                  <Button variant="secondary" onPress={close} isDisabled={pending}>
                    Cancel
                  </Button>
                  <Button
                    variant="danger"
                    isPending={pending}
                    isDisabled={reasonRequired && reason.trim() === ""}
                    onPress={async () => {
                      if (busy.current) return;
                      busy.current = true;
                      setPending(true);
                      setError(null);
                      try {
                        await onConfirm(reason.trim());
                        close();
                      } catch (e) {
                        setError(e);
                      } finally {
                        busy.current = false;
                        setPending(false);
                      }
                    }}
                  >
                    {confirmLabel}
                  </Button>
                </div>
              </>
            )}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

// --- the approval queue's rows (the queue screen and one network's screen) ---

const Approve = graphql(`
  mutation ApproveNetworkAccess($orgId: ID!, $approvalId: ID!) { approveNetworkAccess(orgId: $orgId, approvalId: $approvalId) { id state } }
`);
const Reject = graphql(`
  mutation RejectNetworkAccess($orgId: ID!, $approvalId: ID!, $reason: String) { rejectNetworkAccess(orgId: $orgId, approvalId: $approvalId, reason: $reason) { id state decisionReason } }
`);

export interface PendingApproval {
  id: string;
  userId: string;
  userEmail?: string | null;
  userName?: string | null;
  networkName?: string | null;
  justification?: string | null;
  createdAt: string;
}

/**
 * One request waiting for a decision: who asks, for which network, why, since when; approve, or
 * reject with a reason. Nobody decides their own request (ARCHITECTURE rule 20): the requester sees
 * it waiting for another manager instead of the buttons.
 */
export function PendingRequest({ orgId, approval, meId, showNetwork, onDecided }: { orgId: string; approval: PendingApproval; meId: string | undefined; showNetwork: boolean; onDecided: (message: string) => Promise<unknown> }) {
  const person = who(approval.userName, approval.userEmail);
  const network = approval.networkName ?? "the network";
  const approve = useMutation({
    mutationFn: () => gql(Approve, { orgId, approvalId: approval.id }),
    onSuccess: () => onDecided(`${person} may now use ${network}.`),
  });
  const approveOnce = useOnce(() => approve.mutateAsync());
  const own = approval.userId === meId;
  return (
    <li className="net-request">
      <div className="net-request-text">
        <strong>{person}</strong> asks for <strong>{showNetwork ? network : "access"}</strong> <span className="muted">· <Time iso={approval.createdAt} /></span>
        {approval.userName && <div className="muted">{approval.userEmail}</div>}
        <p className="net-justification">{approval.justification ? `“${approval.justification}”` : <span className="muted">No reason given.</span>}</p>
        <FormError error={approve.error} />
      </div>
      {own ? (
        <p className="muted net-own">Your own request: another manager decides it.</p>
      ) : (
        <div className="net-row-actions">
          <Button size="small" isPending={approve.isPending} onPress={approveOnce} aria-label={`Approve ${person} for ${network}`}>
            Approve
          </Button>
          <ReasonDialog
            trigger={
              <Button variant="secondary" size="small" aria-label={`Reject ${person} for ${network}`}>
                Reject
              </Button>
            }
            title={`Reject ${person}'s request for ${network}?`}
            confirmLabel="Reject request"
            reasonLabel="Reason"
            reasonHint={`Sent to ${person} with the decision.`}
            reasonRequired
            onConfirm={async (reason) => {
              await gql(Reject, { orgId, approvalId: approval.id, reason });
              await onDecided(`${person}'s request for ${network} was rejected.`);
            }}
          >
            <p>
              {person} does not get onto {network}; they may ask again later.
            </p>
          </ReasonDialog>
        </div>
      )}
    </li>
  );
}
