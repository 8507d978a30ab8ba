import { useState } from "react";
import { gql } from "../../api";
import { graphql, type ResultOf } from "../../graphql";
import { Badge } from "../../ui/Badge";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Field } from "../../ui/Field";
import { SelectField } from "../../ui/SelectField";

const OffboardMember = graphql(`
  mutation OffboardMember($orgId: ID!, $userId: ID!, $input: OffboardInput!) {
    offboardMember(orgId: $orgId, userId: $userId, input: $input) {
      id auditId mode reason managed accountSuspended
      sessions { count } cliTokens { count } apiKeys { count } enrollmentTokens { count }
      certificates { count serials } devices { count } departments { count } principals { count }
      pending { devices }
    }
  }
`);

export type OffboardingReceipt = ResultOf<typeof OffboardMember>["offboardMember"];

/** The same receipt by its id: "Remove" is offboarding too, and its answer names the receipt. */
const ReceiptQuery = graphql(`
  query OffboardingReceiptById($orgId: ID!, $id: ID!) {
    offboardingReceipt(orgId: $orgId, id: $id) {
      id auditId mode reason managed accountSuspended
      sessions { count } cliTokens { count } apiKeys { count } enrollmentTokens { count }
      certificates { count serials } devices { count } departments { count } principals { count }
      pending { devices }
    }
  }
`);

export async function loadReceipt(orgId: string, id: string): Promise<OffboardingReceipt> {
  return (await gql(ReceiptQuery, { orgId, id })).offboardingReceipt;
}

/** "Offboard": suspend or remove a member in one step, with a reason; the receipt is shown after. */
export function OffboardAction({ orgId, orgName, member, onDone }: { orgId: string; orgName: string; member: { userId: string; email: string; fullName: string | null; managed: boolean }; onDone: (name: string, receipt: OffboardingReceipt) => Promise<void> }) {
  const [mode, setMode] = useState<"suspend" | "remove">("suspend");
  const [reason, setReason] = useState("");
  const name = member.fullName || member.email;
  return (
    <ConfirmDialog
      trigger={
        <Button variant="secondary" size="small">
          Offboard
        </Button>
      }
      title={`Offboard ${name}?`}
      confirmLabel={mode === "suspend" ? "Suspend" : "Remove"}
      onConfirm={async () => {
        const d = await gql(OffboardMember, { orgId, userId: member.userId, input: { mode, reason } });
        setReason("");
        await onDone(name, d.offboardMember);
      }}
    >
      <p>
        Everything {name} holds through {orgName} ends at once: their certificates go into the revocation list, the networks drop their devices, the API keys they made stop working
        {member.managed ? ", and as this organization manages their account, every session and CLI sign-in ends." : "."}
      </p>
      <SelectField label="What happens to the membership" value={mode} onChange={(v) => setMode(v === "remove" ? "remove" : "suspend")}>
        <option value="suspend">Suspend (can be reinstated)</option>
        <option value="remove">Remove for good</option>
      </SelectField>
      <Field label="Reason" name="reason" value={reason} onChange={setReason} multiline description="Kept on the receipt in the audit log" />
    </ConfirmDialog>
  );
}

/** What one offboarding cut, as its receipt lists it. */
export function ReceiptPanel({ name, receipt, onClose }: { name: string; receipt: OffboardingReceipt; onClose: () => void }) {
  const rows: Array<[string, number]> = [
    ["Sessions ended", receipt.sessions.count],
    ["CLI sign-ins ended", receipt.cliTokens.count],
    ["API keys revoked", receipt.apiKeys.count],
    ["Server enrollment tokens revoked", receipt.enrollmentTokens.count],
    ["SSH certificates revoked", receipt.certificates.count],
    ["Devices taken off networks", receipt.devices.count],
    ["Departments left", receipt.departments.count],
    ["Principals taken away", receipt.principals.count],
  ];
  return (
    <section className="notice notice-success receipt-panel" aria-labelledby="receipt-title" role="status">
      <h2 id="receipt-title">
        {name} was {receipt.mode === "suspend" ? "suspended" : "removed"}
      </h2>
      <dl className="receipt">
        {rows.map(([label, n]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{n}</dd>
          </div>
        ))}
      </dl>
      {receipt.certificates.serials.length > 0 && <p className="muted">Certificate serials in the revocation list: {receipt.certificates.serials.join(", ")}</p>}
      {receipt.pending.devices.length > 0 && (
        <p>
          <Badge tone="warn">pending</Badge> The network controller did not answer for {receipt.pending.devices.length} device(s): they are already refused here, and reconciliation takes them off the controller when it answers.
        </p>
      )}
      <p className="muted">Receipt {receipt.id} (audit record {receipt.auditId}).</p>
      <Button variant="secondary" size="small" onPress={onClose}>
        Dismiss
      </Button>
    </section>
  );
}
