import { useMutation } from "@tanstack/react-query";
import { useEffect, useId, useRef, type ReactNode } from "react";
import { Form } from "react-aria-components";
import type { VariablesOf } from "gql.tada";
import { gql } from "../../api";
import { Button } from "../../ui/Button";
import { Field } from "../../ui/Field";
import { SelectField } from "../../ui/SelectField";
import { FormError } from "../../ui/States";
import { useSubmit } from "../../ui/useSubmit";
import { nextRowKey, ROLES, UpdateConnection, type AccessDraft, type Connection, type Department, type MappingRow, type MutationLike } from "./sso-shared";

/**
 * The frame every connection form shares (sso-oidc.tsx, sso-saml.tsx): the name, the access
 * settings (role of a new member, group mappings, requiring single sign-on, session limit), the
 * buttons and how a refusal is shown, and saving an edit.
 */
/**
 * The role of a new member, the group mappings (a group's role and departments), requiring single
 * sign-on and the session limit: the second half of every connection's form.
 */
export function AccessFields<D extends AccessDraft>({
  orgName,
  draft,
  setDraft,
  departments,
  errors,
  groupHint,
}: {
  orgName: string;
  draft: D;
  setDraft: (f: (d: D) => D) => void;
  departments: Department[];
  errors: Record<string, string>;
  groupHint: string;
}) {
  const ids = useId();
  const lastGroup = useRef<string | null>(null);
  useEffect(() => {
    if (!lastGroup.current) return;
    document.getElementById(lastGroup.current)?.focus();
    lastGroup.current = null;
  });
  const setRow = (key: number, change: (m: MappingRow) => MappingRow) => setDraft((d) => ({ ...d, mappings: d.mappings.map((x) => (x.key === key ? change(x) : x)) }));
  return (
    <>
      <SelectField label="Role of a new member" value={draft.defaultRole} onChange={(v) => setDraft((d) => ({ ...d, defaultRole: v }))}>
        {ROLES.map((r) => (
          <option key={r.value} value={r.value}>
            {r.label}
          </option>
        ))}
      </SelectField>
      {errors.defaultRole && <p className="field-error">{errors.defaultRole}</p>}
      <p className="hint">Nobody becomes an owner through single sign-on, and an owner stays an owner.</p>
      <fieldset className="choices sso-mappings" data-invalid={errors.groupMappings ? true : undefined}>
        <legend>Group mappings</legend>
        <span className="hint">At every sign-in, a person gets the highest role their groups map to, and the departments of each group they are in.</span>
        {draft.mappings.length === 0 && <p className="muted">No mappings: everyone gets the role above.</p>}
        <ol className="mapping-rows">
          {draft.mappings.map((m, i) => (
            <li key={m.key} className="mapping-row">
              <div className="field-pair">
                <div className="field">
                  <label htmlFor={`${ids}-g${m.key}`}>Group {i + 1}</label>
                  <input id={`${ids}-g${m.key}`} value={m.group} onChange={(e) => setRow(m.key, (x) => ({ ...x, group: e.target.value }))} aria-describedby={`${ids}-gh`} />
                </div>
                <SelectField label={`Role for group ${i + 1}`} value={m.role} onChange={(v) => setRow(m.key, (x) => ({ ...x, role: v }))}>
                  <option value="">No role (departments only)</option>
                  {ROLES.map((r) => (
                    <option key={r.value} value={r.value}>
                      {r.label}
                    </option>
                  ))}
                </SelectField>
              </div>
              {departments.length > 0 && (
                <fieldset className="choices">
                  <legend>Departments for group {i + 1}</legend>
                  <div className="mapping-departments">
                    {departments.map((dep) => (
                      <label key={dep.id} className="sso-check">
                        <input
                          type="checkbox"
                          checked={m.departmentIds.includes(dep.id)}
                          onChange={(e) =>
                            setRow(m.key, (x) => ({ ...x, departmentIds: e.target.checked ? [...x.departmentIds, dep.id] : x.departmentIds.filter((id) => id !== dep.id) }))
                          }
                        />
                        {dep.name}
                      </label>
                    ))}
                  </div>
                </fieldset>
              )}
              <Button variant="secondary" size="small" aria-label={`Remove group mapping ${i + 1}`} onPress={() => setDraft((d) => ({ ...d, mappings: d.mappings.filter((x) => x.key !== m.key) }))}>
                Remove
              </Button>
            </li>
          ))}
        </ol>
        <p id={`${ids}-gh`} className="hint">
          {groupHint}
        </p>
        {errors.groupMappings && <p className="field-error">{errors.groupMappings}</p>}
        <Button
          variant="secondary"
          size="small"
          onPress={() => {
            const key = nextRowKey();
            lastGroup.current = `${ids}-g${key}`;
            setDraft((d) => ({ ...d, mappings: [...d.mappings, { key, group: "", role: "", departmentIds: [] }] }));
          }}
        >
          Add a group mapping
        </Button>
      </fieldset>
      <div className="sso-require">
        <label className="sso-check">
          <input type="checkbox" checked={draft.requireSso} onChange={(e) => setDraft((d) => ({ ...d, requireSso: e.target.checked }))} aria-describedby={`${ids}-req`} />
          Require single sign-on
        </label>
        <p id={`${ids}-req`} className={draft.requireSso ? "notice notice-warn" : "hint"}>
          {draft.requireSso ? (
            <>
              <strong>Everyone with an address in {orgName}'s verified domains must then sign in here through the provider:</strong> their password, passkey, GitHub and Google sign-ins are refused, and
              accounts not linked yet cannot sign in until they are. Try the connection with one account first.
            </>
          ) : (
            "With it on, addresses in the verified domains can only sign in through this provider (no password, passkey, GitHub or Google)."
          )}
        </p>
      </div>
      <Field
        label="Session limit (hours)"
        name="sessionMaxAgeSeconds"
        inputMode="decimal"
        value={draft.sessionHours}
        onChange={(v) => setDraft((d) => ({ ...d, sessionHours: v }))}
        error={errors.sessionMaxAgeSeconds}
        description="How long a session started through single sign-on lasts at most, when single sign-on is required (5 minutes to 30 days). Empty: Keyward's default."
      />
    </>
  );
}

