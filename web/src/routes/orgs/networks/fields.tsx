import { Field } from "../../../ui/Field";
import { duration } from "../../../ui/TimeLeft";
import { ENVIRONMENTS, minutesFrom, REQUEST_MODES, type Environment, type RequestMode } from "./common";

/** A portal network's settings as typed in a form (adding one, or changing one). */
export interface NetworkDraft {
  name: string;
  description: string;
  environment: Environment;
  requestMode: RequestMode;
  defaultMinutes: string;
  maxMinutes: string;
}

export const emptyDraft: NetworkDraft = { name: "", description: "", environment: "production", requestMode: "approval_required", defaultMinutes: "480", maxMinutes: "" };

/** The lifetimes as numbers, or the fields' own errors when they are not whole numbers of minutes. */
export function lifetimes(d: NetworkDraft): { defaultMinutes: number | null; maxMinutes: number | null; errors: Record<string, string> } {
  const def = minutesFrom(d.defaultMinutes);
  const max = minutesFrom(d.maxMinutes);
  const errors: Record<string, string> = {};
  if (def.error) errors.defaultActivationLifetimeMinutes = def.error;
  if (max.error) errors.maxActivationLifetimeMinutes = max.error;
  return { defaultMinutes: def.value, maxMinutes: max.value, errors };
}

const asDuration = (text: string) => {
  const m = minutesFrom(text);
  return m.value ? ` (${duration(m.value)})` : "";
};

/** The settings' fields; `fields` holds the API's (or the form's own) message per field. */
export function NetworkFields({ draft, onChange, fields, idPrefix }: { draft: NetworkDraft; onChange: (d: NetworkDraft) => void; fields: Record<string, string | undefined>; idPrefix: string }) {
  const set = <K extends keyof NetworkDraft>(key: K) => (value: NetworkDraft[K]) => onChange({ ...draft, [key]: value });
  return (
    <div className="net-fields">
      <Field label="Name" name="name" value={draft.name} onChange={set("name")} isRequired error={fields.name} />
      <Field label="Description" name="description" value={draft.description} onChange={set("description")} error={fields.description} />
      <label className="field" htmlFor={`${idPrefix}-environment`}>
        <span className="label">Environment</span>
        <select id={`${idPrefix}-environment`} value={draft.environment} onChange={(e) => set("environment")(e.target.value as Environment)}>
          {ENVIRONMENTS.map((e) => (
            <option key={e.value} value={e.value}>
              {e.label}
            </option>
          ))}
        </select>
      </label>
      <label className="field" htmlFor={`${idPrefix}-mode`}>
        <span className="label">Who gets in</span>
        <select id={`${idPrefix}-mode`} value={draft.requestMode} onChange={(e) => set("requestMode")(e.target.value as RequestMode)}>
          {REQUEST_MODES.map((m) => (
            <option key={m.value} value={m.value}>
              {m.label}
            </option>
          ))}
        </select>
      </label>
      <Field
        label="Activation lasts (minutes)"
        name="defaultActivationLifetimeMinutes"
        inputMode="numeric"
        value={draft.defaultMinutes}
        onChange={set("defaultMinutes")}
        description={`How long access stays on when someone switches it on${asDuration(draft.defaultMinutes)}.`}
        error={fields.defaultActivationLifetimeMinutes}
      />
      <Field
        label="Longest activation (minutes)"
        name="maxActivationLifetimeMinutes"
        inputMode="numeric"
        value={draft.maxMinutes}
        onChange={set("maxMinutes")}
        description={draft.maxMinutes.trim() ? `At most${asDuration(draft.maxMinutes)} at a time.` : "Empty: no limit beyond a year."}
        error={fields.maxActivationLifetimeMinutes}
      />
    </div>
  );
}
