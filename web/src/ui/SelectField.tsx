import { useId, type ReactNode } from "react";

/**
 * A native select with its label tied by id (keyboards and screen readers know it; its name is the
 * label alone, not the label plus the chosen option as a wrapping label would give).
 */
export function SelectField({ label, value, onChange, isDisabled, children }: { label: string; value: string; onChange: (value: string) => void; isDisabled?: boolean; children: ReactNode }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)} disabled={isDisabled}>
        {children}
      </select>
    </div>
  );
}