/** What a connection's edit form gets from its card. */
export interface EditProps {
  orgId: string;
  orgName: string;
  connection: Connection;
  departments: Department[];
  onSaved: (name: string) => Promise<void>;
  onCancel: () => void;
}
type UpdateInput = VariablesOf<typeof UpdateConnection>["input"];
/** Saves a connection's edit form (`input` reads the draft when saved); the card hears of it by name. */
export function useUpdateConnection({ orgId, connection, onSaved }: EditProps, input: () => UpdateInput) {
  return useMutation({
    mutationFn: () => gql(UpdateConnection, { orgId, connectionId: connection.id, input: input() }),
    onSuccess: (d) => onSaved(d.updateSsoConnection.name),
  });
}

/** A connection form's end: the refusal no field holds (as an alert), submit and, when editing, Cancel. */
function FormFooter({ mutation, unplaced, submitLabel, onCancel }: { mutation: MutationLike; unplaced: boolean; submitLabel: string; onCancel?: () => void }) {
  return (
    <>
      {unplaced && (
        <div className="sso-alert" tabIndex={-1}>
          <FormError error={mutation.error} />
        </div>
      )}
      <div className="actions">
        <Button type="submit" isPending={mutation.isPending}>
          {submitLabel}
        </Button>
        {onCancel && (
          <Button
            variant="secondary"
            onPress={() => {
              mutation.reset();
              onCancel();
            }}
          >
            Cancel
          </Button>
        )}
      </div>
    </>
  );
}

/** What every connection form is given. */
export interface FormBase<D extends AccessDraft> {
  label: string;
  orgName: string;
  draft: D;
  setDraft: (f: (d: D) => D) => void;
  departments: Department[];
  mutation: MutationLike;
  submitLabel: string;
  onCancel?: () => void;
}
/** A setter per draft field: `set("name")("Okta")`. */
export const fieldSetter =
  <D,>(setDraft: (f: (d: D) => D) => void) =>
  <K extends keyof D>(key: K) =>
  (value: D[K]) =>
    setDraft((d) => ({ ...d, [key]: value }));

/**
 * A connection's form around its protocol's own fields (`children`): the name first, the access
 * settings and the buttons last. A refusal no field shows becomes an alert; focus moves to the first
 * field the refusal marks (an invalid field, or an error marked `data-error-focus` where no field
 * can be edited), opening its fold, else to that alert.
 */
export function ConnectionFormFrame<D extends AccessDraft>({
  base,
  errors,
  placed,
  nameHint,
  groupHint,
  children,
}: {
  base: FormBase<D>;
  errors: Record<string, string>;
  placed: string[];
  nameHint: string;
  groupHint: string;
  children: ReactNode;
}) {
  const { label, orgName, draft, setDraft, departments, mutation, submitLabel, onCancel } = base;
  const form = useRef<HTMLFormElement>(null);
  const submit = useSubmit(() => mutation.mutateAsync());
  useEffect(() => {
    if (!mutation.error || !form.current) return;
    const target = form.current.querySelector<HTMLElement>("[aria-invalid=true], [data-error-focus]") ?? form.current.querySelector<HTMLElement>(".sso-alert");
    const fold = target?.closest("details");
    if (fold) fold.open = true;
    target?.focus();
  }, [mutation.error]);
  const unplaced = Object.keys(errors).some((k) => !placed.includes(k)) || (mutation.error !== null && Object.keys(errors).length === 0);
  return (
    <Form ref={form} validationBehavior="aria" aria-label={label} onSubmit={submit} className="sso-form">
      <Field label="Name" name="name" value={draft.name} onChange={(v) => setDraft((d) => ({ ...d, name: v }))} isRequired error={errors.name} description={nameHint} />
      {children}
      <AccessFields orgName={orgName} draft={draft} setDraft={setDraft} departments={departments} errors={errors} groupHint={groupHint} />
      <FormFooter mutation={mutation} unplaced={unplaced} submitLabel={submitLabel} onCancel={onCancel} />
    </Form>
  );
}

/** Radio choices, each with its label and a line of explanation (the protocol, the IdP's source). */
export function RadioChoices<V extends string>({ legend, name, options, value, onChange, className }: { legend: string; name: string; options: readonly { value: V; label: string; hint: string }[]; value: V; onChange: (v: V) => void; className?: string }) {
  return (
    <fieldset className={["choices", className].filter(Boolean).join(" ")}>
      <legend>{legend}</legend>
      <div className="choice-list">
        {options.map((o) => (
          <label key={o.value} className="choice">
            <input type="radio" name={name} value={o.value} checked={value === o.value} onChange={() => onChange(o.value)} />
            <span className="choice-text">
              <strong>{o.label}</strong>
              <span className="hint">{o.hint}</span>
            </span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}
