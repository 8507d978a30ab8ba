import { useEffect, useState } from "react";
import { Form } from "react-aria-components";
import { ApiError } from "../../api";
import { Button } from "../../ui/Button";
import { SelectField } from "../../ui/SelectField";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Empty, FormError } from "../../ui/States";
import { Time } from "../../ui/Time";
import { useSubmit } from "../../ui/useSubmit";
import "./directory.css";

/** What departments and principals screens share: people in a group, the API's field errors, a message carried to the list. */

export interface Person {
  userId: string;
  email: string;
  fullName?: string | null;
}
export interface GroupMember extends Person {
  addedAt?: string | null;
}

export const personName = (p: Person) => p.fullName || p.email;

/**
 * The API's validation messages by field, for fields that are lists too: `customExtensions.2`
 * counts as `customExtensions` (ApiError.fieldErrors keeps only the last segment of a path).
 */
export function fieldErrorsOf(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const errors = (error.details?.errors as Array<{ path: string; message: string }> | undefined) ?? [];
  const out: Record<string, string> = {};
  for (const e of errors) {
    const name = e.path.split(".").filter((s) => !/^\d+$/.test(s)).at(-1) ?? e.path;
    out[name] ??= e.message;
  }
  return out;
}

/** A message for the directory list after its detail screen is gone (a department or principal deleted). */
const carried = { message: "" };
export function carryToDirectory(message: string): void {
  carried.message = message;
}
export function useCarriedMessage(): string {
  const [message] = useState(() => carried.message);
  useEffect(() => {
    carried.message = "";
  }, []);
  return message;
}

/** Turns the API's "a positive whole number" rule into a value, or says what is wrong before sending. */
export function wholeHours(text: string): number | string {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) <= 0) return "Enter a whole number of hours, such as 8.";
  return Number(t);
}

/**
 * The people of a department or the direct holders of a principal: admins add one of the
 * organization's members and remove people (after a confirmation naming both).
 */
export function GroupPeople({
  title,
  groupName,
  people,
  candidates,
  empty,
  canAdd = true,
  removal,
  onAdd,
  onRemove,
}: {
  title: string;
  groupName: string;
  people: GroupMember[];
  /** The organization's members who could be added (admins only). */
  candidates?: Person[];
  empty: string;
  /** Whether adding is offered (removal stays): not on a role held through a role grant. */
  canAdd?: boolean;
  removal: (p: Person) => string;
  onAdd: (p: Person) => Promise<unknown>;
  onRemove: (p: Person) => Promise<unknown>;
}) {
  const [chosen, setChosen] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const inGroup = new Set(people.map((p) => p.userId));
  const addable = (candidates ?? []).filter((c) => !inGroup.has(c.userId)).sort((a, b) => personName(a).localeCompare(personName(b)));
  const id = title.toLowerCase().replace(/[^a-z]+/g, "-");
  const add = useSubmit(async () => {
    const person = addable.find((c) => c.userId === chosen);
    if (!person) return;
    setPending(true);
    setError(null);
    try {
      await onAdd(person);
      // Only if the choice is still this person: whoever already picked the next one keeps it.
      setChosen((c) => (c === person.userId ? "" : c));
    } catch (err) {
      setError(err);
    } finally {
      setPending(false);
    }
  });
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {candidates && canAdd && (
        <Form validationBehavior="aria" className="inline-form" aria-label={`Add someone to ${groupName}`} onSubmit={add}>
          <SelectField label="Add a member of the organization" value={chosen} onChange={setChosen} isDisabled={addable.length === 0}>
            <option value="">{addable.length === 0 ? "Everyone is already here" : "Choose a person…"}</option>
            {addable.map((c) => (
              <option key={c.userId} value={c.userId}>
                {c.fullName ? `${c.fullName} (${c.email})` : c.email}
              </option>
            ))}
          </SelectField>
          <Button type="submit" isPending={pending} isDisabled={!chosen}>
            Add
          </Button>
          <FormError error={error} />
        </Form>
      )}
      {people.length === 0 ? (
        <Empty>
          <p>{empty}</p>
        </Empty>
      ) : (
        <ul className="rows" aria-label={title}>
          {people.map((p) => (
            <li key={p.userId}>
              <span>
                <strong>{personName(p)}</strong>
                {p.fullName && <span className="muted"> {p.email}</span>}
                {p.addedAt && (
                  <span className="muted">
                    {" "}
                    · added <Time iso={p.addedAt} />
                  </span>
                )}
              </span>
              {candidates && (
                <ConfirmDialog
                  trigger={
                    <Button variant="secondary" size="small" aria-label={`Remove ${personName(p)} from ${groupName}`}>
                      Remove
                    </Button>
                  }
                  title={`Remove ${personName(p)} from ${groupName}?`}
                  confirmLabel="Remove"
                  onConfirm={() => onRemove(p)}
                >
                  <p>{removal(p)}</p>
                </ConfirmDialog>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
